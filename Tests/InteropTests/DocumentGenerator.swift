import PropertyBased
import ReefBSON

/// The random source PropertyBased hands to a generator (seeded, so failures reproduce).
typealias RNG = any SeededRandomNumberGenerator

/// Random BSON documents that cover every BSON type and its edge values, for differential tests.
///
/// - Doubles: ±0, infinities, quiet and signalling NaNs with random payloads and signs, subnormals,
///   extreme magnitudes, integral values around 2^53, random bit patterns.
/// - Strings and symbols: ASCII, control characters, JSON-special characters, 2-, 3- and 4-byte UTF-8,
///   noncharacters, U+2028/2029, BOM and embedded U+0000. Keys: the same without U+0000 and never
///   starting with `$` (so no key can be mistaken for an Extended JSON wrapper), unique within a
///   document up to canonical equivalence (so parsed JSON objects can be compared).
/// - Binary: every defined subtype, including the old subtype 2 and UUIDs (3, 4) of 16 bytes and of
///   other lengths, reserved and user-defined subtypes.
/// - Datetimes over the whole Int64 range with the 1970 and 9999 boundaries; timestamps, int32 and
///   int64 with their edges; Decimal128 as random bit patterns (canonical, non-canonical, NaN, infinity).
/// - ObjectId, bool, null, undefined, regex (sorted options), JavaScript, code with scope, minKey,
///   maxKey, DBPointer.
/// - Embedded documents, arrays and code-with-scope scopes, mostly shallow, with a deep chain in some
///   documents (up to ``chainDepths``, a few near Reef's limit of 100).
struct DocumentGenerator: Sendable {
  /// The most values a document holds (each document draws a budget up to this).
  var maximumValues = 40
  /// How often a document gets a deep chain of nested containers.
  var deepChainRate = 0.08
  /// Depths of ordinary deep chains.
  var chainDepths = 2...50
  /// Depths of the rare chains near (or past) the nesting limit.
  var nearLimitDepths = 95...100
  /// How often a deep chain is near the limit.
  var nearLimitRate = 0.15

  /// The generator for PropertyBased's `propertyCheck`.
  var generator: Generator<GeneratedDocument, Shrink.None<GeneratedDocument>> {
    let config = self
    return Generator { rng in config.document(&rng) }
  }

  func document(_ rng: inout RNG) -> GeneratedDocument {
    var budget = Int.random(in: 0...maximumValues, using: &rng)
    var fields = fields(&rng, depth: 0, budget: &budget)
    if chance(deepChainRate, &rng) {
      let depth = Int.random(in: chance(nearLimitRate, &rng) ? nearLimitDepths : chainDepths, using: &rng)
      var taken = Set(fields.map(\.key))
      let field = Field(key: key(&rng, taken: &taken), value: chain(&rng, depth: depth))
      fields.insert(field, at: Int.random(in: 0...fields.count, using: &rng))
    }
    return GeneratedDocument(fields: fields)
  }

  // MARK: Structure

  func fields(_ rng: inout RNG, depth: Int, budget: inout Int) -> [Field] {
    let count = Int.random(in: 0...(depth == 0 ? 12 : 6), using: &rng)
    var taken = Set<String>()
    var out: [Field] = []
    for _ in 0..<count where budget > 0 {
      budget -= 1
      out.append(Field(key: key(&rng, taken: &taken), value: node(&rng, depth: depth, budget: &budget)))
    }
    return out
  }

  /// A value inside a document at `depth` (the top-level document is at 0).
  func node(_ rng: inout RNG, depth: Int, budget: inout Int) -> Node {
    let containerRate = depth < 3 ? 0.25 : depth < 8 ? 0.12 : 0.03
    guard depth < 100, chance(containerRate, &rng) else { return .scalar(scalar(&rng)) }
    switch Int.random(in: 0..<5, using: &rng) {
    case 0, 1: return .document(fields(&rng, depth: depth + 1, budget: &budget))
    case 2, 3:
      let count = Int.random(in: 0...6, using: &rng)
      var items: [Node] = []
      for _ in 0..<count where budget > 0 {
        budget -= 1
        items.append(node(&rng, depth: depth + 1, budget: &budget))
      }
      return .array(items)
    default:
      return .codeWithScope(
        code: string(&rng, allowsNull: false), scope: fields(&rng, depth: depth + 1, budget: &budget))
    }
  }

