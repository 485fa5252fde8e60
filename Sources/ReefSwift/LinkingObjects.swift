import ReefBSON
import ReefQuery

/// The objects that link to this one through a property: Realm's inverse relationship,
/// computed through an index on the origin property, never stored.
///
/// ```swift
/// class Task: Object {
///     @Persisted(originProperty: "tasks") var assignee: LinkingObjects<User>
/// }
/// ```
/// The origin may be an embedded type, as in Realm: the linking objects of a person are then
/// the embedded objects (in any top-level object) whose link property names the person, and
/// those of an embedded object its parent, when it is embedded through the origin property.
/// Linking objects of top-level objects can be filtered and sorted (as live ``Results``); those
/// of an embedded origin are found among the documents of the top-level types that embed it
/// which the `Reef` knows (used, or in ``Reef/Configuration/objectTypes``).
public final class LinkingObjects<Element: ObjectBase>: RandomAccessCollection, LinkingObjectsDescriptor,
  ManagedCollection, CustomStringConvertible
{
  /// The property of `Element` that links here.
  public let propertyName: String
  private(set) var owner: ManagedObject?
  /// This property of `owner` (set with it).
  private(set) var property: Property?
  /// The linking objects as last read, for one version of the `Reef`.
  private var cache: (version: Int, objects: [Element])?

  var originClass: ObjectBase.Type { Element.self }
  var originProperty: String { propertyName }

  /// Linking objects of `type` through its property `property` (the older API's spelling;
  /// `@Persisted(originProperty:)` says the same).
  public init(fromType type: Element.Type, property: String) {
    propertyName = property
  }

  func attach(to owner: ManagedObject, property: Property) {
    self.owner = owner
    self.property = property
  }

  /// The `Reef` of the object these link to, or nil for an unmanaged object's.
  public var reef: Reef? { owner?.reef }
  /// Realm's name for ``reef``.
  public var realm: Reef? { reef }

  /// Whether the object these link to has been deleted (or its `Reef` invalidated): then they
  /// are empty. False for an unmanaged object's.
  public var isInvalidated: Bool { owner.map { $0.currentDocument() == nil } ?? false }

  /// The linking objects, read once per version of the `Reef` (empty for an unmanaged object).
  var results: [Element] {
    guard let owner else { return [] }
    let reef = owner.reef
    let gate = reef.enterSnapshot()
    defer { gate?.unlock() }
    if let cache, cache.version == reef.version { return cache.objects }
    let objects = read(owner)
    cache = (reef.version, objects)
    return objects
  }

  private func read(_ owner: ManagedObject) -> [Element] {
    guard let document = owner.currentDocument() else { return [] }
    let reef = owner.reef
    let origin = ObjectSchema.of(Element.self)
    guard let property = origin.property(named: propertyName) else { return [] }
    if owner.parent != nil {
      // An embedded object's parent is its only backlink.
      guard let parent = owner.parent, parent.schema.objectClass == Element.self,
        owner.field == property.columnName,
        let object = parent.makeObject() as? Element
      else { return [] }
      return [object]
    }
    let identity = reef.identity(of: owner.schema, document: document)
    if origin.isEmbedded {
      return EmbeddedOrigins.objects(Element.self, linkingTo: identity, through: property, in: reef)
    }
    let schema = reef.registerOrStop(Element.self)
    var objects: [Element] = []
    do {
      try Results<Object>(reef: reef, schema: schema, conditions: [Self.condition(property, identity)])
        .forEachDocument { objects.append(reef.object(Element.self, schema: schema, document: $0)) }
    } catch {
      reefStop("reading LinkingObjects<\(schema.className)> failed: \(error)")
    }
    return objects
  }

  /// The condition on the origin type: its property links to `identity`.
  static func condition(_ property: Property, _ identity: BSON) -> QueryNode {
    do {
      return try Query(filter: [property.columnName: identity]).node
    } catch {
      reefStop("\(error)")
    }
  }

  /// The top-level types whose changes may change these linking objects: the origin type, or
  /// for an embedded origin the known types that embed it.
  var originCollections: [String] {
    let origin = ObjectSchema.of(Element.self)
    guard origin.isEmbedded, let reef = owner?.reef else { return [origin.className] }
    return EmbeddedOrigins.containers(of: origin, in: reef).map(\.top.className)
  }

  public var startIndex: Int { 0 }
  public var endIndex: Int { results.count }

  /// Iterates the linking objects as they were when the loop began, as Realm's (a loop that
  /// deletes the objects it reads sees each once).
  public func makeIterator() -> IndexingIterator<[Element]> { results.makeIterator() }

  /// The linking object at `position`.
  ///
  /// A position out of bounds stops with Realm's message.
  public subscript(position: Int) -> Element {
    let objects = results
    CollectionElements.checkIndex(position, below: objects.count)
    return objects[position]
  }

  /// The position of `object`, or nil when it does not link here.
  /// - Complexity: O(*n*).
  public func index(of object: Element) -> Int? { results.firstIndex { $0.isEqual(to: object) } }

  /// The position of the first linking object that matches a predicate in Realm's language, or
  /// nil.
  ///
  /// An invalid predicate stops with the query's message.
  /// - Complexity: O(*n*).
  public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
    index(matching: .format(predicateFormat, args))
  }

  /// The position of the first linking object that matches an `NSPredicate` (see
  /// ``Results/filter(_:)``), or nil.
  ///
  /// An invalid predicate stops with the query's message.
  /// - Complexity: O(*n*).
  public func index(matching predicate: NSPredicate) -> Int? { index(matching: FilterPredicate(predicate)) }

  private func index(matching predicate: FilterPredicate) -> Int? {
    let matches = CollectionElements.matcher(predicate, objectClass: Element.self)
    return results.firstIndex { matches($0) }
  }

  /// The linking objects at `indexes`, in order.
  ///
  /// An index out of bounds stops with Realm's message.
  public func objects(at indexes: IndexSet) -> [Element] {
    let objects = results
    return indexes.map { index in
      if index >= objects.count { reefStop("Indexes for collection are out of bounds.") }
      return objects[index]
    }
  }

  /// Realm's description: `LinkingObjects<Dog> <0x…> (\n\t[0] Dog {…}\n)`, the first 100.
  public var description: String { description(depth: CollectionElements.descriptionDepth) }

  func description(depth: Int) -> String {
    let objects = results
    return CollectionElements.describe(
      "LinkingObjects", ObjectSchema.of(Element.self).className, address: self, count: objects.count, objects,
      depth: depth)
  }
}

