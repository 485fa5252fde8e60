import Dispatch
import ReefBSON
import ReefStore

// Notifications of `List`, `MutableSet`, `Map` and `LinkingObjects` delivered on a queue, and
// their changes as asynchronous sequences of frozen collections.

extension OwnedCollection {
  /// For an observation delivered on a queue or to an actor: this collection's `Reef` (checked
  /// as usable here), and what finds the collection again in the queue's or actor's `Reef`
  /// through its object's `_id` and observes it there with `observe` (its
  /// `observe(keyPaths:_:)`), calling `deliver` with each change.
  ///
  /// The collection of an embedded object gets `.error`; that of an object deleted before the
  /// observation starts gets what `observe(keyPaths:_:)` gives it (`.error`).
  func reobserver(
    keyPaths: [String]?,
    observe: @escaping (Self, [String]?, @escaping (ReefCollectionChange<Self>) -> Void) -> NotificationToken
  ) -> (reef: Reef, register: (Reef, _ deliver: @escaping (ReefCollectionChange<Self>) -> Void) -> NotificationToken?) {
    guard let owner = collectionOwner, let property = collectionProperty else {
      reefStop(unmanagedCollectionMessage)
    }
    owner.reef.checkThread()
    let path = owner.parent == nil ? ObjectPath(owner) : nil
    let (type, top) = (owner.schema.className, owner.top.schema.className)
    return (
      owner.reef,
      { reef, deliver in
        guard let path else {
          deliver(
            .error(
              ReefError(
                .confinement,
                "observe(keyPaths:on:) takes the collections of top-level objects only: \(property.name) belongs to an embedded \(type); observe the \(top) that holds it there",
                type: type, property: property.name)))
          return nil
        }
        // A deleted object reads as deleted: its collection's `observe` reports it.
        guard let state = path.state(in: reef, evenIfGone: true) else { return nil }
        return observe(Self.same(property, in: state), keyPaths, deliver)
      }
    )
  }

  /// A collection's `observe(keyPaths:on:_:)` with a queue (see ``reobserver(keyPaths:observe:)``).
  func observe(
    keyPaths: [String]?, on queue: DispatchQueue, _ block: @escaping (ReefCollectionChange<Self>) -> Void,
    observe: @escaping (Self, [String]?, @escaping (ReefCollectionChange<Self>) -> Void) -> NotificationToken
  ) -> NotificationToken {
    let (reef, register) = reobserver(keyPaths: keyPaths, observe: observe)
    return QueueObservation.observe(
      from: reef, on: queue,
      register: { reef, observation in register(reef) { change in observation.deliver { block(change) } } },
      failed: { block(.error($0)) })
  }

  /// A collection's `observe(keyPaths:on:_:)` with an actor (see
  /// ``reobserver(keyPaths:observe:)``).
  func observe<A: Actor>(
    keyPaths: [String]?, on actor: A, isolation: isolated (any Actor)?,
    _ block: @Sendable @escaping (isolated A, ReefCollectionChange<Self>) -> Void,
    observe: @escaping (Self, [String]?, @escaping (ReefCollectionChange<Self>) -> Void) -> NotificationToken
  ) async -> NotificationToken {
    let (reef, register) = reobserver(keyPaths: keyPaths, observe: observe)
    return await ActorObservation.observe(
      from: reef, on: actor, isolation: isolation, register: register, failure: { .error($0) }, block)
  }

