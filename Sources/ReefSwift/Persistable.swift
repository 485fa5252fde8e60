import ReefBSON

/// The types a property, a list element or a map value can have, as the schema records them.
public enum PropertyType: String, Hashable, Sendable, CaseIterable {
  case bool, int, float, double, string, data, date, decimal128, objectId, uuid
  /// `AnyReefValue`: any BSON value.
  case any
  /// A link to an `Object`, or an `EmbeddedObject`.
  case object
  /// `LinkingObjects`: computed from the links that point here.
  case linkingObjects
}

/// How a Swift type is stored: what the schema knows of it. For ReefSwift's own conformances.
public struct _ReefKind: @unchecked Sendable {
  indirect enum Shape {
    case scalar(PropertyType, bits: Int)
    case object(ObjectBase.Type)
    case optional(Shape)
    case list(Shape)
    case set(Shape)
    case map(Shape)
    case linkingObjects(ObjectBase.Type)
    case enumeration(Shape)
    /// A `CustomPersistable`: stored as its persisted type.
    case custom(Shape)
  }
  let shape: Shape
  init(_ shape: Shape) { self.shape = shape }
}

/// Where a managed value is read from: the object and the field. For ReefSwift's own conformances.
public struct _ReadContext {
  let owner: ManagedObject?
  /// The stored name of the field, or for a list element, the list's.
  let field: String
  /// The element's position, for a list element.
  let index: Int?
  /// The key, for a map's value.
  var key: String? = nil
  /// The list's place, for an element of a list of embedded objects whose accessor has it.
  var place: ListPlace? = nil

  @usableFromInline init(owner: ManagedObject?, field: String, index: Int?, key: String? = nil) {
    self.owner = owner
    self.field = field
    self.index = index
    self.key = key
  }
}

/// What writing a value needs: the `Reef` (links add their targets), the value's path from the
/// object being written (embedded objects become managed there) and the update policy. For
/// ReefSwift's own conformances.
public struct _WriteContext {
  // Unowned: a context lives only while the write that made it runs, which holds both (copies
  // of the context, made for every embedded object and list element, then retain nothing).
  unowned(unsafe) let reef: Reef?
  unowned(unsafe) let attachments: Attachments?
  /// The path of the enclosing object's place, without the last step.
  private let base: [PathStep]
  /// The last step, kept apart so that a scalar property's context allocates no array.
  private let last: PathStep?
  let policy: UpdatePolicy

  init(reef: Reef?, attachments: Attachments?, path: [PathStep], policy: UpdatePolicy) {
    self.reef = reef
    self.attachments = attachments
    base = Array(path.dropLast())
    last = path.last
    self.policy = policy
  }

  private init(reef: Reef?, attachments: Attachments?, base: [PathStep], last: PathStep?, policy: UpdatePolicy) {
    self.reef = reef
    self.attachments = attachments
    self.base = base
    self.last = last
    self.policy = policy
  }

  /// The value's path from the object being written.
  var path: [PathStep] { last.map { base + [$0] } ?? base }

  /// Records an embedded object written at this path, to become managed there once the change
  /// is stored.
  func attach(_ object: ObjectBase) throws(ReefError) {
    guard let attachments else { return }
    if let last {
      try attachments.add(object, base: base, last: last)
    } else if let final = base.last {
      try attachments.add(object, base: Array(base.dropLast()), last: final)
    }
  }

  /// The context of the element at `index` of the array at this path.
  func at(index: Int) -> _WriteContext {
    guard var step = last else { return self }
    step.index = index
    return _WriteContext(reef: reef, attachments: attachments, base: base, last: step, policy: policy)
  }
  /// The context of the value at `key` of the map at this path.
  func at(key: String) -> _WriteContext {
    guard var step = last else { return self }
    step.key = key
    return _WriteContext(reef: reef, attachments: attachments, base: base, last: step, policy: policy)
  }
  /// The context of a field of the embedded object at this path.
  func appending(_ field: String) -> _WriteContext {
    _WriteContext(
      reef: reef, attachments: attachments, base: path, last: PathStep(field: field, index: nil), policy: policy)
  }
}