extension LinkingObjects: DepthDescribable {}

extension LinkingObjects where Element: Object {
  /// The linking objects as live ``Results`` of the origin type (in the store's order).
  ///
  /// Stops with Realm's message for the linking objects of an unmanaged object.
  var objectResults: Results<Element> {
    guard let owner else { CollectionElements.unmanagedQuery("RLMLinkingObjects") }
    let reef = owner.reef
    reef.checkThread()
    let schema = reef.registerOrStop(Element.self)
    guard let property = schema.property(named: propertyName), let document = owner.currentDocument() else {
      reefStop("Object has been deleted or invalidated.")
    }
    if owner.parent != nil {
      // An embedded object's parent, if it embeds it through the origin property.
      let ids = results.compactMap { $0._managed?.id }
      let condition: QueryNode
      do {
        condition = try Query(filter: ["_id": ["$in": .array(BSONArray(ids))]]).node
      } catch {
        reefStop("\(error)")
      }
      return Results(reef: reef, schema: schema, conditions: [condition])
    }
    let identity = reef.identity(of: owner.schema, document: document)
    return Results(reef: reef, schema: schema, conditions: [Self.condition(property, identity)])
  }

  /// The linking objects that match a predicate, as live ``Results``.
  ///
  /// Stops with Realm's message for an unmanaged object's, or an invalid predicate.
  public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
    objectResults.filter(predicateFormat, args)
  }

  /// The linking objects that match an `NSPredicate` (see ``Results/filter(_:)``), as live
  /// ``Results``.
  ///
  /// Stops with Realm's message for an unmanaged object's, or an invalid predicate.
  public func filter(_ predicate: NSPredicate) -> Results<Element> { objectResults.filter(predicate) }

  /// The linking objects sorted by a property, as live ``Results``.
  public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
    objectResults.sorted(byKeyPath: keyPath, ascending: ascending)
  }

  /// The linking objects sorted by several properties, the first deciding first.
  public func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Element> where S.Element == SortDescriptor {
    objectResults.sorted(by: sortDescriptors)
  }

  /// The linking objects with only the first of each distinct combination of the properties'
  /// values.
  public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
    objectResults.distinct(by: keyPaths)
  }

  /// The smallest value of a property among the linking objects, or nil when there is none.
  public func min<T: _ReefScalar>(ofProperty property: String) -> T? { objectResults.min(ofProperty: property) }

  /// The largest value of a property among the linking objects, or nil when there is none.
  public func max<T: _ReefScalar>(ofProperty property: String) -> T? { objectResults.max(ofProperty: property) }

  /// The sum of a numeric property over the linking objects.
  public func sum<T: _ReefScalar & AdditiveArithmetic>(ofProperty property: String) -> T {
    objectResults.sum(ofProperty: property)
  }

  /// The average of a numeric property over the linking objects, or nil when there is none.
  public func average<T: BinaryFloatingPoint>(ofProperty property: String) -> T? {
    objectResults.average(ofProperty: property)
  }
}

