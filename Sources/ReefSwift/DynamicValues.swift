import Foundation
import ReefBSON

// How the values given to dynamic access (`object["age"] = 3`, `setValue(_:forKey:)`), to
// `create` and to `init(value:)` are made fit for a property, and how dynamic access returns
// them: Realm's conversions, without Objective-C. Each type says what it takes in
// `_reefConvert` (a requirement of `_ReefValue`, with the defaults below).

/// Converts values of any type for a property, a list element or a map value.
enum DynamicValue {
  /// `value` without its optional wrappers (an `Int8?` given as `Any`); nil for nil and `NSNull`.
  static func unwrap(_ value: Any?) -> Any? {
    guard let value else { return nil }
    if let optional = value as? _ReefAnyOptional { return unwrap(optional._reefWrapped) }
    if value is NSNull { return nil }
    return value
  }

  /// `value` as a `V`: itself, or converted (see `_ReefValue._reefConvert`); nil when it does
  /// not fit.
  static func convert<V: _ReefValue>(_ value: Any?, to type: V.Type) -> V? {
    guard let value = unwrap(value) else { return V._reefNilValue }
    if let same = value as? V { return same }
    return V._reefConvert(value)
  }

  /// The elements of a value given for a collection: an array, or any other sequence (a
  /// `List`, a `MutableSet`, a Swift `Set`); nil for other values (a string is not taken
  /// apart).
  static func elements(of value: Any) -> [Any]? {
    if let array = value as? [Any] { return array }
    if value is String || value is [String: Any] { return nil }
    guard let sequence = value as? any Sequence else { return nil }
    return elementsOf(sequence)
  }

  private static func elementsOf<S: Sequence>(_ sequence: S) -> [Any] { sequence.map { $0 as Any } }

  /// The entries of a value given for a map: a dictionary (in key order), a `Map` (in its
  /// order) or an array of pairs; nil for other values.
  static func entries(of value: Any) -> [(String, Any)]? {
    if let dictionary = value as? [String: Any] {
      return dictionary.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
    if let map = value as? MapPairs { return map.anyPairs }
    if let pairs = value as? [(String, Any)] { return pairs }
    return nil
  }

  /// Whether an `NSNumber` holds a floating-point number.
  static func isFloatingPoint(_ number: NSNumber) -> Bool {
    let type = String(cString: number.objCType)
    return type == "f" || type == "d"
  }

  /// Whether an `NSNumber` holds a Bool (`NSNumber(value: true)`).
  static func isBool(_ number: NSNumber) -> Bool {
    let type = String(cString: number.objCType)
    return type == "c" || type == "B"
  }
}

/// An optional of any type, for ``DynamicValue/unwrap(_:)``.
protocol _ReefAnyOptional {
  var _reefWrapped: Any? { get }
}

extension Optional: _ReefAnyOptional {
  var _reefWrapped: Any? { map { $0 as Any } }
}

// MARK: Defaults

extension _ReefValue {
  /// By default a value fits only when it has this type.
  public static func _reefConvert(_ value: Any) -> Self? { nil }
  /// By default nil fits no value.
  public static var _reefNilValue: Self? { nil }
  public static func _reefNamesNoValue(_ value: Any) -> Bool { false }
  public static func _reefReadsAsNil(_ element: Document.Element, _ context: _ReadContext) -> Bool { false }
  /// By default the value itself.
  public var _reefDynamicValue: Any? { self }
}

// MARK: Optionals

extension Optional where Wrapped: _ReefOptionalWrappable {
  /// nil (or `NSNull`) is nil.
  public static var _reefNilValue: Self? { .some(.none) }

  /// The wrapped type's conversion; a value that names no value of it (an enum's raw value
  /// without a case) is nil, as Realm reads it.
  public static func _reefConvert(_ value: Any) -> Self? {
    if let wrapped = DynamicValue.convert(value, to: Wrapped.self) { return .some(.some(wrapped)) }
    if Wrapped._reefNamesNoValue(value) { return .some(.none) }
    return .none
  }

