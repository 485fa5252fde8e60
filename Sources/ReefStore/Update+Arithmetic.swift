@_spi(ReefInternal) import ReefBSON

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
  arithmetic(a, b, int64: { $0.addingReportingOverflow($1) }, double: +, decimal: { $0.adding($1) })
}

/// `a × b` with MongoDB's promotion, or `nil` when int64 arithmetic overflows.
func multiply(_ a: BSON, _ b: BSON) -> BSON? {
  arithmetic(a, b, int64: { $0.multipliedReportingOverflow(by: $1) }, double: *, decimal: { $0.multiplied(by: $1) })
}

private func arithmetic(
  _ a: BSON, _ b: BSON, int64: (Int64, Int64) -> (partialValue: Int64, overflow: Bool),
  double: (Double, Double) -> Double, decimal: (ExactDecimal, ExactDecimal) -> ExactDecimal
) -> BSON? {
  switch (a, b) {
  case (.int32(let x), .int32(let y)):
    let result = int64(Int64(x), Int64(y)).partialValue  // cannot overflow from int32 operands
    return Int32(exactly: result).map(BSON.int32) ?? .int64(result)
  case (.int32, .int64), (.int64, .int32), (.int64, .int64):
    let result = int64(integer(a)!, integer(b)!)
    return result.overflow ? nil : .int64(result.partialValue)
  case (.decimal128, _), (_, .decimal128):
    guard let x = decimalOperand(a), let y = decimalOperand(b) else { return nil }
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

// MARK: - Decimal128 operands

/// The exact value of an int32, int64 or Decimal128; a double rounded to 15 significant digits,
/// as MongoDB converts it to Decimal128; nil for other types.
private func decimalOperand(_ value: BSON) -> ExactDecimal? {
  switch value {
  case .int32(let n): ExactDecimal(Int64(n))
  case .int64(let n): ExactDecimal(n)
  case .double(let d): decimalOperand(double: d)
  case .decimal128(let d): ExactDecimal(d)
  default: nil
  }
}

/// A double as MongoDB converts it to Decimal128: rounded to 15 significant digits.
func decimalOperand(double: Double) -> ExactDecimal {
  let negative = double.sign == .minus
  if double.isNaN { return ExactDecimal(kind: .nan, negative: negative) }
  if double.isInfinite { return ExactDecimal(kind: .infinity, negative: negative) }
  if double == 0 { return ExactDecimal(negative: negative, coefficient: 0, exponent: 0) }
  // "%.14e" gives d.dddddddddddddde±x: 15 significant digits, correctly rounded.
  var buffer = [CChar](repeating: 0, count: 64)
  _ = withVaList([double.magnitude]) { vsnprintf(&buffer, buffer.count, "%.14e", $0) }
  let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  guard let e = text.firstIndex(of: "e"), let power = Int(text[text.index(after: e)...]) else {
    return ExactDecimal(negative: negative, coefficient: 0, exponent: 0)
  }
  let digits = text[..<e].filter { $0 != "." }
  return ExactDecimal(negative: negative, coefficient: UInt128(digits) ?? 0, exponent: power - 14)
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