/// Where embedded objects of a type live, for the linking objects whose origin is embedded: the
/// paths from top-level types to it, and the objects along them.
enum EmbeddedOrigins {
  /// A path from a top-level type to an embedded type: the stored fields on the way, each an
  /// embedded object, a list or a map of them.
  struct Container {
    let top: ObjectSchema
    /// Each step: the property and the schema it leads to.
    let steps: [(property: Property, schema: ObjectSchema)]
    /// A condition on the top-level documents that hold such an embedded object whose
    /// `property` links to `identity`: the dotted path, which MongoDB follows through arrays;
    /// through a map (whose keys are fields a path cannot name) only that the map is there.
    func condition(_ property: Property, _ identity: BSON) -> Document {
      var names: [String] = []
      for step in steps {
        names.append(step.property.columnName)
        if step.property.isMap { return [names.joined(separator: "."): ["$exists": true]] }
      }
      return [(names + [property.columnName]).joined(separator: "."): identity]
    }
  }

  /// The paths to `embedded` from the top-level types `reef` knows (used, or in its
  /// configuration's object types), at most 8 embedded levels deep.
  static func containers(of embedded: ObjectSchema, in reef: Reef) -> [Container] {
    var tops = reef.registeredSchemas.filter { !$0.isEmbedded }
    for type in reef.configuration.objectTypes ?? [] where !(type is EmbeddedObject.Type) {
      let schema = ObjectSchema.of(type)
      if !tops.contains(where: { $0 === schema }) { tops.append(schema) }
    }
    var found: [Container] = []
    func walk(_ top: ObjectSchema, _ schema: ObjectSchema, _ steps: [(property: Property, schema: ObjectSchema)]) {
      guard steps.count < 8 else { return }
      for property in schema.storedProperties where property.isEmbedded {
        guard let objectClass = property.objectClass else { continue }
        let inner = ObjectSchema.of(objectClass)
        let path = steps + [(property, inner)]
        if inner === embedded { found.append(Container(top: top, steps: path)) }
        walk(top, inner, path)
      }
    }
    for top in tops { walk(top, top, []) }
    return found
  }

