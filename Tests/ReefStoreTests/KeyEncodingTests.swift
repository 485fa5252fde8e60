@_spi(ReefInternal) import ReefBSON
import ReefQuery
import ReefTestSupport
import Testing

@testable import ReefStore

// MARK: - Seeded values

/// Random BSON values of every type, drawn mostly from small pools so that equal and nearly
/// equal values meet often.
struct KeyValueGenerator {
  var rng: SplitMix64

  init(seed: UInt64) { rng = SplitMix64(seed: seed) }

  mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &rng)] }
  mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &rng) < percent }

  mutating func value(depth: Int = 2) -> BSON {
    switch Int.random(in: 0..<24, using: &rng) {
    case 0: return pick([.minKey, .maxKey, .null, .undefined])
    case 1...7: return number()
    case 8...10: return .string(string())
    case 11: return .symbol(string())
    case 12: return depth > 0 ? .document(document(depth: depth - 1)) : .document(Document())
    case 13: return depth > 0 ? .array(array(depth: depth - 1)) : .array(BSONArray())
    case 14:
      let subtype = pick([0, 2, 4, 0x80, 0xFF] as [UInt8])
      return .binary(Binary(subtype: Binary.Subtype(rawValue: subtype), data: bytes(maxCount: 3)))
    case 15: return .objectId(objectId())
    case 16: return .bool(chance(50))
    case 17:
      let millis =
        chance(70)
        ? pick([Int64.min, Int64.max, 0, -1, 1, Int64.min + 1]) : Int64.random(in: .min ... .max, using: &rng)
      return .datetime(BSONDateTime(millisecondsSinceEpoch: millis))
    case 18:
      let parts: [UInt32] = [0, 1, 0x7FFF_FFFF, 0x8000_0000, UInt32.max]
      return .timestamp(BSONTimestamp(timestamp: pick(parts), increment: pick(parts)))
    case 19:
      var regex = BSONRegularExpression(pattern: pick(["", "a", "a.*", "b", "é"]))
      regex.options = pick(["", "i", "im", "mi", "x"])  // stored order, not re-sorted
      return .regex(regex)
    case 20: return .dbPointer(DBPointer(ref: string(), id: objectId()))
    case 21: return .javascript(string())
    case 22:
      let scope = depth > 0 ? document(depth: depth - 1) : Document()
      return .javascriptWithScope(JavaScriptWithScope(code: string(), scope: scope))
    default: return number()
    }
  }

  mutating func bytes(maxCount: Int) -> [UInt8] {
    (0..<Int.random(in: 0...maxCount, using: &rng)).map { _ in pick([0, 1, 0x7F, 0xFF] as [UInt8]) }
  }

  mutating func objectId() -> ObjectId {
    if chance(50) { return ObjectId(bytes: [UInt8](repeating: pick([0, 1, 0xFF]), count: 12))! }
    return ObjectId(bytes: (0..<12).map { _ in pick([0, 1, 0xFF] as [UInt8]) })!
  }

  mutating func string() -> String {
    let prefixes = ["", "", "a", String(repeating: "x", count: 300), String(repeating: "x", count: 300) + "\0"]
    let alphabet = ["\0", "a", "b", "é", "😀", "\u{7F}", "\u{80}", "x"]
    var s = pick(prefixes)
    for _ in 0..<Int.random(in: 0...3, using: &rng) { s += pick(alphabet) }
    return s
  }

  mutating func document(depth: Int) -> Document {
    var builder = DocumentBuilder()
    for _ in 0..<Int.random(in: 0...3, using: &rng) {
      builder.append(pick(["", "a", "b", "ab", "é"]), value(depth: depth))
    }
    return builder.document
  }

  mutating func array(depth: Int) -> BSONArray {
    BSONArray((0..<Int.random(in: 0...3, using: &rng)).map { _ in value(depth: depth) })
  }

  static let decimalStrings = [
    "0", "-0", "0E+100", "0E-6176", "1", "-1", "1.00", "1.0", "0.1", "-0.1", "0.10", "5E-1", "0.5", "1E+2", "100",
    "1E6144", "-1E6144", "1E400", "-1E400", "1E-400", "NaN", "-NaN", "Infinity", "-Infinity",
    "9.999999999999999999999999999999999E+6144", "-9.999999999999999999999999999999999E+6144", "1E-6176",
    "-1E-6176", "9007199254740993", "9007199254740992", "9223372036854775807", "9223372036854775808",
    "-9223372036854775808", "-9223372036854775809", "2147483647", "2147483648", "1.7976931348623157E+308",
    "1.797693134862315708145274237317044E+308", "4.9E-324", "4.940656458412465441765687928682213E-324",
    "12345678901234567890123456789012.34", "123.456", "-123.456E-10", "3.14", "1E+19", "18446744073709551616",
    "0.1000000000000000055511151231257827", "0.1000000000000000055511151231257828",
  ]

  static let decimalBits: [Decimal128] = [
    Decimal128(high: 0x7E00_0000_0000_0000, low: 0),  // sNaN
    Decimal128(high: 0xFC00_0000_0000_0000, low: 12),  // -NaN with payload
    Decimal128(high: 0x7C00_0000_0000_0000, low: 0x1234),  // NaN with payload
    Decimal128(high: 0x6C10_0000_0000_0000, low: 0),  // large-coefficient form: non-canonical zero
    Decimal128(high: 0x3041_ED09_BEAD_87C0, low: 0x378D_8E64_0000_0000),  // coefficient 10^34: zero
    Decimal128(high: 0xB041_ED09_BEAD_87C0, low: 0x378D_8E64_0000_0001),  // negative, > 10^34 - 1: zero
    Decimal128(high: 0x7800_0000_0000_0000, low: 99),  // infinity with junk
    Decimal128(high: 0x8000_0000_0000_0000, low: 0),  // -0E-6176
  ]

  static let doubles: [Double] = [
    0, -0.0, 1, -1, 1.5, -1.5, 0.1, -0.1, 0.5, 3.14, 100, 1e-7, 1e19, 1e23, 1e300, 1e-300, -1e300, .nan, -.nan,
    Double(nan: 5, signaling: true), .infinity, -.infinity, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
    .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude, Double.leastNormalMagnitude.nextDown,
    0x1p53, Double(0x1p53).nextUp, Double(0x1p53).nextDown, 0x1p63, Double(0x1p63).nextDown, Double(0x1p63).nextUp,
    -0x1p63, Double(-0x1p63).nextDown, Double(-0x1p63).nextUp, 0x1p64, Double(0x1p64).nextDown, 0x1p31, -0x1p31,
    2_147_483_647, 2_147_483_648, 4_294_967_296.5, 1.7976931348623157e308, 0x1p-1074,
  ]

  static let integers: [Int64] = [
    0, 1, -1, 2, 10, 100, -100, 42, Int64(Int32.max), Int64(Int32.min), Int64(Int32.max) + 1, Int64(Int32.min) - 1,
    .max, .min, .max - 1, .min + 1, 9_007_199_254_740_993, 9_007_199_254_740_992, -9_007_199_254_740_993,
    1 << 62, 1_000_000_000_000, 9_223_372_036_854_775_000,
  ]

  mutating func number() -> BSON {
    switch Int.random(in: 0..<12, using: &rng) {
    case 0:
      return .int32(
        chance(50) ? Int32(truncatingIfNeeded: pick(Self.integers)) : Int32.random(in: -50...50, using: &rng))
    case 1: return .int64(chance(60) ? pick(Self.integers) : Int64.random(in: .min ... .max, using: &rng))
    case 2: return .double(pick(Self.doubles))
    case 3: return .double(Double(bitPattern: UInt64.random(in: 0 ... .max, using: &rng)))
    case 4: return .double(Double(Int.random(in: -40...40, using: &rng)) / pick([1, 2, 4, 8, 10, 1024]))
    case 5: return .decimal128(Decimal128(pick(Self.decimalStrings))!)
    case 6: return .decimal128(pick(Self.decimalBits))
    case 7: return .decimal128(randomDecimal())
    case 8:
      // An integer next to a large double, and the double.
      let double = pick([0x1p53, 0x1p60, 0x1p62, -0x1p53, 1e18, 12345678901234567.0])
      return chance(50) ? .double(double) : .int64(Int64(double) + Int64.random(in: -2...2, using: &rng))
    case 9:
      // A decimal that is a double's short rendering, next to the double itself.
      let double = pick(Self.doubles.filter(\.isFinite))
      if chance(50) { return .double(double) }
      return Decimal128("\(double)").map(BSON.decimal128) ?? .double(double)
    case 10: return .decimal128(Decimal128(Int64.random(in: -1000...1000, using: &rng)))
    default:
      let digits = Double(Int.random(in: 0...30, using: &rng))
      let exponent = Int.random(in: -1074...1023, using: &rng)
      let significand: Double = 1 + digits / 32
      return .double(Double(sign: chance(50) ? .minus : .plus, exponent: exponent, significand: significand))
    }
  }

  mutating func randomDecimal() -> Decimal128 {
    let sign: UInt64 = chance(50) ? 1 << 63 : 0
    let exponents: [UInt64] = [0, 1, 6175, 6176, 6177, 6142, 5776, 12287, UInt64.random(in: 0...12287, using: &rng)]
    let exponent = pick(exponents)
    var coefficient: UInt128
    switch Int.random(in: 0..<4, using: &rng) {
    case 0: coefficient = UInt128(UInt64.random(in: 0...1000, using: &rng))
    case 1: coefficient = UInt128(UInt64.random(in: 0 ... .max, using: &rng))
    case 2: coefficient = ExactDecimal.maxCoefficient - UInt128(UInt64.random(in: 0...2, using: &rng))
    default:
      coefficient = UInt128(UInt64.random(in: 0...100, using: &rng))
      for _ in 0..<Int.random(in: 0...32, using: &rng) { coefficient *= 10 }
    }
    let high = sign | exponent << 49 | UInt64(truncatingIfNeeded: coefficient >> 64)
    return Decimal128(high: high, low: UInt64(truncatingIfNeeded: coefficient))
  }
}

