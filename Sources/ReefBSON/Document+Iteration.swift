#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension Document: Sequence {
  /// One element of a document: its key, type and value, read lazily from the document's bytes.
  ///
  /// Iterating a document creates no strings and allocates nothing; ``key`` and ``value`` decode
  /// on demand, and the typed accessors (``int32``, ``double``, ``hasStringValue(_:)``, …) read
  /// scalars straight from the bytes.
  public struct Element: Sendable {
    @usableFromInline let storage: DocumentStorage
    /// Offset of the key's first byte in `storage`.
    @usableFromInline let keyOffset: Int
    @usableFromInline let keyLength: Int
    /// The element's type.
    public let type: BSONType
    /// Offset of the value's first byte in `storage`.
    @usableFromInline let valueOffset: Int
    @usableFromInline let valueLength: Int

    @inlinable @inline(__always)
    init(storage: DocumentStorage, keyOffset: Int, keyLength: Int, type: BSONType, valueOffset: Int, valueLength: Int) {
      self.storage = storage
      self.keyOffset = keyOffset
      self.keyLength = keyLength
      self.type = type
      self.valueOffset = valueOffset
      self.valueLength = valueLength
    }

    /// The key, decoded from UTF-8.
    public var key: String {
      String(decoding: UnsafeRawBufferPointer(start: storage.base + keyOffset, count: keyLength), as: UTF8.self)
    }

    /// The value.
    public var value: BSON { BSON.read(type: type, storage: storage, offset: valueOffset, length: valueLength) }

    /// Whether the key equals `key`, compared as UTF-8 bytes without creating a string.
    public func hasKey(_ key: String) -> Bool {
      withUTF8Bytes(of: key) { k in
        k.count == keyLength && (keyLength == 0 || memcmp(storage.base + keyOffset, k.baseAddress!, keyLength) == 0)
      }
    }

    /// Calls `body` with the key's UTF-8 bytes (no terminator); the pointer must not escape.
    public func withUnsafeKeyBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
      try body(UnsafeRawBufferPointer(start: storage.base + keyOffset, count: keyLength))
    }

    /// Calls `body` with the value's bytes; the pointer must not escape.
    public func withUnsafeValueBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
      try body(UnsafeRawBufferPointer(start: storage.base + valueOffset, count: valueLength))
    }

    /// The value's offset from the start of the storage it lives in.
    public var byteOffset: Int { valueOffset }

    /// The value when it is an int32, read in place.
    @inlinable public var int32: Int32? { type == .int32 ? storage.base.int32LE(valueOffset) : nil }
    /// The value when it is an int64, read in place.
    @inlinable public var int64: Int64? { type == .int64 ? storage.base.int64LE(valueOffset) : nil }
    /// The value when it is a double, read in place.
    @inlinable public var double: Double? {
      type == .double ? Double(bitPattern: storage.base.uint64LE(valueOffset)) : nil
    }
    /// The value when it is a boolean, read in place.
    @inlinable public var bool: Bool? { type == .bool ? storage.base.byte(valueOffset) != 0 : nil }
    /// The value when it is a datetime, read in place.
    @inlinable public var datetime: BSONDateTime? {
      type == .datetime ? BSONDateTime(millisecondsSinceEpoch: storage.base.int64LE(valueOffset)) : nil
    }
    /// The value when it is an ObjectId, read in place.
    public var objectId: ObjectId? { type == .objectId ? ObjectId(reading: storage.base + valueOffset) : nil }
    /// The embedded document or array as a view on the same bytes (arrays have keys "0", "1", …).
    @inlinable public var document: Document? {
      type == .document || type == .array ? Document(storage: storage, start: valueOffset, length: valueLength) : nil
    }

    /// Whether the value is a string equal to `string`, compared as UTF-8 bytes without decoding.
    public func hasStringValue(_ string: String) -> Bool {
      guard type == .string else { return false }
      let n = valueLength - 5  // Safe: a validated string value has a 4-byte length and a terminator.
      return withUTF8Bytes(of: string) { s in
        s.count == n && (n == 0 || memcmp(storage.base + valueOffset + 4, s.baseAddress!, n) == 0)
      }
    }

    /// Whether the value equals `value`, exactly as `element.value == value` would say, but
    /// compared in place: no string is created and no document, array or ObjectId is decoded.
    ///
    /// The equality is ``BSON``'s: types must match (`.int32(1)` does not equal `.int64(1)`),
    /// doubles compare bit patterns, documents and arrays compare bytes, and strings compare as
    /// Swift strings (byte-equal strings are equal at once; other non-ASCII strings are decoded
    /// so that canonically equivalent strings still compare equal).
    ///
    /// ```swift
    /// doc.element(atPath: "address.city")?.equals("London") == true
    /// ```
    /// - Complexity: O(n) in the size of the value.
    public func equals(_ value: BSON) -> Bool {
      guard type == value.type else { return false }
      let p = storage.base + valueOffset
      switch value {
      case .int32(let v): return p.int32LE(0) == v
      case .int64(let v): return p.int64LE(0) == v
      case .double(let v): return p.uint64LE(0) == v.bitPattern
      case .bool(let v): return (p.byte(0) != 0) == v
      case .datetime(let v): return p.int64LE(0) == v.millisecondsSinceEpoch
      case .timestamp(let v): return p.uint64LE(0) == UInt64(v.timestamp) << 32 | UInt64(v.increment)
      case .decimal128(let v): return p.uint64LE(0) == v.low && p.uint64LE(8) == v.high
      case .objectId(let v): return Swift.withUnsafeBytes(of: v.bytes) { memcmp(p, $0.baseAddress!, 12) == 0 }
      case .string(let v), .javascript(let v), .symbol(let v): return stringValueEquals(v)
      case .document(let d): return d.length == valueLength && memcmp(p, d.base, valueLength) == 0
      case .array(let a): return a.document.length == valueLength && memcmp(p, a.document.base, valueLength) == 0
      case .null, .undefined, .minKey, .maxKey: return true
      case .binary, .regex, .dbPointer, .javascriptWithScope: return self.value == value
      }
    }

    /// Whether this string-like value (string, JavaScript, symbol) equals `string` as Swift strings.
    private func stringValueEquals(_ string: String) -> Bool {
      // Safe: a validated string value has a 4-byte length, the bytes and a terminator.
      let stored = UnsafeRawBufferPointer(start: storage.base + valueOffset + 4, count: valueLength - 5)
      let sameBytes = withUTF8Bytes(of: string) { s in
        s.count == stored.count && (s.isEmpty || memcmp(stored.baseAddress!, s.baseAddress!, s.count) == 0)
      }
      if sameBytes { return true }
      // Different bytes can still be canonically equivalent strings, unless both are ASCII.
      if string.utf8.allSatisfy({ $0 < 0x80 }) && stored.allSatisfy({ $0 < 0x80 }) { return false }
      return String(decoding: stored, as: UTF8.self) == string
    }
  }

  /// Walks the elements in order.
  public struct Iterator: IteratorProtocol {
    @usableFromInline let storage: DocumentStorage
    @usableFromInline let base: UnsafeRawPointer
    /// Offset in `storage` of the next element's type byte.
    @usableFromInline var position: Int
    /// Offset in `storage` of the document's terminating zero.
    @usableFromInline let end: Int

    @inlinable
    init(storage: DocumentStorage, position: Int, end: Int) {
      self.storage = storage
      self.base = storage.base
      self.position = position
      self.end = end
    }

    /// Advances and returns the raw position of the next element, or `nil` at the end.
    @inlinable @inline(__always)
    mutating func nextPosition() -> (type: UInt8, key: Int, keyLength: Int, value: Int, valueLength: Int)? {
      guard position < end else { return nil }
      let type = base.byte(position)
      let key = position &+ 1
      // Safe: validated documents have a zero byte terminating every key before `end`.
      var keyEnd = key
      while base.byte(keyEnd) != 0 { keyEnd &+= 1 }
      let value = keyEnd &+ 1
      let valueLength = BSON.valueLength(type: type, in: base, at: value, end: end)
      position = value &+ valueLength
      return (type, key, keyEnd &- key, value, valueLength)
    }

    @inlinable
    public mutating func next() -> Element? {
      guard let p = nextPosition() else { return nil }
      return Element(
        storage: storage, keyOffset: p.key, keyLength: p.keyLength, type: BSONType(rawValue: p.type),
        valueOffset: p.value, valueLength: p.valueLength)
    }
  }

  @inlinable
  public func makeIterator() -> Iterator {
    Iterator(storage: storage, position: start &+ 4, end: start &+ length &- 1)
  }

  public var underestimatedCount: Int { 0 }
}

