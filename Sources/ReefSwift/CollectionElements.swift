import ReefBSON
import ReefQuery

/// What the collections share about their elements: comparing them, their stored values, the
/// predicates and aggregates that read them, and the stops Realm's collections raise.
enum CollectionElements {
  /// An element as it compares: an object by identity (``ObjectBase/isEqual(to:)``), nil, or a
  /// value by its stored BSON form (so `1` and `1.0` are one value, as BSON compares them).
  enum Key {
    case object(ObjectBase)
    case null
    case value(BSON)
    /// A value whose stored form cannot be made without a `Reef` (an `AnyReefValue` holding an
    /// unmanaged object): equal to nothing but itself.
    case opaque
  }

  /// The key of an element (or of a map's value).
  static func key(_ element: Any) -> Key {
    if let optional = element as? AnyOptional {
      guard let wrapped = optional.anyWrapped else { return .null }
      return key(wrapped)
    }
    if let object = element as? ObjectBase { return .object(object) }
    if let value = element as? AnyReefValue {
      if case .object(let object) = value { return .object(object) }
      if case .none = value { return .null }
    }
    guard let value = element as? _ReefValue else { return .opaque }
    do {
      return .value(try value._reefEncode(_WriteContext(reef: nil, attachments: nil, path: [], policy: .error)))
    } catch {
      return .opaque
    }
  }

  /// Whether two keys name the same element.
  static func same(_ a: Key, _ b: Key) -> Bool {
    switch (a, b) {
    case (.object(let x), .object(let y)): x.isEqual(to: y)
    case (.null, .null): true
    case (.value(let x), .value(let y)): compareBSON(x, y) == 0
    default: false
    }
  }

  /// Whether two elements are the same.
  static func same(_ a: Any, _ b: Any) -> Bool { same(key(a), key(b)) }

  // MARK: Stops Realm raises

  /// Stops for a negative index, as Realm does ("Cannot pass a negative value for 'index'.").
  static func checkNotNegative(_ value: Int, _ name: String = "index") {
    if value < 0 { reefStop("Cannot pass a negative value for '\(name)'.") }
  }

  /// Stops unless `index` is below `limit`, with Realm's message.
  static func checkIndex(_ index: Int, below limit: Int, _ name: String = "index") {
    checkNotNegative(index, name)
    if index >= limit { reefStop("Index \(index) is out of bounds (must be less than \(limit)).") }
  }

  /// The stop of a query or sort on an unmanaged collection, with Realm's message.
  static func unmanagedQuery(_ kind: String) -> Never {
    reefStop("This method may only be called on \(kind) instances retrieved from a Reef")
  }

  // MARK: Predicates over elements

  /// Whether each element matches a predicate in Realm's language: objects through their
  /// stored documents (links resolved in their `Reef`), values as `self`
  /// (`index(matching: "self > 5")`).
  ///
  /// An invalid predicate, or an unmanaged object with links, stops with the query's message.
  static func matcher(_ format: String, _ args: [Any], objectClass: ObjectBase.Type?) -> (Any) -> Bool {
    matcher(.format(format, args), objectClass: objectClass)
  }