func sign(_ x: Int) -> Int { x == 0 ? 0 : (x < 0 ? -1 : 1) }

/// The sign of comparing two keys as unsigned bytes, the shorter first when one is a prefix.
func byteOrder(_ a: [UInt8], _ b: [UInt8]) -> Int {
  a == b ? 0 : (a.lexicographicallyPrecedes(b) ? -1 : 1)
}

func describe(_ value: BSON) -> String { value.extendedJSON(.canonical) }

// MARK: - Order

@Suite struct KeyEncodingOrderTests {
  static let seeds: [UInt64] = [1, 2, 3, 0xC0FFEE, 20_250_101]

  @Test(arguments: seeds) func byteOrderIsCompareBSONOrder(seed: UInt64) {
    var generator = KeyValueGenerator(seed: seed)
    let values = (0..<350).map { _ in generator.value() }
    let ascending = values.map { KeyEncoding.encode([$0]) }
    let descending = values.map { KeyEncoding.encode([$0], descending: [true]) }
    var failures = 0
    for i in values.indices {
      for j in values.indices where j >= i && failures < 5 {
        let expected = sign(compareBSON(values[i], values[j]))
        let ascendingOrder = byteOrder(ascending[i], ascending[j])
        let descendingOrder = byteOrder(descending[i], descending[j])
        if ascendingOrder != expected || descendingOrder != -expected {
          failures += 1
          Issue.record(
            """
            seed \(seed): compareBSON says \(expected), ascending bytes \(ascendingOrder), descending \(descendingOrder)
            a = \(describe(values[i])) -> \(hexString(ascending[i]))
            b = \(describe(values[j])) -> \(hexString(ascending[j]))
            """)
        }
      }
    }
  }

