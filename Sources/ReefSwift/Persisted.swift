import Foundation
import ReefBSON

/// Declares a stored property of an `Object` or `EmbeddedObject`, as in Realm.
///
/// ```swift
/// class Dog: Object {
///     @Persisted(primaryKey: true) var _id: ObjectId
///     @Persisted var name = ""
///     @Persisted(indexed: true) var age = 0
///     @Persisted var owner: Person?
/// }
/// ```
/// A property with no initial value gets Realm's default: 0, false, "", empty data, the date
/// 1970-01-01, a new `ObjectId` or `UUID`, nil, an empty collection. Properties not marked
/// `@Persisted` are not stored. A to-one link or embedded object must be optional: `Dog` and
/// `Address` are not ``_Persistable``, so `@Persisted var dog: Dog` does not compile.
@propertyWrapper
public struct Persisted<Value: _Persistable> {
  /// The slot the initial value took on the thread's construction stack; the owning object
  /// knows where its slots start (see `ObjectBase.init`).
  @usableFromInline let slot: Int
  @usableFromInline let flags: PropertyFlags

  /// Only the enclosing-instance subscript is used: `@Persisted` works in classes derived from
  /// `Object` and `EmbeddedObject`.
  @available(*, unavailable, message: "@Persisted can only be used in a class derived from Object or EmbeddedObject")
  public var wrappedValue: Value {
    get { fatalError() }
    // swift-format-ignore: AllPublicDeclarationsHaveDocumentation
    set { fatalError() }
  }

  // The initializers and the subscript are inlinable so that they are specialized in the module
  // that declares the model: no generic metadata lookup and no key-path projection per property
  // read, write or object constructed (the profile of inserting and reading objects was
  // dominated by both). What they need of the module is non-generic (`ThreadState` slots,
  // `ManagedObject.property(_:)`).

  /// A property whose initial value is Realm's default for its type.
  @inlinable public init() { self.init(value: nil, flags: []) }

  /// A property with an initial value.
  @inlinable public init(wrappedValue value: Value) { self.init(value: value, flags: []) }

  @inlinable init(value: Value?, flags: PropertyFlags) {
    self.flags = flags
    slot = ThreadState.slot { Box(value ?? Value._reefDefault()) }
  }

  /// The property's value, for the object that owns it.
  @inlinable
  public static subscript<EnclosingSelf: ObjectBase>(
    _enclosingInstance object: EnclosingSelf,
    wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
    storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
  ) -> Value {
    @inline(__always) get {
      let ordinal = object[keyPath: storageKeyPath].slot &- object._slotBase
      if let managed = object._managed {
        return Value._reefGet(managed, managed.property(ordinal))
      }
      if let tracer = object._tracer { return tracer.trace(object, ordinal: ordinal, as: Value.self) }
      return unsafeDowncast(object._values[ordinal], to: Box<Value>.self).value
    }
    @inline(__always) set {
      let ordinal = object[keyPath: storageKeyPath].slot &- object._slotBase
      if let managed = object._managed {
        Value._reefSet(managed, managed.property(ordinal), newValue)
        return
      }
      unsafeDowncast(object._values[ordinal], to: Box<Value>.self).value = newValue
    }
  }
}

/// What `@Persisted(…)` said of a property.
@usableFromInline struct PropertyFlags: OptionSet, Sendable {
  @usableFromInline let rawValue: UInt8
  @inlinable init(rawValue: UInt8) { self.rawValue = rawValue }
  @usableFromInline static let primaryKey = PropertyFlags(rawValue: 1)
  @usableFromInline static let indexed = PropertyFlags(rawValue: 2)

  @usableFromInline init(primaryKey: Bool, indexed: Bool) {
    var flags: PropertyFlags = []
    if primaryKey { flags.insert(.primaryKey) }
    if indexed { flags.insert(.indexed) }
    self = flags
  }
}

extension Persisted {
  /// A property with Realm's default as initial value, made the primary key or indexed.
  ///
  /// A primary key is an `Int`, `String`, `ObjectId` or `UUID` (or their optionals), unique in
  /// its type, indexed, and cannot change once the object is managed.
  @inlinable public init(primaryKey: Bool = false, indexed: Bool = false) {
    self.init(value: nil, flags: PropertyFlags(primaryKey: primaryKey, indexed: indexed))
  }

