import Foundation
import PropertyBased
import ReefBSON
import ReefTestSupport
import Testing

/// A Decimal128 from its parts, encoded independently of the library (BID, exponent bias 6176).
private func decimal(negative: Bool = false, _ coefficient: UInt128, _ exponent: Int) -> Decimal128 {
  let high = (negative ? UInt64(1) << 63 : 0) | UInt64(exponent + 6176) << 49 | UInt64(coefficient >> 64)
  return Decimal128(high: high, low: UInt64(truncatingIfNeeded: coefficient))
}

/// A Decimal128 from its 16 bytes in BSON (little-endian) order.
private func decimal(bsonBytes b: ArraySlice<UInt8>) -> Decimal128 {
  precondition(b.count == 16, "a Decimal128 has 16 bytes")
  let start = b.startIndex
  func le64(at offset: Int) -> UInt64 {
    (0..<8).reduce(UInt64(0)) { $0 | UInt64(b[start + offset + $1]) << (8 * $1) }
  }
  return Decimal128(high: le64(at: 8), low: le64(at: 0))
}

/// 10^k as a UInt128.
private func pow10(_ k: Int) -> UInt128 {
  (0..<k).reduce(UInt128(1)) { r, _ in r * 10 }
}

private let maxCoefficient = pow10(34) - 1

@Suite("Decimal128")
struct Decimal128Tests {
  // MARK: - Parsing and formatting by hand

  /// (input, expected value, expected canonical string)
  static let finiteCases: [(String, Decimal128, String)] = [
    ("0", decimal(0, 0), "0"),
    ("-0", decimal(negative: true, 0, 0), "-0"),
    ("+0", decimal(0, 0), "0"),
    ("0.00", decimal(0, -2), "0.00"),
    ("-0.000000", decimal(negative: true, 0, -6), "-0.000000"),
    ("0E-7", decimal(0, -7), "0E-7"),
    ("-0e3", decimal(negative: true, 0, 3), "-0E+3"),
    ("00.0e+2", decimal(0, 1), "0E+1"),
    ("1", decimal(1, 0), "1"),
    ("-76", decimal(negative: true, 76, 0), "-76"),
    ("12.70", decimal(1270, -2), "12.70"),
    ("+0.003", decimal(3, -3), "0.003"),
    ("017.", decimal(17, 0), "17"),
    (".5", decimal(5, -1), "0.5"),
    ("4E+9", decimal(4, 9), "4E+9"),
    ("0.73e-7", decimal(73, -9), "7.3E-8"),
    ("100", decimal(100, 0), "100"),
    ("1E2", decimal(1, 2), "1E+2"),
    ("10E1", decimal(10, 1), "1.0E+2"),
    ("1E-0", decimal(1, 0), "1"),
    ("0.000001", decimal(1, -6), "0.000001"),
    ("0.0000001", decimal(1, -7), "1E-7"),
    ("123E-8", decimal(123, -8), "0.00000123"),
    ("123E-9", decimal(123, -9), "1.23E-7"),
    (
      "-1.23456789012345678901234567890123E+5",
      decimal(negative: true, 123_456_789_012_345_678_901_234_567_890_123, -27),
      "-123456.789012345678901234567890123"
    ),
    ("0000000000000000000000000000000000000000000000001", decimal(1, 0), "1"),
    ("1E+000000000000000000000000000000000000000000000000002", decimal(1, 2), "1E+2"),
    // 34 digits, the largest and smallest magnitudes.
    (
      "1234567890123456789012345678901234", decimal(1_234_567_890_123_456_789_012_345_678_901_234, 0),
      "1234567890123456789012345678901234"
    ),
    (
      "9999999999999999999999999999999999E+6111", decimal(maxCoefficient, 6111),
      "9.999999999999999999999999999999999E+6144"
    ),
    (
      "-9999999999999999999999999999999999E+6111", decimal(negative: true, maxCoefficient, 6111),
      "-9.999999999999999999999999999999999E+6144"
    ),
    ("1E-6176", decimal(1, -6176), "1E-6176"),
    (
      "9.999999999999999999999999999999999E-6143", decimal(maxCoefficient, -6176),
      "9.999999999999999999999999999999999E-6143"
    ),
    // Exact rounding: only trailing zeros beyond 34 digits or below 1E-6176 are dropped.
    (
      "12345678901234567890123456789012340", decimal(1_234_567_890_123_456_789_012_345_678_901_234, 1),
      "1.234567890123456789012345678901234E+34"
    ),
    ("1.0000000000000000000000000000000000000000", decimal(pow10(33), -33), "1.000000000000000000000000000000000"),
    ("10E-6177", decimal(1, -6176), "1E-6176"),
    ("100E-6178", decimal(1, -6176), "1E-6176"),
    // Clamping: zeros are added to bring a large exponent down to 6111.
    ("1E+6112", decimal(10, 6111), "1.0E+6112"),
    ("1E+6144", decimal(pow10(33), 6111), "1.000000000000000000000000000000000E+6144"),
    ("0E+6112", decimal(0, 6111), "0E+6111"),
    ("0E+99999999999999999999999999", decimal(0, 6111), "0E+6111"),
    ("-0E-6177", decimal(negative: true, 0, -6176), "-0E-6176"),
    ("0.00000E-99999999999999999999999999", decimal(0, -6176), "0E-6176"),
  ]

