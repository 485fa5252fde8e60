import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A 12-byte MongoDB ObjectId: a 4-byte big-endian timestamp in seconds, a 5-byte random value
/// unique to this process, and a 3-byte big-endian counter.
///
/// ``ObjectId/init()`` follows the ObjectId specification: the random value is chosen once per
/// process and the counter starts at a random value and wraps at 2^24.
public struct ObjectId: Hashable, Comparable, Sendable, CustomStringConvertible {
  /// The 12 bytes, most significant first (the order in which they are stored and compared).
  public let bytes: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8)

  /// Creates an ObjectId from exactly 12 bytes; returns `nil` for any other count.
  public init?(bytes: some Collection<UInt8>) {
    guard bytes.count == 12 else { return nil }
    var b = [UInt8](bytes)
    self.bytes = (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11])
    b.removeAll()
  }

  init(reading p: UnsafeRawPointer) {
    bytes = (
      p.load(as: UInt8.self), p.load(fromByteOffset: 1, as: UInt8.self), p.load(fromByteOffset: 2, as: UInt8.self),
      p.load(fromByteOffset: 3, as: UInt8.self), p.load(fromByteOffset: 4, as: UInt8.self),
      p.load(fromByteOffset: 5, as: UInt8.self), p.load(fromByteOffset: 6, as: UInt8.self),
      p.load(fromByteOffset: 7, as: UInt8.self), p.load(fromByteOffset: 8, as: UInt8.self),
      p.load(fromByteOffset: 9, as: UInt8.self), p.load(fromByteOffset: 10, as: UInt8.self),
      p.load(fromByteOffset: 11, as: UInt8.self)
    )
  }

  /// Parses 24 hexadecimal digits (either case); returns `nil` for anything else.
  public init?(_ hex: some StringProtocol) {
    let utf8 = Array(hex.utf8)
    guard utf8.count == 24 else { return nil }
    var out = [UInt8](repeating: 0, count: 12)
    for i in 0..<12 {
      guard let hi = hexValue(utf8[2 * i]), let lo = hexValue(utf8[2 * i + 1]) else { return nil }
      out[i] = hi << 4 | lo
    }
    self.init(bytes: out)
  }

  /// Generates a new ObjectId for the current time.
  public init() {
    self.init(timestamp: UInt32(truncatingIfNeeded: time(nil)))
  }

  /// Generates a new ObjectId with the given timestamp (seconds since the Unix epoch), this
  /// process's random value and the next counter value.
  public init(timestamp: UInt32) {
    let random = ObjectIdGenerator.processRandom
    let counter = ObjectIdGenerator.counter.add(1, ordering: .relaxed).oldValue & 0xFF_FFFF
    func byte<T: BinaryInteger>(_ value: T, _ shift: T) -> UInt8 { UInt8(truncatingIfNeeded: value >> shift) }
    bytes = (
      byte(timestamp, 24), byte(timestamp, 16), byte(timestamp, 8), byte(timestamp, 0),
      byte(random, 32), byte(random, 24), byte(random, 16), byte(random, 8), byte(random, 0),
      byte(counter, 16), byte(counter, 8), byte(counter, 0)
    )
  }

  /// The 12 bytes as an array.
  public var byteArray: [UInt8] {
    withUnsafeBytes(of: bytes) { Array($0) }
  }

  /// The creation time in seconds since the Unix epoch (the first four bytes, big-endian).
  public var timestamp: UInt32 {
    UInt32(bytes.0) << 24 | UInt32(bytes.1) << 16 | UInt32(bytes.2) << 8 | UInt32(bytes.3)
  }

  /// The 24 lowercase hexadecimal digits.
  public var hex: String {
    let digits = Array("0123456789abcdef".utf8)
    return withUnsafeBytes(of: bytes) { raw in
      String(unsafeUninitializedCapacity: 24) { out in
        for (i, b) in raw.enumerated() {
          out[2 * i] = digits[Int(b >> 4)]
          out[2 * i + 1] = digits[Int(b & 0xF)]
        }
        return 24
      }
    }
  }

  public var description: String { hex }

  /// The bytes as a big-endian 96-bit number: its high 64 bits and its low 32 bits, so that
  /// comparing the parts compares the bytes in order, without allocating.
  private var parts: (high: UInt64, low: UInt32) {
    withUnsafeBytes(of: bytes) { raw in
      (
        UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self)),
        UInt32(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
      )
    }
  }

  public static func == (a: ObjectId, b: ObjectId) -> Bool { a.parts == b.parts }
  public func hash(into hasher: inout Hasher) { withUnsafeBytes(of: bytes) { hasher.combine(bytes: $0) } }
  public static func < (a: ObjectId, b: ObjectId) -> Bool { a.parts < b.parts }
}

enum ObjectIdGenerator {
  /// Five random bytes, chosen once per process.
  static let processRandom: UInt64 = UInt64.random(in: 0...0xFF_FFFF_FFFF)
  /// The counter; starts at a random value, only its low 24 bits are used.
  static let counter = Atomic<UInt32>(UInt32.random(in: 0...0xFF_FFFF))
}

@inline(__always)
func hexValue(_ c: UInt8) -> UInt8? {
  switch c {
  case UInt8(ascii: "0")...UInt8(ascii: "9"): c &- UInt8(ascii: "0")
  case UInt8(ascii: "a")...UInt8(ascii: "f"): c &- UInt8(ascii: "a") &+ 10
  case UInt8(ascii: "A")...UInt8(ascii: "F"): c &- UInt8(ascii: "A") &+ 10
  default: nil
  }
}
