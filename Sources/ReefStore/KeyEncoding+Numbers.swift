@_spi(ReefInternal) import ReefBSON

// Numbers in index keys: int32, int64, double and Decimal128 as one exact decimal form (a
// biased exponent, then the significant digits), so that equal values encode to equal bytes.

extension KeyEncoding {
  /// The bias added to a number's decimal exponent before it is written as a big-endian UInt16.
  static let exponentBias = 0x8000
  /// The smallest and largest decimal exponents a number can have (value = 0.d₁d₂… × 10^E):
  /// Decimal128's smallest subnormal 1E-6176 and its largest finite value, just below 1E6145.
  static let exponentRange = -6175...6145
  /// The most significant digits any BSON number has (a double's exact expansion has at most 767).
  static let maximumDigits = 800

  static func appendInteger(_ x: Int64, to key: inout [UInt8]) {
    if x == 0 {
      key.append(Tag.zero)
    } else {
      appendFinite(magnitude: x.magnitude, exponent: 0, negative: x < 0, to: &key)
    }
  }

  static func appendDouble(_ x: Double, to key: inout [UInt8]) {
    if x.isNaN { return key.append(Tag.nan) }
    if x.isInfinite { return key.append(x < 0 ? Tag.negativeInfinity : Tag.positiveInfinity) }
    if x == 0 { return key.append(Tag.zero) }
    let magnitude = x.magnitude
    if magnitude < 0x1p64, magnitude == magnitude.rounded(.towardZero) {
      return appendFinite(magnitude: UInt64(magnitude), exponent: 0, negative: x < 0, to: &key)
    }
    appendNonIntegralDouble(x, to: &key)
  }

  /// A double that is not an integer below 2^64: m × 2^e written out in decimal exactly.
  @inline(never)
  static func appendNonIntegralDouble(_ x: Double, to key: inout [UInt8]) {
    var significand = x.significandBitPattern | (x.isNormal ? 1 << 52 : 0)
    var binaryExponent = x.isNormal ? Int(x.exponent) - 52 : -1074
    while significand & 1 == 0 {
      significand >>= 1
      binaryExponent += 1
    }
    if binaryExponent < 0 {
      // m × 2^-k = m × 5^k × 10^-k; the product has no trailing zero (m is odd, k > 0).
      let k = -binaryExponent
      var product = significand
      var fits = true
      for _ in 0..<k where fits {
        let (next, overflow) = product.multipliedReportingOverflow(by: 5)
        product = next
        fits = !overflow
      }
      if fits { return appendFinite(magnitude: product, exponent: -k, negative: x < 0, to: &key) }
      var big = DecimalLimbs(significand)
      var remaining = k
      while remaining > 0 {
        let step = min(remaining, 13)
        big.multiply(by: power5[step])
        remaining -= step
      }
      let digits = big.digits()
      appendFinite(digits: digits, exponent: digits.count - k, negative: x < 0, to: &key)
    } else {
      var big = DecimalLimbs(significand)
      var remaining = binaryExponent
      while remaining > 0 {
        let step = min(remaining, 32)
        big.multiply(by: 1 << UInt64(step))
        remaining -= step
      }
      var digits = big.digits()
      let count = digits.count
      while digits.last == 0 { digits.removeLast() }
      appendFinite(digits: digits, exponent: count, negative: x < 0, to: &key)
    }
  }

  static let power5: [UInt64] = (0...13).map { n in (0..<n).reduce(1) { value, _ in value * 5 } }

  static func appendDecimal(_ x: Decimal128, to key: inout [UInt8]) {
    // A non-canonical coefficient (above 10^34 - 1) reads as zero, as MongoDB does.
    let parts = ExactDecimal(x)
    switch parts.kind {
    case .nan: key.append(Tag.nan)
    case .infinity: key.append(parts.negative ? Tag.negativeInfinity : Tag.positiveInfinity)
    case .finite:
      if parts.coefficient == 0 { return key.append(Tag.zero) }
      appendFinite(magnitude: parts.coefficient, exponent: parts.exponent, negative: parts.negative, to: &key)
    }
  }

