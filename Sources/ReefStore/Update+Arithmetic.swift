import ReefBSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// Numeric results of `$inc` and `$mul`, with MongoDB's type promotion: int32 < int64 < double <
// decimal. The result has the wider of the two types; int32 arithmetic that overflows becomes
// int64; int64 arithmetic that overflows is an error (nil here); a double meeting a decimal is
// first rounded to 15 significant digits, as MongoDB converts it.

/// `a + b` with MongoDB's promotion, or `nil` when int64 arithmetic overflows.
func add(_ a: BSON, _ b: BSON) -> BSON? {
  arithmetic(a, b, int64: { $0.addingReportingOverflow($1) }, double: +, decimal: DecimalNumber.add)
}

/// `a × b` with MongoDB's promotion, or `nil` when int64 arithmetic overflows.
func multiply(_ a: BSON, _ b: BSON) -> BSON? {
  arithmetic(a, b, int64: { $0.multipliedReportingOverflow(by: $1) }, double: *, decimal: DecimalNumber.multiply)
}

private func arithmetic(
  _ a: BSON, _ b: BSON, int64: (Int64, Int64) -> (partialValue: Int64, overflow: Bool),
  double: (Double, Double) -> Double, decimal: (DecimalNumber, DecimalNumber) -> DecimalNumber
) -> BSON? {
  switch (a, b) {
  case (.int32(let x), .int32(let y)):
    let result = int64(Int64(x), Int64(y)).partialValue  // cannot overflow from int32 operands
    return Int32(exactly: result).map(BSON.int32) ?? .int64(result)
  case (.int32, .int64), (.int64, .int32), (.int64, .int64):
    let result = int64(integer(a)!, integer(b)!)
    return result.overflow ? nil : .int64(result.partialValue)
  case (.decimal128, _), (_, .decimal128):
    guard let x = DecimalNumber(a), let y = DecimalNumber(b) else { return nil }
    return .decimal128(decimal(x, y).decimal128)
  default:
    guard let x = doubleValue(a), let y = doubleValue(b) else { return nil }
    return .double(double(x, y))
  }
}

private func integer(_ value: BSON) -> Int64? {
  switch value {
  case .int32(let n): Int64(n)
  case .int64(let n): n
  default: nil
  }
}

private func doubleValue(_ value: BSON) -> Double? {
  switch value {
  case .int32(let n): Double(n)
  case .int64(let n): Double(n)
  case .double(let d): d
  default: nil
  }
}

// MARK: - Decimal128 arithmetic

/// A Decimal128 value as sign, coefficient and exponent, for exact arithmetic with IEEE 754
/// round-half-even to 34 digits.
struct DecimalNumber: Equatable {
  enum Kind { case finite, infinity, nan }
  var kind: Kind = .finite
  var negative = false
  var coefficient = Wide(0)
  var exponent = 0

  static let maxDigits = 34
  static let maxExponent = 6111
  static let minExponent = -6176
  static let nan = DecimalNumber(kind: .nan)

  init(kind: Kind, negative: Bool = false) {
    self.kind = kind
    self.negative = negative
  }

  init(negative: Bool, coefficient: Wide, exponent: Int) {
    self.negative = negative
    self.coefficient = coefficient
    self.exponent = exponent
  }

  /// The exact value of an int32, int64 or Decimal128; a double rounded to 15 significant digits.
  init?(_ value: BSON) {
    switch value {
    case .int32(let n): self.init(negative: n < 0, coefficient: Wide(UInt128(n.magnitude)), exponent: 0)
    case .int64(let n): self.init(negative: n < 0, coefficient: Wide(UInt128(n.magnitude)), exponent: 0)
    case .double(let d): self.init(double: d)
    case .decimal128(let d): self.init(d)
    default: return nil
    }
  }

  init(_ value: Decimal128) {
    negative = value.high >> 63 == 1
    switch (value.high >> 58) & 0x1F {
    case 0x1F: kind = .nan
    case 0x1E: kind = .infinity
    case 0x18...0x1D:
      // Bits 126-125 set: the coefficient would exceed 10^34 - 1, so it is non-canonical and reads as 0.
      exponent = Int((value.high >> 47) & 0x3FFF) - 6176
    default:
      exponent = Int((value.high >> 49) & 0x3FFF) - 6176
      let c = UInt128(value.high & ((1 << 49) - 1)) << 64 | UInt128(value.low)
      coefficient = Wide(c > Wide.maxCoefficient ? 0 : c)
    }
  }

