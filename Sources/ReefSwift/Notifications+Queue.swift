import Dispatch
import ReefBSON
import ReefStore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The `Reef`s that deliver notifications on a queue: one per queue and file, confined to the
/// queue, opened by the first observation there and closed when the last one ends.
final class QueueReefs: @unchecked Sendable {
  static let shared = QueueReefs()
  private struct Key: Hashable {
    let queue: ObjectIdentifier
    let path: String
  }
  private let lock = Lock()
  private var entries: [Key: (reef: Reef, count: Int)] = [:]

  /// The queue's `Reef` of the configuration's file, opened if needed; call on `queue`.
  func acquire(_ queue: DispatchQueue, _ configuration: Reef.Configuration) throws -> Reef {
    let key = Key(queue: ObjectIdentifier(queue), path: configuration.path)
    if let reef = lock.withLock({ () -> Reef? in
      guard let entry = entries[key] else { return nil }
      entries[key] = (entry.reef, entry.count + 1)
      return entry.reef
    }) {
      return reef
    }
    // Opened outside the lock (it reads the file); only this queue opens this key.
    let reef = try Reef(configuration: configuration, queue: queue)
    lock.withLock { entries[key] = (reef, 1) }
    return reef
  }

  /// Lets go of the queue's `Reef` of a file; call on `queue`. The last release closes it.
  func release(_ queue: DispatchQueue, path: String) {
    let key = Key(queue: ObjectIdentifier(queue), path: path)
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

/// An observation delivered on a queue: set up there, stopped from any thread.
///
/// Each call of the block holds a lock that ``cancel()`` takes, so that once `cancel` returns no
/// call begins (a call running on the queue ends first; a block that invalidates its own token
/// does not wait: the lock is recursive).
final class QueueObservation: @unchecked Sendable {
  let queue: DispatchQueue
  let path: String
  private var mutex = pthread_mutex_t()
  private var cancelled = false
  /// The observation in the queue's `Reef` (used on the queue only).
  private var inner: NotificationToken?
  private var acquired = false

  init(queue: DispatchQueue, path: String) {
    self.queue = queue
    self.path = path
    var attributes = pthread_mutexattr_t()
    pthread_mutexattr_init(&attributes)
    pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
    pthread_mutex_init(&mutex, &attributes)
    pthread_mutexattr_destroy(&attributes)
  }

  deinit { pthread_mutex_destroy(&mutex) }

  /// Runs `body` unless the observation was cancelled.
  func deliver(_ body: () -> Void) {
    pthread_mutex_lock(&mutex)
    defer { pthread_mutex_unlock(&mutex) }
    guard !cancelled else { return }
    body()
  }

  /// On the queue: opens the queue's `Reef` and registers the observation in it (`register`),
  /// unless cancelled meanwhile; an error opening it goes to `failed`.
  func start(
    _ configuration: Reef.Configuration, register: (Reef) -> NotificationToken?, failed: (any Error) -> Void
  ) {
    pthread_mutex_lock(&mutex)
    let stop = cancelled
    pthread_mutex_unlock(&mutex)
    guard !stop else { return }
    let reef: Reef
    do {
      reef = try QueueReefs.shared.acquire(queue, configuration)
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
    pthread_mutex_lock(&mutex)
    let wasCancelled = cancelled
    cancelled = true
    pthread_mutex_unlock(&mutex)
    guard !wasCancelled else { return }
    queue.async {
      self.inner?.invalidate()
      self.inner = nil
      if self.acquired {
        self.acquired = false
        QueueReefs.shared.release(self.queue, path: self.path)
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
    precondition(!reef.isInWriteTransaction, "Cannot register notification blocks from within write transactions.")
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
    let (conditions, sortKeys, distinctPaths) = (conditions, sortKeys, distinctPaths)
    return QueueObservation.observe(
      from: reef, on: queue,
      register: { reef, observation in
        let results = reef.objects(Element.self).with(
          conditions: conditions, sortKeys: sortKeys, distinctPaths: distinctPaths)
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
  public func observe(
    keyPaths: [String]? = nil, on queue: DispatchQueue?, _ block: @escaping (ObjectChange<Self>) -> Void
  ) -> NotificationToken {
    guard let queue else { return observe(keyPaths: keyPaths, block) }
    guard let managed = _managed else {
      preconditionFailure("Only objects which are managed by a Reef support change notifications")
    }
    let embedded = managed.parent != nil
    let id = managed.id
    return QueueObservation.observe(
      from: managed.reef, on: queue,
      register: { reef, observation in
        if embedded {
          let error = ReefError(
            .confinement,
            "observe(keyPaths:on:) takes top-level objects only: observe the object that holds this \(Self.className()) on the queue",
            type: Self.className())
          observation.deliver { block(.error(error)) }
          return nil
        }
        let document: Document?
        let schema: ObjectSchema
        do {
          schema = try reef.register(Self.self)
          document = try storeCall { () throws(StoreError) in
            try reef.transaction().collection(schema.className).document(forID: id)
          }
        } catch {
          observation.deliver { block(.error(error)) }
          return nil
        }
        guard let document else {
          observation.deliver { block(.deleted) }
          return nil
        }
        let object = reef.object(Self.self, schema: schema, document: document)
        return object.observe(keyPaths: keyPaths) { change in observation.deliver { block(change) } }
      },
      failed: { block(.error($0)) })
  }
}
