import ReefBSON
import ReefStore

extension List {
  /// Calls `block` with `.initial` now, then with `.update` after each commit that changed the
  /// list, when its `Reef` writes or ``Reef/refresh()``es.
  ///
  /// Deletions are old indices, insertions new indices, modifications old indices, each sorted
  /// ascending; the commits seen at once (another thread's, at one refresh) make one `.update`.
  /// An element moved (`move(from:to:)`, `swapAt`) is a deletion and an insertion; an element
  /// replaced at its index (`list[i] = x`), or an embedded object changed in place, is a
  /// modification. In a list of links, a change to a linked object's document is a modification
  /// of each index that holds it.
  ///
  /// Values and embedded objects have no identity but their position and value: the elements
  /// found in both versions with the same value keep their place (or moved), and between two
  /// that kept their place, the elements that went and came are paired in order as
  /// modifications. Where the change feed shows a commit left the list's length alone, the
  /// positions it did not touch keep their elements, so an element changed in place is a
  /// modification even when its new value equals another's. When the list's object is deleted, one `.update` reports every
  /// element deleted, and no other comes (the list is invalidated then: check
  /// ``_CollectionAccessor/isInvalidated`` before reading it). A stored value that no longer fits
  /// the list is reported as `.error`, and ends the notifications.
  ///
  /// - Parameters:
  ///   - keyPaths: property names of the elements (`city`, `address.city`) for a list of embedded
  ///     objects or links: only changes at those paths are modifications (insertions, deletions
  ///     and moves are always reported). Ignored for a list of values.
  ///   - block: called on the `Reef`'s thread.
  /// - Returns: the token that keeps the notifications coming.
  ///
  /// Call it from the `Reef`'s thread, outside a write transaction, on a managed list: the
  /// list of an unmanaged object stops with Realm's message.
  public func observe(
    keyPaths: [String]? = nil, _ block: @escaping (ReefCollectionChange<List<Element>>) -> Void
  ) -> NotificationToken {
    guard let access else { reefStop(unmanagedCollectionMessage) }
    return ElementObserver.observe(self, access: access, keyPaths: keyPaths, block)
  }
}

extension MutableSet {
  /// Calls `block` with `.initial` now, then with `.update` after each commit that changed the
  /// set, when its `Reef` writes or ``Reef/refresh()``es.
  ///
  /// Indices are positions in the set's stored order (the order it iterates in: insertion
  /// order, a removed element's place closing up). Deletions are old indices, insertions new
  /// indices, modifications (in a set of links, a linked object whose document changed) old
  /// indices, each sorted ascending; the commits seen at once make one `.update`. When the set's
  /// object is deleted, one `.update` reports every element deleted, and no other comes.
  ///
  /// - Parameters:
  ///   - keyPaths: for a set of links, property names of the linked type: only changes at those
  ///     paths are modifications.
  ///   - block: called on the `Reef`'s thread.
  public func observe(
    keyPaths: [String]? = nil, _ block: @escaping (ReefCollectionChange<MutableSet<Element>>) -> Void
  ) -> NotificationToken {
    guard let access else { reefStop(unmanagedCollectionMessage) }
    return ElementObserver.observe(self, access: access, keyPaths: keyPaths, block)
  }
}

extension Map {
  /// Calls `block` with `.initial` now, then with `.update` after each commit that changed the
  /// map, when its `Reef` writes or ``Reef/refresh()``es, with the keys that changed: Realm's
  /// `observe(keyPaths:_:)` and its `RealmMapChange`.
  ///
  /// A key removed is a deletion, a key added an insertion, a key whose value changed (or, for
  /// an embedded object, changed inside, or for a link, whose linked object changed) a
  /// modification; each list is in the map's key order (insertion order) and the commits seen
  /// at once make one `.update`. When the map's object is deleted, one `.update` reports every
  /// key deleted, and no other comes.
  ///
  /// - Parameters:
  ///   - keyPaths: for a map of embedded objects or links, property names of the value type:
  ///     only changes at those paths are modifications.
  ///   - block: called on the `Reef`'s thread.
  public func observe(
    keyPaths: [String]? = nil, _ block: @escaping (ReefMapChange<Map<Key, Value>>) -> Void
  ) -> NotificationToken {
    let keys = MapKeyChanges<Key, Value>()
    return observeIndices(keyPaths: keyPaths) { block(keys.change($0)) }
  }

