@_spi(ReefInternal) import ReefBSON
import ReefStore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The identifier of an async write or of an async commit's completion, for
/// ``Reef/cancelAsyncWrite(_:)``: Realm's `AsyncTransactionId`.
public typealias AsyncTransactionId = UInt32

/// What runs a `Reef`'s async writes and their completions in its confinement, in the order
/// they were scheduled (from any thread): its queue or actor (``ReefScheduler``), or its thread's
/// run loop (``RunLoopScheduler``).
protocol AsyncWriteScheduler: AnyObject, Sendable {
  /// The async writes' state; used only inside the confinement.
  var asyncWrites: AsyncWrites { get }
  /// Runs `work` later in the confinement, after the work scheduled before.
  func schedule(_ work: @escaping @Sendable () -> Void)
}

extension ReefScheduler: AsyncWriteScheduler {}
extension RunLoopScheduler: AsyncWriteScheduler {}

/// The async writes of a `Reef`: used only inside its confinement.
final class AsyncWrites {
  struct Pending {
    let id: AsyncTransactionId
    let block: () -> Void
    /// Told when the write transaction cannot begin (``Reef/writeAsync(_:onComplete:)``'s
    /// completion).
    let onBeginError: ((any Swift.Error) -> Void)?
  }
  var lastID: AsyncTransactionId = 0
  /// The blocks waiting for a write transaction, in order.
  var pending: [Pending] = []
  /// The block running now, in its write transaction.
  var running: AsyncTransactionId?
  /// Whether a round of ``Reef/runAsyncWrites()`` is scheduled (or a thread waits for the
  /// write lock to schedule one).
  var scheduled = false
  /// The completions scheduled and not called yet.
  var completions: [AsyncTransactionId: () -> Void] = [:]
  /// The grouped commits (``Reef/commitAsyncWrite(allowGrouping:_:)``) not flushed yet.
  var openGroup: CommitGroup?

  /// Commits written without a flush, made durable together by one ``Store/sync()`` scheduled
  /// at the first of them, before any of their completions.
  final class CommitGroup {
    /// Why the flush failed (each commit's completion gets it), or nil.
    var error: (any Swift.Error)?
  }

  func nextID() -> AsyncTransactionId {
    lastID &+= 1
    return lastID
  }
}

extension Reef {
  /// What runs this `Reef`'s async writes: its queue or actor, or its thread's run loop (made
  /// the first time). A frozen `Reef` stops, as Realm's does ("Can't perform transactions on a
  /// frozen Reef").
  private func asyncScheduler(_ call: String) -> any AsyncWriteScheduler {
    if isFrozen { reefStop("\(ReefError.frozenWrite().message) (\(call))") }
    if let scheduler = confinement.scheduler { return scheduler }
    // A live thread-confined Reef always has one.
    return runLoopScheduler()!
  }

  /// The async writes' state, if any were scheduled (nil otherwise; made by none of the callers).
  private var existingAsyncWrites: AsyncWrites? {
    confinement.scheduler?.asyncWrites ?? runLoop.scheduler?.asyncWrites
  }

  /// Runs `block` in a write transaction later, in this `Reef`'s confinement, and commits it;
  /// then calls `onComplete` there with nil, or the error the commit threw (a rule the block's
  /// `add`, `create` or `delete` broke: nothing of the transaction is kept). Realm's
  /// `writeAsync`.
  ///
  /// Returns at once: the calling thread never waits for the write lock (a thread of Reef's
  /// waits for it, then the block runs). Blocks run in the order they were given, each in its
  /// own transaction, and their completions in the same order. A block may call
  /// ``cancelWrite()``: nothing is committed, and `onComplete` gets nil.
  ///
  /// Where the block and `onComplete` run: on the `Reef`'s queue or actor; for a thread-confined
  /// `Reef`, on its thread's run loop, as Realm's, when the thread runs it (`RunLoop.current.run(…)`,
  /// XCTest's waits; the main thread's `Reef` also from the main queue, `dispatchMain()`). On a
  /// thread that never runs its run loop they never run, and the pending work keeps the `Reef`
  /// alive. A frozen `Reef` stops ("Can't perform transactions on a frozen Reef").
  /// - Returns: an identifier for ``cancelAsyncWrite(_:)``, which cancels the write while it
  ///   waits for the write lock.
  @discardableResult
  public func writeAsync(_ block: @escaping () -> Void, onComplete: (((any Swift.Error)?) -> Void)? = nil)
    -> AsyncTransactionId
  {
    checkThread()
    return enqueueAsyncWrite(
      { [unowned self] in
        block()
        if isInWriteTransaction {
          commitAsyncWrite(onComplete)
        } else if let onComplete {
          scheduleCompletion { onComplete(nil) }
        }
      }, onBeginError: onComplete, call: "writeAsync")
  }

