#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A growable byte buffer in malloc'ed memory, for the Extended JSON writer (JSON text) and
/// parser (BSON bytes). Writes check capacity once per operation and then store without
/// further checks; the owner must call ``release()`` exactly once.
struct ExtendedJSONBuffer {
  private(set) var base: UnsafeMutablePointer<UInt8>
  /// The number of bytes written.
  var count: Int
  private(set) var capacity: Int

  init(capacity: Int) {
    let capacity = max(capacity, 64)
    // malloc only fails when the process is out of memory, which Swift treats as fatal too.
    base = malloc(capacity)!.assumingMemoryBound(to: UInt8.self)
    self.capacity = capacity
    count = 0
  }

  /// Frees the memory; the buffer must not be used afterwards.
  func release() { free(base) }

  /// Makes room for at least `n` more bytes.
  @inline(__always)
  mutating func reserve(_ n: Int) {
    if capacity &- count < n { grow(n) }
  }

  @inline(never)
  mutating func grow(_ n: Int) {
    var newCapacity = capacity &* 2
    if newCapacity - count < n { newCapacity = count + n + 64 }
    base = realloc(base, newCapacity)!.assumingMemoryBound(to: UInt8.self)
    capacity = newCapacity
  }

  /// Appends a byte without checking capacity; the caller reserved it.
  @inline(__always)
  mutating func appendUnchecked(_ b: UInt8) {
    // Safe: the caller reserved at least one byte beyond `count`.
    base[count] = b
    count &+= 1
  }

  @inline(__always)
  mutating func append(_ b: UInt8) {
    reserve(1)
    appendUnchecked(b)
  }

  @inline(__always)
  mutating func append(_ p: UnsafeRawPointer, count n: Int) {
    reserve(n)
    // Safe: `reserve` made room for `n` bytes.
    (base + count).update(from: p.assumingMemoryBound(to: UInt8.self), count: n)
    count &+= n
  }

  @inline(__always)
  mutating func append(_ s: StaticString) {
    append(s.utf8Start, count: s.utf8CodeUnitCount)
  }

  /// Appends `n` bytes without checking capacity; the caller reserved them.
  @inline(__always)
  mutating func appendUnchecked(_ p: UnsafeRawPointer, count n: Int) {
    (base + count).update(from: p.assumingMemoryBound(to: UInt8.self), count: n)
    count &+= n
  }

  @inline(__always)
  mutating func appendInt32LE(_ v: Int32) {
    reserve(4)
    UnsafeMutableRawPointer(base + count).storeBytes(of: v.littleEndian, as: Int32.self)
    count &+= 4
  }

  @inline(__always)
  mutating func appendUInt64LE(_ v: UInt64) {
    reserve(8)
    UnsafeMutableRawPointer(base + count).storeBytes(of: v.littleEndian, as: UInt64.self)
    count &+= 8
  }

  /// Overwrites four bytes at `offset` (which was written before) with a little-endian Int32.
  @inline(__always)
  func patchInt32LE(_ v: Int32, at offset: Int) {
    UnsafeMutableRawPointer(base + offset).storeBytes(of: v.littleEndian, as: Int32.self)
  }

  /// Appends the decimal digits of `v`.
  @inline(__always)
  mutating func appendDecimal(_ v: Int64) {
    reserve(20)
    if v < 0 {
      appendUnchecked(UInt8(ascii: "-"))
      appendDecimalUnchecked(v.magnitude)
    } else {
      appendDecimalUnchecked(UInt64(v))
    }
  }

  /// Appends the decimal digits of `v`; the caller reserved 20 bytes.
  @inline(__always)
  mutating func appendDecimalUnchecked(_ v: UInt64) {
    if v < 10 {
      appendUnchecked(UInt8(truncatingIfNeeded: v) &+ 0x30)
      return
    }
    var digits = 1
    var t = v
    while t >= 100 {
      t /= 100
      digits &+= 2
    }
    if t >= 10 { digits &+= 1 }
    var v = v
    // Safe: `digits` <= 20 bytes were reserved; the loop writes each of them once, right to left.
    var at = count &+ digits
    while v >= 100 {
      let r = UInt8(truncatingIfNeeded: v % 100)
      v /= 100
      at &-= 2
      base[at] = r / 10 &+ 0x30
      base[at &+ 1] = r % 10 &+ 0x30
    }
    if v >= 10 {
      let r = UInt8(truncatingIfNeeded: v)
      base[at &- 2] = r / 10 &+ 0x30
      base[at &- 1] = r % 10 &+ 0x30
    } else {
      base[at &- 1] = UInt8(truncatingIfNeeded: v) &+ 0x30
    }
    count &+= digits
  }
}
