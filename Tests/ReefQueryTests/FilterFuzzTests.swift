import ReefBSON
import ReefQuery
import ReefTestSupport
import Testing

/// A multiplier for the number of generated inputs: `REEF_FUZZ_SCALE=20 swift test --filter
/// FilterFuzzTests` runs a 20x soak with the same seeds. Default 1.
private let fuzzScale: Int = max(1, Int(getenvString("REEF_FUZZ_SCALE") ?? "") ?? 1)

/// Seeded fuzzing of filter, sort and projection documents: whatever the input, compiling it
/// either succeeds or throws `QueryError`, and running what compiled never traps. Every run
/// generates the same inputs, so a failure names an input that reproduces it.
@Suite struct FilterFuzzTests {
  // MARK: Generated filters

  @Test func generatedFiltersCompileOrThrow() throws {
    var generator = FuzzGenerator(seed: 0xF117_E4_2024)
    let corpus = generator.corpus()
    var counts = Counts()
    for _ in 0..<2_500 * fuzzScale {
      let filter = generator.filter(depth: 3)
      guard let query = counts.compile(filter) else { continue }
      for document in corpus { _ = query.matches(document) }
      if generator.chance(10) { try checkFind(query, corpus, options: generator.findOptions(), filter: filter) }
    }
    counts.report("generated filters")
  }

  /// Nesting at and just past MongoDB's depth limit of 100, in every operator that nests.
  @Test func deeplyNestedFiltersCompileOrThrow() {
    var generator = FuzzGenerator(seed: 0xDEE9)
    let corpus = generator.corpus()
    var counts = Counts()
    var overLimit = 0
    let leaf = makeDocument([("a", .int32(1))])
    for levels in [1, 24, 48, 49, 50, 51, 98, 99, 100, 101] {
      let shapes: [Document] = [
        // {$and: [{$and: [… {a: 1}]}]}, and the same with $or or $nor: two levels a step.
        nest(levels / 2, leaf) { makeDocument([("$and", .array(BSONArray([.document($0)])))]) },
        nest(levels / 2, leaf) {
          makeDocument([(levels % 2 == 0 ? "$or" : "$nor", .array(BSONArray([.document($0)])))])
        },
        // {a: {$not: {$not: … {$eq: 1}}}}
        field("a", nest(levels - 1, makeDocument([("$eq", .int32(1))])) { field("$not", $0) }),
        // {a: {$elemMatch: {a: {$elemMatch: … {a: 1}}}}}
        nest(levels / 2, leaf) { field("a", field("$elemMatch", $0)) },
        // {a: {$elemMatch: {$elemMatch: … {$gt: 0}}}}
        field("a", nest(levels - 1, makeDocument([("$gt", .int32(0))])) { field("$elemMatch", $0) }),
        // {a: {x: {x: … {x: null}}}}
        field("a", nest(levels - 1, makeDocument([("x", .null)])) { field("x", $0) }),
        // {a: {$in: [[[… 1]]]}}
        field("a", makeDocument([("$in", .array(BSONArray([nestArray(levels - 2, .int32(1))])))])),
        // {a: {$all: [{$elemMatch: {a: {$elemMatch: … {b: 1}}}}]}}
        field(
          "a",
          makeDocument([
            (
              "$all",
              .array(
                BSONArray([
                  .document(
                    field(
                      "$elemMatch",
                      nest(max(levels / 2 - 1, 0), makeDocument([("b", .int32(1))])) {
                        field("a", field("$elemMatch", $0))
                      }))
                ]))
            )
          ])),
      ]
      for filter in shapes {
        if (try? Document(bytes: filter.bytes)) == nil { overLimit += 1 }
        guard let query = counts.compile(filter) else { continue }
        for document in corpus { _ = query.matches(document) }
      }
    }
    counts.report("deep filters")
    print("deep filters: \(overLimit) deeper than BSON allows: parseFilter must reject them")
    #expect(overLimit > 0)
    #expect(counts.rejected == overLimit, "exactly the filters deeper than BSON allows are rejected")
  }

  // MARK: Invariants

