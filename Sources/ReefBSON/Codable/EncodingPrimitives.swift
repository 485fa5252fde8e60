/// What a primitive or native BSON value encodes as.
enum PrimitiveEncoding {
  /// This BSON value.
  case value(BSON)
  /// Whatever the type's own `encode(to:)` writes.
  case deferred
  /// Whatever the closure writes through the encoder (a `.custom` strategy).
  case custom((any Encoder) throws -> Void)
}

/// A type that the encoder writes itself instead of calling `encode(to:)`: the standard library's
/// scalars, `Date`/`UUID`/`Data` (through their strategies) and Reef's BSON types.
protocol BSONEncodingPrimitive {
  /// The value to write, given the encoder's options; `path` is the value's coding path, for errors.
  func bsonEncoding(_ options: EncodingOptions, at path: CodingPathRef) throws -> PrimitiveEncoding
}

extension BSONEncodingPrimitive {
  /// ``bsonEncoding(_:at:)`` of `value`, whose type `T` is `Self` (looked up through the kind cache).
  @inline(__always)
  static func bsonEncoding<T>(of value: T, _ options: EncodingOptions, at path: CodingPathRef) throws
    -> PrimitiveEncoding
  {
    // `T` is `Self` (the kind was looked up for `T`), so this cast is a plain copy.
    try unsafeBitCast(value, to: Self.self).bsonEncoding(options, at: path)
  }
}

/// The value of an element that ``BSONWriter/appendScalarElement(_:_:_:)`` writes in one go.
enum ScalarValue {
  /// No value bytes (null).
  case none
  case byte(UInt8)
  case int32(Int32)
  case int64(Int64)
  /// Eight bytes: a double's bit pattern, a timestamp.
  case bits(UInt64)
  case string(String)

  /// The scalar form of the common BSON values, `nil` for the others.
  @inline(__always)
  init?(_ value: BSON) {
    switch value {
    case .double(let d): self = .bits(d.bitPattern)
    case .string(let s): self = .string(s)
    case .bool(let b): self = .byte(b ? 1 : 0)
    case .null: self = .none
    case .int32(let i): self = .int32(i)
    case .int64(let i): self = .int64(i)
    case .datetime(let d): self = .int64(d.millisecondsSinceEpoch)
    default: return nil
    }
  }
}

extension BSONWriter {
  /// Appends a whole element (type byte, key, scalar value) with one reservation. Returns
  /// `false`, writing nothing, when the key contains a zero byte.
  @inline(__always)
  mutating func appendScalarElement(_ type: UInt8, _ key: String, _ value: ScalarValue) -> Bool {
    withUTF8Bytes(of: key) { k -> Bool in
      let n = k.count
      switch value {
      case .string(let text):
        return withUTF8Bytes(of: text) { u in
          // Safe: the reservation covers the header (n + 2), the length (4), the bytes and the zero.
          let total = n &+ 7 &+ u.count
          let p = reserve(total)
          guard Self.storeHeader(p, type, k) else { return false }
          let v = p + (n &+ 2)
          v.storeBytes(of: Int32(truncatingIfNeeded: u.count &+ 1).littleEndian, as: Int32.self)
          if u.count > 0 { (v + 4).copyMemory(from: u.baseAddress!, byteCount: u.count) }
          v.storeBytes(of: 0, toByteOffset: 4 &+ u.count, as: UInt8.self)
          advance(total)
          return true
        }
      case .none:
        guard Self.storeHeader(reserve(n &+ 2), type, k) else { return false }
        advance(n &+ 2)
      case .byte(let b):
        let p = reserve(n &+ 3)
        guard Self.storeHeader(p, type, k) else { return false }
        p.storeBytes(of: b, toByteOffset: n &+ 2, as: UInt8.self)
        advance(n &+ 3)
      case .int32(let i):
        let p = reserve(n &+ 6)
        guard Self.storeHeader(p, type, k) else { return false }
        p.storeBytes(of: i.littleEndian, toByteOffset: n &+ 2, as: Int32.self)
        advance(n &+ 6)
      case .int64(let i):
        let p = reserve(n &+ 10)
        guard Self.storeHeader(p, type, k) else { return false }
        p.storeBytes(of: i.littleEndian, toByteOffset: n &+ 2, as: Int64.self)
        advance(n &+ 10)
      case .bits(let bits):
        let p = reserve(n &+ 10)
        guard Self.storeHeader(p, type, k) else { return false }
        p.storeBytes(of: bits.littleEndian, toByteOffset: n &+ 2, as: UInt64.self)
        advance(n &+ 10)
      }
      return true
    }
  }

  /// Stores a type byte, `key` and its terminator at `p` (which has room for them). Returns
  /// `false` when the key contains a zero byte (the caller then does not advance past them).
  @inline(__always)
  private static func storeHeader(_ p: UnsafeMutableRawPointer, _ type: UInt8, _ key: UnsafeBufferPointer<UInt8>)
    -> Bool
  {
    p.storeBytes(of: type, as: UInt8.self)
    // Safe: the caller reserved room for the type byte, the key and its terminator.
    guard copyNonZeroBytes(to: p + 1, from: UnsafeRawBufferPointer(key)) else { return false }
    p.storeBytes(of: 0, toByteOffset: key.count &+ 1, as: UInt8.self)
    return true
  }

  /// Appends `key` and its terminator. Returns `false` (with the bytes appended) when the key
  /// contains a zero byte, which BSON cannot store in a key.
  @inline(__always)
  mutating func appendKey(_ key: String) -> Bool {
    withUTF8Bytes(of: key) { u -> Bool in
      let n = u.count
      let p = reserve(n &+ 1)
      // Safe: n + 1 bytes were reserved.
      let clean = copyNonZeroBytes(to: p, from: UnsafeRawBufferPointer(u))
      p.storeBytes(of: 0, toByteOffset: n, as: UInt8.self)
      advance(n &+ 1)
      return clean
    }
  }

  /// Appends the 5-byte empty document.
  @inline(__always)
  mutating func emptyDocument() {
    int32(5)
    byte(0)
  }
}

extension BSONType {
  /// The name used in Codable error messages (`int32`, `document`, …).
  var codableName: String {
    switch rawValue {
    case 0x01: "double"
    case 0x02: "string"
    case 0x03: "document"
    case 0x04: "array"
    case 0x05: "binary"
    case 0x06: "undefined"
    case 0x07: "objectId"
    case 0x08: "bool"
    case 0x09: "datetime"
    case 0x0A: "null"
    case 0x0B: "regex"
    case 0x0C: "dbPointer"
    case 0x0D: "javascript"
    case 0x0E: "symbol"
    case 0x0F: "javascriptWithScope"
    case 0x10: "int32"
    case 0x11: "timestamp"
    case 0x12: "int64"
    case 0x13: "decimal128"
    case 0xFF: "minKey"
    case 0x7F: "maxKey"
    default: name
    }
  }
}
