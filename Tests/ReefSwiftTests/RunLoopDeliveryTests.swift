import CoreFoundation
import Foundation
import ReefBSON
import ReefStore
import Testing

@testable import ReefSwift

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A thread that runs its run loop until stopped, as an app's main thread (or XCTest's waits)
/// does; the test runs blocks there, each in a turn of the run loop.
final class RunLoopThread: @unchecked Sendable {
  private let started = DispatchSemaphore(value: 0)
  private let finished = DispatchSemaphore(value: 0)
  private let lock = NSLock()
  private var stopped = false
  private var runLoop: CFRunLoop?
  private var thread: pthread_t?

  init() {
    Thread { [self] in
      runLoop = CFRunLoopGetCurrent()
      thread = pthread_self()
      // A run loop with nothing in it returns at once: a timer that never fires keeps it waiting.
      // A CFRunLoopTimer, not Foundation's block `Timer`, which corelibs never frees (LeakSanitizer).
      #if canImport(Darwin)
        let mode = CFRunLoopMode.defaultMode
      #else
        let mode = kCFRunLoopDefaultMode
      #endif
      let timer = CFRunLoopTimerCreateWithHandler(
        kCFAllocatorDefault, CFAbsoluteTimeGetCurrent() + 3600, 3600, 0, 0
      ) { _ in }
      CFRunLoopAddTimer(CFRunLoopGetCurrent(), timer, mode)
      started.signal()
      while !isStopped { _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.05)) }
      CFRunLoopTimerInvalidate(timer)
      finished.signal()
    }.start()
    started.wait()
  }

  private var isStopped: Bool {
    lock.lock()
    defer { lock.unlock() }
    return stopped
  }

  /// Whether the caller runs on this thread.
  var isCurrent: Bool { thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }

  /// Runs `body` in a turn of the thread's run loop, waits for it and returns what it returns.
  func sync<T>(_ body: @escaping () throws -> T) throws -> T {
    let outcome = RunLoopOutcome<T>()
    let done = DispatchSemaphore(value: 0)
    let carried = Smuggled(value: body)
    #if canImport(Darwin)
      let mode = CFRunLoopMode.defaultMode.rawValue
    #else
      let mode = kCFRunLoopDefaultMode
    #endif
    CFRunLoopPerformBlock(runLoop, mode) {
      outcome.value = Result { try carried.value() }
      done.signal()
    }
    CFRunLoopWakeUp(runLoop)
    done.wait()
    return try outcome.value!.get()
  }

  /// Ends the thread's loop and waits for it.
  func stop() {
    lock.lock()
    stopped = true
    lock.unlock()
    if let runLoop { CFRunLoopWakeUp(runLoop) }
    finished.wait()
  }
}

/// What a block run in a turn of a ``RunLoopThread`` gave, read by the caller once it ran.
final class RunLoopOutcome<T>: @unchecked Sendable {
  var value: Result<T, any Error>?
}

/// A `Reef` held weakly, to see from another thread whether it is gone.
final class WeakReef: @unchecked Sendable {
  weak var reef: Reef?
  init(_ reef: Reef) { self.reef = reef }
}

/// What a test keeps of a `Reef` on its thread, let go of there (`clear()`).
final class ThreadHeld: @unchecked Sendable {
  var reef: Reef?
  var tokens: [NotificationToken] = []
  var scheduler: RunLoopScheduler?

  func clear() {
    tokens = []
    reef = nil
  }
}

/// Waits until `condition` holds (at most 300 s, polling); returns whether it does.
func eventually(_ condition: () -> Bool) -> Bool {
  let deadline = Date(timeIntervalSinceNow: 300)
  while !condition() {
    if Date() > deadline { return false }
    usleep(1_000)
  }
  return true
}

/// Commits `people` (id, name) from a thread and `Reef` of its own, one commit each.
func commitElsewhere(_ path: String, _ people: [(Int, String)]) -> (any Error)? {
  onAnotherThread {
    let other = try Reef(configuration: configuration(path))
    for (id, name) in people { try other.write { other.add(makePerson(id, name)) } }
  }
}

/// One turn of the calling thread's run loop, without waiting.
func runTheRunLoopOnce() {
  _ = RunLoop.current.run(mode: .default, before: Date())
}