  /// A chain of `depth` nested containers (documents, arrays and scopes) ending in a few values.
  func chain(_ rng: inout RNG, depth: Int) -> Node {
    var budget = 3
    var node = Node.document(fields(&rng, depth: depth, budget: &budget))
    for _ in 1..<max(depth, 1) {
      var taken = Set<String>()
      switch Int.random(in: 0..<3, using: &rng) {
      case 0: node = .document([Field(key: key(&rng, taken: &taken), value: node)])
      case 1:
        var items = [node]
        if chance(0.3, &rng) { items.insert(.scalar(scalar(&rng)), at: 0) }
        node = .array(items)
      default:
        node = .codeWithScope(
          code: string(&rng, allowsNull: false), scope: [Field(key: key(&rng, taken: &taken), value: node)])
      }
    }
    return node
  }

  // MARK: Keys and strings

  /// A key unique (up to canonical equivalence) among `taken`.
  func key(_ rng: inout RNG, taken: inout Set<String>) -> String {
    while true {
      var k: String
      switch Int.random(in: 0..<10, using: &rng) {
      case 0..<4: k = Leaves.identifier.run(using: &rng)
      case 4: k = ""
      case 5: k = String(Int.random(in: 0...20, using: &rng))
      case 6:
        k = String((0..<Int.random(in: 1...4, using: &rng)).map { _ in "a.b $-_ /\\\"".randomElement(using: &rng)! })
      default: k = string(&rng, allowsNull: false, maximumLength: 6)
      }
      if k.hasPrefix("$") { k = "_" + k }
      if taken.insert(k).inserted { return k }
    }
  }

  /// A string; `allowsNull` permits U+0000.
  func string(_ rng: inout RNG, allowsNull: Bool, maximumLength: Int? = nil) -> String {
    let length: Int
    if let maximumLength {
      length = Int.random(in: 0...maximumLength, using: &rng)
    } else {
      let r = Double.random(in: 0..<1, using: &rng)
      length = Int.random(in: r < 0.7 ? 0...8 : r < 0.97 ? 9...40 : 41...300, using: &rng)
    }
    var scalars = String.UnicodeScalarView()
    for _ in 0..<length { scalars.append(scalar(&rng, allowsNull: allowsNull)) }
    return String(scalars)
  }

  func scalar(_ rng: inout RNG, allowsNull: Bool) -> Unicode.Scalar {
    let r = Int.random(in: 0..<100, using: &rng)
    let value: UInt32
    switch r {
    case 0..<45: value = UInt32.random(in: 0x20...0x7E, using: &rng)
    case 45..<52: value = [0x01, 0x08, 0x09, 0x0A, 0x0C, 0x0D, 0x1F, 0x7F].randomElement(using: &rng)!
    case 52..<55: value = allowsNull ? 0 : 0x41
    case 55..<58: value = [0x22, 0x5C, 0x2F].randomElement(using: &rng)!
    case 58..<70: value = UInt32.random(in: 0x80...0x7FF, using: &rng)
    case 70..<82:
      value = UInt32.random(in: 0x800...0xF7FF, using: &rng)
      return Unicode.Scalar(value >= 0xD800 ? value + 0x800 : value)!  // skip the surrogates
    case 82..<94: value = UInt32.random(in: 0x10000...0x10FFFF, using: &rng)
    default:
      value = [0x80, 0x7FF, 0x800, 0xFEFF, 0xFFFD, 0xFFFE, 0xFFFF, 0x2028, 0x2029, 0xE000, 0x10000, 0x10FFFF, 0x301]
        .randomElement(using: &rng)!
    }
    return Unicode.Scalar(value)!
  }

  // MARK: Values

