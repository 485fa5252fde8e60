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
  /// Where the initial value went in the thread's byte stack; the owning object knows where
  /// its values started (`ObjectBase._byteBase`).
  @usableFromInline let position: Int
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
    (slot, position) = ThreadState.push { value ?? Value._reefDefault() }
  }

  /// The property's value, for the object that owns it.
  @inlinable
  public static subscript<EnclosingSelf: ObjectBase>(
    _enclosingInstance object: EnclosingSelf,
    wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
    storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
  ) -> Value {
    @inline(__always) get {
      let persisted = object[keyPath: storageKeyPath]
      if let managed = object._managed {
        return Value._reefGet(managed, managed.property(persisted.slot &- object._slotBase))
      }
      if let tracer = object._tracer {
        return tracer.trace(object, ordinal: persisted.slot &- object._slotBase, as: Value.self)
      }
      return Self.value(object, persisted).pointee
    }
    @inline(__always) set {
      let persisted = object[keyPath: storageKeyPath]
      if let managed = object._managed {
        Value._reefSet(managed, managed.property(persisted.slot &- object._slotBase), newValue)
        return
      }
      Value._reefAssignUnmanaged(newValue, to: Self.value(object, persisted))
    }
  }

  /// Where an unmanaged object keeps this property's value.
  @inlinable @inline(__always)
  static func value(_ object: ObjectBase, _ persisted: Persisted) -> UnsafeMutablePointer<Value> {
    guard let storage = object._storage else { ObjectBase._noValues(object) }
    return (storage + (persisted.position &- object._byteBase)).assumingMemoryBound(to: Value.self)
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
  /// The stored form of an unmanaged object's value (at `pointer` in its storage).
  func encode(at pointer: UnsafeMutableRawPointer, _ context: _WriteContext) throws(ReefError) -> BSON {
    fatalError("abstract")
  }
  /// Appends the stored form of an unmanaged object's value at `key` of a document being built.
  func append(
    at pointer: UnsafeMutableRawPointer, _ key: String, to builder: inout DocumentBuilder, _ context: _WriteContext
  )
    throws(ReefError)
  { fatalError("abstract") }
  /// An unmanaged object's value, as `Any` (the value itself).
  func value(at pointer: UnsafeMutableRawPointer) -> Any { fatalError("abstract") }
  /// An unmanaged object's value as dynamic access returns it (see `_reefDynamicValue`).
  func dynamicValue(at pointer: UnsafeMutableRawPointer) -> Any? { fatalError("abstract") }
  /// A managed object's value as dynamic access returns it.
  func dynamicValue(_ owner: ManagedObject, _ property: Property) -> Any? { fatalError("abstract") }
  /// Sets an unmanaged object's value from `Any` (dynamic access); false when the value does
  /// not fit.
  func set(_ value: Any, at pointer: UnsafeMutableRawPointer) -> Bool { fatalError("abstract") }
  /// Reads a managed object's property (dynamic access).
  func get(_ owner: ManagedObject, _ property: Property) -> Any { fatalError("abstract") }
  /// Writes a managed object's property (dynamic access); false when the value does not fit.
  func set(_ owner: ManagedObject, _ property: Property, _ value: Any) -> Bool { fatalError("abstract") }
  /// The collection accessor (`List`, `MutableSet`, `Map`, `LinkingObjects`, `ReefProperty`) of
  /// an unmanaged object, which becomes managed with its object; nil for other types.
  func collection(at pointer: UnsafeMutableRawPointer) -> ManagedCollection? { fatalError("abstract") }
  /// Realm's message for a value a `FailableCustomPersistable` refuses; nil for other values.
  func refusal(_ value: Any?) -> String? { nil }
  /// Sets an unmanaged object's value back to the type's default, letting go of what it
  /// referenced (for an object that became managed, which reads the store instead); a
  /// collection accessor is left as it is (it is the managed object's).
  func releaseValue(at pointer: UnsafeMutableRawPointer) { fatalError("abstract") }
  /// Whether a managed object's stored value fits the property (reading it does not stop).
  func fits(_ owner: ManagedObject, _ property: Property, in document: Document) -> Bool { fatalError("abstract") }
}