  /// A double as MongoDB converts it to Decimal128: rounded to 15 significant digits.
  init(double: Double) {
    negative = double.sign == .minus
    if double.isNaN {
      kind = .nan
      return
    }
    if double.isInfinite {
      kind = .infinity
      return
    }
    if double == 0 { return }
    // "%.14e" gives d.dddddddddddddde±x: 15 significant digits, correctly rounded.
    var buffer = [CChar](repeating: 0, count: 64)
    _ = withVaList([double.magnitude]) { vsnprintf(&buffer, buffer.count, "%.14e", $0) }
    let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    guard let e = text.firstIndex(of: "e"), let power = Int(text[text.index(after: e)...]) else { return }
    let digits = text[..<e].filter { $0 != "." }
    coefficient = Wide(UInt128(digits) ?? 0)
    exponent = power - 14
  }

  /// The encoded value; the caller has rounded it (see ``rounded()``).
  var decimal128: Decimal128 {
    let sign: UInt64 = negative ? 1 << 63 : 0
    switch kind {
    case .nan: return Decimal128(high: 0x7C00_0000_0000_0000, low: 0)
    case .infinity: return Decimal128(high: sign | 0x7800_0000_0000_0000, low: 0)
    case .finite:
      let c = coefficient.low
      let biased = UInt64(exponent + 6176)
      return Decimal128(
        high: sign | biased << 49 | UInt64(truncatingIfNeeded: c >> 64), low: UInt64(truncatingIfNeeded: c))
    }
  }

  /// Rounds the coefficient to 34 digits (half to even) and brings the exponent into range,
  /// overflowing to infinity and underflowing to zero as IEEE 754 does.
  func rounded() -> DecimalNumber {
    guard kind == .finite else { return self }
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
    while result.coefficient.digitCount > DecimalNumber.maxDigits || result.exponent < DecimalNumber.minExponent {
      if result.coefficient.isZero {
        result.exponent = max(result.exponent, DecimalNumber.minExponent)
        break
      }
      dropDigit()
    }
    if dropped > 5 || (dropped == 5 && (sticky || result.coefficient.low & 1 == 1)) {
      result.coefficient.add(Wide(1))
      if result.coefficient.digitCount > DecimalNumber.maxDigits {
        dropped = 0
        sticky = false
        dropDigit()
      }
    }
    while result.exponent > DecimalNumber.maxExponent {
      if result.coefficient.isZero {
        result.exponent = DecimalNumber.maxExponent
        break
      }
      // Clamp: add zeros to the coefficient while it fits.
      var padded = result.coefficient
      padded.multiply(by: 10)
      guard padded.digitCount <= DecimalNumber.maxDigits else {
        return DecimalNumber(kind: .infinity, negative: negative)
      }
      result.coefficient = padded
      result.exponent -= 1
    }
    return result
  }

  static func add(_ a: DecimalNumber, _ b: DecimalNumber) -> DecimalNumber {
    if a.kind == .nan || b.kind == .nan { return .nan }
    if a.kind == .infinity || b.kind == .infinity {
      if a.kind == .infinity && b.kind == .infinity && a.negative != b.negative { return .nan }
      return a.kind == .infinity ? a : b
    }
    // Align to the smaller exponent; a far smaller operand only matters as a sticky digit.
    var (high, low) = a.exponent >= b.exponent ? (a, b) : (b, a)
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
    var result = DecimalNumber(negative: high.negative, coefficient: high.coefficient, exponent: high.exponent)
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

  static func multiply(_ a: DecimalNumber, _ b: DecimalNumber) -> DecimalNumber {
    let negative = a.negative != b.negative
    if a.kind == .nan || b.kind == .nan { return .nan }
    if a.kind == .infinity || b.kind == .infinity {
      if (a.kind == .finite && a.coefficient.isZero) || (b.kind == .finite && b.coefficient.isZero) { return .nan }
      return DecimalNumber(kind: .infinity, negative: negative)
    }
    // Both coefficients have at most 34 digits, so the product fits 256 bits.
    let product = a.coefficient.low.multipliedFullWidth(by: b.coefficient.low)
    let result = DecimalNumber(
      negative: negative, coefficient: Wide(high: product.high, low: product.low), exponent: a.exponent + b.exponent)
    return result.rounded()
  }
}

/// A 256-bit unsigned integer, enough for a product of two Decimal128 coefficients.
struct Wide: Equatable, Comparable {
  var high: UInt128
  var low: UInt128

  static let maxCoefficient: UInt128 = 10_000_000_000_000_000 * 1_000_000_000_000_000_000 - 1

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

// MARK: - $currentDate

/// The current time as a BSON date (milliseconds) or timestamp (seconds, increment 1).
func currentTime(timestamp: Bool) -> BSON {
  var now = timespec()
  clock_gettime(CLOCK_REALTIME, &now)
  if timestamp {
    return .timestamp(BSONTimestamp(timestamp: UInt32(truncatingIfNeeded: now.tv_sec), increment: 1))
  }
  return .datetime(BSONDateTime(millisecondsSinceEpoch: Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000))
}
