// Decimal128 addition, multiplication and division: exact, then rounded half to even to 34 digits
// with the exponent brought into range (IEEE 754-2008), as MongoDB's `$inc` and `$mul` compute
// them and as RealmSwift's `Decimal128` operators do.

extension ExactDecimal {
  /// `self + other`, rounded to 34 digits (half to even); NaN when either is a NaN or for
  /// `Infinity + -Infinity`. An exact zero sum is positive unless both operands are negative.
  public func adding(_ other: ExactDecimal) -> ExactDecimal {
    let a = self
    let b = other
    if a.kind == .nan || b.kind == .nan { return .nan }
    if a.kind == .infinity || b.kind == .infinity {
      if a.kind == .infinity && b.kind == .infinity && a.negative != b.negative { return .nan }
      return a.kind == .infinity ? a : b
    }
    // Align to the smaller exponent; a far smaller operand only matters as a sticky digit.
    var (high, low) = a.exponent >= b.exponent ? (Unrounded(a), Unrounded(b)) : (Unrounded(b), Unrounded(a))
    let limit = 70
    while high.exponent > low.exponent && high.coefficient.digitCount < limit {
      high.coefficient.multiply(by: 10)
      high.exponent -= 1
    }
    if high.exponent > low.exponent {
      // `high` has 70 digits, so `low` is below its rounding digit: truncate `low` to `high`'s
      // exponent and stand in for the dropped digits with one non-zero digit further down,
      // which rounds the same way (never a tie) and cannot carry.
      var sticky = false
      while low.exponent < high.exponent {
        if low.coefficient.isZero {
          low.exponent = high.exponent
          break
        }
        let (quotient, remainder) = low.coefficient.dividedBy10()
        if remainder != 0 { sticky = true }
        low.coefficient = quotient
        low.exponent += 1
      }
      high.coefficient.multiply(by: 10)
      high.exponent -= 1
      low.coefficient.multiply(by: 10)
      if sticky { low.coefficient.add(Wide(1)) }
      low.exponent -= 1
    }
    var result = high
    if high.negative == low.negative {
      result.coefficient.add(low.coefficient)
    } else if high.coefficient < low.coefficient {
      result.coefficient = low.coefficient
      result.coefficient.subtract(high.coefficient)
      result.negative = low.negative
    } else {
      result.coefficient.subtract(low.coefficient)
      // An exact zero sum is positive (round half even), unless both operands are negative.
      if result.coefficient.isZero { result.negative = high.negative && low.negative }
    }
    return result.rounded()
  }

  /// `self × other`, rounded to 34 digits (half to even); NaN when either is a NaN or for
  /// zero times an infinity.
  public func multiplied(by other: ExactDecimal) -> ExactDecimal {
    let a = self
    let b = other
    let negative = a.negative != b.negative
    if a.kind == .nan || b.kind == .nan { return .nan }
    if a.kind == .infinity || b.kind == .infinity {
      if a.isZero || b.isZero { return .nan }
      return ExactDecimal(kind: .infinity, negative: negative)
    }
    // Both coefficients are below 2^128, so the product fits 256 bits.
    let product = a.coefficient.multipliedFullWidth(by: b.coefficient)
    let result = Unrounded(
      negative: negative, coefficient: Wide(high: product.high, low: product.low), exponent: a.exponent + b.exponent)
    return result.rounded()
  }

  /// `self ÷ other`, rounded to 34 digits (half to even). An exact quotient keeps the exponent
  /// closest to IEEE 754's preferred one (the dividend's less the divisor's): `7 / 3.5` is `2`,
  /// `0.21 / 0.7` is `0.3`, `1.00 / 4` is `0.25`. NaN when either is a NaN, for `0 / 0` and for
  /// `Infinity / Infinity`; a non-zero value divided by zero, or an infinity by a finite value,
  /// is an infinity; a finite value divided by an infinity is zero. The sign is the exclusive
  /// or of the operands' signs.
  public func dividing(by other: ExactDecimal) -> ExactDecimal {
    let a = self
    let b = other
    let negative = a.negative != b.negative
    if a.kind == .nan || b.kind == .nan { return .nan }
    if a.kind == .infinity {
      return b.kind == .infinity ? .nan : ExactDecimal(kind: .infinity, negative: negative)
    }
    if b.kind == .infinity { return ExactDecimal(negative: negative, coefficient: 0, exponent: 0) }
    if b.isZero { return a.isZero ? .nan : ExactDecimal(kind: .infinity, negative: negative) }
    let preferred = a.exponent - b.exponent
    if a.isZero { return Unrounded(negative: negative, coefficient: Wide(0), exponent: preferred).rounded() }
    // Scale the dividend so that the quotient has at least 35 digits (34 and the rounding digit):
    // a × 10^shift >= 10^(digits(b) + 34) > b × 10^34. Both stay below 10^69 < 2^230.
    let shift = max(0, ExactDecimal.digitCount(b.coefficient) - ExactDecimal.digitCount(a.coefficient) + 35)
    var dividend = Wide(a.coefficient)
    var left = shift
    while left > 0 {
      let step = min(left, 38)
      dividend.multiply(by: ExactDecimal.power10(step))
      left -= step
    }
    var (quotient, remainder) = dividend.quotientAndRemainder(dividingBy: b.coefficient)
    var exponent = preferred - shift
    if remainder == 0 {
      // Exact: drop the zeros the scaling added, down to the preferred exponent.
      while exponent < preferred {
        let (shorter, digit) = quotient.dividedBy10()
        guard digit == 0 else { break }
        quotient = shorter
        exponent += 1
      }
    } else {
      // Inexact: a non-zero digit below the quotient stands in for the remainder, which rounds
      // the same way (it is never a tie, and cannot carry).
      quotient.multiply(by: 10)
      quotient.add(Wide(1))
      exponent -= 1
    }
    return Unrounded(negative: negative, coefficient: quotient, exponent: exponent).rounded()
  }

