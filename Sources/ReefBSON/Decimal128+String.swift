// Decimal128 text conversion per the BSON Decimal128 specification: "From String Representation"
// (parsing, with exact rounding and clamping only) and "To String Representation" (formatting).
//
// Layout (BID, IEEE 754-2008): bit 127 is the sign. When bits 126-125 are not both set, bits
// 126-113 hold the biased exponent and bits 112-0 the coefficient. When they are both set, bits
// 124-123 both set mean a special value (bit 122: 0 = infinity, 1 = NaN); otherwise bits 124-111
// hold the exponent and the coefficient would be 2^113 or more, which is above 10^34 - 1, so such
// a value is non-canonical and reads as a zero coefficient.

extension Decimal128: CustomStringConvertible, LosslessStringConvertible {
  /// The exponent bias of the BID encoding.
  @inlinable static var exponentBias: Int { 6176 }

  /// Not a number: the canonical quiet NaN, positive, without a payload.
  public static let nan = Decimal128(high: 0x7C00_0000_0000_0000, low: 0)
  /// Positive infinity.
  public static let infinity = Decimal128(high: 0x7800_0000_0000_0000, low: 0)
  /// Negative infinity.
  public static let negativeInfinity = Decimal128(high: 0xF800_0000_0000_0000, low: 0)
  /// Zero with exponent 0 (`"0"`).
  public static let zero = Decimal128(high: 0x3040_0000_0000_0000, low: 0)

  /// Whether the value is a NaN (quiet or signaling, either sign, any payload).
  public var isNaN: Bool { high & 0x7C00_0000_0000_0000 == 0x7C00_0000_0000_0000 }

  /// Whether the value is positive or negative infinity.
  public var isInfinite: Bool { high & 0x7C00_0000_0000_0000 == 0x7800_0000_0000_0000 }

  /// Whether the value is neither infinite nor a NaN.
  public var isFinite: Bool { high & 0x7800_0000_0000_0000 != 0x7800_0000_0000_0000 }

  /// Whether the sign bit is set; true for negative numbers and also for `-0`, `-Infinity` and a
  /// NaN with the sign bit set.
  public var isNegative: Bool { high >> 63 == 1 }

  /// Creates the exact value of an integer, with exponent 0 (so `Decimal128(-12)` is `"-12"`).
  public init(_ value: Int64) {
    self.init(negative: value < 0, coefficient: UInt128(value.magnitude), exponent: 0)
  }

  /// Parses a string per the Decimal128 specification; returns `nil` when it is not one.
  ///
  /// Accepted: an optional sign, then digits with an optional decimal point (at least one digit)
  /// and an optional exponent (`e` or `E`, an optional sign, digits); or `Inf`, `Infinity` or `NaN`
  /// in any case, with an optional sign. No whitespace. The value is stored exactly as written
  /// (`"2.00"` keeps exponent -2), except that trailing zeros are dropped from a coefficient longer
  /// than 34 digits or below the smallest exponent, and zeros are added to bring an exponent above
  /// 6111 into range (clamping). Anything that would need inexact rounding, overflow or underflow
  /// returns `nil`. ``parse(_:)`` says why a string is rejected.
  ///
  /// - Complexity: O(*n*) in the length of the string.
  public init?(_ description: String) {
    var text = description
    guard case .success(let value) = text.withUTF8({ Decimal128.parse(utf8: $0) }) else { return nil }
    self = value
  }

  /// Parses a string per the Decimal128 specification, as ``init(_:)-(String)`` does, and says
  /// what was wrong when it is not one.
  ///
  /// - Throws: ``BSONError`` of kind ``BSONError/Kind/invalidValue`` for a string that is not a
  ///   numeric string, or whose value cannot be stored exactly (inexact rounding, overflow or
  ///   underflow).
  /// - Complexity: O(*n*) in the length of the string.
  public static func parse(_ text: String) throws(BSONError) -> Decimal128 {
    var copy = text
    switch copy.withUTF8({ parse(utf8: $0) }) {
    case .success(let value): return value
    case .failure(let failure): throw failure.error(for: text)
    }
  }

