#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

// The standard library's scalars, reached through the generic `encode<T>`/`decode<T>` paths
// (array elements, dictionary values, `RawRepresentable` enums' raw values go through the
// concrete overloads instead).

extension String: BSONEncodingPrimitive, BSONDecodingPrimitive {
  func bsonEncoding(_ options: EncodingOptions, at path: CodingPathRef) throws -> PrimitiveEncoding {
    .value(.string(self))
  }
  static func decodeBSON(_ value: BSONValueRef, in decoder: BSONDecoderImpl, at path: DecodingPath) throws -> String {
    try decoder.string(value, path)
  }
}

extension Bool: BSONEncodingPrimitive, BSONDecodingPrimitive {
  func bsonEncoding(_ options: EncodingOptions, at path: CodingPathRef) throws -> PrimitiveEncoding {
    .value(.bool(self))
  }
  static func decodeBSON(_ value: BSONValueRef, in decoder: BSONDecoderImpl, at path: DecodingPath) throws -> Bool {
    try decoder.bool(value, path)
  }
}

extension Double: BSONEncodingPrimitive, BSONDecodingPrimitive {
  func bsonEncoding(_ options: EncodingOptions, at path: CodingPathRef) throws -> PrimitiveEncoding {
    .value(.double(self))
  }
  static func decodeBSON(_ value: BSONValueRef, in decoder: BSONDecoderImpl, at path: DecodingPath) throws -> Double {
    try decoder.double(value, path)
  }
}

extension Float: BSONEncodingPrimitive, BSONDecodingPrimitive {
  func bsonEncoding(_ options: EncodingOptions, at path: CodingPathRef) throws -> PrimitiveEncoding {
    .value(.double(Double(self)))
  }
  static func decodeBSON(_ value: BSONValueRef, in decoder: BSONDecoderImpl, at path: DecodingPath) throws -> Float {
    try decoder.float(value, path)
  }
}

/// Integers: int32 for the types that always fit, int64 for the others (an error when the value
/// does not fit), whatever the value.
protocol BSONIntegerPrimitive: FixedWidthInteger, BSONEncodingPrimitive, BSONDecodingPrimitive {
  /// Whether every value fits in an int32 (so the type encodes as int32).
  static var encodesAsInt32: Bool { get }
}

extension BSONIntegerPrimitive {
  func bsonEncoding(_ options: EncodingOptions, at path: CodingPathRef) throws -> PrimitiveEncoding {
    if Self.encodesAsInt32 { return .value(.int32(Int32(truncatingIfNeeded: self))) }
    guard let v = Int64(exactly: self) else { throw integerOverflow(self, path.codingPath) }
    return .value(.int64(v))
  }

  static func decodeBSON(_ value: BSONValueRef, in decoder: BSONDecoderImpl, at path: DecodingPath) throws -> Self {
    try decoder.integer(Self.self, value, path)
  }
}

extension Int8: BSONIntegerPrimitive { static var encodesAsInt32: Bool { true } }
extension Int16: BSONIntegerPrimitive { static var encodesAsInt32: Bool { true } }
extension Int32: BSONIntegerPrimitive { static var encodesAsInt32: Bool { true } }
extension UInt8: BSONIntegerPrimitive { static var encodesAsInt32: Bool { true } }
extension UInt16: BSONIntegerPrimitive { static var encodesAsInt32: Bool { true } }
extension Int: BSONIntegerPrimitive { static var encodesAsInt32: Bool { false } }
extension Int64: BSONIntegerPrimitive { static var encodesAsInt32: Bool { false } }
extension UInt32: BSONIntegerPrimitive { static var encodesAsInt32: Bool { false } }
extension UInt: BSONIntegerPrimitive { static var encodesAsInt32: Bool { false } }
extension UInt64: BSONIntegerPrimitive { static var encodesAsInt32: Bool { false } }
extension Int128: BSONIntegerPrimitive { static var encodesAsInt32: Bool { false } }
extension UInt128: BSONIntegerPrimitive { static var encodesAsInt32: Bool { false } }

// MARK: - Date, UUID, Data

extension Date: BSONEncodingPrimitive, BSONDecodingPrimitive {
  /// Milliseconds since the Unix epoch, rounded to the nearest; an error beyond the int64 range.
  func bsonMilliseconds(_ path: CodingPathRef) throws -> Int64 {
    guard let ms = Int64(exactly: (timeIntervalSince1970 * 1000).rounded()) else {
      throw EncodingError.invalidValue(
        self,
        EncodingError.Context(
          codingPath: path.codingPath, debugDescription: "the date \(self) is outside the range of a BSON datetime"))
    }
    return ms
  }

