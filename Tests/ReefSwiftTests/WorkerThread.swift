import Foundation

/// A thread of its own that runs blocks one at a time while the caller waits, for a test that
/// needs a second `Reef` of a file: as in Realm, a thread has one `Reef` per file, so "another
/// Reef" lives on another thread. The caller waits for each block, so the two threads never
/// touch the test's state at once.
final class WorkerThread: @unchecked Sendable {
  private let lock = NSCondition()
  private var work: (() -> Void)?
  private var stopped = false

  init() {
    Thread { [self] in self.loop() }.start()
  }

  /// Ends the thread once the blocks given have run.
  func stop() {
    lock.lock()
    stopped = true
    lock.signal()
    lock.unlock()
  }

  private func loop() {
    while runNext() {}
  }

  /// Runs the next block given; false once stopped. The block is let go of before its caller
  /// is woken (it must not outlive the caller's `run`).
  private func runNext() -> Bool {
    lock.lock()
    while work == nil && !stopped { lock.wait() }
    guard work != nil else {
      lock.unlock()
      return false
    }
    lock.unlock()
    work?()
    lock.lock()
    work = nil
    lock.broadcast()
    lock.unlock()
    return true
  }

  /// Runs `body` on the worker thread and returns what it returns (or throws what it throws).
  func run<T>(_ body: () throws -> T) throws -> T {
    try withoutActuallyEscaping(body) { body in
      let outcome = Outcome<T>()
      lock.lock()
      work = UncheckedBlock { outcome.value = Result { try body() } }.block
      lock.broadcast()
      // The worker clears `work` under the lock once the block has run.
      while work != nil { lock.wait() }
      lock.unlock()
      return try outcome.value!.get()
    }
  }
}

/// What a block run on the worker gave, read by the caller once the block ran.
private final class Outcome<T>: @unchecked Sendable {
  var value: Result<T, any Error>?
}

/// A block carried to another thread on purpose (the caller waits for it).
private struct UncheckedBlock: @unchecked Sendable {
  let block: () -> Void
}
