import CLMDB
@_spi(ReefInternal) import ReefBSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An observation of a store's change feed, made by ``Store/observeChanges(after:_:)``. It lasts
/// until ``cancel()``; while it lasts, it keeps its store open.
public final class ChangeObservation: @unchecked Sendable {
  fileprivate let watcher: ChangeWatcher
  fileprivate let number: Int

  fileprivate init(watcher: ChangeWatcher, number: Int) {
    self.watcher = watcher
    self.number = number
  }

  /// Stops the observation: its handler is not called again once this returns (unless it is
  /// running now, on the feed's thread, and this is called from elsewhere: that call ends first).
  /// The store's last observation also waits for the feed's thread to stop and let go of the
  /// store (closed then, if nothing else holds it).
  public func cancel() { watcher.remove(number) }

  deinit { cancel() }
}

extension Store {
  /// Calls `handler` with the change feed's commits after `sequence` (by default, the feed's
  /// latest now: only commits to come), in commit order, each commit once: those of this process
  /// as soon as they commit, those of other processes that opened the same file within a few
  /// milliseconds.
  ///
  /// The handler runs on the feed's own thread, one call at a time; it should hand work to its
  /// own queue or actor. A batch with ``ChangeBatch/isComplete`` false says commits were missed
  /// (the observer fell more than ``changeFeedRetention`` commits behind, or an entry of the feed
  /// in its range is damaged): read everything again.
  /// - Throws: what reading the feed's sequence number throws.
  public func observeChanges(after sequence: UInt64? = nil, _ handler: @escaping @Sendable (ChangeBatch) -> Void)
    throws -> ChangeObservation
  {
    try observe(after: sequence, .batches(handler))
  }

  /// Calls `handler` with the change feed's last sequence number whenever commits pass `sequence`
  /// (by default, the feed's latest now): ``observeChanges(after:_:)`` without reading what the
  /// commits changed, for an observer that only needs to know that something committed (it reads
  /// the changes itself later, or not at all). Each call's number is greater than the last one's;
  /// several commits close together may come as one call, with the last one's number.
  ///
  /// The handler runs on the feed's own thread, one call at a time, as ``observeChanges(after:_:)``'s.
  /// - Throws: what reading the feed's sequence number throws.
  public func observeCommits(after sequence: UInt64? = nil, _ handler: @escaping @Sendable (UInt64) -> Void)
    throws -> ChangeObservation
  {
    try observe(after: sequence, .latest(handler))
  }

  /// ``observeCommits(after:_:)`` after a sequence number the caller has read already (a
  /// transaction's ``Transaction/changeSequence()``): nothing is read, so nothing can fail.
  public func observeCommits(since sequence: UInt64, _ handler: @escaping @Sendable (UInt64) -> Void)
    -> ChangeObservation
  {
    observe(since: sequence, .latest(handler))
  }

  private func observe(after sequence: UInt64?, _ handler: ChangeWatcher.Handler) throws -> ChangeObservation {
    observe(since: try sequence ?? read { try $0.changeSequence() }, handler)
  }

  private func observe(since start: UInt64, _ handler: ChangeWatcher.Handler) -> ChangeObservation {
    let watcher = lock.withLock { () -> ChangeWatcher in
      if let changeWatcher { return changeWatcher }
      let made = ChangeWatcher(store: self)
      changeWatcher = made
      return made
    }
    return ChangeObservation(watcher: watcher, number: watcher.add(after: start, handler))
  }

  /// The commits of the change feed as an asynchronous sequence, from the commit after
  /// `sequence` (by default, the next one); it ends when the task iterating it is cancelled.
  public func changeBatches(after sequence: UInt64? = nil) throws -> AsyncStream<ChangeBatch> {
    let (stream, continuation) = AsyncStream<ChangeBatch>.makeStream(bufferingPolicy: .unbounded)
    let observation = try observeChanges(after: sequence) { batch in continuation.yield(batch) }
    continuation.onTermination = { _ in observation.cancel() }
    return stream
  }

