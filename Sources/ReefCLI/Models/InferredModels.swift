import ReefBSON

/// `@Persisted` models inferred from documents: an `Object` per collection, an `EmbeddedObject`
/// per subdocument path (the shapes of every subdocument at that path merged), `List` for
/// arrays, optionals where a field is missing or null in some documents, `AnyReefValue` where
/// types mix, the `_id` as the primary key with its type.
///
/// Names become valid Swift identifiers; a stored name that is not one is kept through
/// `propertiesMapping()` (fields) and `className()` (collections). Classes come in collection
/// order, each followed by its embedded classes; properties in the order their fields were
/// first seen, `_id` first.
///
/// ```swift
/// var shapes: [(String, DocumentShape)] = [("shop.orders", DocumentShape())]
/// for order in orders { shapes[0].1.add(order) }
/// print(InferredModels(collections: shapes).swiftSource(header: "from orders.bson"))
/// ```
public struct InferredModels {
  /// One property of a model class.
  public struct Property: Sendable, Equatable {
    /// The Swift name (in backquotes when it is a keyword).
    public var name: String
    /// The field name in the documents.
    public var storedName: String
    /// The Swift type (`String`, `Int?`, `List<OrdersItems>`, `AnyReefValue`).
    public var type: String
    /// Whether it is the primary key (`_id`).
    public var isPrimaryKey: Bool
    /// What the documents hold when it is not plain (missing or null in some, types mixed).
    public var comment: String?
  }

  /// A field that has no property, and why.
  public struct LeftOut: Sendable, Equatable {
    /// The field name in the documents.
    public var storedName: String
    /// Why it has no property.
    public var reason: String
  }

  /// One model class.
  public struct ModelClass: Sendable, Equatable {
    /// The Swift class name.
    public var name: String
    /// The collection for an `Object`; nil for an `EmbeddedObject`.
    public var collection: String?
    /// The path of its subdocuments from their collection (`orders.items`), for an
    /// `EmbeddedObject`.
    public var path: String
    /// The documents (or subdocuments) it was inferred from.
    public var documentCount: Int
    /// Its properties, in order.
    public var properties: [Property]
    /// The fields that have no property.
    public var leftOut: [LeftOut]

    /// Whether it is an `EmbeddedObject`.
    public var isEmbedded: Bool { collection == nil }
  }

  /// The classes, in the order of the source: each collection's `Object`, then its embedded
  /// classes.
  public private(set) var classes: [ModelClass] = []
  private var typeNames = Set<String>()

  /// One collection to infer a model from.
  public struct CollectionSample {
    /// Its name, as the store names it (`db.coll` for a dump's namespace).
    public var name: String
    /// The shape of its documents.
    public var shape: DocumentShape
    /// Its MongoDB JSON Schema, if it has one (a dump's `validator.$jsonSchema`, a ReefSwift
    /// store's type schema): it gives the type of a field that is null or missing everywhere,
    /// whether a field may be null, and the names (`title`) of embedded types.
    public var schema: Document?

    /// Describes a collection.
    public init(name: String, shape: DocumentShape, schema: Document? = nil) {
      self.name = name
      self.shape = shape
      self.schema = schema
    }
  }

  /// Infers the models of collections from their shapes.
  /// - Parameter collections: each collection's name and the shape of its documents; they are
  ///   ordered by name.
  /// - Complexity: O(n) in the total size of the shapes.
  public init(collections: [(name: String, shape: DocumentShape)]) {
    self.init(collections: collections.map { CollectionSample(name: $0.name, shape: $0.shape) })
  }

  /// Infers the models of collections from their shapes and schemas.
  /// - Parameter collections: the collections; they are ordered by name.
  /// - Complexity: O(n) in the total size of the shapes.
  public init(collections: [CollectionSample]) {
    let sorted = collections.sorted { $0.name < $1.name }
    // Class names: the collection's part of a namespace, with the database's when two collide.
    var base: [String: Int] = [:]
    for collection in sorted { base[Self.collectionPart(collection.name), default: 0] += 1 }
    for collection in sorted {
      let (name, shape) = (collection.name, collection.shape)
      let part = Self.collectionPart(name)
      let preferred = SwiftNames.typeName(base[part]! > 1 ? name : part)
      let className = uniqueTypeName(preferred)
      var model = ModelClass(
        name: className, collection: name, path: name, documentCount: shape.count, properties: [], leftOut: [])
      let index = classes.count
      classes.append(model)
      model.properties = properties(of: shape, in: &model, isTop: true, hint: collection.schema.map(SchemaHint.init))
      if shape.count == 0 {
        model.properties = [
          Property(
            name: "_id", storedName: "_id", type: "ObjectId", isPrimaryKey: true,
            comment: "no documents to read its type from: an ObjectId, as Reef gives new objects")
        ]
      }
      classes[index] = model
    }
  }

