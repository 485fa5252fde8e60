import Dispatch
@_spi(ReefInternal) import ReefBSON
import ReefStore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What a `Reef` and its live objects are confined to: the thread that opened it, a serial
/// `DispatchQueue` (``Reef/init(configuration:queue:)``) or an actor
/// (``Reef/init(configuration:actor:)``). Every access checks it (``Reef/checkThread()``).
enum Confinement {
  /// Usable from this thread only.
  case thread(ThreadID)
  /// Usable from blocks running on a queue, or while isolated to an actor.
  case scheduled(ReefScheduler)

  static let message =
    "Reef accessed from incorrect thread: a Reef and its live objects belong to the thread, queue or actor it was opened on"

  /// Stops with ``message`` when called outside the confinement. The thread case, the most
  /// common, is one comparison; the others are checked out of line.
  @inline(__always) func check() {
    if case .thread(let owner) = self, owner == .current { return }
    checkOutOfLine()
  }

  @inline(never) private func checkOutOfLine() {
    switch self {
    case .thread(let owner):
      // Opened on the main thread: blocks of the main queue (the main actor's code, top-level
      // code after an `await`) are the same confinement, on whatever thread libdispatch runs
      // them once the main thread is parked in `dispatchMain()`.
      if MainThread.isOwnedByMainQueue(owner) { return }
      reefStop(Confinement.message)
    case .scheduled(let scheduler): scheduler.check()
    }
  }

  /// Whether the caller may use the `Reef` now, for a thread or a queue (an actor's isolation is
  /// only checked, by stopping: ``check()``).
  var isCurrent: Bool {
    switch self {
    case .thread(let owner): owner == .current || MainThread.isOwnedByMainQueue(owner)
    case .scheduled(let scheduler): scheduler.isCurrent
    }
  }

  /// The scheduler of a queue- or actor-confined `Reef`.
  var scheduler: ReefScheduler? {
    if case .scheduled(let scheduler) = self { return scheduler }
    return nil
  }
}

/// The main thread, as the first `Reef` opened on it recorded it: its `Reef`s may also be used
/// from the main queue's blocks, which are serial with the main thread's own code (the main
/// thread runs them, or parks in `dispatchMain()` and lets libdispatch run them elsewhere).
enum MainThread {
  private static let lock = Lock()
  nonisolated(unsafe) private static var id: ThreadID?
  /// The main thread's state, which holds its open `Reef`s (kept when the main thread parks).
  nonisolated(unsafe) private static var state: ThreadState?
  private static let mainQueue = QueueMark.of(.main)

  /// Records the calling thread when it is the main thread.
  static func recordIfMain() {
    guard Thread.isMainThread else { return }
    lock.withLock {
      if id == nil {
        id = .current
        state = ThreadState.current
      }
    }
  }

  /// The main thread's state when the caller is a block of the main queue running on another
  /// thread (the main thread is parked), else nil.
  private static func parkedMainState() -> (ThreadID, ThreadState)? {
    guard !Thread.isMainThread, mainQueue.isCurrent else { return nil }
    return lock.withLock { id.flatMap { id in state.map { (id, $0) } } }
  }

  /// The thread a `Reef` opened now is confined to: the calling thread, or the main thread for
  /// a block of the main queue.
  static func owner() -> ThreadID { parkedMainState()?.0 ?? .current }

  /// The state of ``owner()``'s thread.
  static func ownerState() -> ThreadState { parkedMainState()?.1 ?? ThreadState.current }

  /// Whether `owner` is the main thread (as the first `Reef` opened on it recorded it).
  static func isMainThread(_ owner: ThreadID) -> Bool {
    lock.withLock { id.map { $0 == owner } ?? false }
  }

  /// Whether `owner` is the main thread and the caller runs on the main queue.
  static func isOwnedByMainQueue(_ owner: ThreadID) -> Bool {
    lock.withLock { id.map { $0 == owner } ?? false } && mainQueue.isCurrent
  }
}

/// What marks a queue a `Reef` is confined to, set as the queue's specific value: a block runs
/// on the queue (or on a queue that targets it) when `DispatchQueue.getSpecific` finds it.
final class QueueMark: Sendable {
  static let key = DispatchSpecificKey<QueueMark>()
  private static let lock = Lock()