  /// Appends the non-zero number `magnitude × 10^exponent` (negated when `negative`).
  static func appendFinite<T: FixedWidthInteger & UnsignedInteger>(
    magnitude: T, exponent: Int, negative: Bool, to key: inout [UInt8]
  ) {
    var m = magnitude
    var scale = exponent
    while m % 10 == 0 {
      m /= 10
      scale += 1
    }
    var count = 1
    var power: T = 1
    while m / power >= 10 {
      power *= 10  // Safe from overflow: power * 10 <= m.
      count += 1
    }
    let flip: UInt8 = negative ? 0xFF : 0
    appendHead(decimalExponent: count + scale, negative: negative, to: &key)
    var remaining = count
    while remaining > 0 {
      let first = m / power
      m %= power
      power /= 10
      var second: T = 0
      remaining -= 1
      if remaining > 0 {
        second = m / power
        m %= power
        power /= 10
        remaining -= 1
      }
      let more: UInt8 = remaining > 0 ? 1 : 0
      key.append((UInt8(truncatingIfNeeded: 20 * first + 2 * second) | more) ^ flip)
    }
  }

  /// Appends the non-zero number 0.d₁d₂…dₙ × 10^exponent; `digits` has no leading or trailing zero.
  static func appendFinite(digits: [UInt8], exponent: Int, negative: Bool, to key: inout [UInt8]) {
    let flip: UInt8 = negative ? 0xFF : 0
    appendHead(decimalExponent: exponent, negative: negative, to: &key)
    var index = 0
    while index < digits.count {
      let second = index + 1 < digits.count ? digits[index + 1] : 0
      let more: UInt8 = index + 2 < digits.count ? 1 : 0
      key.append(((20 * digits[index] + 2 * second) | more) ^ flip)
      index += 2
    }
  }

  static func appendHead(decimalExponent: Int, negative: Bool, to key: inout [UInt8]) {
    let flip: UInt8 = negative ? 0xFF : 0
    let biased = UInt16(truncatingIfNeeded: decimalExponent + exponentBias)
    key.append(negative ? Tag.negative : Tag.positive)
    key.append(UInt8(truncatingIfNeeded: biased >> 8) ^ flip)
    key.append(UInt8(truncatingIfNeeded: biased) ^ flip)
  }
}

/// An unsigned integer in base 10^9 limbs (least significant first), for writing a double's
/// exact decimal expansion.
struct DecimalLimbs {
  var limbs: [UInt32]

  init(_ value: UInt64) {
    limbs = []
    var rest = value
    repeat {
      limbs.append(UInt32(rest % 1_000_000_000))
      rest /= 1_000_000_000
    } while rest > 0
  }

  /// Multiplies by `factor` (at most 2^32).
  mutating func multiply(by factor: UInt64) {
    var carry: UInt64 = 0
    for index in limbs.indices {
      // Safe: limb < 10^9 and factor <= 2^32, so the product plus carry stays below 2^63.
      let product = UInt64(limbs[index]) &* factor &+ carry
      limbs[index] = UInt32(product % 1_000_000_000)
      carry = product / 1_000_000_000
    }
    while carry > 0 {
      limbs.append(UInt32(carry % 1_000_000_000))
      carry /= 1_000_000_000
    }
  }

  /// The decimal digits, most significant first, without leading zeros.
  func digits() -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(limbs.count * 9)
    for index in limbs.indices.reversed() {
      var limb = limbs[index]
      var chunk = [UInt8](repeating: 0, count: 9)
      for position in (0..<9).reversed() {
        chunk[position] = UInt8(limb % 10)
        limb /= 10
      }
      if out.isEmpty {
        out.append(contentsOf: chunk.drop(while: { $0 == 0 }))
      } else {
        out.append(contentsOf: chunk)
      }
    }
    return out
  }
}