  /// A collection's `changes(keyPaths:)`: `.initial` with the collection frozen now, then the
  /// steps that `start` (given the frozen collection; it throws when that cannot be read) finds
  /// in each frozen snapshot of the feed.
  func frozenChanges(
    start: (Self) throws -> (Self, ChangeBatch) -> CollectionStep
  ) -> ReefChanges<ReefCollectionChange<Self>> {
    guard let property = collectionProperty else { reefStop(unmanagedCollectionMessage) }
    let frozen: Self
    let path: ObjectPath
    let advance: (Self, ChangeBatch) -> CollectionStep
    do {
      frozen = try frozenCollection()
      let owner = frozen.collectionOwner!
      let gate = owner.reef.enterSnapshot()
      defer { gate?.unlock() }
      guard let found = ObjectPath(owner) else { throw ReefError.deletedOwner(owner) }
      path = found
      advance = try start(frozen)
    } catch {
      return .only(.error(error))
    }
    return FrozenFeed.start(from: frozen.collectionOwner!.reef, initial: .initial(frozen), failure: { .error($0) }) {
      reef, batch, continuation in
      // In the new snapshot; an object gone since reads as deleted.
      guard let state = path.state(in: reef, evenIfGone: true) else { return true }
      let collection = Self.same(property, in: state)
      let (change, last) = advance(collection, batch).report(collection)
      if let change { continuation.yieldFrozen(change) }
      return !last
    }
  }
}

extension ElementTracker {
  /// The steps of the `changes(keyPaths:)` of a `List`, `MutableSet` or `Map`, from the
  /// collection frozen at the start to each later frozen one.
  static func steps<Stored, C: _CollectionAccessor<Stored>>(
    from frozen: C, keyPaths: [String]?
  ) throws -> (C, ChangeBatch) -> CollectionStep {
    guard let tracker = try start(frozen.access!, keyPaths: keyPaths).get() else {
      throw ReefError.deletedOwner(frozen.access!.owner)
    }
    return { collection, batch in tracker.advance(collection.access!, batch: batch) }
  }
}

extension List {
  /// ``observe(keyPaths:_:)``, with the block called on `queue` (nil: on this `Reef`'s thread,
  /// as ``observe(keyPaths:_:)``): Realm's `observe(keyPaths:on:_:)`.
  ///
  /// The block gets the list as read by a `Reef` of the same file confined to `queue` (one per
  /// queue and file, kept while its observations last), found there through its object's
  /// `_id`: `.initial` first, from a block on `queue` (the state of the file then: commits
  /// before it are in it, not reported), then `.update` after each commit that changed the
  /// list, by any `Reef`, thread or process, with the indices ``observe(keyPaths:_:)`` reports.
  /// The store's change feed wakes the queue: nobody needs to call ``Reef/refresh()``.
  ///
  /// Only the lists of top-level objects (`Object`): for the list of an embedded object the
  /// block gets `.error`. When the list's object is deleted before the observation starts on
  /// `queue`, the block gets `.error`, as ``observe(keyPaths:_:)`` gives for a deleted object's
  /// list; deleted later, one `.update` reports every element deleted, and no other comes.
  ///
  /// The token may be invalidated from any thread: once ``NotificationToken/invalidate()``
  /// returns, no call of the block begins (one running then ends first, so a block must not wait
  /// for the thread that invalidates).
  public func observe(
    keyPaths: [String]? = nil, on queue: DispatchQueue?,
    _ block: @escaping (ReefCollectionChange<List<Element>>) -> Void
  ) -> NotificationToken {
    guard let queue else { return observe(keyPaths: keyPaths, block) }
    return observe(keyPaths: keyPaths, on: queue, block) { $0.observe(keyPaths: $1, $2) }
  }

  /// ``observe(keyPaths:_:)``, with the block called isolated to `actor`: Realm's
  /// `observe(keyPaths:on:_:)` for actors. As the queue form (``observe(keyPaths:on:_:)``), on a
  /// `Reef` of the same file confined to `actor` (one per actor and file, kept while its
  /// observations last): `.initial` has been delivered when this returns. Call it where the
  /// list may be used: `isolation` keeps the call there. The token may be invalidated from
  /// anywhere: once ``NotificationToken/invalidate()`` returns, no call of the block begins.
  public func observe<A: Actor>(
    keyPaths: [String]? = nil, on actor: A, isolation: isolated (any Actor)? = #isolation,
    _ block: @Sendable @escaping (isolated A, ReefCollectionChange<List<Element>>) -> Void
  ) async -> NotificationToken {
    await observe(keyPaths: keyPaths, on: actor, isolation: isolation, block) { $0.observe(keyPaths: $1, $2) }
  }