  @Test func parsesFiniteValuesExactly() {
    for (input, expected, canonical) in Self.finiteCases {
      let parsed = Decimal128(input)
      #expect(parsed?.bytes == expected.bytes, "parsing '\(input)'")
      #expect(expected.description == canonical, "formatting the value of '\(input)'")
      #expect(Decimal128(canonical)?.bytes == expected.bytes, "parsing canonical '\(canonical)'")
    }
  }

  @Test func parsesSpecialValuesInAnyCase() {
    for input in ["NaN", "nan", "nAn", "+NaN", "-NaN", "NAN"] {
      let value = Decimal128(input)
      #expect(value?.isNaN == true, "'\(input)' is NaN")
      #expect(value?.description == "NaN", "'\(input)' formats as NaN")
    }
    #expect(Decimal128("NaN").bytes == Decimal128.nan.bytes)
    for input in ["Inf", "inf", "INF", "Infinity", "infinity", "+iNfInItY", "+Inf"] {
      #expect(Decimal128(input)?.bytes == Decimal128.infinity.bytes, "'\(input)' is Infinity")
    }
    for input in ["-Inf", "-inf", "-Infinity", "-INFINITY"] {
      #expect(Decimal128(input)?.bytes == Decimal128.negativeInfinity.bytes, "'\(input)' is -Infinity")
    }
    #expect(Decimal128.infinity.description == "Infinity")
    #expect(Decimal128.negativeInfinity.description == "-Infinity")
    #expect(Decimal128.nan.description == "NaN")
  }

  @Test func rejectsInvalidStrings() {
    let invalid = [
      "", " 1", "1 ", "+", "-", ".", "+.", "-.", "..", "1e", "1e+", "1E-", "e1", "E", ".e1", "1..2", "1.2.3", "1.2.",
      "++1", "+-1", "1-", "1e1.5", "1e+-1", "1ee1", "0x10", "1,000", "1_000", "12f4", "NaN1", "NaNs", "sNaN", "qNaN",
      "-sNaN", "Infinit", "Infinityy", "infinite", "In", "Na", "-", "9Inf", ".Inf", "+.NaN", "1\u{0}", "\u{0}",
      "\u{661}", "1\u{661}", "\u{FF11}", "1E+\u{661}", "Ｉｎｆ", "1e5\n", "\t1",
    ]
    for input in invalid {
      #expect(Decimal128(input) == nil, "'\(input.debugDescription)' must not parse")
    }
  }

  @Test func rejectsInexactRoundingOverflowAndUnderflow() {
    let invalid = [
      "12345678901234567890123456789012345",  // 35 significant digits
      "1.0000000000000000000000000000000001",
      "1E-6177",  // underflow
      "0.1E-6176",
      "15E-6177",
      "1E+6145",  // overflow: needs 35 digits at exponent 6111
      "10000000000000000000000000000000000E+6111",
      "-1E+99999999999999999999",
      "1E-99999999999999999999",
      "1234567890123456789012345678901234E+6112",
    ]
    for input in invalid {
      #expect(Decimal128(input) == nil, "'\(input)' must not parse")
    }
  }

