@_spi(ReefInternal) import ReefBSON

/// How a document is kept in its collection's database: an 8-byte checksum, then the BSON.
///
/// Documents are validated once, before they are written. The checksum (little-endian, over the
/// BSON bytes) lets every later read trust them after a check far cheaper than a second
/// validation: bytes damaged on disk or by another program fail the check and are
/// reported as ``StoreError/Kind/corrupt``, never read out of bounds (see `Specs/store/layout.md`).
enum StoredDocument {
  /// Bytes before the BSON.
  static let headerSize = 8

  /// The database value for `document`.
  static func encode(_ document: Document) -> [UInt8] {
    document.withUnsafeBytes { bson in
      [UInt8](unsafeUninitializedCapacity: headerSize + bson.count) { buffer, count in
        write(bson, to: UnsafeMutableRawBufferPointer(buffer))
        count = headerSize + bson.count
      }
    }
  }

  /// Writes the database value of the document `bson` (checksum, then the bytes) to `target`,
  /// which holds exactly `headerSize + bson.count` bytes.
  @inline(__always)
  static func write(_ bson: UnsafeRawBufferPointer, to target: UnsafeMutableRawBufferPointer) {
    precondition(target.count == headerSize + bson.count, "a stored document's value has the wrong size")
    target.storeBytes(of: checksum(bson).littleEndian, toByteOffset: 0, as: UInt64.self)
    // Safe: target holds headerSize + bson.count bytes (checked above).
    target.baseAddress!.advanced(by: headerSize).copyMemory(from: bson.baseAddress!, byteCount: bson.count)
  }

  /// The BSON of a database value whose checksum and length agree with its bytes, or nil.
  @inline(__always)
  static func verifiedBSON(_ value: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
    guard value.count >= headerSize + 5, let base = value.baseAddress else { return nil }
    let bson = UnsafeRawBufferPointer(start: base + headerSize, count: value.count - headerSize)
    let stored = UInt64(littleEndian: base.loadUnaligned(as: UInt64.self))
    let length = Int32(littleEndian: bson.baseAddress!.loadUnaligned(as: Int32.self))
    guard Int(length) == bson.count, stored == checksum(bson) else { return nil }
    return bson
  }

  /// Why a database value fails ``verifiedBSON(_:)``, for the error message.
  static func damage(_ value: UnsafeRawBufferPointer) -> String {
    guard value.count >= headerSize + 5 else {
      return "expected at least \(headerSize + 5) bytes (checksum and document), found \(value.count)"
    }
    let bson = UnsafeRawBufferPointer(rebasing: value[headerSize...])
    let length = Int(Int32(littleEndian: bson.baseAddress!.loadUnaligned(as: Int32.self)))
    guard length == bson.count else {
      return "the document's length prefix says \(length) bytes, the stored value holds \(bson.count)"
    }
    let stored = UInt64(littleEndian: value.baseAddress!.loadUnaligned(as: UInt64.self))
    let computed = checksum(bson)
    return "checksum mismatch: stored \(hex(stored)), computed \(hex(computed)) over \(bson.count) bytes"
  }

  static func hex(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return "0x" + String(repeating: "0", count: 16 - digits.count) + digits
  }

  /// A 64-bit checksum of `bytes` that detects damage (flipped bits, overwritten or torn ranges),
  /// not deliberate forgery.
  ///
  /// Four lanes each take every fourth 8-byte word: xor the word in, multiply by an odd constant,
  /// xor the product with itself shifted right by 29. For a fixed word each step is a bijection
  /// of the lane, so a lane whose words differ in exactly one place always ends different; the
  /// lanes and the length are then mixed into one value with a final avalanche. Words are read
  /// little-endian, so the value is the same on every machine.
  static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
    let count = bytes.count
    guard let base = bytes.baseAddress, count > 0 else { return finish(0x9E37_79B9_7F4A_7C15) }
    var a: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(count)
    var b: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    var c: UInt64 = 0x1656_67B1_9E37_79F9
    var d: UInt64 = 0x27D4_EB2F_1656_67C5
    @inline(__always) func word(_ offset: Int) -> UInt64 {
      UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
    var offset = 0
    while offset &+ 32 <= count {
      a = step(a, word(offset))
      b = step(b, word(offset &+ 8))
      c = step(c, word(offset &+ 16))
      d = step(d, word(offset &+ 24))
      offset &+= 32
    }
    while offset &+ 8 <= count {
      a = step(a, word(offset))
      offset &+= 8
    }
    let remaining = count &- offset
    if remaining > 0 {
      // The last 1–7 bytes, as the low bytes of a word with a marker bit above them.
      var last: UInt64
      if count >= 8 {
        last = word(count &- 8) >> UInt64(8 &* (8 &- remaining))
      } else {
        last = 0
        for index in 0..<remaining {
          last |= UInt64(base.load(fromByteOffset: offset &+ index, as: UInt8.self)) << UInt64(8 &* index)
        }
      }
      b = step(b, last | (1 << UInt64(8 &* remaining)))
    }
    var hash = a
    hash = step(hash, b)
    hash = step(hash, c)
    hash = step(hash, d)
    return finish(hash)
  }

  /// One lane step: a bijection of `lane` for a given `word`.
  @inline(__always)
  static func step(_ lane: UInt64, _ word: UInt64) -> UInt64 {
    let mixed = (lane ^ word) &* 0x9FB2_1C65_1E98_DF25
    return mixed ^ (mixed >> 29)
  }

  /// Spreads every input bit over the whole result.
  @inline(__always)
  static func finish(_ value: UInt64) -> UInt64 {
    var x = value
    x ^= x >> 31
    x &*= 0xBF58_476D_1CE4_E5B9
    x ^= x >> 27
    x &*= 0x94D0_49BB_1331_11EB
    x ^= x >> 33
    return x
  }
}

extension TransactionCollection {
  /// A stored document as a view of the map (valid until the transaction ends), after its
  /// checksum: damaged bytes are an error, never an out-of-bounds read.
  func storedDocument(_ value: UnsafeRawBufferPointer) throws(StoreError) -> Document {
    Document(trustedBytesNoCopy: try storedBSON(value), owner: nil)
  }

  /// The BSON bytes of a stored value, after its checksum.
  @inline(__always)
  func storedBSON(_ value: UnsafeRawBufferPointer) throws(StoreError) -> UnsafeRawBufferPointer {
    guard let bson = StoredDocument.verifiedBSON(value) else { throw damaged(value) }
    return bson
  }

  /// The error for a stored value that fails its checksum (the document's `_id`, when known,
  /// named in it).
  @inline(never)
  func damaged(_ value: UnsafeRawBufferPointer, id: BSON? = nil) -> StoreError {
    let document = id.map { "the stored document \($0.extendedJSON())" } ?? "a stored document"
    return StoreError(.corrupt, "\(document) of \(name) is damaged: \(StoredDocument.damage(value))")
  }
}