  func bsonEncoding(_ options: EncodingOptions, at path: CodingPathRef) throws -> PrimitiveEncoding {
    switch options.date {
    case .bsonDateTime:
      return .value(.datetime(BSONDateTime(millisecondsSinceEpoch: try bsonMilliseconds(path))))
    case .millisecondsSince1970:
      return .value(.int64(try bsonMilliseconds(path)))
    case .secondsSince1970:
      return .value(.double(timeIntervalSince1970))
    case .iso8601:
      guard let text = ISO8601.format(milliseconds: try bsonMilliseconds(path)) else {
        throw EncodingError.invalidValue(
          self,
          EncodingError.Context(
            codingPath: path.codingPath, debugDescription: "the date \(self) is outside the ISO 8601 years 0…9999"))
      }
      return .value(.string(text))
    case .deferredToDate:
      return .deferred
    case .custom(let encode):
      return .custom { try encode(self, $0) }
    }
  }

  static func decodeBSON(_ value: BSONValueRef, in decoder: BSONDecoderImpl, at path: DecodingPath) throws -> Date {
    switch decoder.options.date {
    case .bsonDateTime:
      guard value.type == BSONType.datetime.rawValue else { throw decoder.mismatch(Date.self, "datetime", value, path) }
      return Date(timeIntervalSince1970: Double(decoder.pointer(value).int64LE(0)) / 1000)
    case .millisecondsSince1970:
      return Date(timeIntervalSince1970: try decoder.number(value, Date.self, path) / 1000)
    case .secondsSince1970:
      return Date(timeIntervalSince1970: try decoder.number(value, Date.self, path))
    case .iso8601:
      let text: String
      do {
        text = try decoder.string(value, path)
      } catch {
        throw decoder.mismatch(Date.self, "string (ISO 8601)", value, path)
      }
      guard let ms = ISO8601.parse(text) else {
        throw decoder.corrupted("Expected an ISO 8601 date string, found \(String(reflecting: text))", path)
      }
      return Date(timeIntervalSince1970: Double(ms) / 1000)
    case .deferredToDate:
      return try decoder.descend(value, parent: path.parent, component: path.component) { try Date(from: $0) }
    case .custom(let decode):
      return try decoder.descend(value, parent: path.parent, component: path.component) { try decode($0) }
    }
  }
}

extension UUID: BSONEncodingPrimitive, BSONDecodingPrimitive {
  func bsonEncoding(_ options: EncodingOptions, at path: CodingPathRef) throws -> PrimitiveEncoding {
    switch options.uuid {
    case .binary: .value(.binary(Binary(uuid: uuid)))
    case .string: .value(.string(uuidString))
    case .deferredToUUID: .deferred
    }
  }

  static func decodeBSON(_ value: BSONValueRef, in decoder: BSONDecoderImpl, at path: DecodingPath) throws -> UUID {
    switch decoder.options.uuid {
    case .binary:
      guard value.type == BSONType.binary.rawValue else {
        throw decoder.mismatch(UUID.self, "binary (subtype 4)", value, path)
      }
      let p = decoder.pointer(value)
      let subtype = p.byte(4)
      let count = Int(p.int32LE(0))
      guard subtype == Binary.Subtype.uuid.rawValue, count == 16 else {
        throw decoder.corrupted(
          "Expected a BSON binary of subtype 4 (UUID) and 16 bytes, found subtype \(subtype) and \(count) bytes", path)
      }
      // Safe: the binary holds 16 bytes after its 5-byte header.
      return UUID(uuid: (p + 5).loadUnaligned(as: UUIDBytes.self))
    case .string:
      let text = try decoder.string(value, path)
      guard let uuid = UUID(uuidString: text) else {
        throw decoder.corrupted("Expected a UUID string, found \(String(reflecting: text))", path)
      }
      return uuid
    case .deferredToUUID:
      return try decoder.descend(value, parent: path.parent, component: path.component) { try UUID(from: $0) }
    }
  }
}

extension Data: BSONEncodingPrimitive, BSONDecodingPrimitive {
  func bsonEncoding(_ options: EncodingOptions, at path: CodingPathRef) throws -> PrimitiveEncoding {
    switch options.data {
    case .binary: .value(.binary(Binary(subtype: .generic, data: [UInt8](self))))
    case .base64: .value(.string(base64EncodedString()))
    case .deferredToData: .deferred
    }
  }

  static func decodeBSON(_ value: BSONValueRef, in decoder: BSONDecoderImpl, at path: DecodingPath) throws -> Data {
    switch decoder.options.data {
    case .binary:
      guard case .binary(let binary) = decoder.bson(value) else {
        throw decoder.mismatch(Data.self, "binary", value, path)
      }
      return Data(binary.data)
    case .base64:
      let text = try decoder.string(value, path)
      guard let data = Data(base64Encoded: text) else {
        throw decoder.corrupted("Expected a Base64 string, found \(String(reflecting: text))", path)
      }
      return data
    case .deferredToData:
      return try decoder.descend(value, parent: path.parent, component: path.component) { try Data(from: $0) }
    }
  }
}