  /// Laws MongoDB defines: `$nor`, `$and`, `$or` of compiled filters; `$not` of an operator
  /// expression and the operator pairs defined as each other's negation; `$comment` changes nothing.
  @Test func logicalOperatorsComposeAsDefined() {
    var generator = FuzzGenerator(seed: 0x1A55)
    let corpus = generator.corpus()
    var counts = Counts()
    var checked = (nor: 0, andOr: 0, not: 0, negations: 0, comment: 0)
    for _ in 0..<700 * fuzzScale {
      let f = generator.filter(depth: 2)
      let g = generator.filter(depth: 2)
      let queryF = counts.compile(f)
      let queryG = counts.compile(g)

      // $comment anywhere at the top level: same compile result, same matches.
      let commented = inserting(("$comment", generator.value(depth: 1)), into: f, at: &generator)
      let queryC = counts.compile(commented)
      #expect((queryF == nil) == (queryC == nil), "$comment changed whether \(f) compiles: \(commented)")
      if let queryF, let queryC {
        checked.comment += 1
        for document in corpus where queryF.matches(document) != queryC.matches(document) {
          Issue.record("$comment changed the match of \(commented) on \(document)")
        }
      }

      if checkNegation(f, makeDocument([("$nor", .array(BSONArray([.document(f)])))]), corpus, &counts) {
        checked.nor += 1
      }
      let pair: BSON = .array(BSONArray([.document(f), .document(g)]))
      let and = counts.compile(makeDocument([("$and", pair)]))
      let or = counts.compile(makeDocument([("$or", pair)]))
      let both = queryF != nil && queryG != nil
      #expect((and != nil) == both && (or != nil) == both, "$and/$or of \(f), \(g) compile iff both do")
      if let queryF, let queryG, let and, let or {
        checked.andOr += 1
        for document in corpus {
          let (x, y) = (queryF.matches(document), queryG.matches(document))
          if and.matches(document) != (x && y) { Issue.record("$and of \(f), \(g) on \(document)") }
          if or.matches(document) != (x || y) { Issue.record("$or of \(f), \(g) on \(document)") }
        }
      }

      // {p: {$not: E}} for an operator expression E is the negation of {p: E}.
      let path = generator.fieldPath(allowOperators: false)
      let expression = generator.operatorDocument(depth: 2)
      let plain = makeDocument([(path, .document(expression))])
      if checkNegation(plain, makeDocument([(path, .document(field("$not", expression)))]), corpus, &counts) {
        checked.not += 1
      }

      // $ne / $eq (but $ne takes no regex), $nin / $in and $exists true / false are defined as
      // negations.
      let value = generator.value(depth: 2)
      let list: BSON = .array(BSONArray((0..<generator.int(0...3)).map { _ in generator.value(depth: 1) }))
      var pairs: [((String, BSON), (String, BSON))] = [
        (("$in", list), ("$nin", list)), (("$exists", .bool(true)), ("$exists", .bool(false))),
      ]
      if value.type != .regex { pairs.append((("$eq", value), ("$ne", value))) }
      for (positive, negative) in pairs {
        let yes = makeDocument([(path, .document(makeDocument([positive])))])
        let no = makeDocument([(path, .document(makeDocument([negative])))])
        if checkNegation(yes, no, corpus, &counts) { checked.negations += 1 }
      }
    }
    print("invariants checked: \(checked)")
    #expect(checked.nor > 0 && checked.andOr > 0 && checked.not > 0 && checked.negations > 0 && checked.comment > 0)
    counts.report("invariant filters")
  }

  // MARK: Mutated filters

  @Test func mutatedFilterBytesCompileOrThrow() throws {
    var generator = FuzzGenerator(seed: 0xB17E5)
    let seeds = try RealisticInputs.filters.map { try Document(extendedJSON: $0) }
    var corpus = generator.corpus()
    let queries = seeds.compactMap { try? Query(filter: $0) }
    var counts = Counts()
    var invalid = 0
    for round in 0..<6_000 * fuzzScale {
      let seed = seeds[round % seeds.count]
      let mutant = generator.mutate(seed.bytes)
      guard let filter = try? Document(bytes: mutant) else {
        invalid += 1
        continue
      }
      // A mutant that is a valid document is also a document to match.
      if corpus.count < 120 { corpus.append(filter) }
      for query in queries { _ = query.matches(filter) }
      guard let query = counts.compile(filter) else { continue }
      for document in corpus { _ = query.matches(document) }
    }
    print("mutated filter bytes: \(invalid) not valid BSON")
    counts.report("mutated filter bytes")
  }

  @Test func mutatedFilterExtendedJSONCompileOrThrow() {
    var generator = FuzzGenerator(seed: 0x7E47)
    let corpus = generator.corpus()
    var counts = Counts()
    var invalid = 0
    for round in 0..<6_000 * fuzzScale {
      let text = generator.mutate(text: RealisticInputs.filters[round % RealisticInputs.filters.count])
      guard let filter = try? Document(extendedJSON: text) else {
        invalid += 1
        continue
      }
      guard let query = counts.compile(filter) else { continue }
      for document in corpus { _ = query.matches(document) }
    }
    print("mutated filter Extended JSON: \(invalid) not valid Extended JSON")
    counts.report("mutated filter Extended JSON")
  }

  // MARK: Sorts and projections

