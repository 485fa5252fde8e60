import ReefBSON
import ReefStore

/// The changes of a ``Results``, an object or a collection (``List``, ``MutableSet``, ``Map``,
/// ``LinkingObjects``) as an asynchronous sequence (``Results/changes``, `object.changes`,
/// ``List/changes``...): each change's results, object or collection is FROZEN, so it can be
/// read in any task.
///
/// The sequence follows the store's change feed on the feed's thread: after each commit that
/// affects what is observed (from this thread, another thread or another process), it pins the
/// new snapshot as a frozen `Reef` and computes the change from the previous one, with the same
/// rules as the same-thread `observe`. It ends when the task
/// iterating it is cancelled or the sequence is released, which cancels its feed observation.
/// Changes are buffered until read: each buffered change pins its snapshot (see
/// ``Reef/freeze()`` for the cost), so read them promptly.
public struct ReefChanges<Change>: AsyncSequence, @unchecked Sendable {
  public typealias Element = Change
  let stream: AsyncStream<Change>

  /// The iterator (one per sequence, as `AsyncStream`'s).
  public func makeAsyncIterator() -> AsyncStream<Change>.Iterator { stream.makeAsyncIterator() }

  /// A sequence of one change (an error, or a deletion), then the end.
  static func only(_ change: Change) -> ReefChanges {
    let (stream, continuation) = AsyncStream<Change>.makeStream()
    continuation.yieldFrozen(change)
    continuation.finish()
    return ReefChanges(stream: stream)
  }
}

/// The cancellation of a feed observation, which may come before the observation exists.
private final class ObservationSlot: @unchecked Sendable {
  private let lock = Lock()
  private var observation: ChangeObservation?
  private var cancelled = false

  func set(_ observation: ChangeObservation) {
    let cancelNow = lock.withLock {
      if !cancelled { self.observation = observation }
      return cancelled
    }
    if cancelNow { observation.cancel() }
  }

  func cancel() {
    let observation = lock.withLock {
      cancelled = true
      defer { self.observation = nil }
      return self.observation
    }
    observation?.cancel()
  }
}

/// The state a change sequence keeps on the feed's thread (one handler call at a time): the
/// last frozen `Reef` and the feed sequence it reads.
final class FrozenFeed<Change>: @unchecked Sendable {
  private var reef: Reef
  private var sequence: UInt64
  private var ended = false
  private let continuation: AsyncStream<Change>.Continuation
  /// Computes the change to a new frozen `Reef` from the commits since the last one and yields
  /// it; returns false to end the sequence.
  private let advance: (Reef, ChangeBatch, AsyncStream<Change>.Continuation) -> Bool
  private let failure: (any Error) -> Change

  init(
    reef: Reef, sequence: UInt64, continuation: AsyncStream<Change>.Continuation,
    failure: @escaping (any Error) -> Change,
    advance: @escaping (Reef, ChangeBatch, AsyncStream<Change>.Continuation) -> Bool
  ) {
    self.reef = reef
    self.sequence = sequence
    self.continuation = continuation
    self.failure = failure
    self.advance = advance
  }

  /// Called for each batch of the feed: reads the latest state in a new frozen `Reef`.
  func next() {
    guard !ended else { return }
    let store = reef.store
    do {
      let transaction = try store.beginRead()
      let batch: ChangeBatch
      let pin: VersionPin
      do {
        batch = try transaction.changes(after: sequence)
        guard batch.latest != sequence || !batch.isComplete else {
          transaction.end()
          return
        }
        pin = try VersionPins.pin(
          transaction.snapshotID, of: store, limit: reef.configuration.maximumNumberOfActiveVersions)
      } catch {
        transaction.end()
        throw error
      }
      let frozen = Reef(frozen: FrozenSnapshot(transaction: transaction, pin: pin), like: reef)
      sequence = batch.latest
      reef = frozen
      if !advance(frozen, batch, continuation) { end() }
    } catch {
      continuation.yieldFrozen(failure(error))
      end()
    }
  }

  private func end() {
    ended = true
    continuation.finish()
  }