  /// The queue's mark, set on it the first time.
  static func of(_ queue: DispatchQueue) -> QueueMark {
    lock.withLock {
      if let mark = queue.getSpecific(key: key) { return mark }
      let mark = QueueMark()
      queue.setSpecific(key: key, value: mark)
      return mark
    }
  }

  /// Whether the calling block runs on the marked queue.
  @inline(__always) var isCurrent: Bool { DispatchQueue.getSpecific(key: QueueMark.key) === self }
}

/// Runs work for a queue- or actor-confined `Reef` in its confinement, in the order it was
/// scheduled (from any thread): the change feed's wake-ups, async writes and their completions.
final class ReefScheduler: @unchecked Sendable {
  enum Target {
    case queue(DispatchQueue, QueueMark)
    case actor(any Actor)
  }
  let target: Target
  private let lock = Lock()
  /// The work scheduled and not run yet, in order (an actor's tasks may start in any order, so
  /// each runs what is waiting, first in, first out).
  private var waiting: [@Sendable () -> Void] = []
  /// The change feed's observation that refreshes the `Reef` (cancelled when this goes).
  var feed: ChangeObservation?
  /// The async writes' state; used only inside the confinement.
  let asyncWrites = AsyncWrites()

  init(queue: DispatchQueue) { target = .queue(queue, QueueMark.of(queue)) }
  init(actor: any Actor) { target = .actor(actor) }

  deinit { feed?.cancel() }

  var isActor: Bool {
    if case .actor = target { return true }
    return false
  }

  /// Whether the caller is on the queue (false for an actor: see ``check()``).
  var isCurrent: Bool {
    switch target {
    case .queue(_, let mark): mark.isCurrent
    case .actor: false
    }
  }

  /// Stops with ``Confinement/message`` outside the queue or the actor's isolation.
  func check() {
    switch target {
    case .queue(_, let mark): reefRequire(mark.isCurrent, Confinement.message)
    case .actor(let actor): actor.preconditionIsolated(Confinement.message)
    }
  }

  /// Runs `work` later in the confinement: on the queue, or isolated to the actor.
  func schedule(_ work: @escaping @Sendable () -> Void) {
    lock.withLock { waiting.append(work) }
    switch target {
    case .queue(let queue, _):
      queue.async { self.runWaiting() }
    case .actor(let actor):
      Task { await ReefScheduler.run(on: actor) { self.runWaiting() } }
    }
  }

  private static func run(on actor: isolated any Actor, _ body: @Sendable () -> Void) { body() }

  /// Runs the work waiting now, in order.
  private func runWaiting() {
    while let work = lock.withLock({ waiting.isEmpty ? nil : waiting.removeFirst() }) { work() }
  }
}

/// A value carried into the confinement it belongs to (a `Reef`, a block), which only that
/// confinement uses.
struct Confined<Value>: @unchecked Sendable {
  let value: Value
  init(_ value: Value) { self.value = value }
}

extension Reef {
  /// Observes the change feed: each commit it reports refreshes this `Reef` in its confinement.
  func startRefreshing(_ scheduler: ReefScheduler) {
    let reef = WeakReef(self)
    scheduler.feed = try? store.observeChanges { [weak scheduler] batch in
      scheduler?.schedule { reef.reef?.refreshForFeed(latest: batch.latest) }
    }
  }

  /// Refreshes to a commit the feed reported, unless this `Reef` shows it already (its own
  /// commits) or a write transaction is open; with ``autorefresh`` off, tells the `Reef`-level
  /// observers instead.
  private func refreshForFeed(latest: UInt64) {
    guard !isInWriteTransaction else { return }
    if let seen = try? transaction().changeSequence(), seen >= latest { return }
    guard autorefresh else { return notifyRefreshRequired() }
    refresh()
  }
}

/// A weak reference to a `Reef`, carried into its confinement.
final class WeakReef: @unchecked Sendable {
  weak var reef: Reef?
  init(_ reef: Reef) { self.reef = reef }
}
