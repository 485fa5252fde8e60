/// The type byte of a BSON element, as defined by the BSON specification (bsonspec.org).
///
/// Deprecated types (undefined, DBPointer, symbol, code with scope) are included: Reef reads and
/// writes them losslessly so that old dumps survive a round trip.
public struct BSONType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
  /// The type byte as it appears in the encoded element.
  public let rawValue: UInt8

  /// Creates a type from its byte; any byte is accepted, ``isKnown`` says whether the spec defines it.
  @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

  @inlinable public static var double: BSONType { BSONType(rawValue: 0x01) }
  @inlinable public static var string: BSONType { BSONType(rawValue: 0x02) }
  @inlinable public static var document: BSONType { BSONType(rawValue: 0x03) }
  @inlinable public static var array: BSONType { BSONType(rawValue: 0x04) }
  @inlinable public static var binary: BSONType { BSONType(rawValue: 0x05) }
  /// Deprecated.
  @inlinable public static var undefined: BSONType { BSONType(rawValue: 0x06) }
  @inlinable public static var objectId: BSONType { BSONType(rawValue: 0x07) }
  @inlinable public static var bool: BSONType { BSONType(rawValue: 0x08) }
  @inlinable public static var datetime: BSONType { BSONType(rawValue: 0x09) }
  @inlinable public static var null: BSONType { BSONType(rawValue: 0x0A) }
  @inlinable public static var regex: BSONType { BSONType(rawValue: 0x0B) }
  /// Deprecated.
  @inlinable public static var dbPointer: BSONType { BSONType(rawValue: 0x0C) }
  @inlinable public static var javascript: BSONType { BSONType(rawValue: 0x0D) }
  /// Deprecated.
  @inlinable public static var symbol: BSONType { BSONType(rawValue: 0x0E) }
  /// Deprecated.
  @inlinable public static var javascriptWithScope: BSONType { BSONType(rawValue: 0x0F) }
  @inlinable public static var int32: BSONType { BSONType(rawValue: 0x10) }
  @inlinable public static var timestamp: BSONType { BSONType(rawValue: 0x11) }
  @inlinable public static var int64: BSONType { BSONType(rawValue: 0x12) }
  @inlinable public static var decimal128: BSONType { BSONType(rawValue: 0x13) }
  @inlinable public static var minKey: BSONType { BSONType(rawValue: 0xFF) }
  @inlinable public static var maxKey: BSONType { BSONType(rawValue: 0x7F) }

  /// Whether the BSON specification defines this type byte.
  public var isKnown: Bool {
    (rawValue >= 0x01 && rawValue <= 0x13) || rawValue == 0xFF || rawValue == 0x7F
  }

  /// The name MongoDB's `$type` operator uses for this type (`"double"`, `"objectId"`, …).
  public var name: String {
    switch rawValue {
    case 0x01: "double"
    case 0x02: "string"
    case 0x03: "object"
    case 0x04: "array"
    case 0x05: "binData"
    case 0x06: "undefined"
    case 0x07: "objectId"
    case 0x08: "bool"
    case 0x09: "date"
    case 0x0A: "null"
    case 0x0B: "regex"
    case 0x0C: "dbPointer"
    case 0x0D: "javascript"
    case 0x0E: "symbol"
    case 0x0F: "javascriptWithScope"
    case 0x10: "int"
    case 0x11: "timestamp"
    case 0x12: "long"
    case 0x13: "decimal"
    case 0xFF: "minKey"
    case 0x7F: "maxKey"
    default: "unknown(0x\(String(rawValue, radix: 16, uppercase: true)))"
    }
  }

  public var description: String { name }
}