  /// The finite value rounded to 34 digits and with its exponent in range (see
  /// ``adding(_:)``); infinities and NaNs are returned as they are.
  public func rounded() -> ExactDecimal {
    guard kind == .finite else { return self }
    return Unrounded(self).rounded()
  }
}

/// A finite decimal whose coefficient may have more than 34 digits, before rounding.
struct Unrounded {
  var negative: Bool
  var coefficient: Wide
  var exponent: Int
}

extension Unrounded {
  /// A finite value.
  init(_ value: ExactDecimal) {
    self.init(negative: value.negative, coefficient: Wide(value.coefficient), exponent: value.exponent)
  }

  /// Rounds the coefficient to 34 digits (half to even) and brings the exponent into range,
  /// overflowing to infinity and underflowing to zero as IEEE 754 does.
  func rounded() -> ExactDecimal {
    var result = self
    var dropped = 0  // the last digit removed
    var sticky = false  // whether any digit before it was non-zero
    func dropDigit() {
      if dropped != 0 { sticky = true }
      let (quotient, remainder) = result.coefficient.dividedBy10()
      result.coefficient = quotient
      dropped = remainder
      result.exponent += 1
    }
    while result.coefficient.digitCount > ExactDecimal.maxDigits || result.exponent < ExactDecimal.minExponent {
      if result.coefficient.isZero {
        result.exponent = max(result.exponent, ExactDecimal.minExponent)
        break
      }
      dropDigit()
    }
    if dropped > 5 || (dropped == 5 && (sticky || result.coefficient.low & 1 == 1)) {
      result.coefficient.add(Wide(1))
      if result.coefficient.digitCount > ExactDecimal.maxDigits {
        dropped = 0
        sticky = false
        dropDigit()
      }
    }
    while result.exponent > ExactDecimal.maxExponent {
      if result.coefficient.isZero {
        result.exponent = ExactDecimal.maxExponent
        break
      }
      // Clamp: add zeros to the coefficient while it fits.
      var padded = result.coefficient
      padded.multiply(by: 10)
      guard padded.digitCount <= ExactDecimal.maxDigits else {
        return ExactDecimal(kind: .infinity, negative: negative)
      }
      result.coefficient = padded
      result.exponent -= 1
    }
    // Safe: at most 34 digits now, so the high half is zero.
    return ExactDecimal(negative: result.negative, coefficient: result.coefficient.low, exponent: result.exponent)
  }
}

/// A 256-bit unsigned integer, enough for a product of two Decimal128 coefficients.
struct Wide: Equatable, Comparable {
  var high: UInt128
  var low: UInt128

  init(_ value: UInt128) {
    high = 0
    low = value
  }

  init(high: UInt128, low: UInt128) {
    self.high = high
    self.low = low
  }

  var isZero: Bool { high == 0 && low == 0 }

  static func < (a: Wide, b: Wide) -> Bool { (a.high, a.low) < (b.high, b.low) }

  mutating func add(_ other: Wide) {
    let (sum, carry) = low.addingReportingOverflow(other.low)
    low = sum
    high = high &+ other.high &+ (carry ? 1 : 0)  // Safe: callers stay far below 2^256.
  }

  /// Subtracts a value no larger than this one.
  mutating func subtract(_ other: Wide) {
    let (difference, borrow) = low.subtractingReportingOverflow(other.low)
    low = difference
    high = high &- other.high &- (borrow ? 1 : 0)  // Safe: other <= self.
  }

  mutating func multiply(by factor: UInt128) {
    let lowProduct = low.multipliedFullWidth(by: factor)
    high = high &* factor &+ lowProduct.high  // Safe: callers keep values below 10^77 < 2^256.
    low = lowProduct.low
  }

  /// The quotient and remainder of a division by a non-zero `divisor`.
  func quotientAndRemainder(dividingBy divisor: UInt128) -> (Wide, UInt128) {
    let (quotientHigh, remainderHigh) = high.quotientAndRemainder(dividingBy: divisor)
    // Safe from overflow: remainderHigh < divisor, so the quotient fits 128 bits.
    let (quotientLow, remainder) = divisor.dividingFullWidth((remainderHigh, low))
    return (Wide(high: quotientHigh, low: quotientLow), remainder)
  }

  /// The quotient and remainder of a division by 10.
  func dividedBy10() -> (Wide, Int) {
    let (quotientHigh, remainderHigh) = high.quotientAndRemainder(dividingBy: 10)
    let (quotientLow, remainder) = UInt128(10).dividingFullWidth((remainderHigh, low))
    return (Wide(high: quotientHigh, low: quotientLow), Int(remainder))
  }

  /// The number of decimal digits (0 for zero).
  var digitCount: Int {
    var count = 0
    var value = self
    while value.high != 0 {
      value = value.dividedBy10().0
      count += 1
    }
    var rest = value.low
    while rest != 0 {
      rest /= 10
      count += 1
    }
    return count
  }
}
