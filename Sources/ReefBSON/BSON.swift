#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A BSON value of any type.
///
/// Every BSON element type is a case, the deprecated ones included, and each holds its value
/// losslessly: doubles keep their exact bits (NaN payloads, -0.0), datetimes are int64
/// milliseconds, Decimal128 keeps its 16 bytes, and documents and arrays are byte views.
///
/// Equality is exact: `.double` compares bit patterns (so `-0.0 != 0.0` and NaN equals the same
/// NaN) and values of different types are never equal. For MongoDB's numeric comparison across
/// types, use the query module.
public enum BSON: Sendable {
  case double(Double)
  case string(String)
  case document(Document)
  case array(BSONArray)
  case binary(Binary)
  /// Deprecated.
  case undefined
  case objectId(ObjectId)
  case bool(Bool)
  case datetime(BSONDateTime)
  case null
  case regex(BSONRegularExpression)
  /// Deprecated.
  case dbPointer(DBPointer)
  case javascript(String)
  /// Deprecated.
  case symbol(String)
  /// Deprecated.
  case javascriptWithScope(JavaScriptWithScope)
  case int32(Int32)
  case timestamp(BSONTimestamp)
  case int64(Int64)
  case decimal128(Decimal128)
  case minKey
  case maxKey

  /// The BSON type of this value.
  public var type: BSONType {
    switch self {
    case .double: .double
    case .string: .string
    case .document: .document
    case .array: .array
    case .binary: .binary
    case .undefined: .undefined
    case .objectId: .objectId
    case .bool: .bool
    case .datetime: .datetime
    case .null: .null
    case .regex: .regex
    case .dbPointer: .dbPointer
    case .javascript: .javascript
    case .symbol: .symbol
    case .javascriptWithScope: .javascriptWithScope
    case .int32: .int32
    case .timestamp: .timestamp
    case .int64: .int64
    case .decimal128: .decimal128
    case .minKey: .minKey
    case .maxKey: .maxKey
    }
  }
}

extension BSON: Hashable {
  public static func == (a: BSON, b: BSON) -> Bool {
    switch (a, b) {
    case (.double(let x), .double(let y)): x.bitPattern == y.bitPattern
    case (.string(let x), .string(let y)): x == y
    case (.document(let x), .document(let y)): x == y
    case (.array(let x), .array(let y)): x == y
    case (.binary(let x), .binary(let y)): x == y
    case (.undefined, .undefined), (.null, .null), (.minKey, .minKey), (.maxKey, .maxKey): true
    case (.objectId(let x), .objectId(let y)): x == y
    case (.bool(let x), .bool(let y)): x == y
    case (.datetime(let x), .datetime(let y)): x == y
    case (.regex(let x), .regex(let y)): x == y
    case (.dbPointer(let x), .dbPointer(let y)): x == y
    case (.javascript(let x), .javascript(let y)): x == y
    case (.symbol(let x), .symbol(let y)): x == y
    case (.javascriptWithScope(let x), .javascriptWithScope(let y)): x == y
    case (.int32(let x), .int32(let y)): x == y
    case (.timestamp(let x), .timestamp(let y)): x == y
    case (.int64(let x), .int64(let y)): x == y
    // By the bits, as doubles: `1.0` and `1.00` are two BSON values (Decimal128's own `==`
    // compares numbers).
    case (.decimal128(let x), .decimal128(let y)): x.high == y.high && x.low == y.low
    default: false
    }
  }

  public func hash(into hasher: inout Hasher) {
    hasher.combine(type.rawValue)
    switch self {
    case .double(let x): hasher.combine(x.bitPattern)
    case .string(let x), .javascript(let x), .symbol(let x): hasher.combine(x)
    case .document(let x): hasher.combine(x)
    case .array(let x): hasher.combine(x)
    case .binary(let x): hasher.combine(x)
    case .undefined, .null, .minKey, .maxKey: break
    case .objectId(let x): hasher.combine(x)
    case .bool(let x): hasher.combine(x)
    case .datetime(let x): hasher.combine(x)
    case .regex(let x): hasher.combine(x)
    case .dbPointer(let x): hasher.combine(x)
    case .javascriptWithScope(let x): hasher.combine(x)
    case .int32(let x): hasher.combine(x)
    case .timestamp(let x): hasher.combine(x)
    case .int64(let x): hasher.combine(x)
    case .decimal128(let x):
      hasher.combine(x.high)
      hasher.combine(x.low)
    }
  }
}