  /// A value of a random non-container type (every type is equally likely).
  func scalar(_ rng: inout RNG) -> BSON {
    switch Int.random(in: 0..<19, using: &rng) {
    case 0: return .double(double(&rng))
    case 1: return .string(string(&rng, allowsNull: true))
    case 2: return .binary(binary(&rng))
    case 3: return .undefined
    case 4: return .objectId(Leaves.objectId.run(using: &rng))
    case 5: return .bool(Bool.random(using: &rng))
    case 6: return .datetime(BSONDateTime(millisecondsSinceEpoch: datetime(&rng)))
    case 7: return .null
    case 8:
      return .regex(
        BSONRegularExpression(pattern: string(&rng, allowsNull: false), options: Leaves.regexOptions.run(using: &rng)))
    case 9:
      return .dbPointer(
        DBPointer(ref: string(&rng, allowsNull: false, maximumLength: 12), id: Leaves.objectId.run(using: &rng)))
    case 10: return .javascript(string(&rng, allowsNull: false))
    case 11: return .symbol(string(&rng, allowsNull: true))
    case 12: return .int32(edgeOr(Leaves.int32Edges, Leaves.int32, &rng))
    case 13:
      return .timestamp(
        BSONTimestamp(
          timestamp: edgeOr(Leaves.uint32Edges, Leaves.uint32, &rng),
          increment: edgeOr(Leaves.uint32Edges, Leaves.uint32, &rng)))
    case 14: return .int64(edgeOr(Leaves.int64Edges, Leaves.int64, &rng))
    case 15: return .decimal128(decimal128(&rng))
    case 16: return .minKey
    case 17: return .maxKey
    default: return .string(string(&rng, allowsNull: true))
    }
  }

  func double(_ rng: inout RNG) -> Double {
    let sign: UInt64 = Bool.random(using: &rng) ? 1 << 63 : 0
    let mantissa = UInt64.random(in: 0...0xF_FFFF_FFFF_FFFF, using: &rng)
    switch Int.random(in: 0..<10, using: &rng) {
    case 0: return Leaves.doubleEdges.randomElement(using: &rng)!
    case 1: return Double(bitPattern: sign | 0x7FF0_0000_0000_0000 | max(mantissa, 1))  // NaN, random payload
    case 2: return Double(bitPattern: sign | max(mantissa, 1))  // subnormal
    case 3, 4: return Double(bitPattern: Leaves.bits64.run(using: &rng))
    case 5: return Leaves.moderateDouble.run(using: &rng)
    case 6: return Double(Int64.random(in: -(1 << 54)...(1 << 54), using: &rng))
    case 7: return Double(Int.random(in: -100_000...100_000, using: &rng)) / 1000
    default:
      let exponent = UInt64.random(in: 1...2046, using: &rng)
      return Double(bitPattern: sign | exponent << 52 | mantissa)
    }
  }

  func datetime(_ rng: inout RNG) -> Int64 {
    switch Int.random(in: 0..<10, using: &rng) {
    case 0:
      return [
        .min, .max, 0, -1, 1, 253_402_300_799_999, 253_402_300_800_000, 253_402_300_799_000, -62_135_596_800_000,
        -62_167_219_200_000, -62_167_219_200_001, 946_684_800_000, 951_782_400_000,
      ].randomElement(using: &rng)!
    case 1, 2, 3: return Leaves.int64.run(using: &rng)
    case 4: return Int64.random(in: -62_167_219_200_000...0, using: &rng)
    default: return Int64.random(in: 0...253_402_300_799_999, using: &rng)
    }
  }