  /// The map's notifications with the positions (in the key order) of the keys that changed:
  /// deletions and modifications old positions, insertions new ones.
  func observeIndices(
    keyPaths: [String]?, _ block: @escaping (ReefCollectionChange<Map<Key, Value>>) -> Void
  ) -> NotificationToken {
    guard let access else { reefStop(unmanagedCollectionMessage) }
    return ElementObserver.observe(self, access: access, keyPaths: keyPaths, block)
  }
}

/// Turns a map's changes by position into changes by key, remembering the keys of the last one:
/// deletions and modifications are keys of the map before the change, insertions keys after it.
/// Used by one observation at a time (its thread, queue or actor).
final class MapKeyChanges<Key: _ReefMapKey, Value: _ReefCollectionElement>: @unchecked Sendable {
  private var keys: [Key] = []

  func change(_ change: ReefCollectionChange<Map<Key, Value>>) -> ReefMapChange<Map<Key, Value>> {
    switch change {
    case .initial(let map):
      keys = map.keys
      return .initial(map)
    case .update(let map, let deletions, let insertions, let modifications):
      // A map whose object is gone has no keys left (reading them would stop).
      let old = keys
      let new = map.isInvalidated ? [] : map.keys
      keys = new
      return .update(
        map, deletions: deletions.compactMap { old.indices.contains($0) ? old[$0] : nil },
        insertions: insertions.compactMap { new.indices.contains($0) ? new[$0] : nil },
        modifications: modifications.compactMap { old.indices.contains($0) ? old[$0] : nil })
    case .error(let error):
      return .error(error)
    }
  }
}

/// Realm's message for notifications asked of an unmanaged collection.
let unmanagedCollectionMessage = "Collections which are not managed by a Reef do not support change notifications"

/// The notifications of a managed `List`, `MutableSet` or `Map`, on its `Reef`'s thread.
enum ElementObserver {
  static func observe<C>(
    _ collection: C, access: FieldAccess, keyPaths: [String]?, _ block: @escaping (ReefCollectionChange<C>) -> Void
  ) -> NotificationToken {
    let owner = access.owner
    let property = access.property
    let reef = owner.reef
    reef.checkThread()
    reefRequire(!reef.isInWriteTransaction, "Cannot register notification blocks from within write transactions.")
    let tracker: ElementTracker
    switch ElementTracker.start(access, keyPaths: keyPaths) {
    case .failure(let error):
      block(.error(error))
      return NotificationToken(reef: nil, id: 0)
    case .success(nil):
      block(
        .error(
          ReefError(
            .invalidated,
            "the \(property.name) of a deleted or invalidated \(owner.schema.className) cannot be observed",
            type: owner.schema.className, property: property.name, primaryKey: owner.id)))
      return NotificationToken(reef: nil, id: 0)
    case .success(let started?):
      tracker = started
    }
    block(.initial(collection))
    return CollectionStep.observe(collection, in: reef, block) { tracker.advance(access, batch: $0) }
  }
}

/// What a batch of commits did to an observed collection.
enum CollectionStep {
  /// The batch did not touch the collection.
  case untouched
  /// The collection can no longer be read (the notifications end).
  case failed(ReefError)
  /// Its object is gone, and every element (old indices) with it (the notifications end).
  case ownerGone(deletions: [Int])
  /// The elements changed (or not, when all three are empty).
  case changed(deletions: [Int], insertions: [Int], modifications: [Int])

