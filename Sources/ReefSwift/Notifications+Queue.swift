import Dispatch
import ReefBSON
import ReefStore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The `Reef`s that deliver notifications on a queue or to an actor: one per queue or actor and
/// file, confined there, opened by the first observation there and closed when the last one
/// ends. Only the queue or actor itself opens and lets go of its `Reef`s.
final class ConfinedReefs: @unchecked Sendable {
  static let shared = ConfinedReefs()
  private struct Key: Hashable {
    let owner: ObjectIdentifier
    let path: String
  }
  private let lock = Lock()
  private var entries: [Key: (reef: Reef, count: Int)] = [:]

  /// The `Reef` of `owner` (a queue or an actor) and `path`, if one is open; counted as held.
  func take(_ owner: AnyObject, path: String) -> Reef? {
    let key = Key(owner: ObjectIdentifier(owner), path: path)
    return lock.withLock {
      guard let entry = entries[key] else { return nil }
      entries[key] = (entry.reef, entry.count + 1)
      return entry.reef
    }
  }

  /// Records `opened` as the `Reef` of `owner` and `path`, held once, and returns it; if another
  /// was recorded meanwhile (an actor's observations interleave while one opens), that one.
  func insert(_ opened: Reef, _ owner: AnyObject, path: String) -> Reef {
    let key = Key(owner: ObjectIdentifier(owner), path: path)
    let kept = lock.withLock { () -> Reef in
      if let entry = entries[key] {
        entries[key] = (entry.reef, entry.count + 1)
        return entry.reef
      }
      entries[key] = (opened, 1)
      return opened
    }
    return kept
  }

  /// The queue's `Reef` of the configuration's file, opened if needed; call on `queue`.
  func acquire(_ queue: DispatchQueue, _ configuration: Reef.Configuration) throws -> Reef {
    if let reef = take(queue, path: configuration.path) { return reef }
    // Opened outside the lock (it reads the file).
    return insert(try Reef(configuration: configuration, queue: queue), queue, path: configuration.path)
  }

  /// Lets go of the `Reef` of `owner` and `path`, from the queue or actor. The last release
  /// closes it.
  func release(_ owner: AnyObject, path: String) {
    let key = Key(owner: ObjectIdentifier(owner), path: path)
    let closed = lock.withLock { () -> Reef? in
      guard let entry = entries[key] else { return nil }
      if entry.count > 1 {
        entries[key] = (entry.reef, entry.count - 1)
        return nil
      }
      entries[key] = nil
      return entry.reef
    }
    withExtendedLifetime(closed) {}
  }
}

/// The calls of an observation's block, and its cancellation from any thread: each call holds
/// a lock that ``close()`` takes, so that once `close` returns no call begins (a call running
/// then ends first; a block that invalidates its own token does not wait: the lock is recursive).
final class DeliveryGate: @unchecked Sendable {
  private var mutex = pthread_mutex_t()
  private var closed = false

  init() {
    var attributes = pthread_mutexattr_t()
    pthread_mutexattr_init(&attributes)
    pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
    pthread_mutex_init(&mutex, &attributes)
    pthread_mutexattr_destroy(&attributes)
  }

  deinit { pthread_mutex_destroy(&mutex) }

  /// Runs `body` unless the gate was closed.
  func deliver(_ body: () -> Void) {
    pthread_mutex_lock(&mutex)
    defer { pthread_mutex_unlock(&mutex) }
    guard !closed else { return }
    body()
  }

  var isClosed: Bool {
    pthread_mutex_lock(&mutex)
    defer { pthread_mutex_unlock(&mutex) }
    return closed
  }

  /// Closes the gate; returns false when it was closed already.
  func close() -> Bool {
    pthread_mutex_lock(&mutex)
    defer { pthread_mutex_unlock(&mutex) }
    defer { closed = true }
    return !closed
  }
}

/// An observation delivered on a queue: set up there, stopped from any thread (its calls go
/// through a ``DeliveryGate``).
final class QueueObservation: @unchecked Sendable {
  let queue: DispatchQueue
  let path: String
  private let gate = DeliveryGate()
  /// The observation in the queue's `Reef` (used on the queue only).
  private var inner: NotificationToken?
  private var acquired = false

  init(queue: DispatchQueue, path: String) {
    self.queue = queue
    self.path = path
  }

  /// Runs `body` unless the observation was cancelled.
  func deliver(_ body: () -> Void) { gate.deliver(body) }

  /// On the queue: opens the queue's `Reef` and registers the observation in it (`register`),
  /// unless cancelled meanwhile; an error opening it goes to `failed`.
  func start(
    _ configuration: Reef.Configuration, register: (Reef) -> NotificationToken?, failed: (any Error) -> Void
  ) {
    guard !gate.isClosed else { return }
    let reef: Reef
    do {
      reef = try ConfinedReefs.shared.acquire(queue, configuration)
    } catch {
      deliver { failed(error) }
      return
    }
    acquired = true
    inner = register(reef)
  }

  /// Stops the observation: no block call begins once this returns. The queue's `Reef` is let
  /// go of later, on the queue.
  func cancel() {
    guard gate.close() else { return }
    queue.async {
      self.inner?.invalidate()
      self.inner = nil
      if self.acquired {
        self.acquired = false
        ConfinedReefs.shared.release(self.queue, path: self.path)
      }
    }
  }
}

