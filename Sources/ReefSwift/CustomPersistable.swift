import Foundation
import ReefBSON

/// A type stored as another that Reef stores, as Realm's `CustomPersistable`: declare its
/// `PersistedType` (a scalar such as `String` or `Int`, or an ``EmbeddedObject`` subclass for
/// more than one value), how to make it from a persisted value and its persisted value.
///
/// ```swift
/// struct Celsius: CustomPersistable {
///     typealias PersistedType = Double
///     var degrees: Double
///     init(persistedValue: Double) { degrees = persistedValue }
///     var persistableValue: Double { degrees }
/// }
/// class Reading: Object {
///     @Persisted var temperature: Celsius
///     @Persisted var history: List<Celsius>
/// }
/// ```
/// The property is stored, indexed and queried as its persisted type: a query compares the
/// persisted values (`$0.temperature == Celsius(degrees: 20)`, or `"temperature == %@"` with
/// either type), and dynamic access reads and takes the persisted value. A type mapped to an
/// embedded object need not be optional, in a property or a map.
public protocol CustomPersistable: _CustomPersistable {
  /// The value for a persisted value.
  init(persistedValue: PersistedType)
  /// The value to store.
  var persistableValue: PersistedType { get }
}

/// A type stored as another, for which not every persisted value names a value, as Realm's
/// `FailableCustomPersistable` (a `URL` stored as a `String`).
///
/// Reading a persisted value that names no value stops in a non-optional property (with
/// Realm's message), and is nil in an optional one; giving such a value to dynamic access,
/// `create` or `init(value:)` stops for a non-optional property and stores nil in an optional
/// one. `init?(persistedValue:)` must succeed for the persisted type's default value, or the
/// property must be optional or have an initial value.
public protocol FailableCustomPersistable: _CustomPersistable {
  /// The value for a persisted value, or nil when it names none.
  init?(persistedValue: PersistedType)
  /// The value to store.
  var persistableValue: PersistedType { get }
}

/// What `CustomPersistable` and `FailableCustomPersistable` share. For ReefSwift's own use.
public protocol _CustomPersistable: _Persistable, _ReefOptionalWrappable, _ReefCollectionElement, Hashable {
  /// The stored type: a scalar, or an ``EmbeddedObject`` subclass.
  associatedtype PersistedType: _ReefPersistedType
  /// The value to store.
  var persistableValue: PersistedType { get }
  /// The value for a persisted value; nil when it names none.
  static func _reefMake(_ persisted: PersistedType) -> Self?
}

/// A type a ``CustomPersistable`` can be stored as: the scalars and the embedded objects. For
/// ReefSwift's own conformances.
public protocol _ReefPersistedType: _ReefValue {
  /// The value a property holds when nothing was given: Realm's default, or a new embedded
  /// object.
  static func _reefPersistedDefault() -> Self
}

extension _ReefPersistedType where Self: _Persistable {
  public static func _reefPersistedDefault() -> Self { _reefDefault() }
}

extension Bool: _ReefPersistedType {}
extension Int: _ReefPersistedType {}
extension Int8: _ReefPersistedType {}
extension Int16: _ReefPersistedType {}
extension Int32: _ReefPersistedType {}
extension Int64: _ReefPersistedType {}
extension Float: _ReefPersistedType {}
extension Double: _ReefPersistedType {}
extension String: _ReefPersistedType {}
extension Data: _ReefPersistedType {}
extension Date: _ReefPersistedType {}
extension Decimal128: _ReefPersistedType {}
extension ObjectId: _ReefPersistedType {}
extension UUID: _ReefPersistedType {}

extension EmbeddedObject: _ReefPersistedType {
  /// A new object with each property's initial value.
  public static func _reefPersistedDefault() -> Self { Self() }
}

extension CustomPersistable {
  public static func _reefMake(_ persisted: PersistedType) -> Self? { Self(persistedValue: persisted) }
}

extension FailableCustomPersistable {
  public static func _reefMake(_ persisted: PersistedType) -> Self? { Self(persistedValue: persisted) }
}

extension _CustomPersistable {
  /// Stored as its persisted type.
  public static var _reefKind: _ReefKind { _ReefKind(.custom(PersistedType._reefKind.shape)) }

  /// The value made from the persisted type's default.
  public static func _reefDefault() -> Self {
    guard let value = _reefMake(PersistedType._reefPersistedDefault()) else {
      reefStop(
        "Failed to default construct a \(Self.self) using the default value for persisted type \(PersistedType.self). This conversion must either succeed, the property must be optional, or you must explicitly specify a default value for the property."
      )
    }
    return value
  }

  /// The value made from the stored persisted value; nil when it does not fit or names none.
  public static func _reefDecode(_ element: Document.Element?, _ context: _ReadContext) -> Self? {
    PersistedType._reefDecode(element, context).flatMap(_reefMake)
  }

  /// The persisted value's stored form.
  public func _reefEncode(_ context: _WriteContext) throws(ReefError) -> BSON {
    try persistableValue._reefEncode(context)
  }

  /// Writes the persisted value in place (an embedded object as a subdocument).
  public func _reefAppend(_ key: String, to builder: inout DocumentBuilder, _ context: _WriteContext)
    throws(ReefError)
  {
    try persistableValue._reefAppend(key, to: &builder, context)
  }

  /// Writes the persisted value in place, as an array element.
  public func _reefAppend(to array: inout ArrayBuilder, _ context: _WriteContext) throws(ReefError) {
    try persistableValue._reefAppend(to: &array, context)
  }

  /// The value itself, or a value of the persisted type (converted as that type takes it).
  public static func _reefConvert(_ value: Any) -> Self? {
    DynamicValue.convert(value, to: PersistedType.self).flatMap(_reefMake)
  }

  /// A value of the persisted type that names no value.
  public static func _reefNamesNoValue(_ value: Any) -> Bool {
    guard let persisted = DynamicValue.convert(value, to: PersistedType.self) else { return false }
    return _reefMake(persisted) == nil
  }

  /// A stored persisted value that names no value: nil in an optional, as in Realm.
  public static func _reefReadsAsNil(_ element: Document.Element, _ context: _ReadContext) -> Bool {
    guard let persisted = PersistedType._reefDecode(element, context) else { return false }
    return _reefMake(persisted) == nil
  }

  /// The persisted value, as Realm's dynamic access returns it.
  public var _reefDynamicValue: Any? { persistableValue._reefDynamicValue }

  /// The persisted value as `Any`, for query arguments.
  var _reefPersistedAny: Any { persistableValue }
}

extension _CustomPersistable where PersistedType: Hashable {
  /// Hashes the persisted value, as Realm does.
  public func hash(into hasher: inout Hasher) { persistableValue.hash(into: &hasher) }
}

extension TypedQuery where T: _QueryCollection, T._QueryElement: _CustomPersistable {
  /// Some element's persisted value is equal to `value`'s (`ANY` implied).
  public static func == (query: TypedQuery, value: T._QueryElement) -> TypedQuery<Bool> {
    query.compare(.equal, encode(value))
  }
  /// Some element's persisted value is not equal to `value`'s.
  public static func != (query: TypedQuery, value: T._QueryElement) -> TypedQuery<Bool> {
    query.compare(.notEqual, encode(value))
  }
}
