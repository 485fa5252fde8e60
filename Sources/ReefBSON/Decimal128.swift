/// An IEEE 754-2008 128-bit decimal floating-point value in the binary integer decimal (BID)
/// encoding, as BSON stores it.
///
/// Reef keeps the 16 bytes as they are; ``init(_:)`` parses and ``description`` formats
/// according to the BSON Decimal128 specification, so every value round-trips exactly.
///
/// It is a number, as RealmSwift's `Decimal128`: integer, float and string literals
/// (`let price: Decimal128 = 9.99`), `+`, `-`, `*` and `/` computed exactly and rounded half to
/// even to 34 digits, and numeric comparison: `==` compares values (`1.0 == 1`), while a ``BSON``
/// value compares the bits. Unlike Realm's (a class), it is a value type: `negate()` needs a
/// `var`.
public struct Decimal128: Hashable, Sendable {
  /// The most significant 64 bits (sign, combination field, high coefficient bits).
  public var high: UInt64
  /// The least significant 64 bits of the coefficient.
  public var low: UInt64

  /// Creates a value from its two 64-bit halves.
  public init(high: UInt64, low: UInt64) {
    self.high = high
    self.low = low
  }

  init(reading p: UnsafeRawPointer) {
    low = UInt64(littleEndian: p.loadUnaligned(as: UInt64.self))
    high = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
  }

  /// The 16 bytes in BSON order (little-endian low half, then high half).
  public var bytes: [UInt8] {
    var out = [UInt8]()
    out.reserveCapacity(16)
    withUnsafeBytes(of: low.littleEndian) { out.append(contentsOf: $0) }
    withUnsafeBytes(of: high.littleEndian) { out.append(contentsOf: $0) }
    return out
  }
}
