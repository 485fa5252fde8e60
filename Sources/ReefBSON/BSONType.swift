/// The type byte of a BSON element, as defined by the BSON specification (bsonspec.org).
///
/// Deprecated types (undefined, DBPointer, symbol, code with scope) are included: Reef reads and
/// writes them losslessly so that old dumps survive a round trip.
public struct BSONType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
  /// The type byte as it appears in the encoded element.
  public let rawValue: UInt8

  /// Creates a type from its byte; any byte is accepted, ``isKnown`` says whether the spec defines it.
  public init(rawValue: UInt8) { self.rawValue = rawValue }

  public static let double = BSONType(rawValue: 0x01)
  public static let string = BSONType(rawValue: 0x02)
  public static let document = BSONType(rawValue: 0x03)
  public static let array = BSONType(rawValue: 0x04)
  public static let binary = BSONType(rawValue: 0x05)
  /// Deprecated.
  public static let undefined = BSONType(rawValue: 0x06)
  public static let objectId = BSONType(rawValue: 0x07)
  public static let bool = BSONType(rawValue: 0x08)
  public static let datetime = BSONType(rawValue: 0x09)
  public static let null = BSONType(rawValue: 0x0A)
  public static let regex = BSONType(rawValue: 0x0B)
  /// Deprecated.
  public static let dbPointer = BSONType(rawValue: 0x0C)
  public static let javascript = BSONType(rawValue: 0x0D)
  /// Deprecated.
  public static let symbol = BSONType(rawValue: 0x0E)
  /// Deprecated.
  public static let javascriptWithScope = BSONType(rawValue: 0x0F)
  public static let int32 = BSONType(rawValue: 0x10)
  public static let timestamp = BSONType(rawValue: 0x11)
  public static let int64 = BSONType(rawValue: 0x12)
  public static let decimal128 = BSONType(rawValue: 0x13)
  public static let minKey = BSONType(rawValue: 0xFF)
  public static let maxKey = BSONType(rawValue: 0x7F)

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