extension BSON {
  /// The number of value bytes of an element of `type` whose value starts at `p`, in a document
  /// that has already been validated: ``valueLength(type:at:)`` for Reef's other modules.
  ///
  /// The lengths inside the bytes are trusted, so `p` must point at a value inside a validated
  /// document; a type byte that is not a BSON type gives 0.
  @_spi(ReefInternal)
  @inlinable @inline(__always)
  public static func trustedValueLength(type: UInt8, at p: UnsafeRawPointer) -> Int {
    valueLength(type: type, at: p)
  }

  /// The number of value bytes of an element of `type` whose value starts at `p`, in a document
  /// that has already been validated: the one table of BSON value lengths.
  @inlinable @inline(__always)
  static func valueLength(type: UInt8, at p: UnsafeRawPointer) -> Int {
    switch type {
    case 0x01, 0x09, 0x11, 0x12: return 8
    case 0x02, 0x0D, 0x0E: return 4 &+ Int(p.int32LE(0))
    case 0x03, 0x04, 0x0F: return Int(p.int32LE(0))
    case 0x05: return 5 &+ Int(p.int32LE(0))
    case 0x06, 0x0A, 0xFF, 0x7F: return 0
    case 0x07: return 12
    case 0x08: return 1
    case 0x0B:
      let a = strlen(p.assumingMemoryBound(to: CChar.self)) &+ 1
      return a &+ strlen(p.advanced(by: a).assumingMemoryBound(to: CChar.self)) &+ 1
    case 0x0C: return 4 &+ Int(p.int32LE(0)) &+ 12
    case 0x10: return 4
    case 0x13: return 16
    default: return 0
    }
  }

  /// Decodes a value from validated bytes.
  static func read(type: BSONType, storage: DocumentStorage, offset: Int, length: Int) -> BSON {
    let p = storage.base + offset
    func string(at p: UnsafeRawPointer) -> String {
      let n = Int(p.int32LE(0)) - 1
      return String(decoding: UnsafeRawBufferPointer(start: p + 4, count: n), as: UTF8.self)
    }
    func cString(at p: UnsafeRawPointer) -> (String, Int) {
      let n = strlen(p.assumingMemoryBound(to: CChar.self))
      return (String(decoding: UnsafeRawBufferPointer(start: p, count: n), as: UTF8.self), n + 1)
    }
    switch type.rawValue {
    case 0x01: return .double(Double(bitPattern: p.uint64LE(0)))
    case 0x02: return .string(string(at: p))
    case 0x03: return .document(Document(storage: storage, start: offset, length: length))
    case 0x04: return .array(BSONArray(Document(storage: storage, start: offset, length: length)))
    case 0x05:
      let n = Int(p.int32LE(0))
      let subtype = Binary.Subtype(rawValue: p.byte(4))
      if subtype == .binaryOld && n >= 4 {
        let inner = Int(p.int32LE(5))
        return .binary(Binary(subtype: subtype, data: Array(UnsafeRawBufferPointer(start: p + 9, count: inner))))
      }
      return .binary(Binary(subtype: subtype, data: Array(UnsafeRawBufferPointer(start: p + 5, count: n))))
    case 0x06: return .undefined
    case 0x07: return .objectId(ObjectId(reading: p))
    case 0x08: return .bool(p.byte(0) != 0)
    case 0x09: return .datetime(BSONDateTime(millisecondsSinceEpoch: p.int64LE(0)))
    case 0x0A: return .null
    case 0x0B:
      let (pattern, n) = cString(at: p)
      let (options, _) = cString(at: p + n)
      var regex = BSONRegularExpression(pattern: pattern)
      regex.options = options  // keep the stored order exactly
      return .regex(regex)
    case 0x0C:
      let n = Int(p.int32LE(0))
      return .dbPointer(DBPointer(ref: string(at: p), id: ObjectId(reading: p + 4 + n)))
    case 0x0D: return .javascript(string(at: p))
    case 0x0E: return .symbol(string(at: p))
    case 0x0F:
      let codeLength = Int(p.int32LE(4))
      let scopeOffset = offset + 8 + codeLength
      let scope = Document(storage: storage, start: scopeOffset, length: Int(storage.base.int32LE(scopeOffset)))
      return .javascriptWithScope(JavaScriptWithScope(code: string(at: p + 4), scope: scope))
    case 0x10: return .int32(p.int32LE(0))
    case 0x11:
      let v = p.uint64LE(0)
      return .timestamp(
        BSONTimestamp(timestamp: UInt32(truncatingIfNeeded: v >> 32), increment: UInt32(truncatingIfNeeded: v)))
    case 0x12: return .int64(p.int64LE(0))
    case 0x13: return .decimal128(Decimal128(reading: p))
    case 0xFF: return .minKey
    case 0x7F: return .maxKey
    default: return .undefined  // unreachable for validated documents
    }
  }
}