final class TypedCodec<Value: _Persistable>: PropertyCodec {
  /// Whether values are collection accessors: decided once per property, not per object.
  private let holdsCollections = Value.self is ManagedCollection.Type
  override func collection(at pointer: UnsafeMutableRawPointer) -> ManagedCollection? {
    guard holdsCollections else { return nil }
    return pointer.assumingMemoryBound(to: Value.self).pointee as? ManagedCollection
  }
  override func encode(at pointer: UnsafeMutableRawPointer, _ context: _WriteContext) throws(ReefError) -> BSON {
    try pointer.assumingMemoryBound(to: Value.self).pointee._reefEncode(context)
  }
  override func fits(_ owner: ManagedObject, _ property: Property, in document: Document) -> Bool {
    let element = document.element(forKey: property.columnName)
    return Value._reefDecode(element, _ReadContext(owner: owner, field: property.columnName, index: nil)) != nil
  }
  override func append(
    at pointer: UnsafeMutableRawPointer, _ key: String, to builder: inout DocumentBuilder, _ context: _WriteContext
  )
    throws(ReefError)
  {
    // The common scalar types call their own `_reefAppend` directly; the others go through
    // the generic witness (Optional's, which looks up metadata per call).
    switch scalar {
    case .string: pointer.assumingMemoryBound(to: String.self).pointee._reefAppend(key, to: &builder, context)
    case .optionalString:
      Self.appendOptional(pointer.assumingMemoryBound(to: String?.self).pointee, key, &builder, context)
    case .int: try pointer.assumingMemoryBound(to: Int.self).pointee._reefAppend(key, to: &builder, context)
    case .optionalInt: Self.appendOptional(pointer.assumingMemoryBound(to: Int?.self).pointee, key, &builder, context)
    case .double: try pointer.assumingMemoryBound(to: Double.self).pointee._reefAppend(key, to: &builder, context)
    case .optionalDouble:
      Self.appendOptional(pointer.assumingMemoryBound(to: Double?.self).pointee, key, &builder, context)
    case .bool: try pointer.assumingMemoryBound(to: Bool.self).pointee._reefAppend(key, to: &builder, context)
    case .objectId: try pointer.assumingMemoryBound(to: ObjectId.self).pointee._reefAppend(key, to: &builder, context)
    case .date: try pointer.assumingMemoryBound(to: Date.self).pointee._reefAppend(key, to: &builder, context)
    case .optionalEmbedded:
      // An `Address?` read as an `EmbeddedObject?`: the same layout (one optional reference),
      // and the object's own class encodes it.
      guard let object = pointer.load(as: EmbeddedObject?.self) else {
        return builder.appendNull(key)
      }
      try object._reefAppend(key, to: &builder, context)
    case .other: try pointer.assumingMemoryBound(to: Value.self).pointee._reefAppend(key, to: &builder, context)
    }
  }

  /// The scalar types with a direct path in ``append(at:_:to:_:)``.
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
  override func value(at pointer: UnsafeMutableRawPointer) -> Any {
    pointer.assumingMemoryBound(to: Value.self).pointee
  }
  override func dynamicValue(at pointer: UnsafeMutableRawPointer) -> Any? {
    pointer.assumingMemoryBound(to: Value.self).pointee._reefDynamicValue
  }
  override func dynamicValue(_ owner: ManagedObject, _ property: Property) -> Any? {
    Value._reefGet(owner, property)._reefDynamicValue
  }
  override func set(_ value: Any, at pointer: UnsafeMutableRawPointer) -> Bool {
    guard let value = coerce(value) else { return false }
    let slot = pointer.assumingMemoryBound(to: Value.self)
    // A collection (or `ReefProperty`) takes the new contents into the object's own
    // accessor, as in Realm: a list read before stays the object's list.
    if holdsCollections, let current = slot.pointee as? ContentsReplaceable, current.replaceContents(with: value) {
      return true
    }
    slot.pointee = value
    return true
  }
  override func get(_ owner: ManagedObject, _ property: Property) -> Any { Value._reefGet(owner, property) }
  override func releaseValue(at pointer: UnsafeMutableRawPointer) {
    guard !holdsCollections else { return }
    pointer.assumingMemoryBound(to: Value.self).pointee = Value._reefDefault()
  }
  override func set(_ owner: ManagedObject, _ property: Property, _ value: Any) -> Bool {
    guard let value = coerce(value) else { return false }
    Value._reefSet(owner, property, value)
    return true
  }
  override func refusal(_ value: Any?) -> String? {
    guard Value.self is any _CustomPersistable.Type, let unwrapped = DynamicValue.unwrap(value),
      Value._reefNamesNoValue(unwrapped)
    else { return nil }
    return "Could not convert value '\(DynamicValue.describe(value))' to type '\(Value.self)'."
  }
  /// `value` as a `Value`: itself, or converted as Realm converts it (see
  /// `DynamicValues.swift`); nil when it does not fit.
  private func coerce(_ value: Any) -> Value? { DynamicValue.convert(value, to: Value.self) }
}

/// `Optional` of an embedded object's class, for ``TypedCodec``'s direct path.
protocol _ReefOptionalEmbedded {
  static var isOptionalEmbedded: Bool { get }
}
extension Optional: _ReefOptionalEmbedded where Wrapped: EmbeddedObject {
  static var isOptionalEmbedded: Bool { true }
}