  /// The change this step reports for `collection` (nil: none), and whether it is the last.
  func report<C>(_ collection: C) -> (change: ReefCollectionChange<C>?, last: Bool) {
    switch self {
    case .untouched: return (nil, false)
    case .failed(let error): return (.error(error), true)
    case .ownerGone(let deletions):
      let change = CollectionStep.changed(deletions: deletions, insertions: [], modifications: [])
      return (change.report(collection).change, true)
    case .changed(let deletions, let insertions, let modifications):
      guard !(deletions.isEmpty && insertions.isEmpty && modifications.isEmpty) else { return (nil, false) }
      return (
        .update(collection, deletions: deletions, insertions: insertions, modifications: modifications), false
      )
    }
  }

  /// Calls `block` with the change `advance` finds in each batch `reef` sees, until one is the
  /// last (a batch seen silently, as after a write that skips this token, reports nothing).
  static func observe<C>(
    _ collection: C, in reef: Reef, _ block: @escaping (ReefCollectionChange<C>) -> Void,
    advance: @escaping (ChangeBatch) -> CollectionStep
  ) -> NotificationToken {
    var ended = false
    return reef.addObserver { _, batch, silent in
      guard !ended else { return }
      let (change, last) = advance(batch).report(collection)
      ended = last
      if !silent, let change { block(change) }
    }
  }
}

/// The elements of a managed `List`, `MutableSet` or `Map` as last reported, compared with the
/// new ones after each batch that touched the owner's document (or, for links, the linked
/// type's collection). It follows one collection, read through the same or successive accessors
/// (a live one, or one per frozen snapshot).
final class ElementTracker {
  /// The elements of a collection: each one's identity (its value; a map's key) and value.
  struct State {
    var keys: [BSON] = []
    var values: [BSON] = []
    /// Whether every stored element is in ``keys`` (links to objects that are gone are not).
    var complete = true
  }

  private var state: State
  private let property: Property
  /// The linked type, for links and embedded objects.
  private let target: ObjectSchema?
  /// The watched paths, as stored.
  private let storedPaths: [String]?

  private init(state: State, property: Property, keyPaths: [String]?) {
    self.state = state
    self.property = property
    target = property.objectClass.map(ObjectSchema.of)
    storedPaths = keyPaths.map { [target] paths in
      paths.map { path in target.map { ChangePaths.stored(path, schema: $0) } ?? path }
    }
  }

  /// A tracker of the collection's elements now; nil when its object is gone; an error when
  /// the stored field does not fit the property.
  static func start(_ access: FieldAccess, keyPaths: [String]?) -> Result<ElementTracker?, ReefError> {
    read(access).map { state in
      state.map { ElementTracker(state: $0, property: access.property, keyPaths: keyPaths) }
    }
  }

  /// The change a batch made, reading the collection through `access` (whose `Reef` has seen it).
  func advance(_ access: FieldAccess, batch: ChangeBatch) -> CollectionStep {
    let owner = access.owner
    let reef = owner.reef
    let prefix = owner.parent == nil ? "" : owner.pathDescription + "."
    let touch = FieldTouch(
      field: prefix + property.columnName, collection: owner.top.schema.className, id: owner.top.id, batch: batch)
    let linked = property.isLink ? target : nil
    let targetTouched = linked.map { ChangePaths.touches($0.className, batch: batch) } ?? false
    guard touch.touched || targetTouched else { return .untouched }
    let new: State
    switch Self.read(access) {
    case .failure(let error):
      return .failed(error)
    case .success(nil):
      // The owner is gone: every element went with it.
      let deletions = Array(state.keys.indices)
      state = State()
      return .ownerGone(deletions: deletions)
    case .success(let read?):
      new = read
    }
    // The linked objects whose documents changed (nil: any may have).
    var modifiedTargets: Set<BSON>? = []
    if let linked, targetTouched {
      modifiedTargets = ChangePaths.modifiedIDs(in: linked.className, batch: batch, paths: storedPaths)
    }
    func linkModified(_ identity: BSON) -> Bool {
      guard let linked, modifiedTargets?.isEmpty != true else { return false }
      guard let modifiedTargets else { return true }
      return ChangePaths.linkedID(identity, schema: linked, reef: reef).map(modifiedTargets.contains) ?? false
    }
    let property = property
    let valuePaths = property.isEmbedded ? storedPaths : nil
    var fixed: Set<Int> = []
    if property.isArray, let positions = touch.positions, state.complete, new.complete,
      state.keys.count == new.keys.count
    {
      fixed = Set(new.keys.indices).subtracting(positions)
    }
    let old = state
    let diff = ElementDiff(
      old: old.keys, new: new.keys, fixed: fixed, pairs: property.isArray,
      stayedModified: { oldIndex, newIndex in
        (property.isMap && KeyPathValues.differ(old.values[oldIndex], new.values[newIndex], at: valuePaths))
          || linkModified(new.values[newIndex])
      },
      pairModified: { oldIndex, newIndex in
        property.isLink || KeyPathValues.differ(old.values[oldIndex], new.values[newIndex], at: valuePaths)
      })
    state = new
    return .changed(deletions: diff.deletions, insertions: diff.insertions, modifications: diff.modifications)
  }