  /// The wrapped value's, or nil.
  public var _reefDynamicValue: Any? {
    switch self {
    case .some(let wrapped): wrapped._reefDynamicValue
    case .none: nil
    }
  }
}

// MARK: Numbers

extension _ReefInteger {
  /// An integer of any width (or an integer `NSNumber`) that this type holds exactly.
  public static func _reefConvert(_ value: Any) -> Self? {
    if value is Bool { return nil }
    if let integer = value as? any BinaryInteger { return Self(exactly: integer) }
    if let number = value as? NSNumber, !DynamicValue.isFloatingPoint(number), !DynamicValue.isBool(number) {
      return Self(exactly: number.int64Value)
    }
    return nil
  }
  /// As an `NSNumber`, which casts to every integer type that holds it (`as! Int` for an
  /// `Int8` property, as in Realm).
  public var _reefDynamicValue: Any? { NSNumber(value: Int64(self)) }
}

extension Double {
  /// Any number: an integer, a `Float`, an `NSNumber`.
  public static func _reefConvert(_ value: Any) -> Double? {
    if value is Bool { return nil }
    if let float = value as? Float { return Double(float) }
    if let integer = value as? any BinaryInteger { return Double(integer) }
    if let number = value as? NSNumber, !DynamicValue.isBool(number) { return number.doubleValue }
    return nil
  }
  /// As an `NSNumber`.
  public var _reefDynamicValue: Any? { NSNumber(value: self) }
}

extension Float {
  /// Any number, rounded to the nearest `Float`: a `Double` literal (`"ratio": 1.1`), an
  /// integer, an `NSNumber`.
  public static func _reefConvert(_ value: Any) -> Float? {
    if value is Bool { return nil }
    if let double = value as? Double { return Float(double) }
    if let integer = value as? any BinaryInteger { return Float(integer) }
    if let number = value as? NSNumber, !DynamicValue.isBool(number) { return number.floatValue }
    return nil
  }
  /// As an `NSNumber`.
  public var _reefDynamicValue: Any? { NSNumber(value: self) }
}

extension Decimal128 {
  /// A number or a string, as Realm's `Decimal128(value:)`: an integer, a `Float` or `Double`
  /// (by its shortest description: `3.3` is 3.3), a `Decimal`, a string (`"4.4"`, `"inf"`).
  public static func _reefConvert(_ value: Any) -> Decimal128? {
    switch value {
    case is Bool: return nil
    case let string as String: return Decimal128(string)
    case let integer as any BinaryInteger:
      return Int64(exactly: integer).map { Decimal128($0) } ?? Decimal128(String(describing: integer))
    case let double as Double: return Decimal128(String(describing: double))
    case let float as Float: return Decimal128(String(describing: float))
    case let decimal as Decimal: return Decimal128(decimal.description)
    case let number as NSNumber where !DynamicValue.isBool(number):
      return DynamicValue.isFloatingPoint(number)
        ? Decimal128(String(describing: number.doubleValue)) : Decimal128(number.int64Value)
    default: return nil
    }
  }
}

extension String {
  /// A substring.
  public static func _reefConvert(_ value: Any) -> String? {
    (value as? Substring).map(String.init)
  }
}

extension Data {
  /// An array of bytes.
  public static func _reefConvert(_ value: Any) -> Data? {
    (value as? [UInt8]).map { Data($0) }
  }
}

// MARK: Enums

extension PersistableEnum {
  /// The enum itself, or its raw value (converted as the raw type takes it).
  public static func _reefConvert(_ value: Any) -> Self? {
    DynamicValue.convert(value, to: RawValue.self).flatMap(Self.init(rawValue:))
  }
  /// A raw value without a case.
  public static func _reefNamesNoValue(_ value: Any) -> Bool {
    guard let raw = DynamicValue.convert(value, to: RawValue.self) else { return false }
    return Self(rawValue: raw) == nil
  }
  /// A stored raw value without a case.
  public static func _reefReadsAsNil(_ element: Document.Element, _ context: _ReadContext) -> Bool {
    guard let raw = RawValue._reefDecode(element, context) else { return false }
    return Self(rawValue: raw) == nil
  }
  /// The raw value, as Realm returns it.
  public var _reefDynamicValue: Any? { rawValue._reefDynamicValue }
}

// MARK: AnyReefValue

extension AnyReefValue {
  /// nil (or `NSNull`) is `.none`.
  public static var _reefNilValue: AnyReefValue? { AnyReefValue.none }