/// A type that can be stored in a property, a list or a map. ReefSwift conforms the types the
/// schema supports; conform your own enums through ``PersistableEnum``.
public protocol _ReefValue {
  /// How the type is stored.
  static var _reefKind: _ReefKind { get }
  /// The value read from a stored element (nil when missing); nil when it does not fit.
  static func _reefDecode(_ element: Document.Element?, _ context: _ReadContext) -> Self?
  /// The BSON value stored for this value.
  func _reefEncode(_ context: _WriteContext) throws(ReefError) -> BSON
  /// Appends the stored value at `key` of a document being built (embedded objects and lists
  /// write in place instead of building a value to copy).
  func _reefAppend(_ key: String, to builder: inout DocumentBuilder, _ context: _WriteContext) throws(ReefError)
  /// Appends the stored value to an array being built.
  func _reefAppend(to array: inout ArrayBuilder, _ context: _WriteContext) throws(ReefError)
  /// Whether a stored value that cannot be read is nil in an optional (a link to an object that
  /// is gone) rather than a mismatch.
  static var _reefNilWhenUnreadable: Bool { get }
  /// A stand-in value for a query's key path (objects record the properties read through them).
  static func _reefTraced(_ tracer: _PathTracer) -> Self?
  /// A value of another type made fit for this one, as Realm converts the values given to
  /// dynamic access, `create` and `init(value:)` (an `Int` for an `Int8`, a raw value for an
  /// enum); nil when it does not fit. `value` is never nil, `NSNull` or an optional (see
  /// ``_reefNilValue``). See `DynamicValues.swift`.
  static func _reefConvert(_ value: Any) -> Self?
  /// What nil (or `NSNull`) stands for: nil in an optional, an empty collection; nil when the
  /// type takes no nil.
  static var _reefNilValue: Self? { get }
  /// Whether `value` fits the stored type but names no value of this one (an enum's raw value
  /// without a case, a value a failable mapping refuses): an optional holds nil for it.
  static func _reefNamesNoValue(_ value: Any) -> Bool
  /// Whether a stored element fits the stored type but names no value of this one (see
  /// ``_reefNamesNoValue(_:)``): an optional reads nil for it, as in Realm.
  static func _reefReadsAsNil(_ element: Document.Element, _ context: _ReadContext) -> Bool
  /// The value as dynamic access returns it, in Realm's form: numbers as `NSNumber`, an enum as
  /// its raw value, a mapped type as its persisted value, nil for none.
  var _reefDynamicValue: Any? { get }
}

/// A type a `@Persisted` property can have. A link (`Dog`) and an embedded object (`Address`)
/// are not: only their optionals are, so that a non-optional to-one property does not compile.
public protocol _Persistable: _ReefValue {
  /// Realm's default for a property declared without an initial value.
  static func _reefDefault() -> Self
  /// Reads the property of a managed object (collections return their live accessor).
  static func _reefGet(_ owner: ManagedObject, _ property: Property) -> Self
  /// Writes the property of a managed object.
  static func _reefSet(_ owner: ManagedObject, _ property: Property, _ value: Self)
  /// Stores a value in an unmanaged object's slot: the value itself, or, for a `List`,
  /// `MutableSet`, `Map` or `ReefProperty`, its contents copied into the accessor there, as
  /// Realm assigns a collection (a list read before stays the object's list).
  static func _reefAssignUnmanaged(_ value: Self, to slot: UnsafeMutablePointer<Self>)
}

extension _ReefValue {
  public func _reefAppend(_ key: String, to builder: inout DocumentBuilder, _ context: _WriteContext)
    throws(ReefError)
  {
    builder.append(key, try _reefEncode(context))
  }
  public func _reefAppend(to array: inout ArrayBuilder, _ context: _WriteContext) throws(ReefError) {
    array.append(try _reefEncode(context))
  }
}

extension _Persistable {
  // Inlinable, as `@Persisted`'s accessor that calls it: a property read is specialized for its
  // type in the model's module (no generic metadata lookup per read).
  @inlinable
  public static func _reefGet(_ owner: ManagedObject, _ property: Property) -> Self {
    owner.read(property, as: Self.self)
  }
  public static func _reefSet(_ owner: ManagedObject, _ property: Property, _ value: Self) {
    owner.write(property, value)
  }
  // Inlinable, as `@Persisted`'s accessor that calls it (a plain store for every value type).
  @inlinable @inline(__always)
  public static func _reefAssignUnmanaged(_ value: Self, to slot: UnsafeMutablePointer<Self>) {
    slot.pointee = value
  }
}

/// A type whose optional a property can have (`Int?`, `Dog?`, `Address?`), and a collection can
/// hold (`List<Int?>`, `Map<String, Dog?>`).
public protocol _ReefOptionalWrappable: _ReefValue, Hashable {}

/// Realm's `_RealmCollectionValueInsideOptional`: a type whose optional a collection can hold.
public typealias _ReefCollectionValueInsideOptional = _ReefOptionalWrappable

