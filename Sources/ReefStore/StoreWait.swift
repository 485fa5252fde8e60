@_spi(ReefInternal) import ReefBSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Something a write is waiting for, reported through ``StoreOptions/onWait`` so that a tool
/// can say why it is not progressing ("waiting for another writer…") instead of hanging silently.
public struct StoreWait: Sendable, Hashable, CustomStringConvertible {
  /// What is waited for.
  public struct Kind: Sendable, Hashable, CustomStringConvertible {
    private let name: String
    /// Another write transaction, of this process or another: one writer at a time. Reported
    /// when beginning a write transaction has taken more than a second.
    public static let writer = Kind(name: "writer")
    /// Another import into the same collection (``Store/importDump(from:options:progress:)``):
    /// imports into one collection take turns. Reported once when an import finds it.
    public static let importLease = Kind(name: "importLease")
    /// `writer` or `importLease`.
    public var description: String { name }
  }

  /// What is waited for.
  public var kind: Kind
  /// The collection, for ``Kind/importLease``.
  public var collection: String?
  /// The process that holds what is waited for, when known (``Kind/importLease``).
  public var processID: Int32?

  /// Describes a wait.
  public init(kind: Kind, collection: String? = nil, processID: Int32? = nil) {
    self.kind = kind
    self.collection = collection
    self.processID = processID
  }

  /// A line for a user: `waiting for another writer…`, or `waiting for the import by process 42
  /// into shop.orders…`.
  public var description: String {
    if kind == .importLease, let collection {
      return "waiting for the import by process \(processID.map(String.init) ?? "?") into \(collection)…"
    }
    return "waiting for another writer…"
  }
}

/// Watches the write transactions of a store that are slow to begin, and reports each that has
/// waited longer than `delay` through a hook, once, from a thread of its own.
///
/// The writer's side is two short critical sections on an uncontended mutex: no system call, no
/// allocation. The thread starts with the first watched write and sleeps on a condition
/// variable; while writes come it wakes when the oldest unreported one is due (or `delay` after
/// the last it saw), and once none has come for `delay` it sleeps until the next one signals it.
final class WriteWaitWatch: @unchecked Sendable {
  private let hook: @Sendable (StoreWait) -> Void
  private let delay: Double
  private var mutex = pthread_mutex_t()
  private var condition = pthread_cond_t()
  /// The writes beginning now: ticket and start time, oldest first.
  private var beginning: [(ticket: UInt64, since: Double)] = []
  private var nextTicket: UInt64 = 0
  /// The tickets up to this one are reported (or done).
  private var reportedThrough: UInt64 = 0
  /// Whether the thread waits without a deadline (so a new write must wake it).
  private var idle = false
  private var started = false
  private var stopping = false
  private var thread: pthread_t?

  init(delay: Double, hook: @escaping @Sendable (StoreWait) -> Void) {
    self.delay = delay
    self.hook = hook
    pthread_mutex_init(&mutex, nil)
    initMonotonicCondition(&condition)
  }

  deinit {
    pthread_mutex_destroy(&mutex)
    pthread_cond_destroy(&condition)
  }

  /// Stops the thread and waits for it (the store is closing).
  func stop() {
    pthread_mutex_lock(&mutex)
    stopping = true
    pthread_cond_signal(&condition)
    let running = thread
    thread = nil
    pthread_mutex_unlock(&mutex)
    if let running { pthread_join(running, nil) }
  }

  /// Marks the start of a write's beginning (waiting for the write lock and LMDB's); returns the
  /// ticket to give to ``end(_:)`` when it has begun (or failed to).
  func begin() -> UInt64 {
    let now = Self.now()
    pthread_mutex_lock(&mutex)
    defer { pthread_mutex_unlock(&mutex) }
    nextTicket += 1
    beginning.append((nextTicket, now))
    if !started {
      started = true
      startThread()
    } else if idle {
      idle = false
      pthread_cond_signal(&condition)
    }
    return nextTicket
  }

  /// Marks the end of a write's beginning.
  func end(_ ticket: UInt64) {
    pthread_mutex_lock(&mutex)
    defer { pthread_mutex_unlock(&mutex) }
    if let position = beginning.firstIndex(where: { $0.ticket == ticket }) { beginning.remove(at: position) }
  }

  private func startThread() {
    // Without a thread, writes go unwatched.
    thread = ReefBSON.startThread { [self] in run() }
  }

  /// The thread: reports the writes that are due, then sleeps until the next is due.
  private func run() {
    pthread_mutex_lock(&mutex)
    var lastSeen: UInt64 = 0
    var quietSince = Self.now()
    while !stopping {
      let now = Self.now()
      if nextTicket != lastSeen {
        lastSeen = nextTicket
        quietSince = now
      }
      let due = beginning.filter { $0.ticket > reportedThrough && now - $0.since >= delay }
      if let last = due.last {
        reportedThrough = max(reportedThrough, last.ticket)
        pthread_mutex_unlock(&mutex)
        for _ in due { hook(StoreWait(kind: .writer)) }
        pthread_mutex_lock(&mutex)
        continue
      }
      if let oldest = beginning.first(where: { $0.ticket > reportedThrough }) {
        sleep(until: oldest.since + delay)
      } else if now - quietSince < delay {
        sleep(until: quietSince + delay)
      } else {
        idle = true
        pthread_cond_wait(&condition, &mutex)
        idle = false
      }
    }
    pthread_mutex_unlock(&mutex)
  }

  /// Waits on the condition until `deadline` (monotonic seconds) or a signal; the mutex is held.
  private func sleep(until deadline: Double) {
    #if canImport(Glibc)
      let seconds = deadline.rounded(.down)
      var time = timespec(tv_sec: Int(seconds), tv_nsec: Int((deadline - seconds) * 1e9))
      pthread_cond_timedwait(&condition, &mutex, &time)
    #else
      let remaining = max(0, deadline - Self.now())
      let seconds = remaining.rounded(.down)
      var time = timespec(tv_sec: Int(seconds), tv_nsec: Int((remaining - seconds) * 1e9))
      pthread_cond_timedwait_relative_np(&condition, &mutex, &time)
    #endif
  }

  /// Monotonic seconds.
  private static func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
  }
}

/// Initializes a condition variable whose timed waits count on the monotonic clock where the
/// platform allows it (Glibc), so that a change of the wall clock neither cuts nor stretches
/// them; for the store's watcher threads.
func initMonotonicCondition(_ condition: UnsafeMutablePointer<pthread_cond_t>) {
  #if canImport(Glibc)
    var attributes = pthread_condattr_t()
    pthread_condattr_init(&attributes)
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
    pthread_cond_init(condition, &attributes)
    pthread_condattr_destroy(&attributes)
  #else
    pthread_cond_init(condition, nil)
  #endif
}
