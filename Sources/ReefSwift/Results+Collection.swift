import ReefBSON
import ReefQuery
import ReefStore

/// A collection property of links whose objects some results are (`person.dogs.filter(…)`,
/// `person.dogs.sorted(byKeyPath:)`): its object, found again in any `Reef` of the file, and
/// the property. The results read the collection when they are read, so they follow it as it
/// changes, in its order, as Realm's results of a `List` do.
struct ResultsBase: @unchecked Sendable {
  /// The collection's object.
  let owner: ObjectPath
  /// The `List`, `MutableSet` or `Map` property of the owner's type.
  let property: Property

  /// The top-level type whose documents hold the collection (its changes change the results).
  var ownerCollection: String { owner.schema.className }

  /// The identities the collection holds in `reef`'s state, in its order (a map's values in key
  /// order, nil values left out); none when its object is gone.
  func identities(in reef: Reef) -> [BSON] {
    guard let state = owner.state(in: reef), let document = state.currentDocument(),
      let field = document.element(forKey: property.columnName), let values = field.document
    else { return [] }
    return values.map(\.value).filter { $0 != .null }
  }

  /// Whether the collection's object is gone from `reef`'s state.
  func isGone(in reef: Reef) -> Bool {
    owner.state(in: reef)?.currentDocument() == nil
  }
}

/// What some results are, apart from the `Reef` that reads them (their type, query, sort,
/// distinct paths and base collection): only values that are safe on any thread.
struct ResultsDefinition: @unchecked Sendable {
  let schema: ObjectSchema
  let conditions: [QueryNode]
  let sortKeys: [SortKey]
  let distinctPaths: [String]
  let base: ResultsBase?
}

extension ObjectSchema {
  /// The stored field holding the identity links store: the primary key's, or `_id`.
  var identityColumn: String {
    guard let key = primaryKeyProperty, !primaryKeyIsID else { return "_id" }
    return key.columnName
  }
}

extension _CollectionAccessor {
  /// Results over the objects of this managed collection of links, in its order; stops with
  /// Realm's message for an unmanaged collection (`kind` names it: `RLMArray`...).
  func baseResults<Target: Object>(_ type: Target.Type, kind: String) -> Results<Target> {
    guard let access else { CollectionElements.unmanagedQuery(kind) }
    let reef = access.owner.reef
    reef.checkThread()
    guard let path = ObjectPath(access.owner) else {
      reefStop("Object has been deleted or invalidated.")
    }
    let schema = reef.registerOrStop(Target.self)
    return Results(reef: reef, schema: schema, base: ResultsBase(owner: path, property: access.property))
  }
}

extension Results {
  /// Realm's name for ``reef``: the `Reef` the results read (never nil: results are always
  /// managed; frozen results have their frozen `Reef`).
  public var realm: Reef? { reef }

  /// Whether the results are no longer valid: for results of a collection (`list.filter(…)`),
  /// once the collection's object is deleted; for any, once their `Reef` was
  /// ``Reef/invalidate()``d after they were made (as Realm's; reading them still works here:
  /// they read the file again).
  public var isInvalidated: Bool {
    if generation != reef.invalidations { return true }
    guard let base else { return false }
    return base.isGone(in: reef)
  }

  /// The position of `object` in the results, or nil when it is not in them.
  /// - Complexity: O(*n*).
  public func index(of object: Element) -> Int? {
    guard let managed = object._managed, managed.reef.store === reef.store, let document = managed.currentDocument()
    else { return nil }
    let id = DocumentChange.identity(of: document["_id"] ?? .null)
    return ids().firstIndex { DocumentChange.identity(of: $0) == id }
  }

  /// The position of the first object that matches a predicate in Realm's language, or nil.
  ///
  /// An invalid predicate stops with the query's message.
  /// - Complexity: O(*n*).
  public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
    index(matching: .format(predicateFormat, args))
  }

  /// The position of the first object that matches an `NSPredicate` (see ``filter(_:)``), or
  /// nil.
  ///
  /// An invalid predicate stops with the query's message.
  /// - Complexity: O(*n*).
  public func index(matching predicate: NSPredicate) -> Int? { index(matching: FilterPredicate(predicate)) }

  private func index(matching predicate: FilterPredicate) -> Int? {
    let matching = Set(filter(predicate).ids().map(DocumentChange.identity(of:)))
    return ids().firstIndex { matching.contains(DocumentChange.identity(of: $0)) }
  }

  /// The objects at `indexes`, in order.
  ///
  /// An index out of bounds stops with Realm's message ("Indexes for collection are out of
  /// bounds.").
  public func objects(at indexes: IndexSet) -> [Element] {
    let count = count
    return indexes.map { index in
      if index >= count { reefStop("Indexes for collection are out of bounds.") }
      return self[index]
    }
  }
}