/// The offset of the zero byte ending the key that starts at `start`, in a validated document whose
/// terminator is at `end`: eight bytes at a time while they lie before `end`, then byte by byte.
@inlinable @inline(__always)
func keyTerminator(_ base: UnsafeRawPointer, from start: Int, end: Int) -> Int {
  var p = start
  // Safe: p + 8 <= end, and `end` is the document's last byte, so every load is inside it.
  while p &+ 8 <= end {
    let w = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: p, as: UInt64.self))
    // One step shorter than the exact test below: marks every zero byte, but also bytes >= 0x81
    // and bytes after a zero. Its lowest mark is the first zero unless a non-ASCII key byte comes
    // first, which the byte check catches (that branch, not the data, depends on the check).
    let marks = (w &- 0x0101_0101_0101_0101) & 0x8080_8080_8080_8080
    if marks != 0 {
      let candidate = p &+ marks.trailingZeroBitCount >> 3
      if _fastPath(base.byte(candidate) == 0) { return candidate }
      let zero = (w &- 0x0101_0101_0101_0101) & ~w & 0x8080_8080_8080_8080
      if zero != 0 { return p &+ zero.trailingZeroBitCount >> 3 }
    }
    p &+= 8
  }
  // Safe: validated documents have a zero byte ending every key before `end`.
  while base.byte(p) != 0 { p &+= 1 }
  return p
}