  /// Starts a sequence from a frozen `Reef`: yields `initial`, then follows the feed from the
  /// frozen `Reef`'s snapshot.
  static func start(
    from frozen: Reef, initial: Change?, failure: @escaping (any Error) -> Change,
    advance: @escaping (Reef, ChangeBatch, AsyncStream<Change>.Continuation) -> Bool
  ) -> ReefChanges<Change> {
    let (stream, continuation) = AsyncStream<Change>.makeStream(bufferingPolicy: .unbounded)
    if let initial { continuation.yieldFrozen(initial) }
    let slot = ObservationSlot()
    continuation.onTermination = { _ in slot.cancel() }
    do {
      let gate = frozen.enterSnapshot()
      let sequence = try frozen.transaction().changeSequence()
      gate?.unlock()
      let feed = FrozenFeed(
        reef: frozen, sequence: sequence, continuation: continuation, failure: failure, advance: advance)
      slot.set(try frozen.store.observeChanges(after: sequence) { _ in feed.next() })
    } catch {
      continuation.yieldFrozen(failure(error))
      continuation.finish()
    }
    return ReefChanges(stream: stream)
  }
}

extension Results {
  /// The changes of these results as an asynchronous sequence of frozen results: `.initial`
  /// first, then `.update` after each commit that changed them (see ``changes(keyPaths:)``).
  ///
  /// ```swift
  /// for await change in reef.objects(Person.self).changes {
  ///     if case .update(let people, let deletions, let insertions, let modifications) = change { … }
  /// }
  /// ```
  public var changes: ReefChanges<ReefCollectionChange<Results<Element>>> { changes(keyPaths: nil) }

  /// The changes of these results as an asynchronous sequence whose results are FROZEN (read
  /// them in any task): `.initial` with the results as they are now, then `.update` with
  /// deletions, insertions and modifications, as ``observe(keyPaths:_:)`` reports them, after
  /// each commit that changed them, from this `Reef`, another thread or another process;
  /// `.error` (and the end) when they cannot be read. Commits that come while the previous
  /// change is computed are reported together. `keyPaths` limit the modifications as in
  /// ``observe(keyPaths:_:)``.
  ///
  /// The sequence ends, and its observation of the store's change feed is cancelled, when the
  /// task iterating it is cancelled or the sequence is released. Call it on the results'
  /// thread (or on frozen results, from anywhere).
  public func changes(keyPaths: [String]?) -> ReefChanges<ReefCollectionChange<Results<Element>>> {
    let failure = { (error: any Error) in ReefCollectionChange<Results<Element>>.error(error) }
    let frozen: Results
    let tracker: ResultsTracker<Element>
    do {
      frozen = try tryFreeze()
      tracker = try ResultsTracker(frozen)
    } catch {
      return .only(.error(error))
    }
    let definition = definition
    let collection = schema.className
    let baseCollection = base?.ownerCollection
    let paths = keyPaths.map { $0.map { ChangePaths.stored($0, schema: schema) } }
    // Results through links depend on other collections: any commit reads them again.
    let linked = ResultsTracker<Element>.dependsOnOtherObjects(schema)
    return FrozenFeed.start(from: frozen.reef, initial: .initial(frozen), failure: failure) {
      reef, batch, continuation in
      let touched =
        !batch.isComplete || linked
        || batch.commits.contains { $0.touches(collection) || baseCollection.map($0.touches) == true }
      guard touched else { return true }
      let results = Results<Element>(reef: reef, definition: definition)
      // Followed object by object, as `observe` does, in the batch's frozen state.
      tracker.results = results
      let change: CollectionDiff?
      do {
        change = try tracker.update(
          batch: batch, modified: ChangePaths.modifiedIDs(in: collection, batch: batch, paths: paths))
      } catch {
        continuation.yieldFrozen(.error(error))
        return false
      }
      if let change {
        continuation.yieldFrozen(
          .update(
            results, deletions: change.deletions, insertions: change.insertions,
            modifications: change.modifications))
      }
      return true
    }
  }
}

extension _ObjectObservable where Self: ObjectBase {
  /// The changes of this managed object as an asynchronous sequence (see ``changes(keyPaths:)``).
  public var changes: ReefChanges<ObjectChange<Self>> { changes(keyPaths: nil) }

