#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension Document: Sequence {
  /// One element of a document: its key, type and value, read lazily from the document's bytes.
  ///
  /// Iterating a document creates no strings and allocates nothing; ``key`` and ``value`` decode
  /// on demand.
  public struct Element: Sendable {
    let storage: DocumentStorage
    /// Offset of the key's first byte in `storage`.
    let keyOffset: Int
    let keyLength: Int
    /// The element's type.
    public let type: BSONType
    /// Offset of the value's first byte in `storage`.
    let valueOffset: Int
    let valueLength: Int

    /// The key, decoded from UTF-8.
    public var key: String {
      String(decoding: UnsafeRawBufferPointer(start: storage.base + keyOffset, count: keyLength), as: UTF8.self)
    }

    /// The value.
    public var value: BSON { BSON.read(type: type, storage: storage, offset: valueOffset, length: valueLength) }

    /// Whether the key equals `key`, compared as UTF-8 bytes without creating a string.
    public func hasKey(_ key: String) -> Bool {
      var key = key
      return key.withUTF8 { k in
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
  }

  /// Walks the elements in order.
  public struct Iterator: IteratorProtocol {
    let storage: DocumentStorage
    /// Offset in `storage` of the next element's type byte.
    var position: Int
    /// Offset in `storage` of the document's terminating zero.
    let end: Int

    /// Advances and returns the raw position of the next element, or `nil` at the end.
    @inline(__always)
    mutating func nextPosition() -> (type: UInt8, key: Int, keyLength: Int, value: Int, valueLength: Int)? {
      guard position < end else { return nil }
      let base = storage.base
      let type = base.byte(position)
      let key = position &+ 1
      // Safe: validated documents have a zero byte terminating every key before `end`.
      let keyLength = strlen(base.advanced(by: key).assumingMemoryBound(to: CChar.self))
      let value = key &+ keyLength &+ 1
      let valueLength = BSON.valueLength(type: type, at: base + value)
      position = value &+ valueLength
      return (type, key, keyLength, value, valueLength)
    }

    public mutating func next() -> Element? {
      guard let p = nextPosition() else { return nil }
      return Element(
        storage: storage, keyOffset: p.key, keyLength: p.keyLength, type: BSONType(rawValue: p.type),
        valueOffset: p.value, valueLength: p.valueLength)
    }
  }

  public func makeIterator() -> Iterator {
    Iterator(storage: storage, position: start &+ 4, end: start &+ length &- 1)
  }

  public var underestimatedCount: Int { 0 }
}

extension Document {
  /// The first element whose key is exactly `key` (no dotted-path interpretation).
  /// - Complexity: O(n) in the number of elements.
  public func element(forKey key: String) -> Element? {
    var key = key
    return key.withUTF8 { element(forKeyBytes: UnsafeRawBufferPointer($0)) }
  }

  @inline(__always)
  func element(forKeyBytes k: UnsafeRawBufferPointer) -> Element? {
    var it = makeIterator()
    let base = storage.base
    while let p = it.nextPosition() {
      if p.keyLength == k.count && (k.count == 0 || memcmp(base + p.key, k.baseAddress!, k.count) == 0) {
        return Element(
          storage: storage, keyOffset: p.key, keyLength: p.keyLength, type: BSONType(rawValue: p.type),
          valueOffset: p.value, valueLength: p.valueLength)
      }
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

  /// The element at a dotted path (see ``subscript(_:)``).
  public func element(atPath path: String) -> Element? {
    var path = path
    return path.withUTF8 { p -> Element? in
      let raw = UnsafeRawBufferPointer(p)
      var current = self
      var segmentStart = 0
      while true {
        var segmentEnd = segmentStart
        while segmentEnd < raw.count && raw[segmentEnd] != UInt8(ascii: ".") { segmentEnd += 1 }
        let segment = UnsafeRawBufferPointer(rebasing: raw[segmentStart..<segmentEnd])
        guard let element = current.element(forKeyBytes: segment) else { return nil }
        if segmentEnd == raw.count { return element }
        guard element.type == .document || element.type == .array else { return nil }
        current = Document(storage: storage, start: element.valueOffset, length: element.valueLength)
        segmentStart = segmentEnd + 1
      }
    }
  }

  /// The embedded document or array at `element`, as a view on the same bytes.
  func nested(_ element: Element) -> Document {
    Document(storage: storage, start: element.valueOffset, length: element.valueLength)
  }
}