  @Test(arguments: seeds) func compoundKeysCompareComponentWise(seed: UInt64) {
    var generator = KeyValueGenerator(seed: seed ^ 0x5EED)
    for _ in 0..<3000 {
      let width = Int.random(in: 1...3, using: &generator.rng)
      let directions = (0..<width).map { _ in generator.chance(50) }
      // Share leading components often, so that later components decide.
      let a = (0..<width).map { _ in generator.value(depth: 1) }
      var b = a
      for index in 0..<width where generator.chance(60) { b[index] = generator.value(depth: 1) }
      var expected = 0
      for index in 0..<width where expected == 0 {
        let order = sign(compareBSON(a[index], b[index]))
        expected = directions[index] ? -order : order
      }
      let keyA = KeyEncoding.encode(a, descending: directions)
      let keyB = KeyEncoding.encode(b, descending: directions)
      let order = byteOrder(keyA, keyB)
      #expect(
        order == expected,
        "seed \(seed): \(a.map(describe)) vs \(b.map(describe)) directions \(directions): bytes \(order), expected \(expected)"
      )
    }
  }

  @Test func equalValuesEncodeIdentically() throws {
    let one: [BSON] = [
      .int32(1), .double(1.0), .int64(1), .decimal128(Decimal128("1.00")), .decimal128(Decimal128("1E0")),
    ]
    for value in one { #expect(KeyEncoding.encode([value]) == KeyEncoding.encode([.int32(1)]), "\(describe(value))") }
    #expect(KeyEncoding.encode([.string("abc")]) == KeyEncoding.encode([.symbol("abc")]))
    let zeros: [BSON] = [
      .int32(0), .int64(0), .double(0), .double(-0.0), .decimal128(Decimal128("0")), .decimal128(Decimal128("-0")),
      .decimal128(Decimal128("0E+6000")), .decimal128(Decimal128("-0E-6176")),
    ]
    for value in zeros { #expect(KeyEncoding.encode([value]) == [KeyEncoding.Tag.zero], "\(describe(value))") }
    let nans: [BSON] = [
      .double(.nan), .double(-.nan), .double(Double(nan: 7, signaling: true)), .decimal128(Decimal128("NaN")),
      .decimal128(Decimal128("-NaN")), .decimal128(Decimal128(high: 0x7E00_0000_0000_0000, low: 1)),
    ]
    for value in nans { #expect(KeyEncoding.encode([value]) == [KeyEncoding.Tag.nan], "\(describe(value))") }
    #expect(KeyEncoding.encode([.double(0.5)]) == KeyEncoding.encode([.decimal128(Decimal128("0.500"))]))
    #expect(KeyEncoding.encode([.double(.infinity)]) == KeyEncoding.encode([.decimal128(Decimal128("Infinity"))]))
  }

  @Test func numbersCompareExactly() throws {
    func less(_ a: BSON, _ b: BSON, sourceLocation: SourceLocation = #_sourceLocation) {
      let keyA = KeyEncoding.encode([a])
      let keyB = KeyEncoding.encode([b])
      #expect(keyA.lexicographicallyPrecedes(keyB), "\(describe(a)) < \(describe(b))", sourceLocation: sourceLocation)
      #expect(compareBSON(a, b) < 0, "compareBSON agrees", sourceLocation: sourceLocation)
    }
    less(.double(9_007_199_254_740_992), .int64(9_007_199_254_740_993))
    less(.int64(9_007_199_254_740_993), .double(9_007_199_254_740_994))
    less(.decimal128(Decimal128("0.1")), .double(0.1))
    less(.double(.greatestFiniteMagnitude), .decimal128(Decimal128("1E400")))
    less(.decimal128(Decimal128("-1E400")), .double(-.greatestFiniteMagnitude))
    less(.int64(.max), .double(0x1p63))
    less(.double(Double(0x1p63).nextDown), .int64(.max))
    less(.double(-0x1p63), .int64(.min + 1))
    less(.decimal128(Decimal128("1E-6176")), .double(.leastNonzeroMagnitude))
    less(.double(.nan), .double(-.infinity))
    less(.double(-.infinity), .decimal128(Decimal128("-9.999999999999999999999999999999999E+6144")))
    less(.decimal128(Decimal128("9.999999999999999999999999999999999E+6144")), .double(.infinity))
    less(.double(.infinity), .string(""))
    less(.null, .decimal128(Decimal128("NaN")))
  }

  @Test func stringsAreSelfDelimitingWithZeroBytes() {
    let ordered = ["", "\0", "\0\0", "\0a", "a", "a\0", "a\0\0", "a\0b", "a\u{1}", "ab", "b"]
    let keys = ordered.map { KeyEncoding.encode([.string($0), .int32(-1)]) }
    for index in keys.indices.dropFirst() {
      #expect(keys[index - 1].lexicographicallyPrecedes(keys[index]), "\(ordered[index - 1].debugDescription)")
    }
  }
}

// MARK: - Decoding

@Suite struct KeyEncodingDecodingTests {
  @Test(arguments: [UInt64(11), 12, 13, 14]) func decodeRoundTrips(seed: UInt64) throws {
    var generator = KeyValueGenerator(seed: seed)
    for _ in 0..<3000 {
      let values = (0..<Int.random(in: 1...3, using: &generator.rng)).map { _ in generator.value() }
      let directions = values.map { _ in generator.chance(50) }
      let prefix: [UInt8] = generator.chance(30) ? [0xAB, 0x00] : []
      let key = prefix + KeyEncoding.encode(values, descending: directions)
      var offset = prefix.count
      for index in values.indices {
        let (decoded, next) = try KeyEncoding.decode(key, at: offset, descending: directions[index])
        #expect(
          compareBSON(decoded, values[index]) == 0,
          "seed \(seed): \(describe(values[index])) decoded as \(describe(decoded))")
        let again = KeyEncoding.encode([decoded], descending: [directions[index]])
        #expect(Array(key[offset..<next]) == again, "seed \(seed): \(describe(values[index])) re-encodes differently")
        offset = next
      }
      #expect(offset == key.count)
    }
  }

  @Test func numbersDecodeToTheDocumentedType() throws {
    func decoded(_ value: BSON) throws -> BSON { try KeyEncoding.decode(KeyEncoding.encode([value]), at: 0).0 }
    #expect(try decoded(.double(1.0)) == .int32(1))
    #expect(try decoded(.decimal128(Decimal128("1.00"))) == .int32(1))
    #expect(try decoded(.double(-0.0)) == .int32(0))
    #expect(try decoded(.int64(1 << 40)) == .int64(1 << 40))
    #expect(try decoded(.int64(.min)) == .int64(.min))
    #expect(try decoded(.int32(.min)) == .int32(.min))
    #expect(try decoded(.decimal128(Decimal128("0.5"))) == .double(0.5))
    #expect(try decoded(.double(0.1)) == .double(0.1))
    #expect(try decoded(.double(0x1p63)) == .double(0x1p63))
    #expect(try decoded(.decimal128(Decimal128("0.1"))) == .decimal128(Decimal128("1E-1")))
    #expect(
      try decoded(.decimal128(Decimal128("1E6144")))
        == .decimal128(Decimal128("1000000000000000000000000000000000E6111")))
    #expect(
      try decoded(.decimal128(Decimal128("9223372036854775809"))) == .decimal128(Decimal128("9223372036854775809")))
    #expect(try decoded(.decimal128(Decimal128("-NaN"))).type == .double)
    #expect(try decoded(.decimal128(Decimal128("-Infinity"))) == .double(-.infinity))
    #expect(try decoded(.symbol("s")) == .string("s"))
  }

  @Test func malformedKeysThrow() {
    let cases: [(String, [UInt8])] = [
      ("empty", []),
      ("unknown type byte", [0x99]),
      ("truncated exponent", [0x24, 0x80]),
      ("truncated digits", [0x24, 0x80, 0x01, 0x03]),
      ("digit byte over 199", [0x24, 0x80, 0x01, 200]),
      ("leading zero digit", [0x24, 0x80, 0x01, 0x02]),
      ("trailing zero pair", [0x24, 0x80, 0x01, 0x15, 0x00]),
      ("exponent out of range", [0x24, 0xFF, 0xFF, 0x02 * 10]),
      ("10^34 + 1: no BSON number type holds it", [0x24, 0x80, 0x23, 21] + [UInt8](repeating: 1, count: 16) + [20]),
      ("unterminated string", [0x30, 0x61]),
      ("bad escape", [0x30, 0x00, 0x01]),
      ("invalid UTF-8", [0x30, 0xC3, 0x28, 0x00, 0x00]),
      ("zero byte in a document key", [0x34, 0x18, 0x00, 0xFF, 0x00, 0x00, 0x18, 0x00]),
      ("rank byte disagrees", [0x34, 0x30, 0x00, 0x00, 0x18, 0x00]),
      ("unterminated document", [0x34, 0x18, 0x61, 0x00, 0x00, 0x18]),
      ("binary longer than the key", [0x3C, 0x00, 0x00, 0x00, 0x05, 0x00, 0x01]),
      ("binary length over Int32.max", [0x3C, 0xFF, 0xFF, 0xFF, 0xFF, 0x00]),
      ("old binary with a wrong inner length", [0x3C, 0x00, 0x00, 0x00, 0x04, 0x02, 0x01, 0x00, 0x00, 0x00]),
      ("short ObjectId", [0x40, 0x01]),
      ("short date", [0x48, 0x80, 0x00]),
    ]
    for (name, bytes) in cases {
      #expect(throws: BSONError.self, "\(name)") { try KeyEncoding.decode(bytes, at: 0) }
    }
    #expect(throws: BSONError.self) { try KeyEncoding.decode([0x23], at: 2) }
    #expect(throws: BSONError.self) { try KeyEncoding.decode([0x23], at: -1) }
    // Arrays nested 300 deep: well formed, but past the decoding limit; 100 levels (MongoDB's
    // limit) decode.
    func nested(_ depth: Int) -> BSON { (0..<depth).reduce(BSON.int32(1)) { inner, _ in .array([inner]) } }
    let error = #expect(throws: BSONError.self) { try KeyEncoding.decode(KeyEncoding.encode([nested(300)]), at: 0) }
    #expect(error?.kind == .depthLimitExceeded)
    let hundred = KeyEncoding.encode([nested(100)])
    #expect(throws: Never.self) { try KeyEncoding.decode(hundred, at: 0) }
  }

  @Test(arguments: [UInt64(21), 22, 23]) func fuzzedBytesThrowOrDecodeCanonically(seed: UInt64) {
    var generator = KeyValueGenerator(seed: seed)
    let interesting: [UInt8] = [
      0x00, 0x01, 0xFF, 0xFE, 0x10, 0x14, 0x18, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x30, 0x34, 0x38, 0x3C, 0x40, 0x44,
      0x45, 0x48, 0x4C, 0x50, 0x54, 0x58, 0x5C, 0xF0, 0x80, 0x7F, 0x03, 0x02, 0xC7, 0xC8,
    ]
    var accepted = 0
    for round in 0..<20_000 {
      var key: [UInt8]
      if round % 2 == 0 {
        key = (0..<Int.random(in: 0...24, using: &generator.rng)).map { _ in
          generator.chance(70) ? generator.pick(interesting) : UInt8.random(in: 0...255, using: &generator.rng)
        }
      } else {
        key = KeyEncoding.encode([generator.value()])
        for _ in 0..<Int.random(in: 1...3, using: &generator.rng) where !key.isEmpty {
          let index = Int.random(in: 0..<key.count, using: &generator.rng)
          switch Int.random(in: 0..<4, using: &generator.rng) {
          case 0: key[index] = UInt8.random(in: 0...255, using: &generator.rng)
          case 1: key.removeSubrange(index...)
          case 2: key.insert(generator.pick(interesting), at: index)
          default: key[index] ^= 1
          }
        }
      }
      let descending = generator.chance(30)
      if let (value, end) = try? KeyEncoding.decode(key, at: 0, descending: descending) {
        accepted += 1
        #expect(end <= key.count)
        let canonical = KeyEncoding.encode([value], descending: [descending])
        #expect(
          Array(key[0..<end]) == canonical,
          "seed \(seed) round \(round): accepted \(hexString(key[0..<end])) but \(describe(value)) encodes as \(hexString(canonical))"
        )
      }
    }
    #expect(accepted > 100)
  }
}