  /// Wakes the feed's thread after a commit of this process.
  func signalChangeWatcher() {
    lock.withLock { changeWatcher }?.signal()
  }
}

extension ChangeWatcher.Handler {
  var wantsChanges: Bool {
    if case .batches = self { return true }
    return false
  }
}

/// The thread that reads a store's change feed for its observers: woken by this process's
/// commits, and every few milliseconds to look for other processes' (LMDB's last transaction
/// number, read without a transaction, tells whether anything committed).
final class ChangeWatcher: @unchecked Sendable {
  /// Unowned: the store holds its watcher; the thread holds the store while it runs
  /// (``heldStore``).
  private unowned let store: Store
  private var mutex = pthread_mutex_t()
  private var condition = pthread_cond_t()
  /// What an observer is given: the commits' changes, or only the feed's last sequence number.
  enum Handler {
    case batches(@Sendable (ChangeBatch) -> Void)
    case latest(@Sendable (UInt64) -> Void)
  }
  private var observers: [(number: Int, after: UInt64, handler: Handler)] = []
  private var nextNumber = 0
  private var signaled = false
  private var running = false
  /// The store, held from the thread's start until it stops: it lets go of it before it ends,
  /// and the cancel of the last observation waits for that, so that a store nothing else holds
  /// is closed when that cancel returns.
  private var heldStore: Store?
  /// The observer whose handler runs now, and the thread running it.
  private var delivering: Int?
  /// How long the thread sleeps when nothing signals it.
  static let pollInterval = 0.005

  init(store: Store) {
    self.store = store
    pthread_mutex_init(&mutex, nil)
    initMonotonicCondition(&condition)
  }

  deinit {
    pthread_cond_destroy(&condition)
    pthread_mutex_destroy(&mutex)
  }

  func add(after sequence: UInt64, _ handler: Handler) -> Int {
    pthread_mutex_lock(&mutex)
    defer { pthread_mutex_unlock(&mutex) }
    nextNumber += 1
    observers.append((nextNumber, sequence, handler))
    signaled = true
    if !running {
      running = true
      // The thread holds the store (and this watcher) until the last observer goes.
      heldStore = store
      if let thread = startThread({ [self] in run() }) {
        // Nobody joins it: it ends on its own once the last observer goes.
        pthread_detach(thread)
      } else {
        running = false
        heldStore = nil
      }
    }
    pthread_cond_broadcast(&condition)
    return nextNumber
  }

  func remove(_ number: Int) {
    pthread_mutex_lock(&mutex)
    // Let go of after the mutex is unlocked: what the handler holds may cancel other
    // observations as it goes (a ChangeObservation's deinit), which takes the mutex.
    let removed = observers.filter { $0.number == number }
    observers.removeAll { $0.number == number }
    pthread_cond_broadcast(&condition)
    // Waits for a handler of this observer that runs now, unless this is that handler.
    let onWatcher = watcherThreads.contains { pthread_equal(pthread_self(), $0) != 0 }
    while delivering == number && !onWatcher {
      pthread_cond_wait(&condition, &mutex)
    }
    // The last observation gone: waits for the thread to stop and let go of the store.
    while observers.isEmpty && (running || !watcherThreads.isEmpty) && !onWatcher {
      pthread_cond_wait(&condition, &mutex)
    }
    pthread_mutex_unlock(&mutex)
    withExtendedLifetime(removed) {}
  }

  /// The thread delivering, while it runs (and one that stops, until it has let go of the store).
  private var watcherThreads: [pthread_t] = []

  func signal() {
    pthread_mutex_lock(&mutex)
    signaled = true
    pthread_cond_broadcast(&condition)
    pthread_mutex_unlock(&mutex)
  }

  /// LMDB's last committed transaction number.
  private func lastTransaction() -> Int {
    var info = MDB_envinfo()
    mdb_env_info(store.environment, &info)
    return Int(info.me_last_txnid)
  }