/// A thread-confined `Reef` delivers through its thread's run loop, as Realm's: other threads'
/// commits are refreshed to and notified when the thread runs its run loop (once, however many
/// commits came), never inside a write transaction or a block, never after the token or the
/// `Reef` went; async writes and their completions run there in order.
@Suite struct RunLoopDeliveryTests {
  @Test func anotherThreadsCommitIsDeliveredWhenTheThreadRunsItsRunLoop() throws {
    let (_, path) = try openReef()
    let thread = RunLoopThread()
    defer { thread.stop() }
    let log = LockedLog()
    let held = ThreadHeld()
    try thread.sync {
      let reef = try Reef(configuration: configuration(path))
      held.reef = reef
      held.tokens.append(
        reef.objects(Person.self).sorted(byKeyPath: "id").observe { change in
          guard case .update = change else { return }
          log.append("\(describePeople(change)) on the Reef's thread: \(thread.isCurrent)")
        })
      held.tokens.append(
        reef.observe { notification, reef in log.append("\(notification) \(reef.objects(Person.self).count)") })
    }
    #expect(commitElsewhere(path, [(1, "Ann")]) == nil)
    // Nobody calls refresh(): the thread's run loop does.
    #expect(log.wait(for: 2))
    #expect(log.entries == [#"update ["Ann"] d[] i[0] m[] on the Reef's thread: true"#, "didChange 1"])
    #expect(try thread.sync { held.reef!.objects(Person.self).map(\.name) } == ["Ann"])
    try thread.sync { held.clear() }
  }

  @Test func aThreadThatNeverRunsItsRunLoopHoldsOneWaitingBlockWhateverTheCommits() throws {
    let (_, path) = try openReef()
    let worker = WorkerThread()
    defer { worker.stop() }
    let log = LockedLog()
    let held = ThreadHeld()
    let store = try worker.run { () throws -> Store in
      let reef = try Reef(configuration: configuration(path))
      held.reef = reef
      held.tokens.append(
        reef.objects(Person.self).observe { change in
          guard case .update(let results, let deletions, let insertions, let modifications) = change else { return }
          log.append("\(results.count) d\(deletions.count) i\(insertions.count) m\(modifications.count)")
        })
      held.scheduler = reef.runLoop.scheduler
      return reef.store
    }
    let scheduler = try #require(held.scheduler)
    let commits = 300
    #expect(commitElsewhere(path, (1...commits).map { ($0, "P\($0)") }) == nil)
    let latest = try store.read { try $0.changeSequence() }
    // The feed told the scheduler of the last commit: one block waits, holding all of them.
    #expect(eventually { scheduler.requestedRefresh == latest })
    #expect(scheduler.blocksHandedOver == 1)
    #expect(log.entries.isEmpty)
    // One turn of the run loop: one refresh, one notification for all the commits.
    try worker.run { runTheRunLoopOnce() }
    #expect(log.entries == ["\(commits) d0 i\(commits) m0"])
    #expect(scheduler.requestedRefresh == 0 && scheduler.blocksHandedOver == 1)
    try worker.run { held.clear() }
  }

  @Test func aTokenInvalidatedWhileItsDeliveryWaitsIsNotCalled() throws {
    let (_, path) = try openReef()
    let worker = WorkerThread()
    defer { worker.stop() }
    let log = LockedLog()
    let held = ThreadHeld()
    try worker.run {
      let reef = try Reef(configuration: configuration(path))
      held.reef = reef
      for name in ["first", "second"] {
        held.tokens.append(
          reef.objects(Person.self).observe { change in
            if case .update(let results, _, _, _) = change { log.append("\(name) \(results.count)") }
          })
      }
      held.scheduler = reef.runLoop.scheduler
    }
    let scheduler = try #require(held.scheduler)
    #expect(commitElsewhere(path, [(1, "Ann")]) == nil)
    #expect(eventually { scheduler.requestedRefresh > 0 })
    try worker.run {
      held.tokens[0].invalidate()
      runTheRunLoopOnce()
    }
    #expect(log.entries == ["second 1"])
    // The last token gone, the Reef stops observing the feed: nothing waits, nothing is called.
    try worker.run { held.tokens[1].invalidate() }
    #expect(try worker.run { held.reef!.runLoop.feed == nil })
    #expect(commitElsewhere(path, [(2, "Bob")]) == nil)
    try worker.run { runTheRunLoopOnce() }
    #expect(log.entries == ["second 1"])
    #expect(scheduler.requestedRefresh == 0)
    try worker.run { held.clear() }
  }