  /// The collection's elements now; nil when its object is gone; an error when the stored
  /// field does not fit the property.
  static func read(_ access: FieldAccess) -> Result<State?, ReefError> {
    let owner = access.owner
    let property = access.property
    guard let document = owner.currentDocument() else { return .success(nil) }
    // The field, and each element, as reading the collection decodes them.
    guard ObjectWatch.fits(property, owner, in: document) else {
      return .failure(
        ReefError(
          .documentMismatch, owner.mismatch(property, document.element(forKey: property.columnName)),
          type: owner.schema.className, property: property.name, primaryKey: owner.id))
    }
    let elements = access.elements()
    var state = State()
    state.values = elements.map(\.value)
    state.keys = property.isMap ? elements.map { .string($0.key) } : state.values
    if property.isLink, case .array(let stored)? = document[property.columnName] {
      state.complete = stored.count == elements.count
    } else if property.isLink, case .document(let stored)? = document[property.columnName] {
      state.complete = stored.count == elements.count
    }
    return .success(state)
  }
}

/// How the commits of a batch touched one field of one top-level document.
struct FieldTouch {
  /// Whether a commit may have changed the field (or deleted its document).
  var touched = false
  /// For an array field every commit left at its length: the positions changed (nil when a
  /// commit changed the length, replaced the whole field, or what changed is not known).
  var positions: Set<Int>? = []

  /// `field` is the dotted path of the field in its top-level document.
  init(field: String, collection: String, id: BSON, batch: ChangeBatch) {
    guard batch.isComplete else {
      (touched, positions) = (true, nil)
      return
    }
    for commit in batch.commits {
      if commit.resetCollections.contains(collection) {
        (touched, positions) = (true, nil)
        continue
      }
      for change in commit.changes where change.collection == collection && change.id == id {
        guard change.kind == .modified, !change.fields.isEmpty else {
          (touched, positions) = (true, nil)
          continue
        }
        for path in change.fields {
          if path == field || field.hasPrefix(path + ".") {
            (touched, positions) = (true, nil)
          } else if path.hasPrefix(field + ".") {
            touched = true
            let rest = path.dropFirst(field.count + 1)
            if let index = Int(rest.prefix { $0 != "." }) { positions?.insert(index) } else { positions = nil }
          }
        }
      }
    }
  }
}