  /// The string form of the value per the Decimal128 specification's "To String Representation".
  ///
  /// Plain notation when the exponent is at most 0 and the adjusted exponent (exponent plus the
  /// number of coefficient digits, less one) is at least -6 (`"0.001"`, `"-12.50"`), scientific
  /// notation otherwise (`"1.0E+3"`, `"1E-7"`). Every NaN reads `"NaN"`; the infinities read
  /// `"Infinity"` and `"-Infinity"`; a coefficient above 10^34 - 1 (non-canonical) reads as 0.
  public var description: String {
    let parts = ExactDecimal(self)
    switch parts.kind {
    case .nan: return "NaN"
    case .infinity: return parts.negative ? "-Infinity" : "Infinity"
    case .finite:
      return Decimal128.format(negative: parts.negative, coefficient: parts.coefficient, exponent: parts.exponent)
    }
  }
}

// MARK: - Encoding

extension Decimal128 {
  /// Creates a finite value from its parts; the caller guarantees `coefficient <= 10^34 - 1` and
  /// `ExactDecimal.minExponent...ExactDecimal.maxExponent ~= exponent`.
  init(negative: Bool, coefficient: UInt128, exponent: Int) {
    let biased = UInt64(exponent + Decimal128.exponentBias)
    let sign: UInt64 = negative ? 1 << 63 : 0
    self.init(
      high: sign | biased << 49 | UInt64(truncatingIfNeeded: coefficient >> 64),
      low: UInt64(truncatingIfNeeded: coefficient)
    )
  }
}

// MARK: - Parsing

extension Decimal128 {
  /// Why a string was rejected; turned into a ``BSONError`` message only when someone asks.
  enum ParseFailure: Error {
    /// Not a numeric string: the offending byte offset (the length when the string ended early).
    case syntax(offset: Int)
    /// More than 34 significant digits, and dropping the extra ones would lose a non-zero digit.
    case inexact(digits: Int)
    /// The value needs more than 34 digits at the largest exponent.
    case overflow
    /// The value needs an exponent below -6176, and dropping digits would lose a non-zero one.
    case underflow

    /// The error to throw for `text`.
    func error(for text: String) -> BSONError {
      let found = Decimal128.quoted(text)
      let message: String
      switch self {
      case .syntax(let offset):
        if text.isEmpty {
          message = "expected a decimal number, 'Infinity' or 'NaN', found an empty string"
        } else {
          message =
            "expected a decimal number (optional sign, digits with an optional '.', optional exponent), "
            + "'Infinity', 'Inf' or 'NaN', found \(found) (invalid at byte offset \(offset))"
        }
      case .inexact(let digits):
        message =
          "expected at most 34 significant digits (or extra trailing zeros only), found \(found) "
          + "with \(digits) digits, which would need inexact rounding"
      case .overflow:
        message = "expected a magnitude below 1E+6145, found \(found), which overflows Decimal128"
      case .underflow:
        message = "expected a value with no non-zero digit below 1E-6176, found \(found), which underflows Decimal128"
      }
      return BSONError(.invalidValue, message)
    }
  }

  /// `text` in single quotes, shortened in the middle when it is long.
  static func quoted(_ text: String) -> String {
    guard text.count > 64 else { return "'\(text)'" }
    return "'\(text.prefix(40))...\(text.suffix(16))' (\(text.utf8.count) bytes)"
  }

  /// The largest exponent magnitude kept while reading digits; larger ones saturate here, which
  /// cannot change the outcome since no string is long enough to bring them back into range.
  static let exponentSaturation = 1_000_000_000_000_000