  /// The changes of this list as an asynchronous sequence of frozen lists: `.initial` first,
  /// then `.update` after each commit that changed it (see ``changes(keyPaths:)``).
  public var changes: ReefChanges<ReefCollectionChange<List<Element>>> { changes(keyPaths: nil) }

  /// The changes of this managed list as an asynchronous sequence whose lists are FROZEN (read
  /// them in any task): `.initial` with the list as it is now, then `.update` with deletions,
  /// insertions and modifications, as ``observe(keyPaths:_:)`` reports them, after each commit
  /// that changed it, from this `Reef`, another thread or another process. When its object is
  /// deleted, one `.update` reports every element deleted (its list is invalidated: check
  /// ``_CollectionAccessor/isInvalidated``), and the sequence ends; `.error` (and the end) when
  /// it cannot be read, or when its object is already deleted. Commits that come while the
  /// previous change is computed are reported together. `keyPaths` limit the modifications as
  /// in ``observe(keyPaths:_:)``.
  ///
  /// The sequence ends, and its observation of the store's change feed is cancelled, when the
  /// task iterating it is cancelled or the sequence is released. Call it on the list's thread
  /// (or on a frozen list, from anywhere).
  /// - Precondition: the list is managed (Realm's message otherwise).
  public func changes(keyPaths: [String]?) -> ReefChanges<ReefCollectionChange<List<Element>>> {
    frozenChanges { try ElementTracker.steps(from: $0, keyPaths: keyPaths) }
  }
}

extension MutableSet {
  /// ``observe(keyPaths:_:)``, with the block called on `queue` (nil: on this `Reef`'s thread,
  /// as ``observe(keyPaths:_:)``): Realm's `observe(keyPaths:on:_:)`.
  ///
  /// The block gets the set as read by a `Reef` of the same file confined to `queue`, found
  /// there through its object's `_id`: `.initial` first, from a block on `queue`, then
  /// `.update` after each commit that changed the set, by any `Reef`, thread or process, with
  /// the indices ``observe(keyPaths:_:)`` reports. Only the sets of top-level objects: for the
  /// set of an embedded object the block gets `.error`; for the set of an object deleted before
  /// the observation starts on `queue`, `.error`, as ``observe(keyPaths:_:)`` gives.
  ///
  /// The token may be invalidated from any thread: once ``NotificationToken/invalidate()``
  /// returns, no call of the block begins.
  public func observe(
    keyPaths: [String]? = nil, on queue: DispatchQueue?,
    _ block: @escaping (ReefCollectionChange<MutableSet<Element>>) -> Void
  ) -> NotificationToken {
    guard let queue else { return observe(keyPaths: keyPaths, block) }
    return observe(keyPaths: keyPaths, on: queue, block) { $0.observe(keyPaths: $1, $2) }
  }

  /// ``observe(keyPaths:_:)``, with the block called isolated to `actor`: Realm's
  /// `observe(keyPaths:on:_:)` for actors. As the queue form (``observe(keyPaths:on:_:)``), on a
  /// `Reef` of the same file confined to `actor` (one per actor and file, kept while its
  /// observations last): `.initial` has been delivered when this returns. Call it where the
  /// set may be used: `isolation` keeps the call there. The token may be invalidated from
  /// anywhere: once ``NotificationToken/invalidate()`` returns, no call of the block begins.
  public func observe<A: Actor>(
    keyPaths: [String]? = nil, on actor: A, isolation: isolated (any Actor)? = #isolation,
    _ block: @Sendable @escaping (isolated A, ReefCollectionChange<MutableSet<Element>>) -> Void
  ) async -> NotificationToken {
    await observe(keyPaths: keyPaths, on: actor, isolation: isolation, block) { $0.observe(keyPaths: $1, $2) }
  }

  /// The changes of this set as an asynchronous sequence of frozen sets (see
  /// ``changes(keyPaths:)``).
  public var changes: ReefChanges<ReefCollectionChange<MutableSet<Element>>> { changes(keyPaths: nil) }