/// A scalar value: a property, a list element, a set element, a map value, optional or not.
public protocol _ReefScalar: _Persistable, _ReefOptionalWrappable, _ReefCollectionElement {}

/// A type a `List`, `MutableSet` or `Map` can hold: `Hashable`, as Realm's
/// `RealmCollectionValue` (objects hash by identity, see ``ObjectBase``).
public protocol _ReefCollectionElement: _ReefValue, Hashable {}

extension Optional: _ReefValue where Wrapped: _ReefOptionalWrappable {
  public static var _reefKind: _ReefKind { _ReefKind(.optional(Wrapped._reefKind.shape)) }
  @inlinable
  public static func _reefDecode(_ element: Document.Element?, _ context: _ReadContext) -> Self? {
    guard let element, element.type != .null else { return .some(nil) }
    guard let value = Wrapped._reefDecode(element, context) else {
      return Wrapped._reefNilWhenUnreadable || Wrapped._reefReadsAsNil(element, context) ? .some(nil) : nil
    }
    return .some(value)
  }
  public func _reefEncode(_ context: _WriteContext) throws(ReefError) -> BSON {
    guard let self else { return .null }
    return try self._reefEncode(context)
  }
  public func _reefAppend(_ key: String, to builder: inout DocumentBuilder, _ context: _WriteContext)
    throws(ReefError)
  {
    guard let self else { return builder.appendNull(key) }
    try self._reefAppend(key, to: &builder, context)
  }
  public func _reefAppend(to array: inout ArrayBuilder, _ context: _WriteContext) throws(ReefError) {
    guard let self else { return array.append(.null) }
    try self._reefAppend(to: &array, context)
  }
}
extension Optional: _Persistable where Wrapped: _ReefOptionalWrappable {
  public static func _reefDefault() -> Self { nil }
}
extension Optional: _ReefCollectionElement where Wrapped: _ReefOptionalWrappable {}

// MARK: Scalars

extension Bool: _ReefScalar {
  public static var _reefKind: _ReefKind { _ReefKind(.scalar(.bool, bits: 0)) }
  public static func _reefDefault() -> Bool { false }
  public static func _reefDecode(_ element: Document.Element?, _ context: _ReadContext) -> Bool? { element?.bool }
  public func _reefEncode(_ context: _WriteContext) -> BSON { .bool(self) }
}

/// The integer types: stored as int64 (MongoDB's `long`), read from int32 or int64.
public protocol _ReefInteger: _ReefScalar, FixedWidthInteger {}
extension _ReefInteger {
  public static var _reefKind: _ReefKind { _ReefKind(.scalar(.int, bits: Self.bitWidth)) }
  public static func _reefDefault() -> Self { 0 }
  public static func _reefDecode(_ element: Document.Element?, _ context: _ReadContext) -> Self? {
    guard let element else { return nil }
    if let value = element.int64 { return Self(exactly: value) }
    if let value = element.int32 { return Self(exactly: value) }
    return nil
  }
  public func _reefEncode(_ context: _WriteContext) -> BSON { .int64(Int64(self)) }
}
extension Int: _ReefInteger {}
extension Int8: _ReefInteger {}
extension Int16: _ReefInteger {}
extension Int32: _ReefInteger {}
extension Int64: _ReefInteger {}

extension Double: _ReefScalar {
  public static var _reefKind: _ReefKind { _ReefKind(.scalar(.double, bits: 64)) }
  public static func _reefDefault() -> Double { 0 }
  public static func _reefDecode(_ element: Document.Element?, _ context: _ReadContext) -> Double? {
    guard let element else { return nil }
    if let value = element.double { return value }
    if let value = element.int64 { return Double(value) }
    if let value = element.int32 { return Double(value) }
    return nil
  }
  public func _reefEncode(_ context: _WriteContext) -> BSON { .double(self) }
}

extension Float: _ReefScalar {
  public static var _reefKind: _ReefKind { _ReefKind(.scalar(.float, bits: 32)) }
  public static func _reefDefault() -> Float { 0 }
  public static func _reefDecode(_ element: Document.Element?, _ context: _ReadContext) -> Float? {
    Double._reefDecode(element, context).map(Float.init)
  }
  public func _reefEncode(_ context: _WriteContext) -> BSON { .double(Double(self)) }
}

extension String: _ReefScalar {
  public static var _reefKind: _ReefKind { _ReefKind(.scalar(.string, bits: 0)) }
  public static func _reefDefault() -> String { "" }
  public static func _reefDecode(_ element: Document.Element?, _ context: _ReadContext) -> String? {
    guard let element, element.type == .string, case .string(let value) = element.value else { return nil }
    return value
  }
  public func _reefEncode(_ context: _WriteContext) -> BSON { .string(self) }
  public func _reefAppend(_ key: String, to builder: inout DocumentBuilder, _ context: _WriteContext) {
    builder.append(key, self)
  }
}

