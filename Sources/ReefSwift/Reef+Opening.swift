import Dispatch
import ReefStore

/// What gives ``Reef`` Realm's initializers, which return the `Reef` already open for the same
/// file on the calling thread, queue or actor (Swift lets only a protocol extension's
/// initializer return an existing instance of a class). Not for use: ``Reef`` is its only
/// conforming type.
public protocol _ReefOpening {}

extension Reef: _ReefOpening {}

extension _ReefOpening where Self: Reef {
  /// Opens the default configuration's file (`default.reef` in the working directory), or
  /// returns the `Reef` already open for it on this thread (or, with `queue`, on that queue).
  /// - Parameter queue: A serial queue to confine the `Reef` to (call this from a block running
  ///   on it), as ``init(configuration:queue:)``; nil for the calling thread.
  /// - Throws: what ``init(configuration:queue:)`` throws.
  public init(queue: DispatchQueue? = nil) throws {
    self = try Reef.open(.defaultConfiguration, queue: queue) as! Self
  }

  /// Opens a file, or returns the `Reef` already open for it on this thread: Realm's
  /// `Realm(fileURL:)`.
  /// - Parameter fileURL: The store file.
  /// - Throws: what ``init(configuration:queue:)`` throws.
  public init(fileURL: URL) throws {
    var configuration = Reef.Configuration.defaultConfiguration
    configuration.fileURL = fileURL
    self = try Reef.open(configuration, queue: nil) as! Self
  }

  /// Opens the file a configuration names, checks the schema of its
  /// ``Reef/Configuration/objectTypes``, runs its migration and sets up collections and
  /// indexes; or returns the `Reef` already open for the same file on this thread (or queue).
  ///
  /// As Realm's, a `Reef` is one per thread (queue, actor) and file while it lives: a second
  /// `try Reef()` on a thread returns the same instance, inside the same write transaction and
  /// seeing its own writes. Opening the file again on the same thread with another
  /// ``Reef/Configuration/readOnly`` or in-memory setting stops the program ("Reef at path
  /// '…' already opened with different read permissions"), as Realm's does.
  /// - Parameters:
  ///   - configuration: The file and how to open it.
  ///   - queue: A serial queue to confine the `Reef` to instead of the calling thread: call this
  ///     from a block running on it (elsewhere, it stops: "Reef opened from incorrect dispatch
  ///     queue."). Its `Reef` refreshes itself after each commit of any thread or process (the
  ///     store's change feed wakes it on `queue`) and calls its observers there; it can write
  ///     without blocking the queue (``Reef/writeAsync(_:onComplete:)``). A write transaction
  ///     begun with ``Reef/beginWrite()`` must end in the same block: LMDB binds it to a thread.
  /// - Throws: ``ReefError`` of kind ``ReefError/Kind/schema`` naming each rule a model breaks;
  ///   ``ReefError/Kind/schemaMismatch`` when the file's schema version is newer, or a model
  ///   changed without a new version; ``ReefError/Kind/mismatchedConfig`` when another thread,
  ///   queue or actor of this process has the file open with another read-only or in-memory
  ///   setting, schema version or ``Reef/Configuration/deleteReefIfMigrationNeeded``;
  ///   ``ReefError/Kind/store`` when the file cannot be opened.
  public init(configuration: Reef.Configuration, queue: DispatchQueue? = nil) throws {
    self = try Reef.open(configuration, queue: queue) as! Self
  }