extension QueueObservation {
  /// Sets up an observation on `queue` of something of `reef` (call on `reef`'s thread, outside
  /// a write transaction): `register` runs there with the queue's `Reef` and returns the
  /// observation in it (nil: none, having delivered what it had to); an error opening the
  /// queue's `Reef` goes to `failed`. Both run on the queue only.
  static func observe(
    from reef: Reef, on queue: DispatchQueue, register: @escaping (Reef, QueueObservation) -> NotificationToken?,
    failed: @escaping (any Error) -> Void
  ) -> NotificationToken {
    reef.checkThread()
    reefRequire(!reef.isInWriteTransaction, "Cannot register notification blocks from within write transactions.")
    let observation = QueueObservation(queue: queue, path: reef.configuration.path)
    let configuration = reef.configuration
    // The blocks (and the values they hold), used on the queue only.
    let carried = Confined((register, failed))
    queue.async {
      let (register, failed) = carried.value
      observation.start(configuration, register: { register($0, observation) }, failed: failed)
    }
    return NotificationToken(stop: { observation.cancel() })
  }
}

extension Results {
  /// ``observe(keyPaths:_:)``, with the block called on `queue` (nil: on this `Reef`'s thread,
  /// as ``observe(keyPaths:_:)``): Realm's `observe(keyPaths:on:_:)`.
  ///
  /// The block gets the results as seen by a `Reef` of the same file confined to `queue` (one
  /// per queue and file, kept while its observations last): `.initial` first, from a block on
  /// `queue` (the state of the file then: commits before it are in it, not reported), then
  /// `.update` after each commit that changed the results, by any `Reef`, thread or process.
  /// The store's change feed wakes the queue: nobody needs to call ``Reef/refresh()``.
  ///
  /// The token may be invalidated from any thread: once ``NotificationToken/invalidate()``
  /// returns, no call of the block begins (one running then ends first, so a block must not wait
  /// for the thread that invalidates).
  public func observe(
    keyPaths: [String]? = nil, on queue: DispatchQueue?,
    _ block: @escaping (ReefCollectionChange<Results<Element>>) -> Void
  ) -> NotificationToken {
    guard let queue else { return observe(keyPaths: keyPaths, block) }
    // The query's values, not the results (which hold this thread's Reef).
    let definition = definition
    return QueueObservation.observe(
      from: reef, on: queue,
      register: { reef, observation in
        _ = reef.registerOrStop(Element.self)
        let results = Results(reef: reef, definition: definition)
        return results.observe(keyPaths: keyPaths) { change in observation.deliver { block(change) } }
      },
      failed: { block(.error($0)) })
  }
}

extension _ObjectObservable where Self: ObjectBase {
  /// ``observe(keyPaths:_:)``, with the block called on `queue` (nil: on this `Reef`'s thread):
  /// Realm's `observe(keyPaths:on:_:)`.
  ///
  /// The block gets the object as read by a `Reef` of the same file confined to `queue` (one per
  /// queue and file, kept while its observations last), after each commit that changed or
  /// deleted it, by any `Reef`, thread or process; the changes are counted from the state of the
  /// file when the observation is set up on `queue` (a block dispatched there after this call
  /// runs after that). Only top-level objects (`Object`): for an embedded object the block gets
  /// `.error`. The token may be invalidated from any thread: once
  /// ``NotificationToken/invalidate()`` returns, no call of the block begins.
  ///
  /// Disfavored: an unannotated block that needs `ObjectChange<Object>` takes the generic form.
  @_disfavoredOverload
  public func observe(
    keyPaths: [String]? = nil, on queue: DispatchQueue?, _ block: @escaping (ObjectChange<Self>) -> Void
  ) -> NotificationToken {
    guard let queue else { return observeObject(keyPaths: keyPaths, block) }
    return observeObject(keyPaths: keyPaths, on: queue, block)
  }

  /// ``observe(keyPaths:on:_:)`` with a queue, under a name no overload shares.
  func observeObject(
    keyPaths: [String]?, on queue: DispatchQueue, _ block: @escaping (ObjectChange<Self>) -> Void
  ) -> NotificationToken {
    let (reef, objectClass, id, embedded) = observedIdentity()
    return QueueObservation.observe(
      from: reef, on: queue,
      register: { reef, observation in
        ObjectBase.observeStored(objectClass, id: id, embedded: embedded, keyPaths: keyPaths, in: reef) { change in
          observation.deliver { block(change.cast(to: Self.self)) }
        }
      },
      failed: { block(.error($0)) })
  }
}

extension ObjectBase {
  /// `observe(keyPaths:on:_:)` with a queue, with the block's object typed as the block says
  /// (the object's class or a superclass): Realm's `observe<T>(keyPaths:on:_:)`.
  public func observe<T: ObjectBase>(
    keyPaths: [String]? = nil, on queue: DispatchQueue?, _ block: @escaping (ObjectChange<T>) -> Void
  ) -> NotificationToken {
    requireObserved(as: T.self)
    guard let queue else { return observeObject(keyPaths: keyPaths) { block($0.cast(to: T.self)) } }
    return observeObject(keyPaths: keyPaths, on: queue) { block($0.cast(to: T.self)) }
  }

  /// `observe(keyPaths:on:_:)` with a queue and Swift key paths (`[\Dog.name]`), as Realm's.
  public func observe<T: ObjectBase>(
    keyPaths: [PartialKeyPath<T>], on queue: DispatchQueue?, _ block: @escaping (ObjectChange<T>) -> Void
  ) -> NotificationToken {
    observe(keyPaths: keyPaths.map { KeyPathNames.name($0, in: T.self) } as [String]?, on: queue, block)
  }
}