  /// The embedded objects of `type` whose `property` links to `identity`, in the store's order
  /// of each top-level type that embeds them (and the order of their places in it).
  static func objects<Element: ObjectBase>(
    _ type: Element.Type, linkingTo identity: BSON, through property: Property, in reef: Reef
  ) -> [Element] {
    let embedded = ObjectSchema.of(Element.self)
    var objects: [Element] = []
    for container in containers(of: embedded, in: reef) {
      let top = reef.registerOrStop(container.top.objectClass)
      let condition: QueryNode
      do {
        condition = try Query(filter: container.condition(property, identity)).node
      } catch {
        reefStop("\(error)")
      }
      do {
        try Results<Object>(reef: reef, schema: top, conditions: [condition]).forEachDocument { document in
          let root = ManagedObject(reef: reef, schema: top, id: document["_id"] ?? .null, document: document)
          collect(container.steps[...], in: .document(document), parent: root) { object, value in
            if let link = value.document?[property.columnName], compareBSON(link, identity) == 0 {
              objects.append(unsafeDowncast(object.makeObject(), to: Element.self))
            }
          }
        }
      } catch {
        reefStop("reading LinkingObjects<\(embedded.className)> failed: \(error)")
      }
    }
    return objects
  }

  /// Calls `body` with each embedded object at the end of `steps` under `parent` (whose stored
  /// value is `value`), and its stored subdocument.
  private static func collect(
    _ steps: ArraySlice<(property: Property, schema: ObjectSchema)>, in value: BSON, parent: ManagedObject,
    _ body: (ManagedObject, BSON) -> Void
  ) {
    guard let (property, schema) = steps.first, case .document(let document) = value,
      let field = document.element(forKey: property.columnName)
    else { return }
    let rest = steps.dropFirst()
    func visit(_ step: PathStep, _ inner: BSON) {
      guard case .document = inner else { return }
      let object = ManagedObject(reef: parent.reef, schema: schema, parent: parent, step: step)
      if rest.isEmpty { body(object, inner) } else { collect(rest, in: inner, parent: object, body) }
    }
    switch field.value {
    case .document(let subdocument) where property.isMap:
      for entry in subdocument {
        visit(PathStep(field: property.columnName, index: nil, key: entry.key), entry.value)
      }
    case .array(let array):
      for (index, element) in array.enumerated() {
        visit(PathStep(field: property.columnName, index: index), element)
      }
    case let single:
      visit(PathStep(field: property.columnName, index: nil), single)
    }
  }
}

extension BSON {
  /// The document this value is, or nil.
  fileprivate var document: Document? {
    if case .document(let document) = self { return document }
    return nil
  }
}

extension LinkingObjects: _Persistable {
  public static var _reefKind: _ReefKind { _ReefKind(.linkingObjects(Element.self)) }
  public static func _reefDefault() -> LinkingObjects { LinkingObjects(fromType: Element.self, property: "") }
  public static func _reefDecode(_ element: Document.Element?, _ context: _ReadContext) -> LinkingObjects? {
    LinkingObjects(fromType: Element.self, property: "")
  }
  public func _reefEncode(_ context: _WriteContext) -> BSON { .null }
  public static func _reefGet(_ owner: ManagedObject, _ property: Property) -> LinkingObjects {
    owner.collectionAccessor(property) {
      LinkingObjects(fromType: Element.self, property: property.linkOriginPropertyName ?? "")
    }
  }
  public static func _reefSet(_ owner: ManagedObject, _ property: Property, _ value: LinkingObjects) {
    reefStop("LinkingObjects are computed from the links that point here; they cannot be set")
  }
}

extension Persisted {
  /// The inverse of `originProperty` of `O`: the `O` objects (top-level or embedded) whose
  /// `originProperty` links here.
  public init<O: ObjectBase>(originProperty: String) where Value == LinkingObjects<O> {
    self.init(value: LinkingObjects(fromType: O.self, property: originProperty), flags: [])
  }
}