  /// Opens a file for use while isolated to `actor`, or returns the `Reef` already open for it
  /// there: Realm's `Realm(configuration:actor:)`. Call it from the actor
  /// (`try await Reef(configuration: configuration, actor: self)`).
  ///
  /// The `Reef` refreshes itself after each commit of any `Reef`, thread or process, and calls
  /// its observers on the actor; ``Reef/asyncWrite(isolation:_:)`` writes without blocking the
  /// actor's executor while another writer holds the write lock. Using it, or its objects,
  /// outside the actor's isolation stops the program.
  /// - Parameters:
  ///   - configuration: The file and how to open it.
  ///   - actor: The actor to confine the `Reef` to.
  ///   - downloadBeforeOpen: Realm's sync option; Reef has no sync: with `.always`, and with
  ///     `.once` for a file that does not exist yet, the file is opened and migrated on another
  ///     thread first (see ``Reef/OpenBehavior``).
  /// - Throws: what ``init(configuration:queue:)`` throws.
  public init<A: Actor>(
    configuration: Reef.Configuration = .defaultConfiguration, actor: isolated A,
    downloadBeforeOpen: Reef.OpenBehavior = .never
  ) async throws {
    if downloadBeforeOpen.opensElsewhere(configuration) { try await Reef.prepareElsewhere(configuration) }
    self = try Reef.open(configuration, confinement: .scheduled(ReefScheduler(actor: actor))) as! Self
  }

  /// Opens a file for the main actor, as Realm's `Realm(configuration:downloadBeforeOpen:)`:
  /// the `Reef` is confined to the main actor (see ``init(configuration:actor:downloadBeforeOpen:)``).
  ///
  /// Unlike Realm's, `downloadBeforeOpen` has no default: an `await Reef(configuration:)` in
  /// async code calls ``init(configuration:queue:)`` (which opens on the calling thread), so
  /// that adding this initializer broke no synchronous call made from async code.
  /// - Parameters:
  ///   - configuration: The file and how to open it.
  ///   - downloadBeforeOpen: See ``Reef/OpenBehavior``.
  /// - Throws: what ``init(configuration:queue:)`` throws.
  @MainActor
  public init(configuration: Reef.Configuration = .defaultConfiguration, downloadBeforeOpen: Reef.OpenBehavior)
    async throws
  {
    if downloadBeforeOpen.opensElsewhere(configuration) { try await Reef.prepareElsewhere(configuration) }
    self = try Reef.open(configuration, confinement: .scheduled(ReefScheduler(actor: MainActor.shared))) as! Self
  }
}

extension Reef {
  /// When an asynchronous open does its work (opening, migrating) on another thread before it
  /// returns: Realm's `Realm.OpenBehavior`. Realm downloads a synchronized file's data first;
  /// Reef has no sync, so these only say whether the file is prepared elsewhere.
  public enum OpenBehavior: Sendable {
    /// Opens at once, as the synchronous initializers do.
    case never
    /// Opens (and migrates) the file on another thread first.
    case always
    /// As `.always` when the file does not exist yet, else as `.never`.
    case once

    func opensElsewhere(_ configuration: Configuration) -> Bool {
      switch self {
      case .never: false
      case .always: true
      case .once: !Reef.fileExists(for: configuration)
      }
    }
  }

  /// Whether the file of a configuration exists: Realm's `fileExists(for:)`. For an in-memory
  /// configuration, whether a `Reef` of its identifier is open in this process.
  public static func fileExists(for configuration: Configuration) -> Bool {
    FileManager.default.fileExists(atPath: configuration.path)
  }

