// The parser's numbers: JSON number text scanned once and written as int32, int64 or double.

extension ExtendedJSONReader {
  /// Writes the JSON number at `pos`: int32 when the integer fits, else int64, else double; a
  /// number with a fraction or exponent is a double.
  mutating func number() throws(BSONError) -> UInt8 {
    guard let scan = ExtendedJSONNumber.scan(input, from: pos, to: end, lenient: false) else {
      throw error(.invalidJSON, "expected a JSON number, found \(describeByte(at: pos))", at: pos)
    }
    let start = pos
    pos = scan.end
    if scan.isInteger && scan.exact {
      if scan.negative {
        if scan.mantissa <= 0x8000_0000 {
          out.appendInt32LE(Int32(truncatingIfNeeded: 0 &- Int64(scan.mantissa)))
          return 0x10
        }
        if scan.mantissa <= 0x8000_0000_0000_0000 {
          out.appendUInt64LE(0 &- scan.mantissa)
          return 0x12
        }
      } else {
        if scan.mantissa <= 0x7FFF_FFFF {
          out.appendInt32LE(Int32(truncatingIfNeeded: scan.mantissa))
          return 0x10
        }
        if scan.mantissa <= 0x7FFF_FFFF_FFFF_FFFF {
          out.appendUInt64LE(scan.mantissa)
          return 0x12
        }
      }
    }
    out.appendUInt64LE(scan.double(input, from: start).bitPattern)
    return 0x01
  }
}

/// Scanning and converting JSON number text.
enum ExtendedJSONNumber {
  /// A scanned number: its digits as an integer (`exact` when none were dropped), the decimal
  /// exponent to apply, and whether it had neither fraction nor exponent.
  struct Scan {
    var negative = false
    var mantissa: UInt64 = 0
    var exponent = 0
    var isInteger = true
    var exact = true
    var end = 0

    /// The value as a double, correctly rounded.
    func double(_ s: UnsafePointer<UInt8>, from start: Int) -> Double {
      var mantissa = mantissa
      var exponent = exponent
      if exact && mantissa > 1 << 53 {
        // "4837384839313709000" is 4837384839313709e3: drop trailing zeros to stay exact.
        while mantissa % 10 == 0 && mantissa != 0 {
          mantissa /= 10
          exponent &+= 1
        }
      }
      if exact && mantissa <= 1 << 53 && exponent >= -22 && exponent <= 22 {
        // Exact operands and one correctly rounded operation give the correctly rounded result.
        var d = Double(mantissa)
        if exponent >= 0 {
          d *= ExtendedJSONNumber.powersOfTen[exponent]
        } else {
          d /= ExtendedJSONNumber.powersOfTen[-exponent]
        }
        return negative ? -d : d
      }
      let text = String(decoding: UnsafeBufferPointer(start: s + start, count: end &- start), as: UTF8.self)
      // The scanner admitted only decimal digits, a point, an exponent and signs, which Double parses.
      return Double(text) ?? .nan
    }
  }

  static let powersOfTen: [Double] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
    1e20, 1e21, 1e22,
  ]

  /// Scans a number at `i`. Strict mode follows JSON (`-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`);
  /// lenient mode also allows a leading `+`, leading zeros, and `.5` or `5.` forms. Returns
  /// `nil` when the text does not start with a number of that form.
  @inline(__always)
  static func scan(_ s: UnsafePointer<UInt8>, from start: Int, to end: Int, lenient: Bool) -> Scan? {
    var r = Scan()
    var i = start
    if i < end && s[i] == UInt8(ascii: "-") {
      r.negative = true
      i &+= 1
    } else if lenient && i < end && s[i] == UInt8(ascii: "+") {
      i &+= 1
    }
    var digits = 0
    var significant = 0
    @inline(__always) func digit(_ d: UInt8, fraction: Bool) {
      if r.mantissa == 0 && d == 0 {
        if fraction { r.exponent &-= 1 }
        return
      }
      if significant < 19 {
        r.mantissa = r.mantissa &* 10 &+ UInt64(d)
        significant &+= 1
        if fraction { r.exponent &-= 1 }
      } else {
        r.exact = false
        if !fraction { r.exponent &+= 1 }
      }
    }
    let intStart = i
    while i < end, case let d = s[i] &- 0x30, d < 10 {
      digit(d, fraction: false)
      i &+= 1
    }
    digits = i &- intStart
    if !lenient {
      guard digits > 0 else { return nil }
      if digits > 1 && s[intStart] == UInt8(ascii: "0") { return nil }
    }
    if i < end && s[i] == UInt8(ascii: ".") {
      r.isInteger = false
      i &+= 1
      let fracStart = i
      while i < end, case let d = s[i] &- 0x30, d < 10 {
        digit(d, fraction: true)
        i &+= 1
      }
      let fracDigits = i &- fracStart
      if !lenient && fracDigits == 0 { return nil }
      digits &+= fracDigits
    }
    guard digits > 0 else { return nil }
    if i < end && (s[i] == UInt8(ascii: "e") || s[i] == UInt8(ascii: "E")) {
      r.isInteger = false
      i &+= 1
      var negativeExponent = false
      if i < end && (s[i] == UInt8(ascii: "+") || s[i] == UInt8(ascii: "-")) {
        negativeExponent = s[i] == UInt8(ascii: "-")
        i &+= 1
      }
      let expStart = i
      var e = 0
      while i < end, case let d = s[i] &- 0x30, d < 10 {
        if e < 100_000 { e = e &* 10 &+ Int(d) }
        i &+= 1
      }
      guard i > expStart else { return nil }
      r.exponent &+= negativeExponent ? -e : e
    }
    if r.mantissa == 0 { r.exponent = 0 }
    r.end = i
    return r
  }
}