// MARK: - Format and cost

@Suite struct KeyEncodingFormatTests {
  /// The examples of `Specs/store/key-encoding.md`, byte for byte.
  @Test(arguments: [
    (BSON.minKey, "10"), (.null, "18"), (.double(.nan), "20"), (.double(-.infinity), "21"), (.int32(0), "23"),
    (.int32(1), "24800114"), (.double(1.0), "24800114"), (.decimal128(Decimal128("1.00")), "24800114"),
    (.int32(10), "24800214"), (.int32(12), "24800218"), (.int32(123), "248003193C"),
    (.int64(-1), "227FFEEB"), (.double(0.5), "24800064"), (.double(-2.5), "227FFECD"),
    (.decimal128(Decimal128("0.1")), "24800014"), (.decimal128(Decimal128("1E6144")), "24980114"),
    (.double(.infinity), "25"), (.string("ab"), "3061620000"), (.string("a\0b"), "306100FF620000"),
    (.document(["a": .int32(1)]), "342061000024800114" + "00"), (.array([.bool(true), .null]), "3844451818" + "00"),
    (.binary(Binary(subtype: .uuid, data: [0xAB])), "3C0000000104AB"), (.bool(false), "44"), (.bool(true), "45"),
    (.datetime(BSONDateTime(millisecondsSinceEpoch: 0)), "488000000000000000"),
    (.datetime(BSONDateTime(millisecondsSinceEpoch: -1)), "487FFFFFFFFFFFFFFF"), (.maxKey, "F0"),
  ])
  func documentedExamples(value: BSON, hex: String) {
    #expect(hexString(KeyEncoding.encode([value])) == hex, "\(describe(value))")
  }

