import ReefBSON

/// The normalisations applied to Extended JSON before comparing Reef's output with libbson's.
///
/// Each one is tied to a clause of the Extended JSON v2 specification (shared/specs/extended-json.md)
/// and is as narrow as possible: it rewrites one wrapper, only in the form the clause allows or the
/// installed libbson (1.23) writes, and leaves every other difference visible. One more libbson
/// deviation is handled on the input side, see ``canonicalDecimals(_:)``.
enum ExtendedJSONNormalization {
  /// Both sides: `{"$numberDouble": "<decimal>"}` is compared by the double the string denotes.
  ///
  /// Spec, Conversion table, "Double [finite]": the canonical form is "64-bit signed floating point
  /// as a decimal string"; the spec does not fix the digits. libbson 1.23 prints `%.20g`
  /// ("0.10000000000000000555", "1.0000000000000000525e+300") where the corpus shows the shortest
  /// round-trip form ("1.0E+300"); both denote the same double. "NaN", "Infinity" and "-Infinity"
  /// (spec, "Representation of Non-finite Numeric Values") are left as strings, and anything that is
  /// not a plain decimal number is left alone (and so reported).
  static func numberDoubleByValue(_ v: ParsedJSON) -> ParsedJSON {
    guard v.singleKey == "$numberDouble", let s = v["$numberDouble"]?.text, isDecimalNumber(s),
      let d = Double(s)
    else { return v }
    return .object([Array("$numberDouble".utf8): .double(d.bitPattern)])
  }

  /// libbson only: a relaxed `{"$date": "<ISO-8601>"}` after year 9999 becomes the canonical
  /// `{"$date": {"$numberLong": "<ms>"}}`.
  ///
  /// Spec, Conversion table, "Datetime [year before 1970 or after 9999]": the relaxed form is "Same as
  /// Canonical Extended JSON". libbson 1.23 (`_bson_as_json_visit_date_time`) only checks for negative
  /// values and writes later dates as ISO strings with five or more year digits
  /// ("10000-01-01T00:00:00Z", "292278994-08-17T07:12:55.807Z"). The string is converted back to
  /// milliseconds, so a wrong date from libbson would still show up as a difference.
  static func libbsonDateAfter9999(_ v: ParsedJSON) -> ParsedJSON {
    guard v.singleKey == "$date", let s = v["$date"]?.text, let ms = millisecondsSinceEpoch(rfc3339: s),
      ms > 253_402_300_799_999
    else { return v }
    return .object([Array("$date".utf8): .object([Array("$numberLong".utf8): .string(Array(String(ms).utf8))])])
  }

  /// Normalises spec-conforming output (Reef's, the corpus's).
  static func conforming(_ v: ParsedJSON) -> ParsedJSON { v.rewritten(numberDoubleByValue) }

  /// Normalises libbson's output.
  static func libbson(_ v: ParsedJSON) -> ParsedJSON {
    v.rewritten { libbsonDateAfter9999(numberDoubleByValue($0)) }
  }

  /// Whether `s` is a JSON-style decimal number (optional minus, digits, optional fraction and exponent).
  static func isDecimalNumber(_ s: String) -> Bool {
    var u = Substring(s).utf8[...]
    func digits() -> Bool {
      let n = u.prefix { $0 >= 48 && $0 <= 57 }.count
      u = u.dropFirst(n)
      return n > 0
    }
    if u.first == UInt8(ascii: "-") { u = u.dropFirst() }
    guard digits() else { return false }
    if u.first == UInt8(ascii: ".") {
      u = u.dropFirst()
      guard digits() else { return false }
    }
    if let e = u.first, e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
      u = u.dropFirst()
      if let sign = u.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { u = u.dropFirst() }
      guard digits() else { return false }
    }
    return u.isEmpty
  }
}