  /// The collection part of a dump's namespace (`shop.orders` is `orders`).
  static func collectionPart(_ name: String) -> String {
    guard let dot = name.firstIndex(of: "."), name.index(after: dot) < name.endIndex else { return name }
    return String(name[name.index(after: dot)...])
  }

  private mutating func uniqueTypeName(_ preferred: String) -> String {
    var name = SwiftNames.reservedTypes.contains(preferred) ? preferred + "Object" : preferred
    var n = 2
    let stem = name
    while typeNames.contains(name) {
      name = "\(stem)\(n)"
      n += 1
    }
    typeNames.insert(name)
    return name
  }

  // MARK: Properties

  private mutating func properties(
    of shape: DocumentShape, in model: inout ModelClass, isTop: Bool, hint: SchemaHint?
  )
    -> [Property]
  {
    var result: [Property] = []
    var used = Set<String>()
    var order = shape.order
    if isTop, let id = order.firstIndex(of: "_id") { order.insert(order.remove(at: id), at: 0) }
    for stored in order {
      let values = shape.fields[stored]!
      var name = SwiftNames.propertyName(stored)
      let stem = SwiftNames.bare(name)
      var n = 2
      while used.contains(SwiftNames.bare(name)) {
        name = "\(stem)\(n)"
        n += 1
      }
      if isTop && stored == "_id" {
        if let type = Self.primaryKeyType(values, documents: shape.count) {
          used.insert("_id")
          result.append(Property(name: "_id", storedName: "_id", type: type, isPrimaryKey: true, comment: nil))
        } else {
          model.leftOut.append(
            LeftOut(
              storedName: "_id",
              reason:
                "holds \(Self.kindList(values, of: shape.count)), not one primary key type; the documents' _id stays their identity"
            ))
        }
        continue
      }
      switch propertyType(values, documents: shape.count, owner: model, field: stored, hint: hint?.property(stored)) {
      case .left(let reason):
        model.leftOut.append(LeftOut(storedName: stored, reason: reason))
      case .type(let type, let comment):
        used.insert(SwiftNames.bare(name))
        result.append(Property(name: name, storedName: stored, type: type, isPrimaryKey: false, comment: comment))
      }
    }
    return result
  }

  private enum Typing {
    case type(String, comment: String?)
    case left(String)
  }

  /// The kinds of `values` other than null, with ints and longs as one.
  private static func kinds(_ values: ValueShape) -> Set<ValueKind> {
    Set(values.kinds.filter { $0.key != .null && $0.value > 0 }.keys)
  }

  /// `string in 3, int in 2 of 5`: what a field holds, for comments.
  static func kindList(_ values: ValueShape, of documents: Int) -> String {
    var parts = values.kinds.filter { $0.value > 0 }.sorted {
      ($1.value, $0.key.description) < ($0.value, $1.key.description)
    }
    .map { "\($0.key) in \($0.value)" }
    let missing = documents - values.count
    if missing > 0 { parts.append("missing in \(missing)") }
    return parts.joined(separator: ", ") + " of \(documents)"
  }

  /// The type of a primary key `_id`, when every document has one of one primary key type.
  static func primaryKeyType(_ values: ValueShape, documents: Int) -> String? {
    guard values.count == documents, values.count(of: .null) == 0 else { return nil }
    switch kinds(values) {
    case [.objectId]: return "ObjectId"
    case [.string]: return "String"
    case [.uuid]: return "UUID"
    case [.int32], [.int64], [.int32, .int64]: return "Int"
    default: return nil
    }
  }

  /// The Swift type of scalar kinds, when they have one: ints and longs are `Int`; with doubles
  /// they are `Double` when every integer is exact in one.
  static func scalarType(_ kinds: Set<ValueKind>, largestInteger: UInt64) -> String? {
    switch kinds {
    case [.bool]: return "Bool"
    case [.int32], [.int64], [.int32, .int64]: return "Int"
    case [.double]: return "Double"
    case [.double, .int32], [.double, .int64], [.double, .int32, .int64]:
      return largestInteger <= 1 << 53 ? "Double" : nil
    case [.decimal128]: return "Decimal128"
    case [.string]: return "String"
    case [.date]: return "Date"
    case [.objectId]: return "ObjectId"
    case [.uuid]: return "UUID"
    case [.data]: return "Data"
    default: return nil
    }
  }

  /// The first kind ReefSwift cannot read anywhere in `values` (nested documents and arrays
  /// included), if any.
  static func unreadableKind(_ values: ValueShape) -> ValueKind? {
    for (kind, count) in values.kinds where count > 0 {
      if case .other = kind { return kind }
    }
    if let document = values.document {
      for field in document.order {
        if let kind = unreadableKind(document.fields[field]!) { return kind }
      }
    }
    if let elements = values.elements { return unreadableKind(elements) }
    return nil
  }

