import ReefBSON

/// A property that holds a value of any type: Realm's `AnyRealmValue`, stored as whatever BSON
/// value it is (a list as an array, a dictionary as a subdocument, nested to any depth).
///
/// ```swift
/// class Settings: Object {
///     @Persisted var value: AnyReefValue
/// }
/// settings.value = .string("dark")
/// settings.value = .list([.int(1), .dictionary(["a": .bool(true)])])
/// ```
/// A link to an object is stored as a MongoDB DBRef (`{"$ref": type, "$id": primary key}`).
/// Embedded objects cannot be held.
public enum AnyReefValue: Hashable {
  case none
  case int(Int)
  case bool(Bool)
  case float(Float)
  case double(Double)
  case string(String)
  case data(Data)
  case date(Date)
  case objectId(ObjectId)
  case decimal128(Decimal128)
  case uuid(UUID)
  case object(Object)
  case list([AnyReefValue])
  case dictionary([String: AnyReefValue])

  public static func == (a: AnyReefValue, b: AnyReefValue) -> Bool {
    switch (a, b) {
    case (.object(let x), .object(let y)): x.isEqual(to: y)
    case (.none, .none): true
    case (.int(let x), .int(let y)): x == y
    case (.bool(let x), .bool(let y)): x == y
    case (.float(let x), .float(let y)): x == y
    case (.double(let x), .double(let y)): x == y
    case (.string(let x), .string(let y)): x == y
    case (.data(let x), .data(let y)): x == y
    case (.date(let x), .date(let y)): x == y
    case (.objectId(let x), .objectId(let y)): x == y
    case (.decimal128(let x), .decimal128(let y)): x == y
    case (.uuid(let x), .uuid(let y)): x == y
    case (.list(let x), .list(let y)): x == y
    case (.dictionary(let x), .dictionary(let y)): x == y
    default: false
    }
  }

  public func hash(into hasher: inout Hasher) {
    switch self {
    case .object(let object): hasher.combine(ObjectIdentifier(object))
    case .list(let values): hasher.combine(values)
    case .dictionary(let values): hasher.combine(values)
    default: hasher.combine(String(describing: self))
    }
  }

  /// The value as a string, if it is one.
  public var stringValue: String? { if case .string(let x) = self { x } else { nil } }
  /// The value as an Int, if it is one.
  public var intValue: Int? { if case .int(let x) = self { x } else { nil } }
  /// The value as a Double, if it is one.
  public var doubleValue: Double? { if case .double(let x) = self { x } else { nil } }
  /// The value as a Bool, if it is one.
  public var boolValue: Bool? { if case .bool(let x) = self { x } else { nil } }
  /// The object, if the value is a link.
  public func object<T: Object>(_ type: T.Type) -> T? { if case .object(let x) = self { x as? T } else { nil } }

  /// The value read from BSON; nil for a value that has no Swift form here (a regex, code…).
  static func from(_ value: BSON, owner: ManagedObject?) -> AnyReefValue? {
    switch value {
    case .null, .undefined: return AnyReefValue.none
    case .int32(let x): return .int(Int(x))
    case .int64(let x): return .int(Int(x))
    case .bool(let x): return .bool(x)
    case .double(let x): return .double(x)
    case .string(let x): return .string(x)
    case .datetime(let x): return .date(Date(timeIntervalSince1970: Double(x.millisecondsSinceEpoch) / 1000))
    case .objectId(let x): return .objectId(x)
    case .decimal128(let x): return .decimal128(x)
    case .binary(let x):
      if let bytes = x.uuidBytes { return .uuid(UUID(uuid: bytes)) }
      return .data(Data(x.data))
    case .array(let x):
      var values: [AnyReefValue] = []
      for element in x {
        guard let value = from(element, owner: owner) else { return nil }
        values.append(value)
      }
      return .list(values)
    case .document(let document):
      if case .string(let typeName)? = document["$ref"], let id = document["$id"], let owner,
        let schema = owner.reef.schema(named: typeName),
        let object = owner.reef.linkedObject(schema.objectClass, identity: id) as? Object
      {
        return .object(object)
      }
      var values: [String: AnyReefValue] = [:]
      for element in document {
        guard let value = from(element.value, owner: owner) else { return nil }
        values[element.key] = value
      }
      return .dictionary(values)
    default: return nil
    }
  }
}

