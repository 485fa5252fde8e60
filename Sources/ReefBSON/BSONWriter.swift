/// Appends BSON encodings to a growable byte buffer. Internal building block of the builders,
/// the Extended JSON parser and the Codable encoder.
struct BSONWriter {
  var bytes: [UInt8]

  init(capacity: Int = 64) {
    bytes = []
    bytes.reserveCapacity(capacity)
  }

  @inline(__always) mutating func byte(_ b: UInt8) { bytes.append(b) }

  @inline(__always) mutating func int32(_ v: Int32) {
    withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
  }

  @inline(__always) mutating func int64(_ v: Int64) {
    withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
  }

  @inline(__always) mutating func uint64(_ v: UInt64) {
    withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
  }

  /// Writes a key or regex C string. Precondition: no zero byte inside.
  @inline(__always) mutating func cString(_ s: String) {
    var s = s
    let hasZero = s.withUTF8 { u in
      bytes.append(contentsOf: u)
      return u.contains(0)
    }
    precondition(!hasZero, "BSON keys and regular expressions cannot contain a zero byte: \(String(reflecting: s))")
    bytes.append(0)
  }

  /// Writes an int32 length, the UTF-8 bytes and a zero.
  @inline(__always) mutating func string(_ s: String) {
    var s = s
    s.withUTF8 { u in
      int32(Int32(u.count + 1))
      bytes.append(contentsOf: u)
    }
    bytes.append(0)
  }

  /// Writes a type byte and a key.
  @inline(__always) mutating func header(_ type: BSONType, _ key: String) {
    bytes.append(type.rawValue)
    cString(key)
  }

  /// Reserves an int32 length and returns where it is.
  @inline(__always) mutating func beginDocument() -> Int {
    let at = bytes.count
    int32(0)
    return at
  }

  /// Writes the terminator and patches the length reserved at `start`.
  @inline(__always) mutating func endDocument(_ start: Int) {
    bytes.append(0)
    let length = Int32(bytes.count - start)
    withUnsafeBytes(of: length.littleEndian) { raw in
      for i in 0..<4 { bytes[start + i] = raw[i] }
    }
  }

  /// Writes the value part of an element (no type byte, no key).
  mutating func value(_ value: BSON) {
    switch value {
    case .double(let d): uint64(d.bitPattern)
    case .string(let s), .javascript(let s), .symbol(let s): string(s)
    case .document(let d): d.withUnsafeBytes { bytes.append(contentsOf: $0) }
    case .array(let a): a.document.withUnsafeBytes { bytes.append(contentsOf: $0) }
    case .binary(let b):
      if b.subtype == .binaryOld {
        int32(Int32(b.data.count + 4))
        byte(b.subtype.rawValue)
        int32(Int32(b.data.count))
      } else {
        int32(Int32(b.data.count))
        byte(b.subtype.rawValue)
      }
      bytes.append(contentsOf: b.data)
    case .undefined, .null, .minKey, .maxKey: break
    case .objectId(let o): withUnsafeBytes(of: o.bytes) { bytes.append(contentsOf: $0) }
    case .bool(let b): byte(b ? 1 : 0)
    case .datetime(let d): int64(d.millisecondsSinceEpoch)
    case .regex(let r):
      cString(r.pattern)
      cString(r.options)
    case .dbPointer(let p):
      string(p.ref)
      withUnsafeBytes(of: p.id.bytes) { bytes.append(contentsOf: $0) }
    case .javascriptWithScope(let c):
      let start = bytes.count
      int32(0)
      string(c.code)
      c.scope.withUnsafeBytes { bytes.append(contentsOf: $0) }
      let length = Int32(bytes.count - start)
      withUnsafeBytes(of: length.littleEndian) { raw in
        for i in 0..<4 { bytes[start + i] = raw[i] }
      }
    case .int32(let i): int32(i)
    case .timestamp(let t): uint64(UInt64(t.timestamp) << 32 | UInt64(t.increment))
    case .int64(let i): int64(i)
    case .decimal128(let d):
      uint64(d.low)
      uint64(d.high)
    }
  }

  /// Writes a whole element.
  mutating func element(_ key: String, _ value: BSON) {
    header(value.type, key)
    self.value(value)
  }
}