  /// The feed's commits after `sequence`; for a damaged entry among them, an incomplete batch
  /// (what those commits changed is unknown: the observer reads everything again, and the
  /// other observers go on).
  private static func changes(in transaction: Transaction, after sequence: UInt64) throws(StoreError)
    -> ChangeBatch
  {
    do {
      return try transaction.changes(after: sequence)
    } catch {
      guard error.kind == .corrupt else { throw error }
      return ChangeBatch(commits: [], isComplete: false, latest: try transaction.changeSequence())
    }
  }

  private func run() {
    var seen = -1
    pthread_mutex_lock(&mutex)
    watcherThreads.append(pthread_self())
    pthread_mutex_unlock(&mutex)
    while true {
      pthread_mutex_lock(&mutex)
      if observers.isEmpty {
        running = false
        let held = heldStore
        heldStore = nil
        pthread_mutex_unlock(&mutex)
        // The store closes here if nothing else holds it.
        _ = consume held
        pthread_mutex_lock(&mutex)
        watcherThreads.removeAll { pthread_equal(pthread_self(), $0) != 0 }
        pthread_cond_broadcast(&condition)
        pthread_mutex_unlock(&mutex)
        return
      }
      if !signaled {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let nanoseconds = Int(deadline.tv_nsec) + Int(ChangeWatcher.pollInterval * 1e9)
        deadline.tv_sec += nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        #if canImport(Glibc)
          pthread_cond_timedwait(&condition, &mutex, &deadline)
        #else
          // Darwin's condition variables wait on the wall clock.
          var relative = timespec(tv_sec: 0, tv_nsec: Int(ChangeWatcher.pollInterval * 1e9))
          pthread_cond_timedwait_relative_np(&condition, &mutex, &relative)
        #endif
      }
      let wasSignaled = signaled
      signaled = false
      let waiting = observers.map { observer in
        (number: observer.number, after: observer.after, wantsChanges: observer.handler.wantsChanges)
      }
      pthread_mutex_unlock(&mutex)
      if waiting.isEmpty { continue }
      let last = lastTransaction()
      if !wasSignaled && last == seen { continue }
      // One read transaction for every observer: they see the same snapshot.
      var batches: [(number: Int, batch: ChangeBatch)] = []
      do {
        try store.read { transaction in
          for observer in waiting {
            guard observer.wantsChanges else {
              // Only the number: the changes are not read.
              let latest = try transaction.changeSequence()
              if latest != observer.after {
                batches.append((observer.number, ChangeBatch(commits: [], isComplete: false, latest: latest)))
              }
              continue
            }
            let batch = try ChangeWatcher.changes(in: transaction, after: observer.after)
            if !batch.commits.isEmpty || !batch.isComplete { batches.append((observer.number, batch)) }
          }
        }
      } catch {
        // A feed that cannot be read now (no reader slot free, the store is closing) is read
        // again at the next wake, the next poll included (`seen` is left as it was); nothing is
        // delivered out of order.
        continue
      }
      seen = last
      for (number, batch) in batches {
        pthread_mutex_lock(&mutex)
        guard let index = observers.firstIndex(where: { $0.number == number }) else {
          pthread_mutex_unlock(&mutex)
          continue
        }
        var handler = Optional(observers[index].handler)
        observers[index].after = batch.latest
        delivering = number
        pthread_mutex_unlock(&mutex)
        switch handler {
        case .batches(let call)?: call(batch)
        case .latest(let call)?: call(batch.latest)
        case nil: break
        }
        // Let go of before taking the mutex (the last reference, when the handler cancelled
        // its observation: see remove).
        handler = nil
        pthread_mutex_lock(&mutex)
        delivering = nil
        pthread_cond_broadcast(&condition)
        pthread_mutex_unlock(&mutex)
      }
    }
  }
}