  /// The changes of this managed set as an asynchronous sequence whose sets are FROZEN:
  /// `.initial` with the set as it is now, then `.update` as ``observe(keyPaths:_:)`` reports
  /// it after each commit that changed it; when its object is deleted, one `.update` reports
  /// every element deleted, and the sequence ends (`.error` and the end when it cannot be read).
  /// It ends when the task iterating it is cancelled or the sequence is released. Call it on
  /// the set's thread (or on a frozen set, from anywhere).
  /// - Precondition: the set is managed.
  public func changes(keyPaths: [String]?) -> ReefChanges<ReefCollectionChange<MutableSet<Element>>> {
    frozenChanges { try ElementTracker.steps(from: $0, keyPaths: keyPaths) }
  }
}

extension Map {
  /// ``observe(keyPaths:_:)``, with the block called on `queue` (nil: on this `Reef`'s thread,
  /// as ``observe(keyPaths:_:)``): Realm's `observe(keyPaths:on:_:)`.
  ///
  /// The block gets the map as read by a `Reef` of the same file confined to `queue`, found
  /// there through its object's `_id`: `.initial` first, from a block on `queue`, then
  /// `.update` after each commit that changed the map, by any `Reef`, thread or process, with
  /// the keys ``observe(keyPaths:_:)`` reports. Only the maps of top-level objects: for the map
  /// of an embedded object the block gets `.error`; for the map of an object deleted before the
  /// observation starts on `queue`, `.error`, as ``observe(keyPaths:_:)`` gives.
  ///
  /// The token may be invalidated from any thread: once ``NotificationToken/invalidate()``
  /// returns, no call of the block begins.
  public func observe(
    keyPaths: [String]? = nil, on queue: DispatchQueue?,
    _ block: @escaping (ReefMapChange<Map<Key, Value>>) -> Void
  ) -> NotificationToken {
    guard let queue else { return observe(keyPaths: keyPaths, block) }
    let keys = MapKeyChanges<Key, Value>()
    return observe(keyPaths: keyPaths, on: queue, { block(keys.change($0)) }) { $0.observeIndices(keyPaths: $1, $2) }
  }

  /// ``observe(keyPaths:_:)``, with the block called isolated to `actor`: Realm's
  /// `observe(keyPaths:on:_:)` for actors. As the queue form (``observe(keyPaths:on:_:)``), on a
  /// `Reef` of the same file confined to `actor` (one per actor and file, kept while its
  /// observations last): `.initial` has been delivered when this returns. Call it where the
  /// map may be used: `isolation` keeps the call there. The token may be invalidated from
  /// anywhere: once ``NotificationToken/invalidate()`` returns, no call of the block begins.
  public func observe<A: Actor>(
    keyPaths: [String]? = nil, on actor: A, isolation: isolated (any Actor)? = #isolation,
    _ block: @Sendable @escaping (isolated A, ReefMapChange<Map<Key, Value>>) -> Void
  ) async -> NotificationToken {
    let (reef, register) = reobserver(keyPaths: keyPaths) { $0.observeIndices(keyPaths: $1, $2) }
    let keys = MapKeyChanges<Key, Value>()
    return await ActorObservation.observe(
      from: reef, on: actor, isolation: isolation,
      register: { reef, deliver in register(reef) { deliver(keys.change($0)) } }, failure: { .error($0) }, block)
  }

  /// The changes of this map as an asynchronous sequence of frozen maps (see
  /// ``changes(keyPaths:)``).
  public var changes: ReefChanges<ReefCollectionChange<Map<Key, Value>>> { changes(keyPaths: nil) }

  /// The changes of this managed map as an asynchronous sequence whose maps are FROZEN:
  /// `.initial` with the map as it is now, then `.update` after each commit that changed it,
  /// with the positions (in the key order) of the keys that changed (deletions and
  /// modifications old positions, insertions new ones; ``observe(keyPaths:_:)`` reports the
  /// keys themselves); when its object is deleted, one `.update` reports every entry deleted,
  /// and the sequence ends (`.error` and the end when it cannot be read).
  /// It ends when the task iterating it is cancelled or the sequence is released. Call it on
  /// the map's thread (or on a frozen map, from anywhere).
  /// - Precondition: the map is managed.
  public func changes(keyPaths: [String]?) -> ReefChanges<ReefCollectionChange<Map<Key, Value>>> {
    frozenChanges { try ElementTracker.steps(from: $0, keyPaths: keyPaths) }
  }
}