  /// A property with an initial value, made the primary key or indexed.
  @inlinable public init(wrappedValue value: Value, primaryKey: Bool = false, indexed: Bool = false) {
    self.init(value: value, flags: PropertyFlags(primaryKey: primaryKey, indexed: indexed))
  }
}

/// The type-erased view of a `@Persisted` property, for schema discovery.
protocol PersistedProperty {
  var slot: Int { get }
  var flags: PropertyFlags { get }
  static var valueKind: _ReefKind { get }
  static func makeCodec() -> PropertyCodec
}

extension Persisted: PersistedProperty {
  static var valueKind: _ReefKind { Value._reefKind }
  static func makeCodec() -> PropertyCodec { TypedCodec<Value>() }
}

/// Reads and writes one property's values without knowing its type statically.
class PropertyCodec {
  /// The stored form of an unmanaged object's value (its side-table box).
  func encode(box: AnyObject, _ context: _WriteContext) throws(ReefError) -> BSON { fatalError("abstract") }
  /// Appends the stored form of an unmanaged object's value at `key` of a document being built.
  func append(box: AnyObject, _ key: String, to builder: inout DocumentBuilder, _ context: _WriteContext)
    throws(ReefError)
  { fatalError("abstract") }
  /// Whether the stored element fits the property's type.
  func fits(_ element: Document.Element?, _ context: _ReadContext) -> Bool { fatalError("abstract") }
  /// The value read, boxed, for a managed object's value copied into an unmanaged one.
  func box(reading element: Document.Element?, _ context: _ReadContext) -> AnyObject? { fatalError("abstract") }
  /// A box holding Realm's default for the type.
  func defaultBox() -> AnyObject { fatalError("abstract") }
  /// The value in a box, as `Any` (dynamic access).
  func value(in box: AnyObject) -> Any { fatalError("abstract") }
  /// Sets a box's value from `Any` (dynamic access); false when the value does not fit.
  func set(_ value: Any, in box: AnyObject) -> Bool { fatalError("abstract") }
  /// Reads a managed object's property (dynamic access).
  func get(_ owner: ManagedObject, _ property: Property) -> Any { fatalError("abstract") }
  /// Writes a managed object's property (dynamic access); false when the value does not fit.
  func set(_ owner: ManagedObject, _ property: Property, _ value: Any) -> Bool { fatalError("abstract") }
  /// The collection accessor (`List`, `MutableSet`, `Map`, `LinkingObjects`, `ReefProperty`) in
  /// an unmanaged object's box, which becomes managed with its object; nil for other types.
  func collection(in box: AnyObject) -> ManagedCollection? { fatalError("abstract") }
}

final class TypedCodec<Value: _Persistable>: PropertyCodec {
  /// Whether values are collection accessors: decided once per property, not per object.
  private let holdsCollections = Value.self is ManagedCollection.Type
  override func collection(in box: AnyObject) -> ManagedCollection? {
    guard holdsCollections else { return nil }
    return unsafeDowncast(box, to: Box<Value>.self).value as? ManagedCollection
  }
  override func encode(box: AnyObject, _ context: _WriteContext) throws(ReefError) -> BSON {
    try unsafeDowncast(box, to: Box<Value>.self).value._reefEncode(context)
  }
  override func append(box: AnyObject, _ key: String, to builder: inout DocumentBuilder, _ context: _WriteContext)
    throws(ReefError)
  {
    // The common scalar types call their own `_reefAppend` directly; the others go through
    // the generic witness (Optional's, which looks up metadata per call).
    switch scalar {
    case .string: unsafeDowncast(box, to: Box<String>.self).value._reefAppend(key, to: &builder, context)
    case .optionalString: Self.appendOptional(unsafeDowncast(box, to: Box<String?>.self).value, key, &builder, context)
    case .int: try unsafeDowncast(box, to: Box<Int>.self).value._reefAppend(key, to: &builder, context)
    case .optionalInt: Self.appendOptional(unsafeDowncast(box, to: Box<Int?>.self).value, key, &builder, context)
    case .double: try unsafeDowncast(box, to: Box<Double>.self).value._reefAppend(key, to: &builder, context)
    case .optionalDouble:
      Self.appendOptional(unsafeDowncast(box, to: Box<Double?>.self).value, key, &builder, context)
    case .bool: try unsafeDowncast(box, to: Box<Bool>.self).value._reefAppend(key, to: &builder, context)
    case .objectId: try unsafeDowncast(box, to: Box<ObjectId>.self).value._reefAppend(key, to: &builder, context)
    case .date: try unsafeDowncast(box, to: Box<Date>.self).value._reefAppend(key, to: &builder, context)
    case .optionalEmbedded:
      // A `Box<Address?>` read as a `Box<EmbeddedObject?>`: the same layout (one optional
      // reference), and the object's own class encodes it.
      let pointer = Unmanaged.passUnretained(box).toOpaque()
      guard let object = Unmanaged<Box<EmbeddedObject?>>.fromOpaque(pointer).takeUnretainedValue().value else {
        return builder.appendNull(key)
      }
      try object._reefAppend(key, to: &builder, context)
    case .other: try unsafeDowncast(box, to: Box<Value>.self).value._reefAppend(key, to: &builder, context)
    }
  }