  @Test func parseThrowsInvalidValueWithReason() {
    func message(_ input: String) -> String? {
      let error = #expect(throws: BSONError.self, "'\(input)' must throw") { try Decimal128.parse(input) }
      #expect(error?.kind == .invalidValue, "'\(input)' error kind")
      return error?.message
    }
    #expect(message("")?.contains("empty string") == true)
    #expect(message("1e")?.contains("found '1e'") == true)
    #expect(message("12x")?.contains("offset 2") == true)
    #expect(message("Infinit")?.contains("offset 7") == true)
    #expect(message("12345678901234567890123456789012345")?.contains("inexact") == true)
    #expect(message("1E+6145")?.contains("overflows") == true)
    #expect(message("1E-6177")?.contains("underflows") == true)
    let long = String(repeating: "1", count: 500) + "x"
    #expect((message(long)?.count ?? .max) < 300, "a long input is shortened in the message")
    #expect((try? Decimal128.parse("-12.50"))?.bytes == decimal(negative: true, 1250, -2).bytes)
  }

  // MARK: - Formatting bit patterns

  @Test func formatsEveryNaNAsNaN() {
    let nans: [UInt64] = [0x7C00_0000_0000_0000, 0xFC00_0000_0000_0000, 0x7E00_0000_0000_0000, 0xFE00_0000_0000_0000]
    for high in nans {
      let value = Decimal128(high: high, low: 0x12)
      #expect(value.description == "NaN", "high \(String(high, radix: 16))")
      #expect(value.isNaN && !value.isInfinite && !value.isFinite)
    }
  }

  @Test func formatsNonCanonicalCoefficientsAsZero() {
    // A coefficient of exactly 10^34 is one too many.
    #expect(decimal(pow10(34), 0).description == "0")
    #expect(decimal(negative: true, pow10(34), -3).description == "-0.000")
    #expect(decimal(maxCoefficient, 0).description == "9999999999999999999999999999999999")
    // Bits 126-125 set (the "11" combination form): the exponent moves and the coefficient reads as 0.
    #expect(Decimal128(high: 0x6C10_0000_0000_0000, low: 0).description == "0")
    #expect(Decimal128(high: 0xEC10_0000_0000_0000, low: 0).description == "-0")
    #expect(Decimal128(high: 0x6C11_FFFF_FFFF_FFFF, low: .max).description == "0E+3")
  }

  @Test func flagsAndConstants() {
    #expect(Decimal128.zero.description == "0")
    #expect(Decimal128.zero.bytes == decimal(0, 0).bytes)
    #expect(Decimal128.infinity.isInfinite && !Decimal128.infinity.isNegative && !Decimal128.infinity.isNaN)
    #expect(Decimal128.negativeInfinity.isInfinite && Decimal128.negativeInfinity.isNegative)
    #expect(Decimal128("-0").isNegative && Decimal128("-0").isFinite)
    #expect(!Decimal128("1.5").isNegative && Decimal128("1.5").isFinite)
    #expect(Decimal128("-NaN").isNegative && Decimal128("-NaN").isNaN)
  }

  @Test func initFromInt64IsExactWithExponentZero() {
    #expect(Decimal128(0).bytes == Decimal128.zero.bytes)
    #expect(Decimal128(-12).bytes == decimal(negative: true, 12, 0).bytes)
    #expect(Decimal128(Int64.max).description == "9223372036854775807")
    #expect(Decimal128(Int64.min).description == "-9223372036854775808")
    #expect(Decimal128(Int64.min).bytes == decimal(negative: true, 9_223_372_036_854_775_808, 0).bytes)
  }

  @Test func losslessStringConvertibleRoundTrip() {
    func roundTrip(_ value: Decimal128) -> Bool { Decimal128(value.description)?.bytes == value.bytes }
    for input in ["1.0E+6112", "-0E-6176", "0.001", "123456.7890", "1E-7", "Infinity", "-Infinity"] {
      #expect(roundTrip(Decimal128(input)!), "'\(input)'")
    }
  }

