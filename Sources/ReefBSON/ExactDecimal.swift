// The one place Reef reads the BID layout of a Decimal128 (see Decimal128+String.swift for the
// bit diagram), and the exact decimal arithmetic and order that the query and store modules need.

/// A Decimal128 unpacked into sign, coefficient and exponent, or an infinity or a NaN.
///
/// A finite value is `coefficient × 10^exponent`, negated when `negative`. Reading a
/// ``Decimal128`` follows the specification: a coefficient above 10^34 - 1 (non-canonical,
/// including every value of the large-coefficient form) reads as 0, and the exponent is kept, so
/// `0E+3` and `-0` stay distinct from `0`.
///
/// For Reef's own modules: the query module compares numbers with it, the store module does
/// `$inc`/`$mul` arithmetic and writes index keys from it.
@_spi(ReefInternal)
public struct ExactDecimal: Hashable, Sendable {
  /// Whether a value is a number, an infinity or a NaN.
  public enum Kind: Hashable, Sendable {
    case finite, infinity, nan
  }

  /// Finite, infinite or NaN.
  public var kind: Kind
  /// The sign bit (also set for `-0`, `-Infinity` and a NaN with the sign bit).
  public var negative: Bool
  /// The coefficient of a finite value, at most 10^34 - 1 when read from a ``Decimal128``; 0 for
  /// infinities and NaNs.
  public var coefficient: UInt128
  /// The exponent of a finite value (of the coefficient taken as an integer); 0 for infinities
  /// and NaNs.
  public var exponent: Int

  // Computed and inlinable, so that other modules fold them instead of calling a global's accessor.
  /// The largest number of coefficient digits a Decimal128 holds.
  @inlinable public static var maxDigits: Int { 34 }
  /// The smallest exponent a Decimal128 holds.
  @inlinable public static var minExponent: Int { -6176 }
  /// The largest exponent a Decimal128 holds.
  @inlinable public static var maxExponent: Int { 6111 }
  /// 10^34 - 1, the largest canonical coefficient.
  @inlinable public static var maxCoefficient: UInt128 { 9_999_999_999_999_999_999_999_999_999_999_999 }

  /// A NaN, positive.
  public static let nan = ExactDecimal(kind: .nan)

  /// An infinity or a NaN (the coefficient and exponent are 0).
  public init(kind: Kind, negative: Bool = false) {
    self.kind = kind
    self.negative = negative
    coefficient = 0
    exponent = 0
  }

  /// The finite value `coefficient × 10^exponent`, negated when `negative`. ``decimal128``
  /// encodes it only when `coefficient <= 10^34 - 1` and `minExponent...maxExponent ~= exponent`.
  public init(negative: Bool, coefficient: UInt128, exponent: Int) {
    kind = .finite
    self.negative = negative
    self.coefficient = coefficient
    self.exponent = exponent
  }

  /// The exact value of an integer, with exponent 0.
  public init(_ value: Int64) {
    self.init(negative: value < 0, coefficient: UInt128(value.magnitude), exponent: 0)
  }

  /// Unpacks `value`; a non-canonical coefficient reads as 0.
  @inlinable
  public init(_ value: Decimal128) {
    negative = value.high >> 63 == 1
    coefficient = 0
    exponent = 0
    // Bits 126-122: 11111 is a NaN, 11110 an infinity, 11xxx otherwise the large-coefficient form.
    switch (value.high >> 58) & 0x1F {
    case 0x1F: kind = .nan
    case 0x1E: kind = .infinity
    case 0x18...0x1D:
      // Bits 126-125 both set: the coefficient is at least 2^113 > 10^34 - 1, so it reads as 0.
      kind = .finite
      exponent = Int((value.high >> 47) & 0x3FFF) &- Decimal128.exponentBias  // Safe: 14 bits less the bias.
    default:
      kind = .finite
      exponent = Int((value.high >> 49) & 0x3FFF) &- Decimal128.exponentBias  // Safe: 14 bits less the bias.
      let c = UInt128(value.high & 0x1_FFFF_FFFF_FFFF) << 64 | UInt128(value.low)
      if c <= ExactDecimal.maxCoefficient { coefficient = c }
    }
  }

  /// The encoded value. Every NaN encodes as the positive quiet NaN; a finite value must be in
  /// range (see ``init(negative:coefficient:exponent:)``), which the arithmetic guarantees.
  public var decimal128: Decimal128 {
    switch kind {
    case .nan: return .nan
    case .infinity: return negative ? .negativeInfinity : .infinity
    case .finite: return Decimal128(negative: negative, coefficient: coefficient, exponent: exponent)
    }
  }

  /// Whether the value is a finite zero (of either sign, with any exponent).
  public var isZero: Bool { kind == .finite && coefficient == 0 }
}

// MARK: - Order

extension ExactDecimal {
  /// Compares the numeric values: -1, 0 or 1. Zeros are equal whatever their sign and exponent,
  /// `1.0` equals `1`, and a NaN equals a NaN and is below every other value (MongoDB's order).
  public func compare(_ other: ExactDecimal) -> Int {
    let rankA = orderRank
    let rankB = other.orderRank
    if rankA != rankB { return rankA < rankB ? -1 : 1 }
    if rankA != 2 && rankA != 4 { return 0 }  // NaN, infinities and zeros: one value each
    let magnitude = ExactDecimal.compareMagnitudes(self, other)
    return rankA == 2 ? -magnitude : magnitude
  }

  /// NaN 0, -Infinity 1, negative 2, zero 3, positive 4, +Infinity 5.
  var orderRank: Int {
    switch kind {
    case .nan: return 0
    case .infinity: return negative ? 1 : 5
    case .finite: return coefficient == 0 ? 3 : (negative ? 2 : 4)
    }
  }

  /// Compares the magnitudes of two non-zero finite values (coefficients below 10^38).
  static func compareMagnitudes(_ a: ExactDecimal, _ b: ExactDecimal) -> Int {
    let digitsA = digitCount(a.coefficient)
    let digitsB = digitCount(b.coefficient)
    // The adjusted exponent (of the first digit) decides unless it is the same.
    let adjustedA = a.exponent + digitsA
    let adjustedB = b.exponent + digitsB
    if adjustedA != adjustedB { return adjustedA < adjustedB ? -1 : 1 }
    // Same first-digit position: pad the shorter coefficient with zeros to the longer one's digits.
    let digits = max(digitsA, digitsB)
    let scaledA = a.coefficient * power10(digits - digitsA)
    let scaledB = b.coefficient * power10(digits - digitsB)
    return scaledA == scaledB ? 0 : (scaledA < scaledB ? -1 : 1)
  }

  /// 10^0 … 10^38, every power of ten a `UInt128` holds: comparisons look digits up here
  /// instead of dividing by 10 once per digit.
  static let powersOf10: [UInt128] = {
    var powers: [UInt128] = [1]
    for _ in 1...38 { powers.append(powers[powers.count - 1] * 10) }
    return powers
  }()

  /// The number of decimal digits of `value` (0 for zero).
  static func digitCount(_ value: UInt128) -> Int {
    powersOf10.withUnsafeBufferPointer { powers in
      var count = 0
      while count < powers.count && value >= powers[count] { count += 1 }
      return count
    }
  }

  /// 10^k for 0 <= k <= 38.
  static func power10(_ k: Int) -> UInt128 { powersOf10[k] }
}