  /// The changes of this managed object as an asynchronous sequence whose objects are FROZEN
  /// (read them in any task): `.change` with the properties that changed (old and new values,
  /// as `observe` reports them) after each commit that changed it, from this `Reef`, another
  /// thread or another process; `.deleted` when it is deleted, and then the end. No change is
  /// yielded for the object as it is now. `keyPaths` (property names, or paths into embedded
  /// objects such as `address.city`) limit the changes reported.
  ///
  /// The sequence ends, and its observation of the store's change feed is cancelled, when the
  /// task iterating it is cancelled or the sequence is released. Call it on the object's thread
  /// (or on a frozen object, from anywhere).
  /// - Precondition: the object is managed (Realm's message otherwise).
  public func changes(keyPaths: [String]?) -> ReefChanges<ObjectChange<Self>> {
    guard _managed != nil else {
      reefStop("Only objects which are managed by a Reef support change notifications")
    }
    let frozen: Self
    let start: (path: ObjectPath, document: Document)
    do {
      frozen = try tryFreeze()
      let gate = frozen._managed!.reef.enterSnapshot()
      defer { gate?.unlock() }
      guard let path = ObjectPath(frozen._managed!), let document = frozen._managed!.currentDocument() else {
        throw ReefError(.invalidated, "Object has been deleted or invalidated", type: objectSchema.className)
      }
      start = (path, document)
    } catch {
      return .only((error as? ReefError)?.kind == .invalidated ? .deleted : .error(error))
    }
    let path = start.path
    var old = start.document
    let schema = frozen._managed!.schema
    let paths = keyPaths.map { $0.map { ChangePaths.stored($0, schema: schema) } }
    return FrozenFeed.start(from: frozen._managed!.reef, initial: nil, failure: { .error($0) }) {
      reef, batch, continuation in
      let touched =
        !batch.isComplete
        || batch.commits.contains { commit in
          commit.resetCollections.contains(path.schema.className)
            || commit.changes.contains { $0.collection == path.schema.className && $0.id == path.id }
        }
      guard touched else { return true }
      guard let state = path.state(in: reef), let new = state.currentDocument() else {
        continuation.yieldFrozen(.deleted)
        return false
      }
      let object = unsafeDowncast(state.makeObject(), to: Self.self)
      let changes = PropertyChange.changes(of: object, schema: schema, old: old, new: new, paths: paths)
      old = new
      if !changes.isEmpty { continuation.yieldFrozen(.change(object, changes)) }
      return true
    }
  }
}

extension PropertyChange {
  /// The properties of `object` (whose document is now `new`) that differ from `old`, limited
  /// to `paths` (stored paths) when given, as object notifications report them.
  static func changes(
    of object: ObjectBase, schema: ObjectSchema, old: Document, new: Document, paths: [String]?
  ) -> [PropertyChange] {
    guard let managed = object._managed else { return [] }
    var changes: [PropertyChange] = []
    for property in schema.allProperties where property.shape.isStored {
      let column = property.columnName
      let watched = paths.map { $0.filter { ChangePaths.overlaps(column, $0) } }
      if let watched, watched.isEmpty { continue }
      // The property's value, or only the watched paths inside it.
      let compared = watched?.map { $0.count > column.count ? $0 : column } ?? [column]
      guard compared.contains(where: { old[$0] != new[$0] }) else { continue }
      let scalar = !property.isArray && !property.isSet && !property.isMap && property.objectClass == nil
      let oldValue: Any? =
        scalar
        ? property.codec.get(
          ManagedObject(reef: managed.reef, schema: schema, id: managed.id, document: old), property) : nil
      changes.append(PropertyChange(name: property.name, oldValue: oldValue, newValue: object[property.name]))
    }
    return changes
  }
}

extension AsyncStream.Continuation {
  /// Yields a change whose results or object are frozen (or an error): readable in any task,
  /// which the compiler cannot see from the type.
  func yieldFrozen(_ change: Element) {
    nonisolated(unsafe) let change = change
    yield(change)
  }
}