/// Whether the `count` bytes at `a` and at `b` are equal: inline overlapping word compares for
/// the short keys of a path (a `memcmp` call costs more than the compare).
@inlinable @inline(__always)
func bytesEqual(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ count: Int) -> Bool {
  // Safe: every load below lies inside the `count` bytes of both sides, as in copyNonZeroBytes.
  if count >= 8 {
    var i = 0
    while i &+ 8 <= count {
      if a.loadUnaligned(fromByteOffset: i, as: UInt64.self) != b.loadUnaligned(fromByteOffset: i, as: UInt64.self) {
        return false
      }
      i &+= 8
    }
    return i == count
      || a.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self)
        == b.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self)
  }
  if count >= 4 {
    return a.loadUnaligned(as: UInt32.self) == b.loadUnaligned(as: UInt32.self)
      && a.loadUnaligned(fromByteOffset: count &- 4, as: UInt32.self)
        == b.loadUnaligned(fromByteOffset: count &- 4, as: UInt32.self)
  }
  if count > 0 {
    return a.load(as: UInt8.self) == b.load(as: UInt8.self)
      && a.load(fromByteOffset: count &>> 1, as: UInt8.self) == b.load(fromByteOffset: count &>> 1, as: UInt8.self)
      && a.load(fromByteOffset: count &- 1, as: UInt8.self) == b.load(fromByteOffset: count &- 1, as: UInt8.self)
  }
  return true
}

extension BSON {
  /// ``valueLength(type:at:)`` for a value at offset `value` from `base` in a validated document
  /// whose terminator is at `end`: a regular expression's two C strings are scanned eight bytes at
  /// a time (`keyTerminator`) instead of with two `strlen` calls.
  @inlinable @inline(__always)
  static func valueLength(type: UInt8, in base: UnsafeRawPointer, at value: Int, end: Int) -> Int {
    if type == BSONType.regex.rawValue {
      // Safe: validated regular expressions are two zero-terminated strings before `end`.
      let options = keyTerminator(base, from: value, end: end) &+ 1
      return keyTerminator(base, from: options, end: end) &+ 1 &- value
    }
    return valueLength(type: type, at: base + value)
  }
}