  func binary(_ rng: inout RNG) -> Binary {
    let subtype: UInt8 =
      switch Int.random(in: 0..<14, using: &rng) {
      case 0, 1: 0x00
      case 2...10: UInt8(Int.random(in: 1...9, using: &rng))
      case 11: UInt8.random(in: 0x0A...0x7F, using: &rng)
      default: UInt8.random(in: 0x80...0xFF, using: &rng)
      }
    var count = Int.random(in: 0...(chance(0.05, &rng) ? 300 : 24), using: &rng)
    if [3, 4, 5].contains(subtype) && chance(0.8, &rng) { count = 16 }
    return Binary(
      subtype: .init(rawValue: subtype), data: (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) })
  }

  /// Decimal128 bit patterns: random, canonical finite, small readable values, zeros, infinities and
  /// NaNs with payloads, and non-canonical encodings (coefficient above 10^34 - 1, read as zero).
  func decimal128(_ rng: inout RNG) -> Decimal128 {
    let sign: UInt64 = Bool.random(using: &rng) ? 1 << 63 : 0
    let low = Leaves.bits64.run(using: &rng)
    switch Int.random(in: 0..<8, using: &rng) {
    case 0, 1:
      return Decimal128(high: Leaves.bits64.run(using: &rng), low: low)
    case 2:  // coefficient below 2^113 (mostly below 10^34), any exponent
      let exponent = UInt64.random(in: 0...12287, using: &rng)
      return Decimal128(high: sign | exponent << 49 | UInt64.random(in: 0...0x1_ED09_BEAD_87C0, using: &rng), low: low)
    case 3:  // small coefficients and exponents near the bias: "1.5", "-0.001", "1.2E+5"
      let exponent = UInt64(6176 + Int.random(in: -12...12, using: &rng))
      return Decimal128(high: sign | exponent << 49, low: UInt64.random(in: 0...1_000_000, using: &rng))
    case 4:  // zeros with any exponent
      return Decimal128(high: sign | UInt64.random(in: 0...12287, using: &rng) << 49, low: 0)
    case 5:  // infinity, quiet and signalling NaN, with random payload bits
      let top: UInt64 = [0x7800_0000_0000_0000, 0x7C00_0000_0000_0000, 0x7E00_0000_0000_0000].randomElement(
        using: &rng)!
      let payload = chance(0.5, &rng) ? UInt64.random(in: 0...0x1FF_FFFF_FFFF_FFFF, using: &rng) : 0
      return Decimal128(high: sign | top | payload, low: chance(0.5, &rng) ? low : 0)
    default:  // the "11" combination form: coefficient >= 2^113, non-canonical
      return Decimal128(
        high: sign | 0x6000_0000_0000_0000 | UInt64.random(in: 0...0x17FF_FFFF_FFFF_FFFF, using: &rng), low: low)
    }
  }
}

/// Leaf generators from PropertyBased, composed into the document generator above.
enum Leaves {
  static let int32 = Gen.int32()
  static let int64 = Gen.int64()
  static let uint32 = Gen.uint32()
  static let bits64 = Gen.uint64()
  static let moderateDouble = Gen.double(in: -1e6...1e6)
  static let objectId = Gen.uint8().array(of: 12).map { ObjectId(bytes: $0)! }
  static let identifier = Gen.letterOrNumber.string(of: 1...8)
  /// A sorted subset of the options MongoDB and libbson know.
  static let regexOptions = Gen.bool.array(of: 6).map { flags in
    String(zip("ilmsux", flags).filter(\.1).map(\.0))
  }

  static let int32Edges: [Int32] = [0, 1, -1, .min, .max, .min + 1, .max - 1, 127, 128, -128, -129, 65535, 65536]
  static let int64Edges: [Int64] = [
    0, 1, -1, .min, .max, .min + 1, .max - 1, Int64(Int32.max), Int64(Int32.max) + 1, Int64(Int32.min),
    Int64(Int32.min) - 1, 1 << 53, -(1 << 53), (1 << 53) + 1, -(1 << 53) - 1,
  ]
  static let uint32Edges: [UInt32] = [0, 1, .max, 1 << 31, (1 << 31) - 1]
  static let doubleEdges: [Double] = [
    0.0, -0.0, .infinity, -.infinity, .nan, -.nan, Double(bitPattern: 0x7FF0_0000_0000_0001),
    Double(bitPattern: 0x7FF4_0000_0000_0000), Double(bitPattern: 0xFFFF_FFFF_FFFF_FFFF),
    Double(bitPattern: 0x7FF8_0000_0000_0001), 1, -1, 0.1, 0.5, 1.0 / 3, .pi, 1e-7, 1e-6, 1e15, 1e16, 1e17, 1e21, 1e22,
    1e23, 123_456_789_012_345_680, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude,
    .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 9_007_199_254_740_992, 9_007_199_254_740_994,
    9_223_372_036_854_775_808, -9_223_372_036_854_775_808, 1.7976931348623157e308,
    Double(bitPattern: 0x000F_FFFF_FFFF_FFFF),
  ]
}

/// `true` with probability `p`.
func chance(_ p: Double, _ rng: inout RNG) -> Bool { Double.random(in: 0..<1, using: &rng) < p }

/// An edge value a fifth of the time, otherwise a value from `generator`.
func edgeOr<T>(_ edges: [T], _ generator: Generator<T, some Sequence>, _ rng: inout RNG) -> T {
  chance(0.2, &rng) ? edges.randomElement(using: &rng)! : generator.run(using: &rng)
}