  @Test func sortSpecificationsCompileOrThrowAndPermute() throws {
    var generator = FuzzGenerator(seed: 0x5027)
    // Each document carries its position in `_seq`, which no sort key names.
    let corpus = generator.corpus().enumerated().map { index, document in
      appending(("_seq", .int32(Int32(index))), to: document)
    }
    let seeds = try RealisticInputs.sorts.map { try Document(extendedJSON: $0) }
    var compiled = 0
    var rejected = 0
    var unsortable = 0
    for round in 0..<1_500 * fuzzScale {
      let specification: Document
      if round % 3 == 0 {
        guard let mutant = try? Document(bytes: generator.mutate(seeds[round % seeds.count].bytes)) else { continue }
        specification = mutant
      } else {
        specification = generator.sortDocument()
      }
      let sort: SortSpecification
      do {
        sort = try SortSpecification(specification)
        compiled += 1
      } catch {
        rejected += 1
        #expect(!error.message.isEmpty)
        continue
      }
      var input = corpus
      generator.shuffle(&input)
      let output: [Document]
      do {
        output = try sort.sorted(input)
      } catch {
        // Only documents whose keys reach two arrays (MongoDB's parallel arrays) or whose numeric
        // segment names both an array position and a field of its documents cannot be sorted.
        let known = error.message.contains("parallel arrays") || error.message.contains("ambiguous sort path")
        #expect(error.kind == .sortKey && known, "\(specification): \(error)")
        unsortable += 1
        continue
      }
      let positions = output.map(sequenceNumber)
      #expect(positions.sorted() == input.map(sequenceNumber).sorted(), "not a permutation for \(specification)")
      guard output.count == input.count else { continue }
      let inputOrder = Dictionary(uniqueKeysWithValues: input.enumerated().map { (sequenceNumber($1), $0) })
      for (a, b) in zip(output, output.dropFirst()) {
        let order = try sort.compare(a, b)
        if order > 0 || (order == 0 && inputOrder[sequenceNumber(a)]! > inputOrder[sequenceNumber(b)]!) {
          Issue.record("sort \(specification) put \(a) before \(b) (compare \(order)), or not stably")
        }
      }
    }
    print("sort specifications: compiled \(compiled), rejected \(rejected), unsortable \(unsortable)")
    #expect(compiled > 0)
    #expect(rejected > 0)
  }

  @Test func projectionsCompileOrThrowAndApply() throws {
    var generator = FuzzGenerator(seed: 0x901E_C7)
    let corpus = generator.corpus()
    let seeds = try RealisticInputs.projections.map { try Document(extendedJSON: $0) }
    var compiled = 0
    var rejected = 0
    for round in 0..<2_500 * fuzzScale {
      let specification: Document
      if round % 3 == 0 {
        guard let mutant = try? Document(bytes: generator.mutate(seeds[round % seeds.count].bytes)) else { continue }
        specification = mutant
      } else {
        specification = generator.projectionDocument()
      }
      let projection: Projection
      do {
        projection = try Projection(specification)
        compiled += 1
      } catch {
        rejected += 1
        #expect(!error.message.isEmpty)
        continue
      }
      for document in corpus {
        let projected = projection.apply(document)
        #expect(
          (try? Document(bytes: projected.bytes)) != nil,
          "projection \(specification) made invalid bytes from \(document)")
        let keys = Set(document.keys)
        #expect(
          projected.keys.allSatisfy(keys.contains), "projection \(specification) added a field to \(document)")
      }
    }
    print("projections: compiled \(compiled), rejected \(rejected)")
    #expect(compiled > 0)
    #expect(rejected > 0)
  }

  // MARK: Helpers

  /// Whether `negation` compiled exactly when `filter` did and, if so, matched exactly the
  /// documents `filter` did not; true when both compiled.
  func checkNegation(_ filter: Document, _ negation: Document, _ corpus: [Document], _ counts: inout Counts) -> Bool {
    let query = counts.compile(filter)
    let negated = counts.compile(negation)
    #expect((query == nil) == (negated == nil), "\(negation) must compile exactly when \(filter) does")
    guard let query, let negated else { return false }
    for document in corpus where query.matches(document) == negated.matches(document) {
      Issue.record("\(negation) is not the negation of \(filter) on \(document)")
    }
    return true
  }

  /// `find` must be the filter, then the sort, skip, limit and projection, in that order.
  func checkFind(_ query: Query, _ corpus: [Document], options: FindOptions, filter: Document) throws {
    var expected = corpus.filter(query.matches)
    if let sort = options.sort { expected = try sort.sorted(expected) }
    expected = Array(expected.dropFirst(options.skip))
    if let limit = options.limit, limit > 0 { expected = Array(expected.prefix(limit)) }
    if let projection = options.projection { expected = expected.map(projection.apply) }
    let found = try query.find(in: corpus, options: options)
    #expect(found.map(\.bytes) == expected.map(\.bytes), "find with \(filter)")
  }

  func sequenceNumber(_ document: Document) -> Int32 {
    if case .int32(let number) = document.values.last { return number }
    return -1
  }
}

// MARK: - Counting

/// How many inputs compiled and how many were rejected with a `QueryError`.
struct Counts {
  var compiled = 0
  var rejected = 0

  mutating func compile(_ filter: Document) -> Query? {
    do {
      let query = try Query(filter: filter)
      compiled += 1
      return query
    } catch {
      rejected += 1
      #expect(!error.message.isEmpty, "empty error message for \(filter)")
      return nil
    }
  }

  func report(_ what: String) {
    print("\(what): compiled \(compiled), rejected \(rejected)")
    #expect(compiled > 0, "no \(what) compiled")
    #expect(rejected > 0, "no \(what) were rejected")
  }
}

// MARK: - Building documents

private func makeDocument(_ pairs: [(String, BSON)]) -> Document {
  var builder = DocumentBuilder()
  for (key, value) in pairs { builder.append(key, value) }
  return builder.document
}

