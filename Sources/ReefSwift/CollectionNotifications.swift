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
    guard let access else { preconditionFailure(unmanagedCollectionMessage) }
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
    guard let access else { preconditionFailure(unmanagedCollectionMessage) }
    return ElementObserver.observe(self, access: access, keyPaths: keyPaths, block)
  }
}

extension Map {
  /// Calls `block` with `.initial` now, then with `.update` after each commit that changed the
  /// map, when its `Reef` writes or ``Reef/refresh()``es.
  ///
  /// Indices are positions in the map's key order (the order of ``keys``: insertion order, a new
  /// key going last, a removed key's place closing up). A key removed is a deletion (its old
  /// index), a key added an insertion (its new index), a key whose value changed (or, for an
  /// embedded object, changed inside, or for a link, whose linked object changed) a
  /// modification (its old index); each list is sorted ascending, and the commits seen at once
  /// make one `.update`. When the map's object is deleted, one `.update` reports every entry
  /// deleted, and no other comes.
  ///
  /// - Parameters:
  ///   - keyPaths: for a map of embedded objects or links, property names of the value type:
  ///     only changes at those paths are modifications.
  ///   - block: called on the `Reef`'s thread.
  public func observe(
    keyPaths: [String]? = nil, _ block: @escaping (ReefCollectionChange<Map<Key, Value>>) -> Void
  ) -> NotificationToken {
    guard let access else { preconditionFailure(unmanagedCollectionMessage) }
    return ElementObserver.observe(self, access: access, keyPaths: keyPaths, block)
  }
}

/// Realm's message for notifications asked of an unmanaged collection.
let unmanagedCollectionMessage = "Collections which are not managed by a Reef do not support change notifications"

/// The notifications of a managed `List`, `MutableSet` or `Map`: its elements as last reported,
/// compared with the new ones after each batch that touched the owner's document (or, for
/// links, the linked type's collection).
enum ElementObserver {
  /// The elements of a collection: each one's identity (its value; a map's key) and value.
  struct State {
    var keys: [BSON] = []
    var values: [BSON] = []
    /// Whether every stored element is in ``keys`` (links to objects that are gone are not).
    var complete = true
  }

  static func observe<C>(
    _ collection: C, access: FieldAccess, keyPaths: [String]?, _ block: @escaping (ReefCollectionChange<C>) -> Void
  ) -> NotificationToken {
    let owner = access.owner
    let property = access.property
    let reef = owner.reef
    reef.checkThread()
    precondition(!reef.isInWriteTransaction, "Cannot register notification blocks from within write transactions.")
    var state: State
    switch read(access) {
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
    case .success(let initial?):
      state = initial
    }
    block(.initial(collection))
    let target = property.objectClass.map(ObjectSchema.of)
    let storedPaths = keyPaths.map { paths in
      paths.map { path in target.map { ChangePaths.stored(path, schema: $0) } ?? path }
    }
    let isList = property.isArray
    let topCollection = owner.top.schema.className
    let topID = owner.top.id
    var ended = false
    return reef.addObserver { reef, batch, silent in
      guard !ended else { return }
      let prefix = owner.parent == nil ? "" : owner.pathDescription + "."
      let touch = FieldTouch(
        field: prefix + property.columnName, collection: topCollection, id: topID, batch: batch)
      let linked = property.isLink ? target : nil
      let targetTouched = linked.map { ChangePaths.touches($0.className, batch: batch) } ?? false
      guard touch.touched || targetTouched else { return }
      let new: State
      switch read(access) {
      case .failure(let error):
        ended = true
        if !silent { block(.error(error)) }
        return
      case .success(nil):
        // The owner is gone: every element went with it.
        ended = true
        let deletions = Array(state.keys.indices)
        state = State()
        if !silent && !deletions.isEmpty {
          block(.update(collection, deletions: deletions, insertions: [], modifications: []))
        }
        return
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
      let valuePaths = property.isEmbedded ? storedPaths : nil
      var fixed: Set<Int> = []
      if isList, let positions = touch.positions, state.complete, new.complete, state.keys.count == new.keys.count {
        fixed = Set(new.keys.indices).subtracting(positions)
      }
      let old = state
      let diff = ElementDiff(
        old: old.keys, new: new.keys, fixed: fixed, pairs: isList,
        stayedModified: { oldIndex, newIndex in
          (property.isMap && KeyPathValues.differ(old.values[oldIndex], new.values[newIndex], at: valuePaths))
            || linkModified(new.values[newIndex])
        },
        pairModified: { oldIndex, newIndex in
          property.isLink || KeyPathValues.differ(old.values[oldIndex], new.values[newIndex], at: valuePaths)
        })
      state = new
      guard !silent, !diff.isEmpty else { return }
      block(
        .update(
          collection, deletions: diff.deletions, insertions: diff.insertions, modifications: diff.modifications))
    }
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
    guard let owner else { preconditionFailure(unmanagedCollectionMessage) }
    let reef = owner.reef
    reef.checkThread()
    precondition(!reef.isInWriteTransaction, "Cannot register notification blocks from within write transactions.")
    guard owner.currentDocument() != nil else {
      block(
        .error(
          ReefError(
            .invalidated,
            "the linking objects of a deleted or invalidated \(owner.schema.className) cannot be observed",
            type: owner.schema.className, primaryKey: owner.id)))
      return NotificationToken(reef: nil, id: 0)
    }
    let origin = ObjectSchema.of(Element.self)
    let paths = keyPaths.map { $0.map { ChangePaths.stored($0, schema: origin) } }
    var ids = results.map { $0._managed?.id ?? .null }
    block(.initial(self))
    let linkingObjects = self
    let top = owner.top
    var ended = false
    return reef.addObserver { _, batch, silent in
      guard !ended else { return }
      let touched =
        ChangePaths.touches(origin.className, batch: batch)
        || batch.commits.contains { commit in
          commit.resetCollections.contains(top.schema.className)
            || commit.changes.contains { $0.collection == top.schema.className && $0.id == top.id }
        }
      guard touched else { return }
      guard owner.currentDocument() != nil else {
        ended = true
        let deletions = Array(ids.indices)
        ids = []
        if !silent && !deletions.isEmpty {
          block(.update(linkingObjects, deletions: deletions, insertions: [], modifications: []))
        }
        return
      }
      let newIDs = linkingObjects.results.map { $0._managed?.id ?? .null }
      let modified = ChangePaths.modifiedIDs(in: origin.className, batch: batch, paths: paths)
      let change = CollectionDiff(old: ids, new: newIDs, modified: modified)
      ids = newIDs
      guard !silent, !change.isEmpty else { return }
      block(
        .update(
          linkingObjects, deletions: change.deletions, insertions: change.insertions,
          modifications: change.modifications))
    }
  }
}