  @Test func descendingComplementsEveryByte() {
    let key = KeyEncoding.encode([.int32(1), .string("ab")], descending: [false, true])
    #expect(hexString(key) == "24800114" + "CF9E9DFFFF")
  }

  @Test func typicalKeysDoNotOutgrowTheirReservation() {
    // A string and an integer encode straight into the reserved output: the buffer never moves.
    let values: [BSON] = [.string("alice@example.com"), .int64(1_234_567_890), .int32(-7)]
    let estimate = values.reduce(0) { $0 + KeyEncoding.estimatedCount($1) }
    var key: [UInt8] = []
    key.reserveCapacity(estimate)
    let base = key.withUnsafeBufferPointer { $0.baseAddress }
    for _ in 0..<1000 {
      key.removeAll(keepingCapacity: true)
      for value in values { KeyEncoding.append(value, to: &key) }
      #expect(key.withUnsafeBufferPointer { $0.baseAddress } == base)
    }
    #expect(key.count <= estimate)
    #expect(KeyEncoding.encode(values).count == key.count)
  }

  @Test func encodeRequiresOneDirectionPerValue() async {
    await #expect(processExitsWith: .failure) {
      _ = KeyEncoding.encode([.int32(1), .int32(2)], descending: [true])
    }
  }
}
