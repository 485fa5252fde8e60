import CoreFoundation
import Dispatch
import ReefStore

/// Runs a thread-confined `Reef`'s later work on its thread's run loop, as Realm does: the
/// refreshes the change feed asks for (``Reef/autorefresh``), and the async writes and their
/// completions (``Reef/writeAsync(_:onComplete:)``).
///
/// The rule: work is handed to the run loop of the thread that opened the `Reef` (`RunLoop` /
/// `CFRunLoop`, in its default mode) and runs when that thread runs it: `RunLoop.current.run(…)`,
/// XCTest's `wait(for:timeout:)` and `waitForExpectations`. The main thread's `Reef` is also
/// handed to the main queue, so that a program parked in `dispatchMain()`, or main-actor code
/// that awaits, runs it too. A thread that never runs its run loop never runs the work (Linux
/// cannot tell whether a thread will), and it costs that thread one small block in its run loop
/// (two on the main thread), however many commits come: requests made while a block waits are
/// merged into it. The block holds the scheduler weakly: once the `Reef` and the work waiting for
/// it are gone, nothing of them stays in a run loop that never ran it.
///
/// Thread-safe: the change feed's thread and Reef's own write-lock waiter call ``schedule(_:)``
/// and ``commitsArrived(_:)``; the blocks run in the `Reef`'s confinement.
final class RunLoopScheduler: @unchecked Sendable {
  private let runLoop: CFRunLoop
  /// Whether the main queue is handed the work too (the main thread's `Reef`).
  private let alsoMainQueue: Bool
  private let lock = Lock()
  /// The work scheduled and not run yet, in order.
  private var waiting: [@Sendable () -> Void] = []
  /// The feed's last sequence number a refresh is asked for (0: none).
  private var refreshTo: UInt64 = 0
  /// The feed's sequence number the `Reef`'s observers were told of last: commits up to it ask
  /// for nothing (the `Reef`'s own).
  private var shown: UInt64 = 0
  /// Whether a block waits in the run loop, and on the main queue, not run yet.
  private var runLoopBlockWaits = false
  private var queueBlockWaits = false
  /// How many blocks were handed to the run loop and the main queue, in all (for tests: the
  /// measure that a thread that never runs its run loop does not pile them up).
  var blocksHandedOver: Int { lock.withLock { handedOver } }
  private var handedOver = 0
  /// The feed's sequence number a waiting refresh is asked for (0: none), for tests.
  var requestedRefresh: UInt64 { lock.withLock { refreshTo } }
  /// The `Reef` whose refreshes this runs; weak, so that a block waiting in a run loop that never
  /// runs keeps no `Reef` (nor its file) alive.
  weak var reef: Reef?
  /// The async writes' state; used only in the `Reef`'s confinement.
  let asyncWrites = AsyncWrites()
  /// A refresh asked for while the `Reef` was in a write transaction or calling its blocks: asked
  /// again when that ends (0: none). Used only in the `Reef`'s confinement.
  private var deferredRefresh: UInt64 = 0

  init(runLoop: CFRunLoop, alsoMainQueue: Bool) {
    self.runLoop = runLoop
    self.alsoMainQueue = alsoMainQueue
  }

  /// Runs `work` later, in order, when the `Reef`'s thread runs its run loop.
  func schedule(_ work: @escaping @Sendable () -> Void) {
    lock.withLock {
      waiting.append(work)
      handOverLocked()
    }
  }

  /// From the change feed's thread: commits up to `latest` were made. Asks for a refresh unless
  /// the observers were shown them already (the `Reef`'s own commits).
  func commitsArrived(_ latest: UInt64) {
    lock.withLock {
      guard latest > shown, latest > refreshTo else { return }
      refreshTo = latest
      handOverLocked()
    }
  }

  /// The `Reef`'s observers were told of the commits up to `sequence`.
  func observersSaw(_ sequence: UInt64) {
    lock.withLock { shown = sequence }
  }

  /// In the confinement: keeps a refresh that cannot run now for later (``resumeDeferred()``).
  func deferRefresh(_ latest: UInt64) {
    deferredRefresh = max(deferredRefresh, latest)
  }

  /// In the confinement, when a write transaction or a round of delivery ends: asks again for the
  /// refresh deferred meanwhile, if any.
  func resumeDeferred() {
    guard deferredRefresh > 0 else { return }
    let latest = deferredRefresh
    deferredRefresh = 0
    lock.withLock {
      refreshTo = max(refreshTo, latest)
      handOverLocked()
    }
  }

