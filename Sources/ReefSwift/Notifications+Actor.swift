import ReefBSON
import ReefStore

extension ConfinedReefs {
  /// The actor's `Reef` of the configuration's file, opened if needed.
  func acquire<A: Actor>(_ actor: isolated A, _ configuration: Reef.Configuration) async throws -> Reef {
    if let reef = take(actor, path: configuration.path) { return reef }
    return insert(try await Reef(configuration: configuration, actor: actor), actor, path: configuration.path)
  }
}

/// Runs `body` isolated to `actor` (a call from elsewhere hops there).
func runIsolated<A: Actor, T: Sendable>(
  on actor: isolated A, _ body: @Sendable (isolated A) async throws -> T
) async rethrows -> T {
  try await body(actor)
}

/// An observation delivered to an actor: set up there, stopped from any thread (its calls go
/// through a ``DeliveryGate``).
final class ActorObservation: @unchecked Sendable {
  let actor: any Actor
  let path: String
  private let gate = DeliveryGate()
  /// The observation in the actor's `Reef`, and whether this holds that `Reef` (both used while
  /// isolated to the actor only).
  private var inner: NotificationToken?
  private var acquired = false

  init(actor: any Actor, path: String) {
    self.actor = actor
    self.path = path
  }

  /// Runs `body` unless the observation was cancelled.
  func deliver(_ body: () -> Void) { gate.deliver(body) }

  /// Isolated to the actor: opens the actor's `Reef` and registers the observation in it
  /// (`register`), unless cancelled meanwhile; an error opening it goes to `failed`.
  func start<A: Actor>(
    on actor: isolated A, _ configuration: Reef.Configuration, register: (Reef) -> NotificationToken?,
    failed: (any Error) -> Void
  ) async {
    guard !gate.isClosed else { return }
    let reef: Reef
    do {
      reef = try await ConfinedReefs.shared.acquire(actor, configuration)
    } catch {
      deliver { failed(error) }
      return
    }
    acquired = true
    // Cancelled while opening: `cancel` found nothing to stop yet.
    guard !gate.isClosed else { return stop(actor) }
    inner = register(reef)
  }

  /// Isolated to the actor: stops the inner observation and lets go of the actor's `Reef`.
  private func stop(_ actor: isolated any Actor) {
    inner?.invalidate()
    inner = nil
    if acquired {
      acquired = false
      ConfinedReefs.shared.release(actor, path: path)
    }
  }

  /// Stops the observation: no block call begins once this returns. The actor's `Reef` is let
  /// go of later, on the actor.
  func cancel() {
    guard gate.close() else { return }
    Task { await runIsolated(on: actor) { actor in self.stop(actor) } }
  }
}

extension ActorObservation {
  /// Sets up an observation delivered to `actor` of something of `reef` (call where `reef` may
  /// be used, outside a write transaction: `isolation` keeps the call there): `register` runs
  /// isolated to the actor with the actor's `Reef` and returns the observation in it (nil: none,
  /// having delivered what it had to), calling `deliver` with each change; an error opening the
  /// actor's `Reef` goes to `block` (as `failure` makes it a change).
  static func observe<A: Actor, Change>(
    from reef: Reef, on actor: A, isolation: isolated (any Actor)?,
    register: @escaping (Reef, _ deliver: @escaping (Change) -> Void) -> NotificationToken?,
    failure: @escaping (any Error) -> Change, _ block: @Sendable @escaping (isolated A, Change) -> Void
  ) async -> NotificationToken {
    reef.checkThread()
    reefRequire(!reef.isInWriteTransaction, "Cannot register notification blocks from within write transactions.")
    let observation = ActorObservation(actor: actor, path: reef.configuration.path)
    let configuration = reef.configuration
    // What `register` holds (values of this thread's objects), used on the actor only.
    let carried = Confined((register, failure))
    await runIsolated(on: actor) { here in
      let (register, failure) = carried.value
      await observation.start(
        on: here, configuration,
        register: { reef in
          register(reef) { change in
            let change = Confined(change)
            observation.deliver { actor.assumeIsolated { block($0, change.value) } }
          }
        },
        failed: { block(here, failure($0)) })
    }
    return NotificationToken(stop: { observation.cancel() })
  }
}

extension Results {
  /// ``observe(keyPaths:_:)``, with the block called isolated to `actor`: Realm's
  /// `observe(keyPaths:on:_:)` for actors.
  ///
  /// The block gets the results as seen by a `Reef` of the same file confined to `actor` (one per
  /// actor and file, kept while its observations last; see ``Reef/init(configuration:actor:)``):
  /// `.initial` before this returns, then `.update` after each commit that changed the results,
  /// by any `Reef`, thread or process. The store's change feed wakes the actor: nobody needs to
  /// call ``Reef/refresh()``. Call it where these results may be used (their `Reef`'s thread or
  /// actor): `isolation` keeps the call there.
  ///
  /// The token may be invalidated from anywhere: once ``NotificationToken/invalidate()``
  /// returns, no call of the block begins.
  public func observe<A: Actor>(
    keyPaths: [String]? = nil, on actor: A, isolation: isolated (any Actor)? = #isolation,
    _ block: @Sendable @escaping (isolated A, ReefCollectionChange<Results<Element>>) -> Void
  ) async -> NotificationToken {
    // The query's values, not the results (which hold this thread's Reef).
    let definition = definition
    return await ActorObservation.observe(
      from: reef, on: actor, isolation: isolation,
      register: { reef, deliver in
        _ = reef.registerOrStop(Element.self)
        return Results(reef: reef, definition: definition).observe(keyPaths: keyPaths, deliver)
      },
      failure: { .error($0) }, block)
  }
}