  /// Begins a write transaction later, in this `Reef`'s confinement (its queue or actor, or its
  /// thread's run loop: see ``writeAsync(_:onComplete:)``), without blocking the calling thread,
  /// and calls `block` in it: Realm's `beginAsyncWrite`.
  ///
  /// `block` commits with ``commitAsyncWrite(allowGrouping:_:)`` (or
  /// ``commitWrite(withoutNotifying:)``) or cancels with ``cancelWrite()`` before it returns: as
  /// Realm's documentation says, returning without either cancels the transaction (it is rolled
  /// back). Blocks run in the order they were given, those given inside another's block or
  /// inside a synchronous write transaction included, after it.
  /// - Returns: an identifier for ``cancelAsyncWrite(_:)``.
  @discardableResult
  public func beginAsyncWrite(_ block: @escaping () -> Void) -> AsyncTransactionId {
    checkThread()
    return enqueueAsyncWrite(block, onBeginError: nil, call: "beginAsyncWrite")
  }

  /// Commits the write transaction now and calls `onComplete` later, in this `Reef`'s
  /// confinement (its queue or actor, or its thread's run loop), with nil or the error the commit
  /// threw: Realm's `commitAsyncWrite`. The transaction may have begun with ``beginWrite()``.
  ///
  /// Without a write transaction, `onComplete` gets a ``ReefError/Kind/transaction`` error.
  ///
  /// With `allowGrouping`, as in Realm, the commits of a run of async writes are flushed to disk
  /// together: each commits at once without waiting for the disk (and is seen by readers at
  /// once), and one flush (``ReefStore/Store/sync()``) after the run, before their completions,
  /// makes them all durable; a completion is called only then, with the flush's error if it
  /// failed (the commits stay, but a power loss may undo them). Under a configuration whose
  /// durability is not ``ReefStore/Durability/full`` there is no flush to share, and it changes
  /// nothing.
  /// - Returns: an identifier for ``cancelAsyncWrite(_:)``, which then stops `onComplete` from
  ///   being called (the commit is made all the same).
  @discardableResult
  public func commitAsyncWrite(allowGrouping: Bool = false, _ onComplete: (((any Swift.Error)?) -> Void)? = nil)
    -> AsyncTransactionId
  {
    checkThread()
    let scheduler = asyncScheduler("commitAsyncWrite")
    var failure: (any Swift.Error)?
    var group: AsyncWrites.CommitGroup?
    if isInWriteTransaction {
      let grouped = allowGrouping && configuration.durability == .full
      do {
        try commitWrite(durability: grouped ? .normal : nil)
        if grouped { group = openCommitGroup(scheduler) }
      } catch {
        failure = error
      }
    } else {
      failure = ReefError(
        .transaction,
        "commitAsyncWrite without a write transaction: call it in a beginAsyncWrite block, or after beginWrite")
    }
    guard let onComplete else { return scheduler.asyncWrites.nextID() }
    return scheduleCompletion { [failure] in onComplete(failure ?? group?.error) }
  }

  /// The open group of grouped commits; the first commit opens one and schedules its flush,
  /// which runs after the blocks running or scheduled now and before their completions.
  private func openCommitGroup(_ scheduler: any AsyncWriteScheduler) -> AsyncWrites.CommitGroup {
    let writes = scheduler.asyncWrites
    if let group = writes.openGroup { return group }
    let group = AsyncWrites.CommitGroup()
    writes.openGroup = group
    // Used in the confinement only.
    let carried = Confined((writes, group, store))
    scheduler.schedule {
      let (writes, group, store) = carried.value
      writes.openGroup = nil
      do {
        try store.sync()
      } catch {
        group.error = error
      }
    }
    return group
  }

  /// Cancels an async write that has not begun (its block and completion are not called) or the
  /// call of an async commit's completion (the commit stays). Does nothing for an identifier
  /// whose block runs or ran, or whose completion was called.
  /// - Parameter asyncTransactionId: What ``writeAsync(_:onComplete:)``,
  ///   ``beginAsyncWrite(_:)`` or ``commitAsyncWrite(allowGrouping:_:)`` returned.
  /// - Throws: Nothing today; declared `throws` as Realm's is, so that its callers' `try` ports.
  public func cancelAsyncWrite(_ asyncTransactionId: AsyncTransactionId) throws {
    checkThread()
    guard let writes = existingAsyncWrites else { return }
    writes.pending.removeAll { $0.id == asyncTransactionId }
    writes.completions[asyncTransactionId] = nil
  }