  /// Opens a file on a thread of its own (so that its migration runs there) and closes it,
  /// unless a `Reef` of it is open in this process already.
  static func prepareElsewhere(_ configuration: Configuration) async throws {
    guard !StoreTable.isOpen(path: configuration.path) else { return }
    let carried = Confined(configuration)
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Swift.Error>) in
      DispatchQueue.global().async {
        do {
          _ = try Reef.open(carried.value, queue: nil)
          continuation.resume()
        } catch {
          continuation.resume(throwing: error)
        }
      }
    }
  }

  /// The `Reef` of a configuration for the calling thread, or for `queue` (called on it).
  static func open(_ configuration: Configuration, queue: DispatchQueue?) throws -> Reef {
    if let queue {
      let scheduler = ReefScheduler(queue: queue)
      guard scheduler.isCurrent else { reefStop("Reef opened from incorrect dispatch queue.") }
      return try open(configuration, confinement: .scheduled(scheduler))
    }
    MainThread.recordIfMain()
    return try open(configuration, confinement: .thread(MainThread.owner()))
  }

  /// The `Reef` open for `configuration`'s file in `confinement`, or a new one, kept (weakly) for
  /// the next open there. `confinement` is a new scheduler for a queue or an actor: the one of
  /// the `Reef` found is kept.
  static func open(_ configuration: Configuration, confinement: Confinement) throws -> Reef {
    let key = OpenReefs.Key(confinement)
    let path = configuration.path
    if let open = OpenReefs.reef(key, path: path) {
      try open.reuse(for: configuration)
      return open
    }
    let reef = try Reef(configuration: configuration, confinement: confinement)
    if let scheduler = confinement.scheduler { reef.startRefreshing(scheduler) }
    OpenReefs.keep(reef, key, path: path)
    return reef
  }

  /// Checks that an open `Reef` may be returned for `configuration` (as Realm's cache does) and
  /// checks and takes the configuration's object types.
  private func reuse(for other: Configuration) throws {
    let path = configuration.path
    if configuration.readOnly != other.readOnly {
      reefStop("Reef at path '\(path)' already opened with different read permissions")
    }
    if (configuration.inMemoryIdentifier == nil) != (other.inMemoryIdentifier == nil) {
      reefStop("Reef at path '\(path)' already opened with different inMemory settings")
    }
    // Realm returns its cached Realm here whatever the schema version: a `Reef` of another
    // version than the one asked for would hide the mistake, so it is refused as on another
    // thread.
    if let error = StoreTable.Settings(configuration).mismatch(StoreTable.Settings(other), path: path) { throw error }
    if let objectTypes = other.objectTypes {
      try SchemaCheck.check(objectTypes.map(ObjectSchema.of), complete: true)
      for objectClass in objectTypes { try register(objectClass) }
    }
  }
}

/// The live `Reef`s open in this process, one per confinement and file, held weakly (a `Reef`
/// closes when its last user lets go): a thread's in its own state (gone with the thread), a
/// queue's or actor's in a table of the process.
enum OpenReefs {
  /// Whose `Reef`s: a thread's, or a queue's or actor's (by the queue's mark or the actor).
  enum Key: Hashable {
    case thread
    case scheduled(ObjectIdentifier)

    init(_ confinement: Confinement) {
      switch confinement {
      case .thread: self = .thread
      case .scheduled(let scheduler):
        switch scheduler.target {
        case .queue(_, let mark): self = .scheduled(ObjectIdentifier(mark))
        case .actor(let actor): self = .scheduled(ObjectIdentifier(actor))
        }
      }
    }
  }
  private struct Entry: Hashable {
    let owner: ObjectIdentifier
    let path: String
  }
  private static let lock = Lock()
  nonisolated(unsafe) private static var scheduled: [Entry: WeakReef] = [:]

  /// The `Reef` open for `path` in the caller's thread (the main thread's, from the main queue)
  /// or in the queue or actor of `key`.
  static func reef(_ key: Key, path: String) -> Reef? {
    switch key {
    case .thread: return MainThread.ownerState().openReefs[path]?.reef
    case .scheduled(let owner): return lock.withLock { scheduled[Entry(owner: owner, path: path)]?.reef }
    }
  }

  /// Keeps `reef` (weakly) as the one for `path` in `key`; drops the entries of `Reef`s gone.
  static func keep(_ reef: Reef, _ key: Key, path: String) {
    switch key {
    case .thread:
      let state = MainThread.ownerState()
      state.openReefs = state.openReefs.filter { $0.value.reef != nil }
      state.openReefs[path] = WeakReef(reef)
    case .scheduled(let owner):
      lock.withLock {
        scheduled = scheduled.filter { $0.value.reef != nil }
        scheduled[Entry(owner: owner, path: path)] = WeakReef(reef)
      }
    }
  }
}