extension Document {
  /// The first element whose key is exactly `key` (no dotted-path interpretation).
  /// - Complexity: O(n) in the number of elements.
  public func element(forKey key: String) -> Element? {
    var key = key
    return key.withUTF8 { k in
      guard let p = Document.find(UnsafeRawBufferPointer(k), in: storage.base, at: start) else { return nil }
      return Element(
        storage: storage, keyOffset: p.key, keyLength: k.count, type: BSONType(rawValue: p.type),
        valueOffset: p.value, valueLength: p.valueLength)
    }
  }

  /// The first element whose key is the UTF-8 bytes `key` (no dotted-path interpretation): a
  /// path already split into segments is looked up without making strings.
  /// - Complexity: O(n) in the number of elements.
  public func element(forKeyBytes key: [UInt8]) -> Element? {
    key.withUnsafeBytes { k in
      guard let p = Document.find(k, in: storage.base, at: start) else { return nil }
      return Element(
        storage: storage, keyOffset: p.key, keyLength: k.count, type: BSONType(rawValue: p.type),
        valueOffset: p.value, valueLength: p.valueLength)
    }
  }

  /// Finds `key` in the validated document at `documentOffset` from `base`, walking raw bytes.
  @inlinable @inline(__always)
  static func find(
    _ key: UnsafeRawBufferPointer, in base: UnsafeRawPointer, at documentOffset: Int
  ) -> (type: UInt8, key: Int, value: Int, valueLength: Int)? {
    var position = documentOffset &+ 4
    // Safe: validated documents have a length prefix and a terminator inside the storage.
    let end = documentOffset &+ Int(base.int32LE(documentOffset)) &- 1
    let keyCount = key.count
    let first: UInt8 = keyCount > 0 ? key[0] : 0
    while position < end {
      let type = base.byte(position)
      let keyStart = position &+ 1
      let keyEnd = keyTerminator(base, from: keyStart, end: end)
      let value = keyEnd &+ 1
      let valueLength = BSON.valueLength(type: type, in: base, at: value, end: end)
      if keyEnd &- keyStart == keyCount
        && (keyCount == 0
          || (base.byte(keyStart) == first && bytesEqual(base + keyStart, key.baseAddress!, keyCount)))
      {
        return (type, keyStart, value, valueLength)
      }
      position = value &+ valueLength
    }
    return nil
  }

  /// The value for the exact key `key`, or `nil` when there is none.
  public func value(forKey key: String) -> BSON? { element(forKey: key)?.value }

  /// The value at a dotted path: each segment is a key of an embedded document or, in an array,
  /// an element index (`"addresses.0.city"`). `nil` when any segment is missing.
  ///
  /// A key that itself contains a dot can be read with ``value(forKey:)``.
  /// - Complexity: O(n) in the bytes walked.
  public subscript(_ path: String) -> BSON? {
    element(atPath: path)?.value
  }

  /// The element at a dotted path (see ``subscript(_:)``), found by walking the bytes; only the
  /// final element is materialized.
  ///
  /// Inlinable: inlined into the caller, the element's reference to the document's storage needs
  /// no retain and release of its own.
  @inlinable
  public func element(atPath path: String) -> Element? {
    withUTF8Bytes(of: path) { p -> Element? in
      let raw = UnsafeRawBufferPointer(p)
      let base = storage.base
      var documentOffset = start
      var segmentStart = 0
      while true {
        var segmentEnd = segmentStart
        while segmentEnd < raw.count && raw[segmentEnd] != UInt8(ascii: ".") { segmentEnd &+= 1 }
        let segment = UnsafeRawBufferPointer(rebasing: raw[segmentStart..<segmentEnd])
        guard let found = Document.find(segment, in: base, at: documentOffset) else { return nil }
        if segmentEnd == raw.count {
          return Element(
            storage: storage, keyOffset: found.key, keyLength: segment.count, type: BSONType(rawValue: found.type),
            valueOffset: found.value, valueLength: found.valueLength)
        }
        guard found.type == BSONType.document.rawValue || found.type == BSONType.array.rawValue else { return nil }
        documentOffset = found.value
        segmentStart = segmentEnd &+ 1
      }
    }
  }
}