extension LinkingObjects {
  /// Calls `block` with `.initial` now, then with `.update` after each commit that changed
  /// which objects link here or the documents of those that do, when the `Reef` writes or
  /// ``Reef/refresh()``es.
  ///
  /// Indices are positions in the order the linking objects are read in (the store's order of
  /// the origin type). An object that starts linking here is an insertion (its new index), one
  /// that stops (or is deleted) a deletion (its old index), one whose document changed a
  /// modification (its old index); each list is sorted ascending, and the commits seen at once
  /// make one `.update`. When this object is deleted, one `.update` reports every linking
  /// object deleted, and no other comes.
  ///
  /// - Parameters:
  ///   - keyPaths: property names of the origin type: only changes at those paths are
  ///     modifications.
  ///   - block: called on the `Reef`'s thread.
  ///
  /// Call it on the linking objects of a managed object, from its `Reef`'s thread, outside a
  /// write transaction.
  public func observe(
    keyPaths: [String]? = nil, _ block: @escaping (ReefCollectionChange<LinkingObjects<Element>>) -> Void
  ) -> NotificationToken {
    guard let owner else { reefStop(unmanagedCollectionMessage) }
    let reef = owner.reef
    reef.checkThread()
    reefRequire(!reef.isInWriteTransaction, "Cannot register notification blocks from within write transactions.")
    guard let tracker = LinkingTracker(self, keyPaths: keyPaths) else {
      block(
        .error(
          ReefError(
            .invalidated,
            "the linking objects of a deleted or invalidated \(owner.schema.className) cannot be observed",
            type: owner.schema.className, primaryKey: owner.id)))
      return NotificationToken(reef: nil, id: 0)
    }
    block(.initial(self))
    return CollectionStep.observe(self, in: reef, block) { [self] in tracker.advance(self, batch: $0) }
  }
}

/// The objects that link to an object as last reported, compared with the new ones after each
/// batch that touched the origin type or the object; read through the same or successive
/// `LinkingObjects` (a live one, or one per frozen snapshot).
final class LinkingTracker {
  private var ids: [BSON]
  private let origin: ObjectSchema
  private let paths: [String]?

  /// A tracker of the objects that link to the object of `linkingObjects` now; nil when that
  /// object is gone.
  init?<Element>(_ linkingObjects: LinkingObjects<Element>, keyPaths: [String]?) {
    guard linkingObjects.owner?.currentDocument() != nil else { return nil }
    origin = ObjectSchema.of(Element.self)
    paths = keyPaths.map { [origin] in $0.map { ChangePaths.stored($0, schema: origin) } }
    ids = linkingObjects.results.map(LinkingTracker.identity)
  }

  /// What names a linking object between batches: a top-level one's `_id`, an embedded one's
  /// place in its file.
  private static func identity(_ object: ObjectBase) -> BSON {
    guard let managed = object._managed else { return .null }
    return managed.parent == nil ? managed.id : .string(managed.identityPath)
  }

  /// The change a batch made, reading `linkingObjects` (whose `Reef` has seen it).
  func advance<Element>(_ linkingObjects: LinkingObjects<Element>, batch: ChangeBatch) -> CollectionStep {
    guard let top = linkingObjects.owner?.top else { return .untouched }
    let collections = linkingObjects.originCollections
    let touched =
      collections.contains { ChangePaths.touches($0, batch: batch) }
      || batch.commits.contains { commit in
        commit.resetCollections.contains(top.schema.className)
          || commit.changes.contains { $0.collection == top.schema.className && $0.id == top.id }
      }
    guard touched else { return .untouched }
    guard linkingObjects.owner?.currentDocument() != nil else {
      let deletions = Array(ids.indices)
      ids = []
      return .ownerGone(deletions: deletions)
    }
    let objects = linkingObjects.results
    let newIDs = objects.map(LinkingTracker.identity)
    var modified: Set<BSON>?
    if origin.isEmbedded {
      // An embedded object is modified with its top-level object.
      var tops: Set<BSON>? = []
      for collection in collections {
        guard let inCollection = ChangePaths.modifiedIDs(in: collection, batch: batch, paths: nil) else {
          tops = nil
          break
        }
        tops?.formUnion(inCollection.map(DocumentChange.identity(of:)))
      }
      modified = tops.map { tops in
        Set(
          zip(objects, newIDs).compactMap { object, id in
            object._managed.map { tops.contains(DocumentChange.identity(of: $0.id)) } == true ? id : nil
          })
      }
    } else {
      modified = ChangePaths.modifiedIDs(in: origin.className, batch: batch, paths: paths)
    }
    let change = CollectionDiff(old: ids, new: newIDs, modified: modified)
    ids = newIDs
    return .changed(deletions: change.deletions, insertions: change.insertions, modifications: change.modifications)
  }
}
