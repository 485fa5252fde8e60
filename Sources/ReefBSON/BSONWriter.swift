#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Memory owned by a ``BSONWriter`` (from `malloc`, grown with `realloc`). The writer caches the
/// base address and capacity in its own fields, so the hot path never reads this class's mutable
/// fields (which would cost a dynamic exclusivity check); only growing does.
@usableFromInline
final class WriteBuffer {
  @usableFromInline var base: UnsafeMutableRawPointer
  @usableFromInline var capacity: Int

  @usableFromInline
  init(capacity: Int) {
    self.capacity = max(capacity, 16)
    guard let memory = malloc(self.capacity) else { fatalError("out of memory allocating \(self.capacity) bytes") }
    base = memory
  }

  /// Grows to `newCapacity` bytes, in place when the allocator can.
  func grow(to newCapacity: Int) {
    guard let memory = realloc(base, newCapacity) else { fatalError("out of memory growing to \(newCapacity) bytes") }
    base = memory
    capacity = newCapacity
  }

  deinit { free(base) }
}

/// Appends BSON encodings to a growable byte buffer. Internal building block of the builders,
/// the Extended JSON parser and the Codable encoder.
///
/// A value type with copy-on-write storage: copies of a writer never see each other's writes.
@usableFromInline
struct BSONWriter {
  @usableFromInline var storage: WriteBuffer
  @usableFromInline var base: UnsafeMutableRawPointer
  @usableFromInline var capacity: Int
  /// The number of bytes written.
  @usableFromInline private(set) var count: Int

  @inlinable
  init(capacity: Int = 64) {
    self.init(buffer: WriteBuffer(capacity: capacity))
  }

  @inlinable
  init(buffer: WriteBuffer) {
    storage = buffer
    base = buffer.base
    capacity = buffer.capacity
    count = 0
  }

  /// A copy of the bytes written; assigning replaces them. O(n) either way: hot paths use
  /// ``count``, the subscript and the `append` methods instead.
  var bytes: [UInt8] {
    get { Array(UnsafeRawBufferPointer(start: base, count: count)) }
    set {
      self = BSONWriter(capacity: newValue.count)
      newValue.withUnsafeBytes { append($0) }
    }
  }

  /// Reads or overwrites one written byte.
  subscript(offset: Int) -> UInt8 {
    get {
      precondition(offset >= 0 && offset < count, "writer offset \(offset) out of range")
      return base.load(fromByteOffset: offset, as: UInt8.self)
    }
    set {
      precondition(offset >= 0 && offset < count, "writer offset \(offset) out of range")
      _ = reserve(0)
      base.storeBytes(of: newValue, toByteOffset: offset, as: UInt8.self)
    }
  }

  /// Drops everything written after `count` bytes.
  mutating func truncate(to newCount: Int) {
    precondition(newCount >= 0 && newCount <= count, "cannot truncate \(count) bytes to \(newCount)")
    count = newCount
  }

  /// Makes room for `n` more bytes in memory this writer alone owns and returns where they go;
  /// the caller then advances ``count`` by `n`.
  @inlinable @inline(__always) mutating func reserve(_ n: Int) -> UnsafeMutableRawPointer {
    if _slowPath(capacity &- count < n || !isKnownUniquelyReferenced(&storage)) { replaceStorage(n) }
    // Safe: capacity - count >= n, and the memory is ours alone.
    return base + count
  }

  @usableFromInline @inline(never) mutating func replaceStorage(_ n: Int) {
    let newCapacity = capacity &- count < n ? max(capacity &* 2, count &+ n) : capacity
    if isKnownUniquelyReferenced(&storage) {
      storage.grow(to: newCapacity)
    } else {
      let buffer = WriteBuffer(capacity: newCapacity)
      buffer.base.copyMemory(from: base, byteCount: count)
      storage = buffer
    }
    base = storage.base
    capacity = storage.capacity
  }

  @inlinable @inline(__always) mutating func advance(_ n: Int) { count &+= n }

  @inlinable @inline(__always) mutating func append(_ raw: UnsafeRawBufferPointer) {
    guard let src = raw.baseAddress, raw.count > 0 else { return }
    reserve(raw.count).copyMemory(from: src, byteCount: raw.count)
    advance(raw.count)
  }

  /// Appends the bytes `range` of another writer.
  mutating func append(_ other: BSONWriter, _ range: Range<Int>) {
    precondition(range.lowerBound >= 0 && range.upperBound <= other.count, "range \(range) out of bounds")
    append(UnsafeRawBufferPointer(start: other.base + range.lowerBound, count: range.count))
  }

  @inlinable @inline(__always) mutating func byte(_ b: UInt8) {
    reserve(1).storeBytes(of: b, as: UInt8.self)
    advance(1)
  }

  @inlinable @inline(__always) mutating func int32(_ v: Int32) {
    reserve(4).storeBytes(of: v.littleEndian, as: Int32.self)
    advance(4)
  }

  @inlinable @inline(__always) mutating func int64(_ v: Int64) {
    reserve(8).storeBytes(of: v.littleEndian, as: Int64.self)
    advance(8)
  }