  /// The scalar types with a direct path in ``append(box:_:to:_:)``.
  private enum Scalar {
    case string, optionalString, int, optionalInt, double, optionalDouble, bool, objectId, date, optionalEmbedded
    case other
  }
  /// Decided once per property.
  private let scalar: Scalar = {
    switch Value.self {
    case is String.Type: .string
    case is String?.Type: .optionalString
    case is Int.Type: .int
    case is Int?.Type: .optionalInt
    case is Double.Type: .double
    case is Double?.Type: .optionalDouble
    case is Bool.Type: .bool
    case is ObjectId.Type: .objectId
    case is Date.Type: .date
    // Not `is EmbeddedObject?.Type`, which a non-optional class would pass as well.
    case let type as any _ReefOptionalEmbedded.Type where type.isOptionalEmbedded: .optionalEmbedded
    default: .other
    }
  }()

  // Inlined, so that each call is specialized for its type.
  @inline(__always)
  private static func appendOptional<Wrapped: _ReefValue>(
    _ value: Wrapped?, _ key: String, _ builder: inout DocumentBuilder, _ context: _WriteContext
  ) {
    guard let value else { return builder.appendNull(key) }
    // Scalars throw nothing.
    try? value._reefAppend(key, to: &builder, context)
  }
  override func fits(_ element: Document.Element?, _ context: _ReadContext) -> Bool {
    Value._reefDecode(element, context) != nil
  }
  override func box(reading element: Document.Element?, _ context: _ReadContext) -> AnyObject? {
    Value._reefDecode(element, context).map { Box($0) }
  }
  override func defaultBox() -> AnyObject { Box(Value._reefDefault()) }
  override func value(in box: AnyObject) -> Any { unsafeDowncast(box, to: Box<Value>.self).value }
  override func set(_ value: Any, in box: AnyObject) -> Bool {
    guard let value = coerce(value) else { return false }
    unsafeDowncast(box, to: Box<Value>.self).value = value
    return true
  }
  override func get(_ owner: ManagedObject, _ property: Property) -> Any { Value._reefGet(owner, property) }
  override func set(_ owner: ManagedObject, _ property: Property, _ value: Any) -> Bool {
    guard let value = coerce(value) else { return false }
    Value._reefSet(owner, property, value)
    return true
  }
  /// `value` as a `Value`: itself, or a number of another width, or nil for nil.
  private func coerce(_ value: Any) -> Value? {
    if let value = value as? Value { return value }
    if let make = Value.self as? any _ReefCoercible.Type { return make._reefCoerce(value) as? Value }
    return nil
  }
}

/// Types that take values of neighbouring types in dynamic access (`object["age"] = 3` for an
/// `Int8` property, a dictionary for an embedded object).
protocol _ReefCoercible {
  static func _reefCoerce(_ value: Any) -> Any?
}

/// `Optional` of an embedded object's class, for ``TypedCodec``'s direct path.
protocol _ReefOptionalEmbedded {
  static var isOptionalEmbedded: Bool { get }
}
extension Optional: _ReefOptionalEmbedded where Wrapped: EmbeddedObject {
  static var isOptionalEmbedded: Bool { true }
}