extension LinkingObjects {
  /// ``observe(keyPaths:_:)``, with the block called on `queue` (nil: on this `Reef`'s thread,
  /// as ``observe(keyPaths:_:)``): Realm's `observe(keyPaths:on:_:)`.
  ///
  /// The block gets the linking objects as read by a `Reef` of the same file confined to
  /// `queue`, found there through their object's `_id`: `.initial` first, from a block on
  /// `queue`, then `.update` after each commit that changed which objects link here or their
  /// documents, by any `Reef`, thread or process, with the indices ``observe(keyPaths:_:)``
  /// reports. Only the linking objects of top-level objects: for an embedded object's the block
  /// gets `.error`; for those of an object deleted before the observation starts on `queue`,
  /// `.error`, as ``observe(keyPaths:_:)`` gives.
  ///
  /// The token may be invalidated from any thread: once ``NotificationToken/invalidate()``
  /// returns, no call of the block begins.
  public func observe(
    keyPaths: [String]? = nil, on queue: DispatchQueue?,
    _ block: @escaping (ReefCollectionChange<LinkingObjects<Element>>) -> Void
  ) -> NotificationToken {
    guard let queue else { return observe(keyPaths: keyPaths, block) }
    return observe(keyPaths: keyPaths, on: queue, block) { $0.observe(keyPaths: $1, $2) }
  }

  /// ``observe(keyPaths:_:)``, with the block called isolated to `actor`: Realm's
  /// `observe(keyPaths:on:_:)` for actors. As the queue form (``observe(keyPaths:on:_:)``), on a
  /// `Reef` of the same file confined to `actor` (one per actor and file, kept while its
  /// observations last): `.initial` has been delivered when this returns. Call it where the
  /// linking objects may be used: `isolation` keeps the call there. The token may be invalidated from
  /// anywhere: once ``NotificationToken/invalidate()`` returns, no call of the block begins.
  public func observe<A: Actor>(
    keyPaths: [String]? = nil, on actor: A, isolation: isolated (any Actor)? = #isolation,
    _ block: @Sendable @escaping (isolated A, ReefCollectionChange<LinkingObjects<Element>>) -> Void
  ) async -> NotificationToken {
    await observe(keyPaths: keyPaths, on: actor, isolation: isolation, block) { $0.observe(keyPaths: $1, $2) }
  }

  /// The changes of these linking objects as an asynchronous sequence of frozen linking
  /// objects (see ``changes(keyPaths:)``).
  public var changes: ReefChanges<ReefCollectionChange<LinkingObjects<Element>>> { changes(keyPaths: nil) }

  /// The changes of the linking objects of a managed object as an asynchronous sequence whose
  /// linking objects are FROZEN: `.initial` with them as they are now, then `.update` as
  /// ``observe(keyPaths:_:)`` reports it after each commit that changed them; when their object
  /// is deleted, one `.update` reports every linking object deleted, and the sequence ends
  /// (`.error` and the end when their object is already deleted). It ends when the task
  /// iterating it is cancelled or the sequence is released. Call it on the object's thread (or
  /// on frozen linking objects, from anywhere).
  /// - Precondition: their object is managed.
  public func changes(keyPaths: [String]?) -> ReefChanges<ReefCollectionChange<LinkingObjects<Element>>> {
    frozenChanges { frozen in
      guard let owner = frozen.owner else { reefStop(unmanagedCollectionMessage) }
      guard let tracker = LinkingTracker(frozen, keyPaths: keyPaths) else { throw ReefError.deletedOwner(owner) }
      return { linkingObjects, batch in tracker.advance(linkingObjects, batch: batch) }
    }
  }
}