  /// ``matcher(_:_:objectClass:)`` of a predicate in any of the forms Reef reads (an
  /// `NSPredicate`'s too).
  static func matcher(_ predicate: FilterPredicate, objectClass: ObjectBase.Type?) -> (Any) -> Bool {
    let parsed: ParsedPredicate
    do {
      parsed = try predicate.parsed()
    } catch {
      reefStop("\(error)")
    }
    guard let objectClass else {
      let query = compile(parsed.node)
      return { element in
        guard case .value(let value) = key(element) else { return evaluate(query, ["self": .null]) }
        return evaluate(query, ["self": value])
      }
    }
    let schema = ObjectSchema.of(objectClass)
    let mapped = FieldMapping(schema).map(parsed.node)
    // One compiled query per `Reef` the elements are in (links are resolved in it).
    var compiled: [ObjectIdentifier: ReefQuery.Query] = [:]
    return { element in
      guard let object = element as? ObjectBase else { return false }
      guard let managed = object._managed else {
        let context = _WriteContext(reef: nil, attachments: nil, path: [], policy: .error)
        do {
          let document = try ObjectEncoding.document(of: object, schema: schema, id: nil, context)
          return evaluate(compile(mapped), document)
        } catch {
          reefStop("cannot match an unmanaged \(schema.className) against a predicate: \(error)")
        }
      }
      guard let document = managed.currentDocument() else { return false }
      let reef = managed.reef
      let query: ReefQuery.Query
      if let known = compiled[ObjectIdentifier(reef)] {
        query = known
      } else {
        do {
          let node = try LinkPaths.resolve(mapped, schema: schema, reef: reef)
          query = compile(node)
        } catch {
          reefStop("\(error)")
        }
        compiled[ObjectIdentifier(reef)] = query
      }
      return evaluate(query, document)
    }
  }

  private static func compile(_ node: QueryNode) -> ReefQuery.Query {
    do {
      return try ReefQuery.Query(node)
    } catch {
      reefStop("\(error)")
    }
  }

  private static func evaluate(_ query: ReefQuery.Query, _ document: Document) -> Bool {
    do {
      return try query.evaluate(document)
    } catch {
      reefStop("\(error)")
    }
  }

  // MARK: Aggregates

  /// A stored value as `T` (a scalar, which needs no owner to be read).
  static func scalar<T: _ReefValue>(_ value: BSON, as type: T.Type) -> T? {
    let document = Document([("v", value)])
    return T._reefDecode(document.element(forKey: "v"), _ReadContext(owner: nil, field: "v", index: nil))
  }

  /// The smallest of `values` (BSON's order), as `T`.
  static func minimum<T: _ReefValue>(_ values: [BSON], as type: T.Type) -> T? {
    values.min { compareBSON($0, $1) < 0 }.flatMap { scalar($0, as: T.self) }
  }

  /// The largest of `values` (BSON's order), as `T`.
  static func maximum<T: _ReefValue>(_ values: [BSON], as type: T.Type) -> T? {
    values.max { compareBSON($0, $1) < 0 }.flatMap { scalar($0, as: T.self) }
  }

  /// The sum of `values`, each read as `T`.
  static func sum<T: _ReefValue & AdditiveArithmetic>(_ values: [BSON], as type: T.Type) -> T {
    values.compactMap { scalar($0, as: T.self) }.reduce(.zero, +)
  }

  /// The average of `values` (numbers), nil when there is none.
  static func average<T: BinaryFloatingPoint>(_ values: [BSON], as type: T.Type) -> T? {
    let numbers = values.compactMap { scalar($0, as: Double.self) }
    return numbers.isEmpty ? nil : T(numbers.reduce(0, +) / Double(numbers.count))
  }

  /// The non-null stored values of the elements (values and `AnyReefValue`s; nil for objects).
  static func storedValues<S: Sequence>(_ elements: S) -> [BSON] {
    elements.compactMap { element -> BSON? in
      guard case .value(let value) = key(element) else { return nil }
      return value
    }
  }

  /// The non-null values of a property of each object, for an aggregate over the objects of an
  /// unmanaged collection (read through each object: managed ones from the store). A name that
  /// is not a property of `objectClass` stops with Realm's message.
  static func propertyValues<S: Sequence>(_ property: String, of objects: S, objectClass: ObjectBase.Type) -> [BSON] {
    let schema = ObjectSchema.of(objectClass)
    guard schema.property(named: property) != nil else {
      reefStop("Invalid property name '\(property)' for class '\(schema.className)'.")
    }
    return objects.compactMap { element -> BSON? in
      guard let object = element as? ObjectBase, let value = object.rawValue(forKey: property) else { return nil }
      guard case .value(let stored) = key(value) else { return nil }
      return stored
    }
  }

  // MARK: Description