  /// Every canonical finite value formats to a string that parses back to the same bits.
  @Test func randomFiniteValuesRoundTrip() async {
    let digits = Gen.int(in: 1...34)
    let coefficient = Gen.uint128(in: 0...maxCoefficient)
    let exponent = Gen.int(in: -6176...6111)
    await propertyCheck(count: 2000, input: Gen.bool(), digits, coefficient, exponent) { negative, k, c, e in
      let value = decimal(negative: negative, c % pow10(k), e)
      let text = value.description
      #expect(Decimal128(text)?.bytes == value.bytes, "'\(text)' round trip")
    }
    // Small exponents exercise plain notation.
    await propertyCheck(count: 2000, input: Gen.bool(), digits, coefficient, Gen.int(in: -45...3)) {
      negative, k, c, e in
      let value = decimal(negative: negative, c % pow10(k), e)
      let text = value.description
      #expect(Decimal128(text)?.bytes == value.bytes, "'\(text)' round trip")
    }
  }

  // MARK: - BSON corpus

  /// The number of `valid` and `parseErrors` cases in each Decimal128 corpus file.
  static let corpusCaseCounts: [Int: (valid: Int, parseErrors: Int)] = [
    1: (60, 0), 2: (157, 0), 3: (308, 0), 4: (13, 20), 5: (67, 0), 6: (0, 31), 7: (0, 80),
  ]

  /// The corpus directory, or `nil` (with a printed reason) when it is not available.
  static func corpusDirectory() -> String? {
    guard let dir = getenvString("BSON_CORPUS_DIR") else {
      print("BSON_CORPUS_DIR not set; skipping Decimal128 corpus cases")
      return nil
    }
    guard directoryExists(dir) else {
      print("BSON_CORPUS_DIR (\(dir)) is not a directory; skipping Decimal128 corpus cases")
      return nil
    }
    return dir
  }

  @Test func corpusHasExactlyTheExpectedFiles() throws {
    guard let dir = Self.corpusDirectory() else { return }
    let names = try FileManager.default.contentsOfDirectory(atPath: dir)
      .filter { $0.hasPrefix("decimal128-") && $0.hasSuffix(".json") }
    #expect(Set(names) == Set((1...7).map { "decimal128-\($0).json" }))
  }

  @Test(arguments: 1...7)
  func corpusFile(_ number: Int) throws {
    guard let dir = Self.corpusDirectory() else { return }
    let file = "decimal128-\(number).json"
    let data = try #require(readFile(dir + "/" + file), "\(file): cannot read")
    let root = try #require(
      try JSONSerialization.jsonObject(with: Data(data)) as? [String: Any], "\(file): not a JSON object")
    #expect(root["bson_type"] as? String == "0x13", "\(file): bson_type")
    #expect(root["test_key"] as? String == "d", "\(file): test_key")