  @Test func aReefReleasedWhileADeliveryWaitsIsNotKeptAlive() throws {
    let (_, path) = try openReef()
    let worker = WorkerThread()
    defer { worker.stop() }
    let log = LockedLog()
    let held = ThreadHeld()
    let gone = try worker.run { () throws -> WeakReef in
      let reef = try Reef(configuration: configuration(path))
      held.reef = reef
      held.tokens.append(reef.objects(Person.self).observe { _ in log.append("called") })
      held.scheduler = reef.runLoop.scheduler
      return WeakReef(reef)
    }
    let scheduler = try #require(held.scheduler)
    #expect(commitElsewhere(path, [(1, "Ann")]) == nil)
    #expect(eventually { scheduler.requestedRefresh > 0 })
    try worker.run { held.clear() }
    // The scheduler (held here; the waiting block holds it weakly) holds the Reef weakly.
    #expect(gone.reef == nil)
    #expect(scheduler.reef == nil)
    try worker.run { runTheRunLoopOnce() }
    #expect(log.entries == ["called"], "only the initial notification")
    #expect(scheduler.requestedRefresh == 0)
  }

  @Test func aDeliveryAskedForInsideAWriteTransactionWaitsForItsEnd() throws {
    let (_, path) = try openReef()
    let worker = WorkerThread()
    defer { worker.stop() }
    let log = LockedLog()
    let held = ThreadHeld()
    try worker.run {
      let reef = try Reef(configuration: configuration(path))
      held.reef = reef
      held.tokens.append(
        reef.objects(Person.self).sorted(byKeyPath: "id").observe { change in
          if case .update = change { log.append(describePeople(change)) }
        })
      held.scheduler = reef.runLoop.scheduler
    }
    let scheduler = try #require(held.scheduler)
    #expect(commitElsewhere(path, [(1, "Ann")]) == nil)
    #expect(eventually { scheduler.requestedRefresh > 0 })
    try worker.run {
      let reef = held.reef!
      reef.beginWrite()
      runTheRunLoopOnce()
      log.append("in the write")
      reef.add(makePerson(2, "Bob"))
      try reef.commitWrite()
    }
    // The commit told the block of both commits; the deferred turn then finds nothing new.
    #expect(log.entries == ["in the write", #"update ["Ann", "Bob"] d[] i[0, 1] m[]"#])
    try worker.run { runTheRunLoopOnce() }
    #expect(log.entries.count == 2)
    try worker.run { held.clear() }
  }

  @Test func aDeliveryAskedForInsideABlockComesAfterItReturns() throws {
    let (_, path) = try openReef()
    let worker = WorkerThread()
    defer { worker.stop() }
    let log = LockedLog()
    let held = ThreadHeld()
    try worker.run {
      let reef = try Reef(configuration: configuration(path))
      held.reef = reef
      held.scheduler = reef.runLoop.scheduler ?? reef.runLoopScheduler()
      let scheduler = held.scheduler!
      held.tokens.append(
        reef.objects(Person.self).sorted(byKeyPath: "id").observe { change in
          guard case .update(let results, _, _, _) = change else { return }
          log.append("begin \(results.map(\.name))")
          if results.count == 1 {
            // Another commit while this block runs, and a turn of the run loop inside it.
            _ = commitElsewhere(path, [(2, "Bob")])
            _ = eventually { scheduler.requestedRefresh > 0 }
            runTheRunLoopOnce()
          }
          log.append("end")
        })
    }
    let scheduler = try #require(held.scheduler)
    #expect(commitElsewhere(path, [(1, "Ann")]) == nil)
    #expect(eventually { scheduler.requestedRefresh > 0 })
    // Asked for again when the block returned: a later pass of the run loop (in the same turn,
    // or the next) delivers it, after "end", never inside the block.
    try worker.run {
      for _ in 0..<1_000 where log.entries.count < 4 { runTheRunLoopOnce() }
    }
    #expect(log.entries == [#"begin ["Ann"]"#, "end", #"begin ["Ann", "Bob"]"#, "end"])
    #expect(scheduler.requestedRefresh == 0)
    try worker.run { held.clear() }
  }