  /// Parses UTF-8 text per the specification's numeric-string grammar.
  static func parse(utf8 u: UnsafeBufferPointer<UInt8>) -> Result<Decimal128, ParseFailure> {
    let n = u.count
    var i = 0
    var negative = false
    if i < n, u[i] == UInt8(ascii: "+") || u[i] == UInt8(ascii: "-") {
      negative = u[i] == UInt8(ascii: "-")
      i += 1
    }
    if i < n, u[i] != UInt8(ascii: "."), !isDigit(u[i]) {
      return parseSpecial(u, from: i, negative: negative)
    }

    // Mantissa: digits with at most one '.', at least one digit.
    let mantissaStart = i
    var digitCount = 0
    var pointIndex = -1  // number of digits before the '.', or -1 when there is none
    var firstNonZero = -1  // index among the digits
    var lastNonZero = -1
    while i < n {
      let c = u[i]
      if isDigit(c) {
        if c != UInt8(ascii: "0") {
          if firstNonZero < 0 { firstNonZero = digitCount }
          lastNonZero = digitCount
        }
        digitCount += 1
      } else if c == UInt8(ascii: "."), pointIndex < 0 {
        pointIndex = digitCount
      } else {
        break
      }
      i += 1
    }
    guard digitCount > 0 else { return .failure(.syntax(offset: i)) }
    let fractionDigits = pointIndex < 0 ? 0 : digitCount - pointIndex

    // Exponent: 'e' or 'E', optional sign, at least one digit, then the end of the string.
    var exponentValue = 0
    if i < n {
      guard u[i] == UInt8(ascii: "e") || u[i] == UInt8(ascii: "E") else { return .failure(.syntax(offset: i)) }
      i += 1
      var exponentNegative = false
      if i < n, u[i] == UInt8(ascii: "+") || u[i] == UInt8(ascii: "-") {
        exponentNegative = u[i] == UInt8(ascii: "-")
        i += 1
      }
      guard i < n else { return .failure(.syntax(offset: i)) }
      while i < n {
        guard isDigit(u[i]) else { return .failure(.syntax(offset: i)) }
        exponentValue = Swift.min(exponentValue * 10 + Int(u[i] &- UInt8(ascii: "0")), exponentSaturation)
        i += 1
      }
      if exponentNegative { exponentValue = -exponentValue }
    }
    var exponent = exponentValue - fractionDigits

    guard firstNonZero >= 0 else {
      // Zero: only the exponent matters, and clamping it into range is exact.
      exponent = Swift.min(Swift.max(exponent, ExactDecimal.minExponent), ExactDecimal.maxExponent)
      return .success(Decimal128(negative: negative, coefficient: 0, exponent: exponent))
    }

    // Drop digits beyond 34, and digits below the smallest exponent; only zeros may go.
    var count = digitCount - firstNonZero
    let trailingZeros = digitCount - 1 - lastNonZero
    let belowRange = ExactDecimal.minExponent - exponent
    let drop = Swift.max(0, count - ExactDecimal.maxDigits, belowRange)
    if drop > trailingZeros {
      return .failure(belowRange > trailingZeros ? .underflow : .inexact(digits: lastNonZero - firstNonZero + 1))
    }
    count -= drop
    exponent += drop

    // Clamp an exponent above the largest by adding zeros to the coefficient.
    var padding = 0
    if exponent > ExactDecimal.maxExponent {
      padding = exponent - ExactDecimal.maxExponent
      guard count + padding <= ExactDecimal.maxDigits else { return .failure(.overflow) }
      exponent = ExactDecimal.maxExponent
    }

    var coefficient: UInt128 = 0
    // At the first significant digit, or at the '.' just before it; one byte further when the '.' is earlier.
    var position = mantissaStart + firstNonZero + (pointIndex >= 0 && pointIndex < firstNonZero ? 1 : 0)
    for _ in 0..<count {
      if u[position] == UInt8(ascii: ".") { position += 1 }
      // Safe: at most 34 digits, so the coefficient stays below 10^34 < 2^113.
      coefficient = coefficient &* 10 &+ UInt128(u[position] &- UInt8(ascii: "0"))
      position += 1
    }
    for _ in 0..<padding {
      // Safe: count + padding <= 34 digits, checked above.
      coefficient = coefficient &* 10
    }
    return .success(Decimal128(negative: negative, coefficient: coefficient, exponent: exponent))
  }

  /// Parses `Inf`, `Infinity` or `NaN` (any case) from `start` to the end of `u`.
  static func parseSpecial(
    _ u: UnsafeBufferPointer<UInt8>, from start: Int, negative: Bool
  ) -> Result<Decimal128, ParseFailure> {
    let rest = UnsafeBufferPointer(rebasing: u[start...])
    if matchesIgnoringCase(rest, "nan") {
      return .success(negative ? Decimal128(high: 0xFC00_0000_0000_0000, low: 0) : .nan)
    }
    if matchesIgnoringCase(rest, "inf") || matchesIgnoringCase(rest, "infinity") {
      return .success(negative ? .negativeInfinity : .infinity)
    }
    // Report the first byte that does not continue any of the names.
    var offset = 0
    while offset < rest.count,
      ["nan", "infinity"].contains(where: { prefixMatches(rest, $0, length: offset + 1) })
    {
      offset += 1
    }
    return .failure(.syntax(offset: start + offset))
  }