private func appending(_ pair: (String, BSON), to base: Document) -> Document {
  makeDocument(base.map { ($0.key, $0.value) } + [pair])
}

private func inserting(_ pair: (String, BSON), into base: Document, at generator: inout FuzzGenerator) -> Document {
  var pairs = base.map { ($0.key, $0.value) }
  pairs.insert(pair, at: generator.int(0...pairs.count))
  return makeDocument(pairs)
}

/// `levels` applications of `wrap` around `base`.
private func nest(_ levels: Int, _ base: Document, _ wrap: (Document) -> Document) -> Document {
  var result = base
  for _ in 0..<max(levels, 0) { result = wrap(result) }
  return result
}

private func nestArray(_ levels: Int, _ base: BSON) -> BSON {
  var result = base
  for _ in 0..<max(levels, 0) { result = .array(BSONArray([result])) }
  return result
}

/// `{key: value}`.
private func field(_ key: String, _ value: Document) -> Document { makeDocument([(key, .document(value))]) }

// MARK: - Realistic inputs

/// Filters, sorts and projections as an application over contacts would write them: the seeds
/// of the mutation tests.
private enum RealisticInputs {
  static let filters: [String] = [
    #"{"name": "Ann"}"#,
    #"{"age": {"$gte": 21, "$lt": 65}}"#,
    #"{"address.city": "Los Angeles"}"#,
    #"{"addresses.city": {"$in": ["Paris", "Berlin"]}}"#,
    #"{"addresses": {"$elemMatch": {"city": "Paris", "zip": {"$regex": "^75"}}}}"#,
    #"{"addresses.0.city": {"$ne": null}}"#,
    #"{"emails": {"$size": 2}}"#,
    #"{"tags": {"$all": ["friend", "work"]}}"#,
    #"{"$or": [{"name": {"$regex": "^an", "$options": "i"}}, {"nickname": {"$exists": true}}]}"#,
    #"{"$and": [{"age": {"$type": "number"}}, {"age": {"$mod": [2, 0]}}]}"#,
    #"{"$nor": [{"address.country": "US"}, {"deleted": true}]}"#,
    #"{"age": {"$not": {"$gt": 40}}}"#,
    #"{"name": {"$not": {"$regularExpression": {"pattern": "^B", "options": "i"}}}}"#,
    #"{"_id": {"$oid": "64b7f1a2c3d4e5f601234567"}}"#,
    #"{"createdAt": {"$gte": {"$date": "2024-01-01T00:00:00Z"}}}"#,
    #"{"score": {"$gt": {"$numberDecimal": "1.5"}}}"#,
    #"{"phones": {"$elemMatch": {"$regex": "^\\+1", "$options": "x"}}}"#,
    #"{"phones.number": {"$elemMatch": {"$gte": 100, "$lt": 200}}}"#,
    #"{"address": {"street": "1 Main St", "city": "Springfield"}}"#,
    #"{"tags": ["a", "b"]}"#,
    #"{"name": {"$in": [{"$regularExpression": {"pattern": "^a", "options": "i"}}, "Bob"]}}"#,
    #"{"middleName": null}"#,
    #"{"middleName": {"$exists": false}, "age": {"$type": ["int", "long", 1]}}"#,
    #"{"$comment": "adults", "age": {"$gte": 18}, "address.city": {"$nin": ["Oslo"]}}"#,
    #"{"addresses": {"$all": [{"$elemMatch": {"city": "Paris"}}, {"$elemMatch": {"city": "Rome"}}]}}"#,
    #"{"score": {"$lte": {"$numberDouble": "NaN"}}}"#,
    #"{"balance": {"$gt": {"$numberLong": "9007199254740993"}}}"#,
    #"{"address.geo": {"$exists": true}, "address.geo.lat": {"$gt": -90.5, "$lte": 90}}"#,
    #"{"friends": {"$elemMatch": {"addresses": {"$elemMatch": {"city": "Oslo"}}}}}"#,
    #"{"name": {"$regex": {"$regularExpression": {"pattern": "n$", "options": ""}}, "$options": "i"}}"#,
    #"{"$where": "this.age > 1", "name": {"$foo": 1}}"#,
    #"{"emails": {"$elemMatch": {"$not": {"$regex": "@example\\.com$"}, "$type": "string"}}}"#,
  ]

  static let sorts: [String] = [
    #"{"address.city": 1, "name": -1}"#,
    #"{"age": -1}"#,
    #"{"addresses.0.zip": 1, "_id": {"$numberLong": "1"}}"#,
    #"{"score": -1.0, "createdAt": 1}"#,
  ]

  static let projections: [String] = [
    #"{"name": 1, "address.city": 1}"#,
    #"{"_id": 0, "emails": 0}"#,
    #"{"tags": {"$slice": 2}, "name": true}"#,
    #"{"addresses": {"$elemMatch": {"city": "Paris"}}, "_id": 0}"#,
    #"{"phones": {"$slice": [-2, 1]}}"#,
    #"{"_id": 1}"#,
  ]
}

// MARK: - Generation

/// A grammar of filter documents, with well-typed and ill-typed operator arguments, and of the
/// documents to run them on.
private struct FuzzGenerator {
  var rng: SplitMix64