  /// A value of a type it can hold: a number, a Bool, a string, data, a date, an ObjectId, a
  /// Decimal128, a UUID, an object, an array (a list) or a dictionary of them.
  public static func _reefConvert(_ value: Any) -> AnyReefValue? {
    switch value {
    case let bool as Bool: return .bool(bool)
    case let string as String: return .string(string)
    case let float as Float: return .float(float)
    case let double as Double: return .double(double)
    case let integer as any BinaryInteger: return Int(exactly: integer).map(AnyReefValue.int)
    case let data as Data: return .data(data)
    case let date as Date: return .date(date)
    case let id as ObjectId: return .objectId(id)
    case let decimal as Decimal128: return .decimal128(decimal)
    case let uuid as UUID: return .uuid(uuid)
    case let object as Object: return .object(object)
    case let number as NSNumber:
      if DynamicValue.isBool(number) { return .bool(number.boolValue) }
      return DynamicValue.isFloatingPoint(number) ? .double(number.doubleValue) : .int(number.intValue)
    case let dictionary as [String: Any]:
      var values: [String: AnyReefValue] = [:]
      for (key, item) in dictionary {
        guard let converted = DynamicValue.convert(item, to: AnyReefValue.self) else { return nil }
        values[key] = converted
      }
      return .dictionary(values)
    default:
      guard let array = value as? [Any] else { return nil }
      var values: [AnyReefValue] = []
      for item in array {
        guard let converted = DynamicValue.convert(item, to: AnyReefValue.self) else { return nil }
        values.append(converted)
      }
      return .list(values)
    }
  }