  private mutating func propertyType(
    _ values: ValueShape, documents: Int, owner: ModelClass, field: String, hint: SchemaHint?
  ) -> Typing {
    let kinds = Self.kinds(values)
    // A kind ReefSwift cannot read leaves the field out; inside subdocuments, only their field.
    if let kind = kinds.first(where: { if case .other = $0 { true } else { false } }) {
      return .left("holds \(kind) values, which ReefSwift has no property type for")
    }
    let missing = documents - values.count
    let nulls = values.count(of: .null)
    var optionality: String? {
      switch (missing > 0, nulls > 0) {
      case (true, true): "missing in \(missing), null in \(nulls) of \(documents)"
      case (true, false): "missing in \(missing) of \(documents)"
      case (false, true): "null in \(nulls) of \(documents)"
      case (false, false): nil
      }
    }
    if kinds.isEmpty {
      if let type = hint?.scalarType {
        return .type(
          type + "?", comment: "no value but null (\(Self.kindList(values, of: documents))): the schema's type")
      }
      return .type("AnyReefValue", comment: "no value but null: \(Self.kindList(values, of: documents))")
    }
    if kinds == [.document], let document = values.document {
      guard let embedded = embeddedClass(document, owner: owner, field: field, hint: hint) else {
        return .type("AnyReefValue", comment: "only empty subdocuments")
      }
      return .type(embedded + "?", comment: optionality)
    }
    if kinds == [.array] && nulls == 0 {
      // A missing array reads as an empty List.
      let element = elementType(values.elements, owner: owner, field: field, hint: hint?.items)
      if element == "AnyReefValue", let elements = values.elements, let kind = Self.unreadableKind(elements) {
        return .left("holds arrays of \(kind) values, which ReefSwift has no type for")
      }
      return .type("List<\(element)>", comment: nil)
    }
    if kinds.count == 1 || kinds.isSubset(of: [.int32, .int64, .double]),
      let type = Self.scalarType(kinds, largestInteger: values.largestInteger)
    {
      let mixed = kinds.count > 1 ? "ints and doubles, read as Double" : nil
      let comment = [mixed, optionality].compactMap { $0 }.joined(separator: "; ")
      // The schema may allow null where the documents hold none.
      let optional = missing > 0 || nulls > 0 || hint?.allowsNull == true
      return .type(optional ? type + "?" : type, comment: comment.isEmpty ? nil : comment)
    }
    if let kind = Self.unreadableKind(values) {
      return .left("holds \(kind) values inside, which AnyReefValue cannot hold")
    }
    return .type("AnyReefValue", comment: Self.kindList(values, of: documents))
  }

  private mutating func elementType(_ elements: ValueShape?, owner: ModelClass, field: String, hint: SchemaHint?)
    -> String
  {
    guard let elements else { return "AnyReefValue" }
    let kinds = Self.kinds(elements)
    let nulls = elements.count(of: .null) > 0
    if kinds == [.document] && !nulls, let document = elements.document,
      let embedded = embeddedClass(document, owner: owner, field: field, hint: hint)
    {
      return embedded
    }
    if kinds.count == 1 || kinds.isSubset(of: [.int32, .int64, .double]), !kinds.isEmpty,
      let type = Self.scalarType(kinds, largestInteger: elements.largestInteger)
    {
      return nulls ? type + "?" : type
    }
    return "AnyReefValue"
  }

  /// The embedded class of the subdocuments at `owner`'s `field`, created with its own
  /// embedded classes; nil when they have no field that can be a property. It is named after
  /// the schema's `title` when it has one that no other class took, else after its path.
  private mutating func embeddedClass(_ shape: DocumentShape, owner: ModelClass, field: String, hint: SchemaHint?)
    -> String?
  {
    let titled = hint?.title.map(SwiftNames.typeName).flatMap { title in
      typeNames.contains(title) || SwiftNames.reservedTypes.contains(title) ? nil : title
    }
    let name = uniqueTypeName(titled ?? owner.name + SwiftNames.typeName(field))
    var model = ModelClass(
      name: name, collection: nil, path: owner.path + "." + field, documentCount: shape.count, properties: [],
      leftOut: [])
    let index = classes.count
    classes.append(model)
    model.properties = properties(of: shape, in: &model, isTop: false, hint: hint)
    guard !model.properties.isEmpty else {
      // Nothing to declare: the classes made for it go too.
      for made in classes[index...] { typeNames.remove(made.name) }
      classes.removeSubrange(index...)
      return nil
    }
    classes[index] = model
    return name
  }
}