  /// Whether `bytes` spells the lowercase ASCII `word`, ignoring case.
  static func matchesIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ word: StaticString) -> Bool {
    bytes.count == word.utf8CodeUnitCount && prefixMatches(bytes, word, length: bytes.count)
  }

  /// Whether the first `length` bytes of `bytes` match those of the lowercase ASCII `word`,
  /// ignoring case.
  static func prefixMatches(_ bytes: UnsafeBufferPointer<UInt8>, _ word: StaticString, length: Int) -> Bool {
    guard length <= bytes.count, length <= word.utf8CodeUnitCount else { return false }
    let w = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
    for k in 0..<length where bytes[k] | 0x20 != w[k] { return false }
    return true
  }

  /// Whether `c` is an ASCII digit.
  @inline(__always) static func isDigit(_ c: UInt8) -> Bool {
    c &- UInt8(ascii: "0") < 10
  }
}

// MARK: - Formatting

extension Decimal128 {
  /// Formats a finite value per "To String Representation".
  static func format(negative: Bool, coefficient: UInt128, exponent: Int) -> String {
    // 34 digits, a sign, a point and "E+6144" need at most 42 bytes; so do 5 leading zeros + "0.".
    String(unsafeUninitializedCapacity: 48) { out in
      withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 40) { digitBuffer in
        let digits = writeDigits(coefficient, into: digitBuffer)
        var k = 0
        func put(_ byte: UInt8) {
          out[k] = byte
          k += 1
        }
        if negative { put(UInt8(ascii: "-")) }
        let adjusted = exponent + digits.count - 1
        if exponent <= 0, adjusted >= -6 {
          // Plain notation; -exponent digits go after the point.
          let integerDigits = digits.count + exponent
          if exponent == 0 {
            for d in digits { put(d) }
          } else if integerDigits > 0 {
            for d in digits[..<integerDigits] { put(d) }
            put(UInt8(ascii: "."))
            for d in digits[integerDigits...] { put(d) }
          } else {
            put(UInt8(ascii: "0"))
            put(UInt8(ascii: "."))
            for _ in 0 ..< -integerDigits { put(UInt8(ascii: "0")) }
            for d in digits { put(d) }
          }
        } else {
          // Scientific notation: d[.ddd]E(+|-)n with the adjusted exponent.
          put(digits[0])
          if digits.count > 1 {
            put(UInt8(ascii: "."))
            for d in digits[1...] { put(d) }
          }
          put(UInt8(ascii: "E"))
          put(adjusted < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
          let magnitude = adjusted.magnitude
          var divisor: UInt = 1
          while divisor * 10 <= magnitude { divisor *= 10 }
          repeat {
            put(UInt8(ascii: "0") + UInt8(magnitude / divisor % 10))
            divisor /= 10
          } while divisor > 0
        }
        return k
      }
    }
  }

  /// Writes the decimal digits of `value` (no leading zeros; "0" for zero) at the end of `buffer`
  /// and returns them, indexed from 0. `value` must be below 10^34 and `buffer` hold 34 bytes.
  static func writeDigits(
    _ value: UInt128, into buffer: UnsafeMutableBufferPointer<UInt8>
  ) -> UnsafeBufferPointer<UInt8> {
    // Two 64-bit halves in base 10^19 keep the 128-bit division to one.
    let (upper, lower) = value.quotientAndRemainder(dividingBy: 10_000_000_000_000_000_000)
    var end = buffer.count
    func emit(_ part: UInt64, minimumDigits: Int) {
      var part = part
      var written = 0
      repeat {
        end -= 1
        buffer[end] = UInt8(ascii: "0") + UInt8(part % 10)
        part /= 10
        written += 1
      } while part > 0 || written < minimumDigits
    }
    if upper > 0 {
      emit(UInt64(truncatingIfNeeded: lower), minimumDigits: 19)
      emit(UInt64(truncatingIfNeeded: upper), minimumDigits: 1)
    } else {
      emit(UInt64(truncatingIfNeeded: lower), minimumDigits: 1)
    }
    return UnsafeBufferPointer(rebasing: buffer[end...])
  }
}