extension _ObjectObservable where Self: ObjectBase {
  /// ``observe(keyPaths:_:)``, with the block called isolated to `actor`: Realm's
  /// `observe(keyPaths:on:_:)` for actors.
  ///
  /// The block gets the object as read by a `Reef` of the same file confined to `actor` (one per
  /// actor and file, kept while its observations last), after each commit that changed or
  /// deleted it, by any `Reef`, thread or process; the changes are counted from the state of the
  /// file when this returns. Only top-level objects (`Object`): for an embedded object the block
  /// gets `.error`. Call it where the object may be used (its `Reef`'s thread or actor):
  /// `isolation` keeps the call there. The token may be invalidated from anywhere: once
  /// ``NotificationToken/invalidate()`` returns, no call of the block begins.
  public func observe<A: Actor>(
    keyPaths: [String]? = nil, on actor: A, isolation: isolated (any Actor)? = #isolation,
    _ block: @Sendable @escaping (isolated A, ObjectChange<Self>) -> Void
  ) async -> NotificationToken {
    await observeObject(as: Self.self, keyPaths: keyPaths, on: actor, isolation: isolation, block)
  }

  /// ``observe(keyPaths:on:isolation:_:)``, with the block's object as `T` (this object's class
  /// or a superclass, checked by the caller), under a name no overload shares.
  func observeObject<A: Actor, T: ObjectBase>(
    as type: T.Type, keyPaths: [String]?, on actor: A, isolation: isolated (any Actor)?,
    _ block: @Sendable @escaping (isolated A, ObjectChange<T>) -> Void
  ) async -> NotificationToken {
    let (reef, objectClass, id, embedded) = observedIdentity()
    return await ActorObservation.observe(
      from: reef, on: actor, isolation: isolation,
      register: { reef, deliver in
        ObjectBase.observeStored(objectClass, id: id, embedded: embedded, keyPaths: keyPaths, in: reef) {
          deliver($0.cast(to: T.self))
        }
      },
      failure: { .error($0) }, block)
  }

  /// For an observation delivered elsewhere: stops unless this object is managed and may be
  /// used here outside a write transaction; its `Reef`, class (its own, not the static type it
  /// is called through), `_id` and whether it is embedded.
  func observedIdentity() -> (reef: Reef, objectClass: ObjectBase.Type, id: BSON, embedded: Bool) {
    guard let managed = _managed else {
      reefStop("Only objects which are managed by a Reef support change notifications")
    }
    managed.reef.checkThread()
    reefRequire(
      !managed.reef.isInWriteTransaction, "Cannot register notification blocks from within write transactions.")
    return (managed.reef, Swift.type(of: self), managed.id, managed.parent != nil)
  }
}

extension ObjectBase {
  /// Observes the object of `objectClass` with `_id` `id` as `reef` reads it, for an
  /// observation set up in another confinement: `.deleted` (and nil) when it is gone, `.error`
  /// (and nil) for an embedded object (it has no `_id`) or a failed read. The objects given to
  /// `deliver` are of `objectClass`.
  static func observeStored(
    _ objectClass: ObjectBase.Type, id: BSON, embedded: Bool, keyPaths: [String]?, in reef: Reef,
    _ deliver: @escaping (ObjectChange<ObjectBase>) -> Void
  ) -> NotificationToken? {
    if embedded {
      deliver(
        .error(
          ReefError(
            .confinement,
            "observe(keyPaths:on:) takes top-level objects only: observe the object that holds this \(objectClass.className()) there",
            type: objectClass.className())))
      return nil
    }
    let object: ObjectBase?
    do {
      let schema = try reef.register(objectClass)
      let document = try storeCall { () throws(StoreError) in
        try reef.transaction().collection(schema.className).document(forID: id)
      }
      object = document.map { reef.object(objectClass, schema: schema, document: $0) }
    } catch {
      deliver(.error(error))
      return nil
    }
    guard let object else {
      deliver(.deleted)
      return nil
    }
    return object.observeObject(keyPaths: keyPaths, deliver)
  }
}

extension ObjectBase {
  /// `observe(keyPaths:on:isolation:_:)` with an actor, with the block's object typed as the
  /// block says (the object's class or a superclass): Realm's `observe<A, T>(keyPaths:on:_:)`.
  public func observe<A: Actor, T: ObjectBase>(
    keyPaths: [String]? = nil, on actor: A, isolation: isolated (any Actor)? = #isolation,
    _ block: @Sendable @escaping (isolated A, ObjectChange<T>) -> Void
  ) async -> NotificationToken {
    requireObserved(as: T.self)
    return await observeObject(as: T.self, keyPaths: keyPaths, on: actor, isolation: isolation, block)
  }

  /// `observe(keyPaths:on:isolation:_:)` with an actor and Swift key paths (`[\Dog.name]`), as
  /// Realm's.
  public func observe<A: Actor, T: ObjectBase>(
    keyPaths: [PartialKeyPath<T>], on actor: A, isolation: isolated (any Actor)? = #isolation,
    _ block: @Sendable @escaping (isolated A, ObjectChange<T>) -> Void
  ) async -> NotificationToken {
    requireObserved(as: T.self)
    return await observeObject(
      as: T.self, keyPaths: keyPaths.map { KeyPathNames.name($0, in: T.self) }, on: actor, isolation: isolation, block)
  }
}