  /// How deep descriptions go, as Realm's: an object or a collection five levels down is shown as
  /// `<Maximum depth exceeded>` (so an object that holds itself can be described).
  static let descriptionDepth = 5

  /// Realm's description of a collection: its name and element type, an address, and the first
  /// 100 elements, each indented one level (`List<Dog> <0x…> (\n\t[0] Dog {…}\n)`), each
  /// described `depth - 1` levels deep.
  static func describe<S: Sequence>(
    _ name: String, _ elementType: String, address: AnyObject, count: Int, _ elements: S,
    depth: Int, label: (Int, S.Element) -> String = { index, _ in "[\(index)]" }, value: (S.Element) -> Any = { $0 }
  ) -> String {
    guard depth > 0 else { return "<Maximum depth exceeded>" }
    var text = "\(name)<\(elementType)> <\(Unmanaged.passUnretained(address).toOpaque())> (\n"
    let shown = 100
    var lines: [String] = []
    for (index, element) in elements.enumerated() {
      if index >= shown { break }
      let described = describe(value(element), depth: depth - 1).replacingOccurrences(of: "\n", with: "\n\t")
      lines.append("\t\(label(index, element)) \(described)")
    }
    text += lines.joined(separator: ",\n")
    if count > shown { text += "\n\t... \(count - shown) objects skipped." }
    return text + "\n)"
  }

  /// An element as a collection's description shows it (Realm's form: strings unquoted, nil as
  /// `<null>`, data as its first bytes in hexadecimal), an object or a collection `depth` levels
  /// deep.
  static func describe(_ value: Any, depth: Int) -> String {
    if let optional = value as? AnyOptional {
      guard let wrapped = optional.anyWrapped else { return "<null>" }
      return describe(wrapped, depth: depth)
    }
    if let nested = value as? DepthDescribable { return nested.description(depth: depth) }
    if let data = value as? Data { return describe(data) }
    return "\(value)"
  }

  /// Data as Realm describes it: its first 24 bytes in hexadecimal, in groups of four, and its
  /// length (`<61626364 65 — 5 total bytes>`).
  static func describe(_ data: Data) -> String {
    let digits = Array("0123456789abcdef")
    var groups: [String] = []
    for (index, byte) in data.prefix(24).enumerated() {
      let hex = String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
      if index % 4 == 0 { groups.append(hex) } else { groups[groups.count - 1] += hex }
    }
    return "<\(groups.joined(separator: " ")) — \(data.count) total bytes>"
  }

  /// Realm's name of an element type in a description: the class name of objects, the stored
  /// type's name of values (`int`, `string`, `double`...).
  static func typeName(_ type: Any.Type) -> String {
    var type = type
    if let optional = type as? AnyOptional.Type { type = optional.wrappedType }
    if let objectClass = type as? ObjectBase.Type { return objectClass.className() }
    switch type {
    case is any FixedWidthInteger.Type: return "int"
    case is String.Type: return "string"
    case is Bool.Type: return "bool"
    case is Float.Type: return "float"
    case is Double.Type: return "double"
    case is Date.Type: return "date"
    case is Data.Type: return "data"
    case is Decimal128.Type: return "decimal128"
    case is ObjectId.Type: return "object id"
    case is UUID.Type: return "uuid"
    case is AnyReefValue.Type: return "mixed"
    default: return "\(type)"
    }
  }
}

/// An object or a collection, described to a depth (see ``CollectionElements/descriptionDepth``).
protocol DepthDescribable {
  /// The description, `depth` levels deep (`<Maximum depth exceeded>` at 0).
  func description(depth: Int) -> String
}

/// An optional of any wrapped type, seen without knowing it.
protocol AnyOptional {
  var anyWrapped: Any? { get }
  static var wrappedType: Any.Type { get }
}

extension Optional: AnyOptional {
  var anyWrapped: Any? { self.map { $0 as Any } }
  static var wrappedType: Any.Type { Wrapped.self }
}