  /// Whether async writes or their completions are waiting or running.
  public var isPerformingAsynchronousWriteOperations: Bool {
    checkThread()
    guard let writes = existingAsyncWrites else { return false }
    return !writes.pending.isEmpty || writes.running != nil || !writes.completions.isEmpty
  }

  /// Writes in a transaction on this actor-confined `Reef`: Realm's `asyncWrite`. While another
  /// writer of this process holds the write lock, it suspends (a thread of Reef's waits for the
  /// lock), so the actor runs its other work meanwhile; then it begins the transaction, runs
  /// `block` and commits with no suspension in between, on one thread. Observers are called
  /// after the commit.
  /// - Throws: what `block` throws, or the error the commit throws (a broken rule, the store's
  ///   error); nothing of the transaction is kept then. ``ReefError/Kind/confinement`` on a
  ///   `Reef` that is not confined to an actor (use ``write(_:)`` or ``writeAsync(_:onComplete:)``).
  @discardableResult
  public func asyncWrite<Result>(isolation: isolated (any Actor)? = #isolation, _ block: () throws -> Result)
    async throws -> Result
  {
    guard let scheduler = confinement.scheduler, scheduler.isActor else {
      throw ReefError(
        .confinement,
        "asyncWrite needs a Reef opened on an actor (Reef(configuration:actor:)); this one is confined to a thread or a queue: use write, or writeAsync on a queue-confined Reef"
      )
    }
    checkThread()
    while try !beginWrite(waiting: false) {
      let store = self.store
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        waitForWriteLock(store) { continuation.resume() }
      }
    }
    return try runInWrite(block)
  }

  // MARK: Running async writes

  private func enqueueAsyncWrite(
    _ block: @escaping () -> Void, onBeginError: ((any Swift.Error) -> Void)?, call: String
  ) -> AsyncTransactionId {
    let scheduler = asyncScheduler(call)
    let writes = scheduler.asyncWrites
    let id = writes.nextID()
    writes.pending.append(AsyncWrites.Pending(id: id, block: block, onBeginError: onBeginError))
    if !writes.scheduled {
      writes.scheduled = true
      // Held by the work until it runs: the writes run even if the caller lets go of the Reef.
      let reef = Confined(self)
      scheduler.schedule { reef.value.runAsyncWrites() }
    }
    return id
  }

  /// Runs the waiting async writes, each in its transaction, while the write lock is free; when
  /// another writer holds it, a thread of Reef's waits for it and schedules the next round.
  private func runAsyncWrites() {
    let scheduler = asyncScheduler("writeAsync")
    let writes = scheduler.asyncWrites
    writes.scheduled = false
    while let next = writes.pending.first {
      let began: Bool
      do {
        began = try !isInWriteTransaction && beginWrite(waiting: false)
      } catch {
        writes.pending.removeFirst()
        if let onBeginError = next.onBeginError { scheduleCompletion { onBeginError(error) } }
        continue
      }
      guard began else {
        writes.scheduled = true
        let reef = Confined(self)
        waitForWriteLock(store) { scheduler.schedule { reef.value.runAsyncWrites() } }
        return
      }
      writes.pending.removeFirst()
      writes.running = next.id
      next.block()
      writes.running = nil
      // Returning without a commit cancels (see beginAsyncWrite); on a queue, a transaction left
      // open could not outlive the block's thread either (LMDB binds it to one).
      if isInWriteTransaction { cancelWrite() }
    }
  }

  /// Schedules a completion in the confinement, after what is scheduled already; returns its
  /// identifier.
  @discardableResult
  private func scheduleCompletion(_ completion: @escaping () -> Void) -> AsyncTransactionId {
    let scheduler = asyncScheduler("commitAsyncWrite")
    let id = scheduler.asyncWrites.nextID()
    scheduler.asyncWrites.completions[id] = completion
    let reef = Confined(self)
    scheduler.schedule {
      guard let writes = reef.value.existingAsyncWrites,
        let completion = writes.completions.removeValue(forKey: id)
      else { return }
      completion()
    }
    return id
  }
}

/// Calls `then` from a thread of its own once no writer of this process holds `store`'s write
/// lock (at once, on the caller's thread, if no thread can be started).
private func waitForWriteLock(_ store: Store, then: @escaping @Sendable () -> Void) {
  let started = startThread {
    store.waitUntilWriteLockIsFree()
    then()
  }
  if let started {
    pthread_detach(started)
  } else {
    store.waitUntilWriteLockIsFree()
    then()
  }
}