/// Milliseconds since the epoch of a UTC timestamp `Y-MM-DDTHH:MM:SS[.fff]Z` with any number of
/// year digits (libbson writes years past 9999), or `nil` when `s` is not one.
func millisecondsSinceEpoch(rfc3339 s: String) -> Int64? {
  let u = Array(s.utf8)
  guard let dash = u.firstIndex(of: UInt8(ascii: "-")), dash >= 4, u.last == UInt8(ascii: "Z") else { return nil }
  func number(_ r: Range<Int>) -> Int64? {
    guard r.upperBound <= u.count, !r.isEmpty, u[r].allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
    return Int64(String(decoding: u[r], as: UTF8.self))
  }
  let rest = dash + 1  // MM-DDTHH:MM:SS then Z or .fffZ
  guard u.count == rest + 15 || u.count == rest + 19, u[rest + 2] == UInt8(ascii: "-"),
    u[rest + 5] == UInt8(ascii: "T"), u[rest + 8] == UInt8(ascii: ":"), u[rest + 11] == UInt8(ascii: ":")
  else { return nil }
  guard let year = number(0..<dash), let month = number(rest..<(rest + 2)), let day = number((rest + 3)..<(rest + 5)),
    let hour = number((rest + 6)..<(rest + 8)), let minute = number((rest + 9)..<(rest + 11)),
    let second = number((rest + 12)..<(rest + 14))
  else { return nil }
  var millis: Int64 = 0
  if u.count == rest + 19 {
    guard u[rest + 14] == UInt8(ascii: "."), let ms = number((rest + 15)..<(rest + 18)) else { return nil }
    millis = ms
  }
  // Days from the civil date (proleptic Gregorian), valid for any Int64-sized year.
  let y = month <= 2 ? year - 1 : year
  let era = (y >= 0 ? y : y - 399) / 400
  let yoe = y - era * 400
  let doy = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
  let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
  let (a, o1) = days.multipliedReportingOverflow(by: 86_400_000)
  let (b, o2) = a.addingReportingOverflow(((hour * 60 + minute) * 60 + second) * 1000 + millis)
  return o1 || o2 ? nil : b
}

/// The fields with every non-canonical Decimal128 replaced by the canonical encoding of the same
/// value: the zero with the same sign and exponent. This is the document libbson is asked to write.
///
/// Decimal128 spec, "To String Representation": "certain other invalid representations ... must be
/// treated as zeros, as per IEEE 754-2008" (IEEE 754-2008 section 3.5.2: a BID coefficient above
/// 10^34 - 1 is non-canonical and its value is zero). libbson 1.23's `bson_decimal128_to_string` does
/// this for the "11" combination form (coefficient >= 2^113, the only form the corpus tests) but not
/// for coefficients from 10^34 to 2^113 - 1, which it prints with 35 digits or, truncated, with 34
/// ("1.000122956863806374670108638559087E-556" for the value -0E-590). Giving libbson the canonical
/// zero still checks Reef's formatting of such values, against libbson's formatting of that zero.
func canonicalDecimals(_ fields: [Field]) -> [Field] {
  func node(_ n: Node) -> Node {
    switch n {
    case .document(let f): .document(canonicalDecimals(f))
    case .array(let items): .array(items.map(node))
    case .codeWithScope(let code, let scope): .codeWithScope(code: code, scope: canonicalDecimals(scope))
    case .scalar(.decimal128(let d)) where isNonCanonicalBelow2To113(d):
      .scalar(.decimal128(Decimal128(high: d.high & 0xFFFE_0000_0000_0000, low: 0)))
    case .scalar: n
    }
  }
  return fields.map { Field(key: $0.key, value: node($0.value)) }
}

/// Whether `d` uses the ordinary combination form (bits 126-125 not both set) with a coefficient above
/// 10^34 - 1. (Keeping the top 15 bits, sign and exponent, gives the zero with the same exponent.)
func isNonCanonicalBelow2To113(_ d: Decimal128) -> Bool {
  guard (d.high >> 61) & 3 != 3 else { return false }
  let coefficient = UInt128(d.high & 0x1_FFFF_FFFF_FFFF) << 64 | UInt128(d.low)
  return coefficient > 9_999_999_999_999_999 * 1_000_000_000_000_000_000 + 999_999_999_999_999_999
}