  @inlinable @inline(__always) mutating func uint64(_ v: UInt64) {
    reserve(8).storeBytes(of: v.littleEndian, as: UInt64.self)
    advance(8)
  }

  /// Writes a key or regex C string. Precondition: no zero byte inside.
  @inlinable @inline(__always) mutating func cString(_ s: String) {
    withUTF8Bytes(of: s) { u in
      let n = u.count
      let p = reserve(n &+ 1)
      if _slowPath(!copyNonZeroBytes(to: p, from: UnsafeRawBufferPointer(u))) { zeroByteInCString(u) }
      // Safe: n + 1 bytes were reserved.
      p.storeBytes(of: 0, toByteOffset: n, as: UInt8.self)
      advance(n &+ 1)
    }
  }

  /// Writes an int32 length, the UTF-8 bytes and a zero.
  @inlinable @inline(__always) mutating func string(_ s: String) {
    withUTF8Bytes(of: s) { u in
      let n = u.count
      let p = reserve(n &+ 5)
      p.storeBytes(of: Int32(n &+ 1).littleEndian, as: Int32.self)
      if n > 0 { (p + 4).copyMemory(from: u.baseAddress!, byteCount: n) }
      p.storeBytes(of: 0, toByteOffset: n &+ 4, as: UInt8.self)
      advance(n &+ 5)
    }
  }

  /// Writes a type byte, a key and `valueCount` value bytes written by `body`, in one reservation.
  /// Precondition: the key has no zero byte.
  @inlinable @inline(__always)
  mutating func element(
    _ type: BSONType, _ key: String, valueCount: Int, _ body: (UnsafeMutableRawPointer) -> Void
  ) {
    withUTF8Bytes(of: key) { u in
      let n = u.count
      let p = reserve(n &+ 2 &+ valueCount)
      p.storeBytes(of: type.rawValue, as: UInt8.self)
      // Safe: n + 2 + valueCount bytes were reserved.
      if _slowPath(!copyNonZeroBytes(to: p + 1, from: UnsafeRawBufferPointer(u))) { zeroByteInCString(u) }
      // Safe: n + 2 + valueCount bytes were reserved.
      p.storeBytes(of: 0, toByteOffset: n &+ 1, as: UInt8.self)
      body(p + (n &+ 2))
      advance(n &+ 2 &+ valueCount)
    }
  }

  /// Writes a type byte and a key.
  @inlinable @inline(__always) mutating func header(_ type: BSONType, _ key: String) {
    byte(type.rawValue)
    cString(key)
  }

  /// Writes a type byte, a key and a placeholder int32 length in one reservation, and returns the
  /// offset of the length (for ``endDocument(_:)``). Precondition: the key has no zero byte.
  @inlinable @inline(__always) mutating func beginEmbedded(_ type: BSONType, _ key: String) -> Int {
    element(type, key, valueCount: 4) { $0.storeBytes(of: 0, as: Int32.self) }
    return count &- 4
  }

  /// Reserves an int32 length and returns where it is.
  @inlinable @inline(__always) mutating func beginDocument() -> Int {
    let at = count
    int32(0)
    return at
  }

  /// Writes the terminator and patches the length reserved at `start`.
  @inlinable @inline(__always) mutating func endDocument(_ start: Int) {
    byte(0)
    // Safe: `start` was returned by beginDocument, so 4 bytes are written there.
    base.storeBytes(of: Int32(count &- start).littleEndian, toByteOffset: start, as: Int32.self)
  }