    var validChecked = 0
    for testCase in root["valid"] as? [[String: Any]] ?? [] where checkValid(testCase, file: file) {
      validChecked += 1
    }
    var parseErrorsChecked = 0
    for testCase in root["parseErrors"] as? [[String: Any]] ?? [] where checkParseError(testCase, file: file) {
      parseErrorsChecked += 1
    }
    let expected = try #require(Self.corpusCaseCounts[number])
    #expect(validChecked == expected.valid, "\(file): valid cases checked")
    #expect(parseErrorsChecked == expected.parseErrors, "\(file): parseErrors cases checked")
  }

  /// Checks one `valid` case; returns whether it could be checked at all.
  private func checkValid(_ testCase: [String: Any], file: String) -> Bool {
    let label = "\(file): \(testCase["description"] as? String ?? "(no description)")"
    guard let canonicalHex = testCase["canonical_bson"] as? String,
      let canonicalJSON = testCase["canonical_extjson"] as? String,
      let canonicalBytes = decimalBytes(documentHex: canonicalHex, label),
      let canonicalString = numberDecimal(json: canonicalJSON, label)
    else {
      Issue.record("\(label): missing or malformed canonical_bson or canonical_extjson")
      return false
    }
    let lossy = testCase["lossy"] as? Bool ?? false

    // cB: native round trip, and the string form is cEJ's.
    let fromBSON = decimal(bsonBytes: canonicalBytes[...])
    #expect(fromBSON.bytes == canonicalBytes, "\(label): canonical_bson round trip")
    #expect(fromBSON.description == canonicalString, "\(label): formatting canonical_bson")

    // cEJ: formats back to itself, and (unless lossy) gives cB.
    checkParse(
      canonicalString, canonicalString: canonicalString, bytes: lossy ? nil : canonicalBytes, label, "canonical")

    // dB: formats to cEJ.
    if let hex = testCase["degenerate_bson"] as? String {
      if let degenerate = decimalBytes(documentHex: hex, label) {
        #expect(
          decimal(bsonBytes: degenerate[...]).description == canonicalString, "\(label): formatting degenerate_bson")
      }
    }
    // dEJ: parses to the value of cEJ (and, unless lossy, to cB).
    if let json = testCase["degenerate_extjson"] as? String, let string = numberDecimal(json: json, label) {
      checkParse(string, canonicalString: canonicalString, bytes: lossy ? nil : canonicalBytes, label, "degenerate")
    }
    // rEJ: a Decimal128 is the same in relaxed form.
    if let json = testCase["relaxed_extjson"] as? String, let string = numberDecimal(json: json, label) {
      checkParse(string, canonicalString: string, bytes: lossy ? nil : canonicalBytes, label, "relaxed")
    }
    // Converted forms: the converted bytes format to the converted string.
    if let hex = testCase["converted_bson"] as? String, let json = testCase["converted_extjson"] as? String,
      let converted = decimalBytes(documentHex: hex, label), let string = numberDecimal(json: json, label)
    {
      #expect(decimal(bsonBytes: converted[...]).description == string, "\(label): formatting converted_bson")
      checkParse(string, canonicalString: string, bytes: converted, label, "converted")
    }
    return true
  }

  /// Parses `string`; expects it to format as `canonicalString` and, when given, to have `bytes`.
  private func checkParse(
    _ string: String, canonicalString: String, bytes: [UInt8]?, _ label: String, _ form: String
  ) {
    guard let parsed = Decimal128(string) else {
      Issue.record("\(label): \(form) string '\(string)' did not parse")
      return
    }
    #expect(parsed.description == canonicalString, "\(label): \(form) string formats as canonical")
    if let bytes {
      #expect(parsed.bytes == bytes, "\(label): \(form) string '\(string)' gives canonical_bson")
    }
  }

  /// Checks one `parseErrors` case; returns whether it could be checked at all.
  private func checkParseError(_ testCase: [String: Any], file: String) -> Bool {
    let label = "\(file): \(testCase["description"] as? String ?? "(no description)")"
    guard let string = testCase["string"] as? String else {
      Issue.record("\(label): missing string")
      return false
    }
    #expect(Decimal128(string) == nil, "\(label): '\(string)' must not parse")
    #expect(throws: BSONError.self, "\(label): '\(string)' must throw") { try Decimal128.parse(string) }
    return true
  }

  /// The 16 value bytes of a corpus document `{"d": <decimal128>}` given in hex.
  private func decimalBytes(documentHex hex: String, _ label: String) -> [UInt8]? {
    let doc = bytes(hex: hex)
    let layoutOK =
      doc.count == 24 && doc[0..<4] == [24, 0, 0, 0] && doc[4] == 0x13 && doc[5] == UInt8(ascii: "d") && doc[6] == 0
      && doc[23] == 0
    #expect(layoutOK, "\(label): a 24-byte document {\"d\": <decimal128>}")
    return layoutOK ? Array(doc[7..<23]) : nil
  }

  /// The string inside `{"d": {"$numberDecimal": "<string>"}}`.
  private func numberDecimal(json: String, _ label: String) -> String? {
    let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
    let string = (object?["d"] as? [String: Any])?["$numberDecimal"] as? String
    #expect(string != nil, "\(label): extended JSON \(json) has no d.$numberDecimal string")
    return string
  }
}