  /// What it holds, as Realm returns it: numbers as `NSNumber`, nil for `.none`.
  public var _reefDynamicValue: Any? {
    switch self {
    case .none: nil
    case .int(let value): NSNumber(value: value)
    case .float(let value): NSNumber(value: value)
    case .double(let value): NSNumber(value: value)
    case .bool(let value): value
    case .string(let value): value
    case .data(let value): value
    case .date(let value): value
    case .objectId(let value): value
    case .decimal128(let value): value
    case .uuid(let value): value
    case .object(let value): value
    case .list(let values): values
    case .dictionary(let values): values
    }
  }
}

// MARK: ReefProperty

extension ReefProperty {
  /// nil fits when the value is optional.
  public static var _reefNilValue: ReefProperty? {
    guard let value = Value._reefNilValue else { return nil }
    return holding(value)
  }
  /// A value its `Value` takes.
  public static func _reefConvert(_ value: Any) -> ReefProperty? {
    guard let converted = DynamicValue.convert(value, to: Value.self) else { return nil }
    return holding(converted)
  }
  /// An unmanaged property holding `value`.
  private static func holding(_ value: Value) -> ReefProperty {
    let property = ReefProperty()
    property.value = value
    return property
  }
  /// Its value's.
  public var _reefDynamicValue: Any? { value._reefDynamicValue }
}

// MARK: Collections

extension List {
  /// nil (or `NSNull`) empties the list.
  public static var _reefNilValue: List? { List() }
  /// The elements of an array or another sequence (a `List`, a `MutableSet`), each converted.
  public static func _reefConvert(_ value: Any) -> List? {
    guard let items = DynamicValue.elements(of: value) else { return nil }
    var elements: [Element] = []
    for item in items {
      guard let element = DynamicValue.convert(item, to: Element.self) else { return nil }
      elements.append(element)
    }
    return List(elements)
  }
}

extension MutableSet {
  /// nil (or `NSNull`) empties the set.
  public static var _reefNilValue: MutableSet? { MutableSet() }
  /// The elements of an array or another sequence, each converted (duplicates once).
  public static func _reefConvert(_ value: Any) -> MutableSet? {
    guard let items = DynamicValue.elements(of: value) else { return nil }
    let set = MutableSet()
    for item in items {
      guard let element = DynamicValue.convert(item, to: Element.self) else { return nil }
      set.insert(element)
    }
    return set
  }
}

extension Map {
  /// nil (or `NSNull`) empties the map.
  public static var _reefNilValue: Map? { Map() }
  /// The entries of a dictionary (in key order), a `Map` (in its order) or an array of pairs,
  /// each value converted.
  public static func _reefConvert(_ value: Any) -> Map? {
    guard let entries = DynamicValue.entries(of: value) else { return nil }
    let map = Map()
    for (key, item) in entries {
      guard let converted = DynamicValue.convert(item, to: Value.self) else { return nil }
      map.storage.append((key, converted))
    }
    return map
  }
}

extension List {
  /// Copies the elements into the object's own list.
  public static func _reefAssignUnmanaged(_ value: List, to slot: UnsafeMutablePointer<List>) {
    if !slot.pointee.replaceContents(with: value) { slot.pointee = value }
  }
}

extension MutableSet {
  /// Copies the elements into the object's own set.
  public static func _reefAssignUnmanaged(_ value: MutableSet, to slot: UnsafeMutablePointer<MutableSet>) {
    if !slot.pointee.replaceContents(with: value) { slot.pointee = value }
  }
}

extension Map {
  /// Copies the entries into the object's own map.
  public static func _reefAssignUnmanaged(_ value: Map, to slot: UnsafeMutablePointer<Map>) {
    if !slot.pointee.replaceContents(with: value) { slot.pointee = value }
  }
}

extension ReefProperty {
  /// Copies the value into the object's own property.
  public static func _reefAssignUnmanaged(_ value: ReefProperty, to slot: UnsafeMutablePointer<ReefProperty>) {
    if !slot.pointee.replaceContents(with: value) { slot.pointee = value }
  }
}

/// An unmanaged collection accessor (or `ReefProperty`) whose contents can be replaced by
/// another's: dynamic access assigns into an unmanaged object's own accessor, as Realm does,
/// so that a `List` read before stays the object's list.
protocol ContentsReplaceable: AnyObject {
  /// Takes the contents of `other` (of the same type); false when it is not of the same type.
  func replaceContents(with other: Any) -> Bool
}

extension _CollectionAccessor: ContentsReplaceable {
  func replaceContents(with other: Any) -> Bool {
    guard let other = other as? _CollectionAccessor<Stored> else { return false }
    if other !== self { storage = other.storage }
    return true
  }
}

extension ReefProperty: ContentsReplaceable {
  func replaceContents(with other: Any) -> Bool {
    guard let other = other as? ReefProperty<Value> else { return false }
    if other !== self { value = other.value }
    return true
  }
}

// MARK: Messages

extension PropertyType {
  /// Realm's name of the type in descriptions and messages: `int`, `string`, `object id`…
  var realmName: String {
    switch self {
    case .objectId: "object id"
    case .any: "mixed"
    case .linkingObjects: "linking objects"
    default: rawValue
    }
  }
}

extension Property {
  /// Realm's name of the property's type in messages: `int`, `string?`, `object id`, the
  /// class of an object.
  var realmTypeName: String {
    let name: String
    switch type {
    case .object, .linkingObjects: name = objectClassName ?? "object"
    default: name = type.realmName
    }
    return isOptional ? name + "?" : name
  }

  /// Realm's message for a value that does not fit this property of `className`.
  func invalidValueMessage(_ value: Any?, className: String) -> String {
    if let refusal = codec.refusal(value) { return refusal }
    let kind = isArray ? " array" : isSet ? " set" : isMap ? " dictionary" : ""
    return
      "Invalid value '\(DynamicValue.describe(value))' of type '\(DynamicValue.typeName(value))' for '\(realmTypeName)'\(kind) property '\(className).\(name)'."
  }
}

extension DynamicValue {
  /// A value in a message, as Realm prints it (`<null>` for nil).
  static func describe(_ value: Any?) -> String {
    guard let value = unwrap(value) else { return "<null>" }
    return String(describing: value)
  }

  /// The type of a value in a message (`NSNull` for nil).
  static func typeName(_ value: Any?) -> String {
    guard let value = unwrap(value) else { return "NSNull" }
    return String(describing: Swift.type(of: value))
  }
}