  /// Hands a block to the run loop (and the main queue) unless one waits there already: it will
  /// run what is waiting when it runs, this request included. Called with `lock` held, so that a
  /// request seen (``requestedRefresh``) has its block in the run loop already: handing over only
  /// enqueues the block, which runs later, on the run loop's thread.
  private func handOverLocked() {
    let toRunLoop = !runLoopBlockWaits
    let toQueue = alsoMainQueue && !queueBlockWaits
    runLoopBlockWaits = true
    if alsoMainQueue { queueBlockWaits = true }
    handedOver += (toRunLoop ? 1 : 0) + (toQueue ? 1 : 0)
    if toRunLoop {
      #if canImport(Darwin)
        let mode = CFRunLoopMode.defaultMode.rawValue
      #else
        let mode = kCFRunLoopDefaultMode
      #endif
      // Weakly: a run loop that never runs the block (its thread never runs it, or ends) must
      // not keep the scheduler, which holds that run loop, alive in a cycle.
      CFRunLoopPerformBlock(runLoop, mode) { [weak self] in self?.fire(fromQueue: false) }
      // A block alone does not wake a run loop that waits: this does.
      CFRunLoopWakeUp(runLoop)
    }
    if toQueue {
      DispatchQueue.main.async { [weak self] in self?.fire(fromQueue: true) }
    }
  }

  /// A block handed over runs: what was asked until now runs, in order (the flag is cleared
  /// first, so that what is asked from now on hands over another block).
  private func fire(fromQueue: Bool) {
    lock.withLock {
      if fromQueue { queueBlockWaits = false } else { runLoopBlockWaits = false }
    }
    // One at a time: work that runs the run loop itself (a wait inside a block) lets the next
    // ones run inside it, still in order.
    while let work = lock.withLock({ waiting.isEmpty ? nil : waiting.removeFirst() }) { work() }
    let latest = lock.withLock { () -> UInt64 in
      defer { refreshTo = 0 }
      return refreshTo
    }
    if latest > 0 { reef?.refreshFromRunLoop(to: latest) }
  }
}

/// A thread-confined `Reef`'s run loop: its scheduler, made at the first need, and the change
/// feed's observation that asks it for refreshes while notification blocks are registered
/// (cancelled with the `Reef`).
struct RunLoopDelivery {
  var scheduler: RunLoopScheduler?
  var feed: ChangeObservation?
}

extension Reef {
  /// This thread-confined live `Reef`'s run loop scheduler, made the first time (on the `Reef`'s
  /// thread, or the main queue for the main thread's `Reef`); nil for a `Reef` confined to a
  /// queue or an actor, and for a frozen one.
  func runLoopScheduler() -> RunLoopScheduler? {
    guard case .thread(let owner) = confinement, !isFrozen else { return nil }
    if let scheduler = runLoop.scheduler { return scheduler }
    let onMain = MainThread.isMainThread(owner)
    // Called in the confinement: on the owner's thread, unless it is the main thread's.
    let scheduler = RunLoopScheduler(
      runLoop: onMain ? CFRunLoopGetMain() : CFRunLoopGetCurrent(), alsoMainQueue: onMain)
    scheduler.reef = self
    runLoop.scheduler = scheduler
    return scheduler
  }

  /// When a notification block is registered on a thread-confined `Reef`: observes the change
  /// feed (the number of the last commit only), so that other threads' and processes' commits
  /// ask for a refresh on this thread's run loop.
  func startRunLoopRefreshes() {
    guard runLoop.feed == nil, let after = feedSequence, let scheduler = runLoopScheduler() else { return }
    scheduler.observersSaw(after)
    runLoop.feed = store.observeCommits(since: after) { [weak scheduler] latest in
      scheduler?.commitsArrived(latest)
    }
  }

  /// When the last notification block goes: stops observing the change feed.
  func stopRunLoopRefreshes() {
    runLoop.feed = nil
  }

  /// A turn of the run loop after other commits, up to `latest`: with ``autorefresh``, refreshes
  /// (which calls the blocks with what changed); without, tells the `Reef`-level blocks that a
  /// refresh is required. Nothing when the blocks were told of those commits already or are all
  /// gone; later (at the end of the write transaction or of the round of delivery) when this runs
  /// inside one.
  func refreshFromRunLoop(to latest: UInt64) {
    guard !observers.isEmpty, let shown = feedSequence, shown < latest else { return }
    if isInWriteTransaction || isDelivering {
      runLoop.scheduler?.deferRefresh(latest)
      return
    }
    if autorefresh { refresh() } else { notifyRefreshRequired() }
  }
}