extension ReefError.Kind {
  /// A file was opened while another thread, queue or actor of this process has it open with
  /// other settings (read-only or not, in memory or not, schema version,
  /// ``Reef/Configuration/deleteReefIfMigrationNeeded``): Realm's mismatched configuration.
  public static let mismatchedConfig = ReefError.Kind(rawValue: "mismatchedConfig")
}

extension Reef {
  /// What ``asyncOpen(configuration:callbackQueue:callback:)`` returns, to cancel the open:
  /// Realm's `AsyncOpenTask`.
  public struct AsyncOpenTask: Sendable {
    let state: AsyncOpenState

    /// Cancels the open: its callback is not called, unless it was already.
    public func cancel() { state.cancel() }
  }

  /// Opens a file on another thread (where its migration runs), then calls `callback` on
  /// `callbackQueue` with a `Reef` confined to that queue (as ``init(configuration:queue:)``
  /// makes it), or with the error: Realm's `asyncOpen`. Realm's also downloads a synchronized
  /// file's data first; Reef has no sync.
  ///
  /// The main queue's blocks run only while the main thread serves them (`dispatchMain()`, or
  /// top-level code waiting in an `await`): give a queue of your own otherwise.
  /// - Parameters:
  ///   - configuration: The file and how to open it.
  ///   - callbackQueue: A serial queue; the `Reef` passed to `callback` is confined to it.
  ///   - callback: Called once, on `callbackQueue`, unless the task is cancelled first.
  /// - Returns: A task whose `cancel()` stops the callback from being called.
  @discardableResult
  public static func asyncOpen(
    configuration: Configuration = .defaultConfiguration, callbackQueue: DispatchQueue = .main,
    callback: @escaping (Result<Reef, any Swift.Error>) -> Void
  ) -> AsyncOpenTask {
    let state = AsyncOpenState()
    // The callback is called on the callback queue only.
    let opening = Confined(AsyncOpening(configuration: configuration, callback: callback))
    DispatchQueue.global().async {
      let failure = opening.value.prepare()
      callbackQueue.async {
        guard state.begin() else { return }
        opening.value.finish(on: callbackQueue, failure: failure)
      }
    }
    return AsyncOpenTask(state: state)
  }
}

/// The work of ``Reef/asyncOpen(configuration:callbackQueue:callback:)``.
final class AsyncOpening {
  let configuration: Reef.Configuration
  let callback: (Result<Reef, any Swift.Error>) -> Void

  init(configuration: Reef.Configuration, callback: @escaping (Result<Reef, any Swift.Error>) -> Void) {
    self.configuration = configuration
    self.callback = callback
  }

  /// Opens the file on this thread (running its migration) and closes it, unless it is open in
  /// this process already; returns the error.
  func prepare() -> (any Swift.Error)? {
    guard !StoreTable.isOpen(path: configuration.path) else { return nil }
    do {
      _ = try Reef.open(configuration, queue: nil)
      return nil
    } catch {
      return error
    }
  }

  /// Calls the callback with the queue's `Reef` (or with `failure`); on `queue`.
  func finish(on queue: DispatchQueue, failure: (any Swift.Error)?) {
    if let failure { return callback(.failure(failure)) }
    let result: Result<Reef, any Swift.Error>
    do {
      result = .success(try Reef.open(configuration, queue: queue))
    } catch {
      result = .failure(error)
    }
    callback(result)
  }
}

/// Whether an async open was cancelled or its callback called.
final class AsyncOpenState: @unchecked Sendable {
  private let lock = Lock()
  private var done = false

  func cancel() { lock.withLock { done = true } }

  /// Whether the callback is to be called (once): not cancelled, not called yet.
  func begin() -> Bool {
    lock.withLock {
      if done { return false }
      done = true
      return true
    }
  }
}