extension AnyReefValue: _Persistable, _ReefCollectionElement {
  public static var _reefKind: _ReefKind { _ReefKind(.scalar(.any, bits: 0)) }
  public static func _reefDefault() -> AnyReefValue { AnyReefValue.none }
  public static func _reefDecode(_ element: Document.Element?, _ context: _ReadContext) -> AnyReefValue? {
    guard let element else { return AnyReefValue.none }
    return from(element.value, owner: context.owner)
  }
  public func _reefEncode(_ context: _WriteContext) throws(ReefError) -> BSON {
    switch self {
    case .none: return .null
    case .int(let x): return .int64(Int64(x))
    case .bool(let x): return .bool(x)
    case .float(let x): return .double(Double(x))
    case .double(let x): return .double(x)
    case .string(let x): return .string(x)
    case .data(let x): return x._reefEncode(context)
    case .date(let x): return x._reefEncode(context)
    case .objectId(let x): return .objectId(x)
    case .decimal128(let x): return .decimal128(x)
    case .uuid(let x): return x._reefEncode(context)
    case .object(let object):
      let identity = try object._reefEncode(context)
      return .document(["$ref": .string(type(of: object).className()), "$id": identity])
    case .list(let values):
      var encoded: [BSON] = []
      for value in values { encoded.append(try value._reefEncode(context)) }
      return .array(BSONArray(encoded))
    case .dictionary(let values):
      var encoded: [(String, BSON)] = []
      for key in values.keys.sorted() { encoded.append((key, try values[key]!._reefEncode(context))) }
      return .document(Document(encoded))
    }
  }
}

/// An optional value held in an object, in the style of Realm's older `RealmProperty`:
/// `@Persisted var age: ReefProperty<Int?>` reads and writes through ``value``.
public final class ReefProperty<Value: _Persistable>: ManagedCollection {
  private var storage: Value
  private var owner: ManagedObject?
  private var property: Property?

  /// A property holding Realm's default (nil for an optional).
  public init() { storage = Value._reefDefault() }

  /// A property holding `value` until it is set, as Realm's `RealmOptional(_:)`:
  /// `@Persisted var age = ReefOptional<Int>(1)` gives new objects an age of 1.
  ///
  /// - Parameter value: The initial value.
  public init(_ value: Value) { storage = value }

  func attach(to owner: ManagedObject, property: Property) {
    self.owner = owner
    self.property = property
    // Read from the store from now on: what the value referenced is let go.
    storage = Value._reefDefault()
  }

  /// The value; setting it on a managed object needs a write transaction.
  public var value: Value {
    get {
      guard let owner, let property else { return storage }
      return owner.read(property, as: Value.self)
    }
    set {
      guard let owner, let property else {
        storage = newValue
        return
      }
      owner.write(property, newValue)
    }
  }
}

extension ReefProperty: _Persistable {
  public static var _reefKind: _ReefKind { Value._reefKind }
  public static func _reefDefault() -> ReefProperty { ReefProperty() }
  public static func _reefDecode(_ element: Document.Element?, _ context: _ReadContext) -> ReefProperty? {
    Value._reefDecode(element, context).map { value in
      let property = ReefProperty()
      property.storage = value
      return property
    }
  }
  public func _reefEncode(_ context: _WriteContext) throws(ReefError) -> BSON { try value._reefEncode(context) }
  public static func _reefGet(_ owner: ManagedObject, _ property: Property) -> ReefProperty {
    owner.collectionAccessor(property) { ReefProperty() }
  }
  public static func _reefSet(_ owner: ManagedObject, _ property: Property, _ value: ReefProperty) {
    if value === owner.accessor(property.ordinal) { return }
    owner.write(property, value.value)
  }
}

/// Realm's older `RealmOptional<Wrapped>`: ``ReefProperty`` of an optional. Declare it
/// `@Persisted var age: ReefOptional<Int>` (a `let age = ReefOptional<Int>()` stores nothing, and
/// the schema check says so).
public typealias ReefOptional<Wrapped: _ReefOptionalWrappable> = ReefProperty<Wrapped?>