  init(seed: UInt64) { rng = SplitMix64(seed: seed) }

  mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }
  mutating func chance(_ percent: Int) -> Bool { int(1...100) <= percent }
  mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }
  mutating func shuffle<T>(_ items: inout [T]) { items.shuffle(using: &rng) }

  // MARK: Vocabulary

  static let segments = [
    "a", "a", "b", "c", "name", "age", "tags", "address", "city", "addresses", "0", "0", "1", "2", "00", "01",
    "-1", "10", "999999999", "4294967296", "", "$x", "$", "x y", "é", "🦀", "_id", "e\u{301}",
  ]
  static let operators = [
    "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists", "$type", "$size", "$all", "$elemMatch",
    "$not", "$regex", "$options", "$mod", "$comment",
  ]
  static let unknownOperators = [
    "$where", "$foo", "$expr", "$text", "$near", "$jsonSchema", "$geoWithin", "$bitsAllSet", "$", "$$", "$EQ",
    "$and", "$or", "$nor", "$search", "$eq ",
  ]
  static let typeNames = [
    "double", "string", "object", "array", "binData", "undefined", "objectId", "bool", "date", "null", "regex",
    "dbPointer", "javascript", "symbol", "javascriptWithScope", "int", "timestamp", "long", "decimal", "minKey",
    "maxKey", "number", "foo", "", "Number", "int32",
  ]
  static let validPatterns = [
    "^a", "n$", "^A.*n$", "a|b", "[a-z]+", "^$", "\\d{3}", "(?i)ann", "^\\p{L}+$", "é", "🦀", ".", "\\bLos\\b",
    "^(?:a|b)*$", "", "^\\+1", "(?<word>\\w)\\k<word>", "a{2,}", "[^\\s]", "\\Qa.b\\E", "^e\u{301}$",
  ]
  static let invalidPatterns = [
    "(", ")", "[", "a{2,1}", "*", "+a", "(?<", "\\", "[z-a]", "(?P<n>", "\\k<nope>", "a**", "\\p{Nope}",
    "[[:nope:]]", "(?", "x{99999999999}", "(?<n>a)(?<n>b)", "\\1", "[a-\\d]", "(?z)",
  ]
  /// Catastrophic backtracking on runs of "a" or "x": the corpus keeps such runs short.
  static let pathologicalPatterns = [
    "(a+)+$", "(a|aa)+b", "(a|a)*c", "^(a?){12}a{12}$", "(x+x+)+y", "(\\w+\\s?)+$", "([a-z]+)*[0-9]",
  ]
  static let patternTokens = [
    "a", "b", "é", "🦀", "(", ")", "[", "]", "[ab]", "[^a]", "*", "+", "?", "{2}", "{1,3}", "{", "}", "|", "^", "$",
    "\\", "\\d", "\\b", "(?i)", "(?<n>", "\\k<n>", "(?=", "(?!", "(?<=", "\\p{L}", "*?", "++", "(?:", "\\u{1F980}",
    "(?#", "[[:alpha:]]", "\\R", "\\X", "(?x)", " #", "\\Q", "\\E", "-", ",", "\\Z", "\\z", "\\G", "\\K",
  ]
  static let regexOptions = ["", "", "i", "m", "s", "x", "imsx", "u", "q", "ii", "g", "l", "i\u{301}"]
  static let longText = String(repeating: "Los Angeles é🦀 ", count: 200)

  // MARK: Paths and values

  mutating func fieldPath(allowOperators: Bool = true) -> String {
    let count = pick([1, 1, 1, 2, 2, 3, 4])
    var path = (0..<count).map { _ in Self.segments[int(0...(Self.segments.count - 1))] }.joined(separator: ".")
    if !allowOperators { while path.hasPrefix("$") { path.removeFirst() } }
    return path
  }

  mutating func pattern() -> String {
    switch int(0...9) {
    case 0...3: return pick(Self.validPatterns)
    case 4...5: return pick(Self.invalidPatterns)
    case 6: return pick(Self.pathologicalPatterns)
    default: return (0..<int(1...6)).map { _ in pick(Self.patternTokens) }.joined()
    }
  }

  mutating func regex() -> BSONRegularExpression {
    BSONRegularExpression(pattern: pattern(), options: pick(Self.regexOptions))
  }

  mutating func double() -> Double {
    pick([
      0, -0.0, 1, -1, 1.5, 2.5, -2.5, .nan, -.nan, .infinity, -.infinity, 1e308, -1e308, .leastNonzeroMagnitude,
      .greatestFiniteMagnitude, 9_007_199_254_740_992, 9_223_372_036_854_775_808.0, 2_147_483_648, 31,
      Double.random(in: -1000...1000, using: &rng),
    ])
  }

  mutating func decimal() -> Decimal128 {
    let texts = [
      "1.00", "-0", "0", "0.1", "1.5", "31", "NaN", "-NaN", "Infinity", "-Infinity", "1E6144", "-1E6144",
      "9.999999999999999999999999999999999E+6144", "1E-6176", "9007199254740993", "9223372036854775808",
      "-9223372036854775809", "2147483648",
    ]
    if chance(15) { return Decimal128(high: rng.next(), low: rng.next()) }
    return Decimal128(pick(texts)) ?? .nan
  }

  mutating func string() -> String {
    pick([
      "", "a", "Ann", "ann", "Bob", "Los Angeles", "Paris", "é", "e\u{301}", "🦀", "aaaaaaaaaaaa!",
      "aaaaaaaaaaaab", "xxxxxxxxxxxxz", "+1 555 0100", "$x", "a.b", "nul\u{0}inside", "ab12", Self.longText,
    ])
  }

  mutating func scalar() -> BSON {
    switch int(0...22) {
    case 0, 1: return .double(double())
    case 2, 3: return .string(string())
    case 4:
      return .binary(
        Binary(
          subtype: pick([.generic, .uuid, .userDefined, .md5]),
          data: (0..<pick([0, 1, 16])).map { _ in UInt8(int(0...255)) }))
    case 5: return .undefined
    case 6:
      return .objectId(
        pick([
          ObjectId("64b7f1a2c3d4e5f601234567")!, ObjectId(bytes: [UInt8](repeating: 0, count: 12))!,
          ObjectId(bytes: [UInt8](repeating: 0xFF, count: 12))!,
        ]))
    case 7: return .bool(chance(50))
    case 8: return .datetime(BSONDateTime(millisecondsSinceEpoch: pick([0, -1, 1_704_067_200_000, .max, .min])))
    case 9, 10: return .null
    case 11: return .regex(regex())
    case 12: return .dbPointer(DBPointer(ref: "contacts", id: ObjectId("64b7f1a2c3d4e5f601234567")!))
    case 13: return .javascript("this.age > 1")
    case 14: return .symbol(pick(["Ann", "a"]))
    case 15: return .javascriptWithScope(JavaScriptWithScope(code: "x", scope: makeDocument([("x", .int32(1))])))
    case 16, 17: return .int32(pick([0, 1, -1, 2, 21, 31, .max, .min]))
    case 18: return .timestamp(BSONTimestamp(timestamp: pick([0, 1, .max]), increment: pick([0, 1, .max])))
    case 19: return .int64(pick([0, 1, -1, 31, .max, .min, 9_007_199_254_740_993]))
    case 20: return .decimal128(decimal())
    case 21: return .minKey
    default: return .maxKey
    }
  }

  mutating func value(depth: Int) -> BSON {
    guard depth > 0, chance(30) else { return scalar() }
    switch int(0...3) {
    case 0: return .document(document(depth: depth - 1))
    case 1: return .array(BSONArray([]))
    case 2: return .array(BSONArray((0..<int(1...3)).map { _ in .document(document(depth: depth - 1)) }))
    default: return .array(BSONArray((0..<int(1...4)).map { _ in value(depth: depth - 1) }))
    }
  }

  mutating func key() -> String {
    chance(85) ? pick(Self.segments) : pick(["a.b", "$x", "$eq", "0", "address.city"])
  }

  mutating func document(depth: Int) -> Document {
    makeDocument((0..<int(0...5)).map { _ in (key(), value(depth: depth)) })
  }

  /// Random documents and fixed edge cases: nested documents and arrays of documents, empty
  /// arrays, nulls, missing fields, NaN, -0.0, Decimal128, long strings, deep nesting.
  mutating func corpus() -> [Document] {
    var documents: [Document] = (0..<36).map { _ in document(depth: 3) }
    let fixed: [String] = [
      #"{}"#,
      #"{"a": null}"#,
      #"{"a": []}"#,
      #"{"a": [[]]}"#,
      #"{"a": {"$numberDouble": "NaN"}, "b": {"$numberDouble": "-0.0"}}"#,
      #"{"a": {"$numberDecimal": "NaN"}, "b": {"$numberDecimal": "-0"}, "c": {"$numberDecimal": "1E6144"}}"#,
      #"{"a": [{"b": 1}, {"b": [2, 3]}, {"b": null}, {}], "tags": ["a", "b"]}"#,
      #"{"_id": 1, "name": "Ann", "age": 31, "address": {"city": "Los Angeles", "0": "zero"}}"#,
      #"{"addresses": [{"city": "Paris", "zip": "75001"}, {"city": "Rome"}], "a": {"0": {"b": 1}}}"#,
      #"{"a": {"b": {"c": [1, {"$numberLong": "2"}, 2.5, "x", {"$minKey": 1}, {"$maxKey": 1}]}}}"#,
      #"{"a": [1, [2, [3, [4]]]], "a.b": 1, "": 0, "$x": 1}"#,
      #"{"a": {"$undefined": true}, "b": {"$regularExpression": {"pattern": "^A", "options": "i"}}}"#,
      #"{"name": "aaaaaaaaaaaa!", "tags": ["xxxxxxxxxxxxz", "aaaaaaaaaaaab"]}"#,
    ]
    documents += fixed.map { try! Document(extendedJSON: $0) }
    documents.append(makeDocument([("name", .string(Self.longText)), ("a", .string(Self.longText))]))
    let deepValue = nest(98, makeDocument([("a", .int32(1))])) { makeDocument([("a", .document($0))]) }
    documents.append(deepValue)
    documents.append(makeDocument([("a", nestArray(99, .int32(1)))]))
    return documents
  }

  // MARK: Filters

  mutating func filter(depth: Int) -> Document {
    makeDocument((0..<pick([0, 1, 1, 1, 2, 2, 3, 4])).map { _ in clause(depth: depth) })
  }

  mutating func clause(depth: Int) -> (String, BSON) {
    switch int(0...19) {
    case 0...2 where depth > 0:
      let name = pick(["$and", "$or", "$nor"])
      if chance(85) {
        return (name, .array(BSONArray((0..<int(1...3)).map { _ in .document(filter(depth: depth - 1)) })))
      }
      return (name, pick([.array(BSONArray([])), .array(BSONArray([.int32(1)])), .document(Document()), .null]))
    case 3: return ("$comment", value(depth: 1))
    case 4: return (pick(Self.unknownOperators), value(depth: 1))
    default: return (fieldPath(allowOperators: chance(5)), condition(depth: depth))
    }
  }

  /// What a field is tested against: a value (implicit equality), a regex or operators.
  mutating func condition(depth: Int) -> BSON {
    switch int(0...9) {
    case 0...2: return value(depth: depth)
    case 3: return .regex(regex())
    default: return .document(operatorDocument(depth: depth))
    }
  }

  mutating func operatorDocument(depth: Int) -> Document {
    var pairs: [(String, BSON)] = []
    for _ in 0..<pick([1, 1, 1, 2, 2, 3]) {
      let name = chance(92) ? pick(Self.operators) : pick(Self.unknownOperators)
      pairs.append((name, argument(for: name, depth: depth)))
      if name == "$regex" && chance(50) { pairs.append(("$options", .string(pick(Self.regexOptions)))) }
    }
    if chance(3) { pairs.append(("plain", .int32(1))) }
    return makeDocument(pairs)
  }

  /// A well-typed argument most of the time, otherwise any value.
  mutating func argument(for name: String, depth: Int) -> BSON {
    guard chance(75) else { return value(depth: depth) }
    switch name {
    case "$eq", "$ne", "$gt", "$gte", "$lt", "$lte": return value(depth: depth)
    case "$in", "$nin", "$all":
      var entries = (0..<pick([0, 1, 2, 3, 4])).map { _ in chance(20) ? BSON.regex(regex()) : value(depth: depth) }
      if name == "$all" && depth > 0 && chance(30) {
        entries.append(.document(makeDocument([("$elemMatch", elementMatchArgument(depth: depth - 1))])))
      }
      if chance(5) { entries.append(.document(makeDocument([("$eq", .int32(1))]))) }
      return .array(BSONArray(entries))
    case "$exists": return pick([.bool(true), .bool(false), .int32(0), .int32(1), .null, .undefined, .double(.nan)])
    case "$type":
      if chance(25) { return .array(BSONArray((0..<int(0...3)).map { _ in typeArgument() })) }
      return typeArgument()
    case "$size":
      return pick([
        .int32(0), .int32(1), .int32(2), .int64(3), .double(1.0), .int32(-1), .double(1.5), .string("a"),
        .double(1e20), .double(.nan), .decimal128(Decimal128("2")), .decimal128(.infinity), .int64(.max),
      ])
    case "$elemMatch": return depth > 0 ? elementMatchArgument(depth: depth - 1) : .document(Document())
    case "$not":
      switch int(0...5) {
      case 0: return .regex(regex())
      case 1: return .document(Document())
      case 2: return .document(makeDocument([("a", .int32(1))]))
      default: return .document(operatorDocument(depth: max(depth - 1, 0)))
      }
    case "$regex": return chance(70) ? .string(pattern()) : .regex(regex())
    case "$options": return .string(pick(Self.regexOptions))
    case "$mod":
      let numbers: [BSON] = [
        .int32(2), .int32(0), .int32(-3), .int64(.min), .int64(-1), .double(2.5), .double(-0.0), .double(.nan),
        .double(1e30), .double(0.5), .decimal128(decimal()), .string("2"), .null,
      ]
      return .array(BSONArray((0..<pick([0, 1, 2, 2, 2, 3])).map { _ in pick(numbers) }))
    default: return value(depth: depth)
    }
  }

  mutating func typeArgument() -> BSON {
    switch int(0...3) {
    case 0, 1: return .string(pick(Self.typeNames))
    case 2: return .int32(pick([1, 2, 3, 4, 10, 16, 18, 19, -1, 127, 0, 20, 255, 5]))
    default: return pick([.double(2.0), .double(2.5), .int64(1 << 40), .decimal128(Decimal128("16")), .bool(true)])
    }
  }

  /// `$elemMatch`'s argument: a query on the elements, or operators on them (the value form).
  mutating func elementMatchArgument(depth: Int) -> BSON {
    switch int(0...9) {
    case 0...3: return .document(filter(depth: depth))
    case 4...8: return .document(operatorDocument(depth: depth))
    default: return value(depth: 1)
    }
  }

  // MARK: Find options, sorts and projections

  mutating func findOptions() -> FindOptions {
    FindOptions(
      sort: chance(40) ? try? SortSpecification(sortDocument()) : nil, skip: pick([0, 0, 1, 3, 100]),
      limit: pick([nil, 0, 1, 2, 5, -1]), projection: chance(40) ? try? Projection(projectionDocument()) : nil)
  }

  mutating func sortDocument() -> Document {
    makeDocument(
      (0..<pick([0, 1, 1, 2, 3])).map { _ in
        let direction: BSON =
          chance(80)
          ? pick([.int32(1), .int32(-1), .double(1), .double(-1), .int64(1), .int64(-1)])
          : pick([
            .int32(0), .int32(2), .string("asc"), .bool(true), .double(.nan), .null, .double(-1.000_000_1),
            .document(makeDocument([("$meta", .string("textScore"))])), .decimal128(Decimal128("1")),
          ])
        return (fieldPath(allowOperators: chance(10)), direction)
      })
  }

  mutating func projectionDocument() -> Document {
    let including = chance(50)
    return makeDocument(
      (0..<pick([0, 1, 1, 2, 3])).map { _ in
        let path = chance(15) ? "_id" : fieldPath(allowOperators: chance(10))
        let rule: BSON
        switch int(0...9) {
        case 0...5:
          rule =
            including
            ? pick([.int32(1), .bool(true), .double(2), .int64(-1)]) : pick([.int32(0), .bool(false), .double(-0.0)])
        case 6:
          rule = .document(
            makeDocument([
              (
                "$slice",
                pick([
                  .int32(2), .int32(-2), .int32(0), .int64(.min), .int64(.min + 1), .int64(.max), .double(1e20),
                  .string("x"), .array(BSONArray([.int32(1), .int64(.max)])),
                  .array(BSONArray([.int32(-1), .int32(1)])), .array(BSONArray([.int64(.max), .int32(.max)])),
                  .array(BSONArray([.int32(1), .int32(0)])), .array(BSONArray([.int32(1)])),
                ])
              )
            ]))
        case 7: rule = .document(makeDocument([("$elemMatch", elementMatchArgument(depth: 1))]))
        case 8:
          rule = .document(
            makeDocument([(pick(["$meta", "$foo", "$slice"]), .int32(1)), ("$elemMatch", .document(Document()))]))
        default: rule = scalar()
        }
        return (path, rule)
      })
  }

  // MARK: Mutation

  mutating func mutate(_ bytes: [UInt8]) -> [UInt8] {
    var bytes = bytes
    let interesting: [UInt8] = [
      0x00, 0x01, 0x02, 0x03, 0x04, 0x0A, 0x0B, 0x10, 0x12, 0x13, 0x7F, 0xFF, 0x24, 0x2E, 0x80,
    ]
    for _ in 0..<int(1...3) {
      guard !bytes.isEmpty else { break }
      let i = int(0...(bytes.count - 1))
      switch int(0...7) {
      case 0: bytes[i] ^= UInt8(1) << UInt8(int(0...7))
      case 1, 2: bytes[i] = chance(50) ? pick(interesting) : UInt8(int(0...255))
      case 3: bytes.insert(pick(interesting), at: i)
      case 4: bytes.remove(at: i)
      case 5: bytes.removeSubrange(i..<min(bytes.count, i + int(1...8)))
      case 6: bytes = Array(bytes.prefix(i))
      default:
        let j = int(i...(bytes.count - 1))
        bytes.insert(contentsOf: bytes[i...j], at: j + 1)
      }
    }
    // Fixing the outer length lets inserts and deletes inside survive more often.
    if bytes.count >= 5 && chance(60) {
      withUnsafeBytes(of: Int32(bytes.count).littleEndian) { bytes.replaceSubrange(0..<4, with: $0) }
    }
    return bytes
  }

  static let jsonTokens: [String] =
    Array("{}[]\":,$0123456789.-eE\\ tfnaul").map(String.init) + [
      "\"$oid\"", "\"$numberDecimal\"", "\"$numberDouble\"", "\"$regex\"", "\"$gt\"", "\"$in\"", "\"$elemMatch\"",
      "\"$not\"", "\"$and\": [", "null", "true", "[]", "{}", "\"NaN\"", "\"$size\"", "\"$type\"", "\"$mod\"",
      "\"$options\"", "\"$where\"", "\"$regularExpression\"", "\"$date\"", "\"$numberLong\"", "1e400", "\\u0000",
      "\"é\"", "🦀",
    ]

  mutating func mutate(text: String) -> String {
    var chars = Array(text)
    for _ in 0..<int(1...3) {
      let i = chars.isEmpty ? 0 : int(0...(chars.count - 1))
      switch int(0...4) {
      case 0 where !chars.isEmpty: chars.remove(at: i)
      case 1 where !chars.isEmpty: chars.removeSubrange(i..<min(chars.count, i + int(1...6)))
      case 2 where !chars.isEmpty:
        let j = int(i...(chars.count - 1))
        chars.insert(contentsOf: chars[i...j], at: j + 1)
      default: chars.insert(contentsOf: pick(Self.jsonTokens), at: i)
      }
    }
    return String(chars)
  }
}