extension Data: _ReefScalar {
  public static var _reefKind: _ReefKind { _ReefKind(.scalar(.data, bits: 0)) }
  public static func _reefDefault() -> Data { Data() }
  public static func _reefDecode(_ element: Document.Element?, _ context: _ReadContext) -> Data? {
    guard let element, element.type == .binary, case .binary(let value) = element.value,
      value.subtype != .uuid
    else { return nil }
    return Data(value.data)
  }
  public func _reefEncode(_ context: _WriteContext) -> BSON { .binary(Binary(subtype: .generic, data: Array(self))) }
}

extension Date: _ReefScalar {
  public static var _reefKind: _ReefKind { _ReefKind(.scalar(.date, bits: 0)) }
  public static func _reefDefault() -> Date { Date(timeIntervalSince1970: 0) }
  public static func _reefDecode(_ element: Document.Element?, _ context: _ReadContext) -> Date? {
    guard let milliseconds = element?.datetime?.millisecondsSinceEpoch else { return nil }
    return Date(timeIntervalSince1970: Double(milliseconds) / 1000)
  }
  /// Stored as a BSON date: milliseconds since 1970, as MongoDB stores dates (finer parts of a
  /// millisecond are dropped, rounding toward the past).
  public func _reefEncode(_ context: _WriteContext) -> BSON {
    .datetime(BSONDateTime(millisecondsSinceEpoch: Int64((timeIntervalSince1970 * 1000).rounded(.down))))
  }
}

extension Decimal128: _ReefScalar {
  public static var _reefKind: _ReefKind { _ReefKind(.scalar(.decimal128, bits: 128)) }
  public static func _reefDefault() -> Decimal128 { Decimal128(high: 0x3040_0000_0000_0000, low: 0) }
  public static func _reefDecode(_ element: Document.Element?, _ context: _ReadContext) -> Decimal128? {
    guard let element, element.type == .decimal128, case .decimal128(let value) = element.value else { return nil }
    return value
  }
  public func _reefEncode(_ context: _WriteContext) -> BSON { .decimal128(self) }
}

extension ObjectId: _ReefScalar {
  public static var _reefKind: _ReefKind { _ReefKind(.scalar(.objectId, bits: 96)) }
  /// A new ObjectId, as Realm gives a property declared without an initial value.
  public static func _reefDefault() -> ObjectId { ObjectId() }
  public static func _reefDecode(_ element: Document.Element?, _ context: _ReadContext) -> ObjectId? {
    element?.objectId
  }
  public func _reefEncode(_ context: _WriteContext) -> BSON { .objectId(self) }
}

extension UUID: _ReefScalar {
  public static var _reefKind: _ReefKind { _ReefKind(.scalar(.uuid, bits: 128)) }
  /// A new random UUID, as Realm gives a property declared without an initial value.
  public static func _reefDefault() -> UUID { UUID() }
  public static func _reefDecode(_ element: Document.Element?, _ context: _ReadContext) -> UUID? {
    guard let element, element.type == .binary, case .binary(let value) = element.value,
      let bytes = value.uuidBytes
    else { return nil }
    return UUID(uuid: bytes)
  }
  /// Stored as a binary of subtype 4, as MongoDB stores UUIDs.
  public func _reefEncode(_ context: _WriteContext) -> BSON { .binary(Binary(uuid: uuid)) }
}

// MARK: Enums

/// An enum stored by its raw value (an integer or a string), as Realm's `PersistableEnum`.
///
/// ```swift
/// enum Status: String, PersistableEnum { case open, closed }
/// class Ticket: Object { @Persisted var status = Status.open }
/// ```
/// A property with no initial value gets the first case.
public protocol PersistableEnum: _ReefScalar, RawRepresentable, CaseIterable
where RawValue: _ReefScalar {}

extension PersistableEnum {
  public static var _reefKind: _ReefKind { _ReefKind(.enumeration(RawValue._reefKind.shape)) }
  public static func _reefDefault() -> Self { allCases.first! }
  public static func _reefDecode(_ element: Document.Element?, _ context: _ReadContext) -> Self? {
    RawValue._reefDecode(element, context).flatMap(Self.init(rawValue:))
  }
  public func _reefEncode(_ context: _WriteContext) throws(ReefError) -> BSON { try rawValue._reefEncode(context) }
}