  @Test func withoutAutorefreshTheRunLoopTellsReefBlocksThatARefreshIsRequired() throws {
    let (_, path) = try openReef()
    let thread = RunLoopThread()
    defer { thread.stop() }
    let log = LockedLog()
    let held = ThreadHeld()
    try thread.sync {
      let reef = try Reef(configuration: configuration(path))
      held.reef = reef
      reef.autorefresh = false
      _ = reef.objects(Person.self).count
      held.tokens.append(
        reef.observe { notification, reef in log.append("\(notification) \(reef.objects(Person.self).count)") })
    }
    #expect(commitElsewhere(path, [(1, "Ann")]) == nil)
    #expect(log.wait(for: 1))
    #expect(log.entries == ["refreshRequired 0"])
    try thread.sync { held.reef!.refresh() }
    #expect(log.entries == ["refreshRequired 0", "didChange 1"])
    try thread.sync { held.clear() }
  }

  @Test func asyncWritesRunOnTheRunLoopInOrderWithTheirCompletions() throws {
    let (_, path) = try openReef()
    let thread = RunLoopThread()
    defer { thread.stop() }
    let log = LockedLog()
    let held = ThreadHeld()
    let note = { (entry: String) in log.append(thread.isCurrent ? entry : "\(entry) on another thread") }
    try thread.sync {
      let reef = try Reef(configuration: configuration(path))
      held.reef = reef
      reef.writeAsync {
        reef.add(makePerson(1, "A"))
        note("block A")
      } onComplete: { error in
        note("done A \(String(describing: error))")
      }
      reef.beginAsyncWrite {
        reef.add(makePerson(2, "B"))
        note("block B")
        // Queued after the blocks given before it.
        reef.beginAsyncWrite {
          reef.add(makePerson(4, "D"))
          note("block D")
          reef.commitAsyncWrite { _ in note("done D") }
        }
        reef.commitAsyncWrite { _ in note("done B") }
      }
      let cancelled = reef.beginAsyncWrite {
        reef.add(makePerson(9, "X"))
        note("block X")
        reef.commitAsyncWrite()
      }
      try reef.cancelAsyncWrite(cancelled)
      reef.beginAsyncWrite {
        reef.add(makePerson(5, "E"))
        note("block E, not committed")
      }
      // A synchronous transaction, committed at once; its completion comes later.
      reef.beginWrite()
      reef.add(makePerson(3, "C"))
      reef.commitAsyncWrite { _ in note("done C") }
      note("returned \(reef.isPerformingAsynchronousWriteOperations) \(reef.objects(Person.self).count)")
    }
    #expect(log.wait(for: 9))
    #expect(
      log.entries == [
        "returned true 1", "block A", "block B", "block E, not committed", "block D", "done C", "done A nil",
        "done B", "done D",
      ])
    let (names, busy) = try thread.sync {
      (
        held.reef!.objects(Person.self).sorted(byKeyPath: "id").map(\.name),
        held.reef!.isPerformingAsynchronousWriteOperations
      )
    }
    #expect(names == ["A", "B", "C", "D"])
    #expect(!busy)
    try thread.sync { held.clear() }
  }

  @Test func anAsyncWriteWaitsForAnotherThreadsWriteWithoutBlockingTheRunLoop() throws {
    let (_, path) = try openReef()
    let thread = RunLoopThread()
    defer { thread.stop() }
    let log = LockedLog()
    let held = ThreadHeld()
    let holder = HeldWrite(path: path, id: 1, name: "Ann")
    try thread.sync {
      let reef = try Reef(configuration: configuration(path))
      held.reef = reef
      reef.writeAsync {
        reef.add(makePerson(2, "Bob"))
      } onComplete: { error in
        log.append("done \(String(describing: error)) \(reef.objects(Person.self).count)")
      }
    }
    // The run loop still runs blocks while the write waits for the lock.
    #expect(try thread.sync { log.entries.isEmpty })
    holder.commit()
    #expect(log.wait(for: 1))
    #expect(log.entries == ["done nil 2"])
    try thread.sync { held.clear() }
  }
}