  /// Writes the value part of an element (no type byte, no key).
  mutating func value(_ value: BSON) {
    switch value {
    case .double(let d): uint64(d.bitPattern)
    case .string(let s), .javascript(let s), .symbol(let s): string(s)
    case .document(let d): d.withUnsafeBytes { append($0) }
    case .array(let a): a.document.withUnsafeBytes { append($0) }
    case .binary(let b):
      if b.subtype == .binaryOld {
        int32(Int32(b.data.count + 4))
        byte(b.subtype.rawValue)
        int32(Int32(b.data.count))
      } else {
        int32(Int32(b.data.count))
        byte(b.subtype.rawValue)
      }
      b.data.withUnsafeBytes { append($0) }
    case .undefined, .null, .minKey, .maxKey: break
    case .objectId(let o): withUnsafeBytes(of: o.bytes) { append($0) }
    case .bool(let b): byte(b ? 1 : 0)
    case .datetime(let d): int64(d.millisecondsSinceEpoch)
    case .regex(let r):
      cString(r.pattern)
      cString(r.options)
    case .dbPointer(let p):
      string(p.ref)
      withUnsafeBytes(of: p.id.bytes) { append($0) }
    case .javascriptWithScope(let c):
      let start = beginDocument()
      string(c.code)
      c.scope.withUnsafeBytes { append($0) }
      base.storeBytes(of: Int32(count &- start).littleEndian, toByteOffset: start, as: Int32.self)
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

  /// The finished document from `start` to the end, viewing this writer's buffer without a copy
  /// (the writer's next write, if any, copies the buffer first).
  func document(from start: Int = 0) -> Document {
    let n = count &- start
    let view = UnsafeRawBufferPointer(start: base + start, count: n)
    return Document(storage: DocumentStorage(borrowing: view, owner: storage), start: 0, length: n)
  }
}

/// Calls `body` with the UTF-8 bytes of `string`, without the copy (and retain) that the mutating
/// `String.withUTF8` needs when the string is already contiguous UTF-8, as native strings are.
@inlinable @inline(__always)
func withUTF8Bytes<R>(of string: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
  if let result = string.utf8.withContiguousStorageIfAvailable(body) { return result }
  var string = string
  return string.withUTF8(body)
}

/// Copies `bytes` to `destination` and returns whether none of them is zero. The zero check
/// rides on the copy's word loads (no second pass over the bytes, no `memchr` call): keys are
/// short, so this is a few loads and stores.
@inlinable @inline(__always)
func copyNonZeroBytes(to destination: UnsafeMutableRawPointer, from bytes: UnsafeRawBufferPointer) -> Bool {
  let n = bytes.count
  guard n > 0, let source = bytes.baseAddress else { return true }
  if n >= 8 {
    var zero: UInt64 = 0
    var i = 0
    // Safe: i + 8 <= n, so every load and store lies inside the n bytes.
    while i &+ 8 <= n {
      let w = source.loadUnaligned(fromByteOffset: i, as: UInt64.self)
      destination.storeBytes(of: w, toByteOffset: i, as: UInt64.self)
      zero |= (w &- 0x0101_0101_0101_0101) & ~w & 0x8080_8080_8080_8080
      i &+= 8
    }
    if i < n {
      // Safe: n >= 8, so the last eight bytes start at n - 8 >= 0 (overlapping the loop's).
      let w = source.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self)
      destination.storeBytes(of: w, toByteOffset: n &- 8, as: UInt64.self)
      zero |= (w &- 0x0101_0101_0101_0101) & ~w & 0x8080_8080_8080_8080
    }
    return zero == 0
  }
  if n >= 4 {
    // Safe: 4 <= n < 8, so the first and the last four bytes (which may overlap) are inside.
    let a = source.loadUnaligned(as: UInt32.self)
    let b = source.loadUnaligned(fromByteOffset: n &- 4, as: UInt32.self)
    destination.storeBytes(of: a, as: UInt32.self)
    destination.storeBytes(of: b, toByteOffset: n &- 4, as: UInt32.self)
    let zero = ((a &- 0x0101_0101) & ~a | (b &- 0x0101_0101) & ~b) & 0x8080_8080
    return zero == 0
  }
  // Safe: 1 <= n < 4, so bytes 0, n / 2 and n - 1 cover all of them and are inside.
  let a = source.load(as: UInt8.self)
  let b = source.load(fromByteOffset: n &>> 1, as: UInt8.self)
  let c = source.load(fromByteOffset: n &- 1, as: UInt8.self)
  destination.storeBytes(of: a, as: UInt8.self)
  destination.storeBytes(of: b, toByteOffset: n &>> 1, as: UInt8.self)
  destination.storeBytes(of: c, toByteOffset: n &- 1, as: UInt8.self)
  return a != 0 && b != 0 && c != 0
}

/// Stops the program: a key or regular expression with a zero byte cannot be encoded in BSON.
@usableFromInline @inline(never)
func zeroByteInCString(_ bytes: UnsafeBufferPointer<UInt8>) -> Never {
  preconditionFailure(
    "BSON keys and regular expressions cannot contain a zero byte: \(String(reflecting: String(decoding: bytes, as: UTF8.self)))"
  )
}

extension BSONWriter {
  /// The document whose length prefix is at `start`, finished in place and viewed without a copy.
  ///
  /// The document keeps this writer's buffer alive, so the writer's next write finds the buffer
  /// shared and copies it first: the document never changes afterwards.
  @inlinable
  mutating func sharedDocument(from start: Int) -> Document {
    // Safe: reserve(1) leaves room for the terminator in memory this writer alone owns.
    let terminator = reserve(1)
    terminator.storeBytes(of: 0, as: UInt8.self)
    let n = count &- start &+ 1
    base.storeBytes(of: Int32(n).littleEndian, toByteOffset: start, as: Int32.self)
    let view = UnsafeRawBufferPointer(start: base + start, count: n)
    return Document(storage: DocumentStorage(borrowing: view, owner: storage), start: 0, length: n)
  }

  /// The document whose length prefix is at `start`, finished (terminator and length) in a copy,
  /// without changing what this writer holds.
  func finishedDocument(from start: Int) -> Document {
    let n = count &- start &+ 1
    let memory = UnsafeMutableRawPointer.allocate(byteCount: n, alignment: 8)
    memory.copyMemory(from: base + start, byteCount: n &- 1)
    memory.storeBytes(of: 0, toByteOffset: n &- 1, as: UInt8.self)
    memory.storeBytes(of: Int32(n).littleEndian, as: Int32.self)
    return Document(storage: DocumentStorage(adopting: memory, count: n), start: 0, length: n)
  }
}
