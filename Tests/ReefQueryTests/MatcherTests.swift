import ReefBSON
import Testing

@testable import ReefQuery

/// Unit tests of the byte matcher, comparison order and sorts; the broad behaviour is covered by
/// the spec files.
@Suite struct MatcherTests {
  func document(_ json: String) throws -> Document { try Document(extendedJSON: json) }

  func matches(_ filter: String, _ json: String) throws -> Bool {
    try Query(filter: document(filter)).matches(document(json))
  }

  func order(_ a: BSON, _ b: BSON) -> Int { compareBSON(a, b) }

  @Test func numbersCompareExactlyAcrossTypes() {
    #expect(order(.int32(1), .double(1.0)) == 0)
    #expect(order(.int64(1), .decimal128(Decimal128("1.00"))) == 0)
    #expect(order(.int64(9_007_199_254_740_993), .double(9_007_199_254_740_992)) == 1)
    #expect(order(.double(0.1), .decimal128(Decimal128("0.1"))) == 1)
    #expect(order(.decimal128(Decimal128("0.1")), .double(0.1)) == -1)
    #expect(order(.decimal128(Decimal128("1E400")), .double(.greatestFiniteMagnitude)) == 1)
    #expect(order(.decimal128(Decimal128("-Infinity")), .int64(.min)) == -1)
    #expect(order(.double(-0.0), .int32(0)) == 0)
    #expect(order(.double(.nan), .double(-.infinity)) == -1)
    #expect(order(.double(.nan), .decimal128(Decimal128("NaN"))) == 0)
    #expect(order(.int64(.max), .double(9_223_372_036_854_775_808.0)) == -1)
    #expect(order(.double(2.5), .int32(2)) == 1)
    #expect(order(.double(-2.5), .int32(-2)) == -1)
  }

  @Test func typesOrderCanonically() {
    let ascending: [BSON] = [
      .minKey, .null, .int32(5), .string("a"), .document(Document()), .array(BSONArray()),
      .binary(Binary(data: [1])), .objectId(ObjectId()), .bool(false),
      .datetime(BSONDateTime(millisecondsSinceEpoch: 0)),
      .timestamp(BSONTimestamp(timestamp: 1, increment: 1)), .regex(BSONRegularExpression(pattern: "a")), .maxKey,
    ]
    for (index, value) in ascending.enumerated() {
      for later in ascending[(index + 1)...] {
        #expect(order(value, later) == -1, "\(value) < \(later)")
        #expect(order(later, value) == 1, "\(later) > \(value)")
      }
    }
    #expect(order(.string("abc"), .symbol("abc")) == 0)
    #expect(order(.string("ab"), .string("abc")) == -1)
    #expect(order(.string("b"), .string("abc")) == 1)
  }

  @Test func documentsCompareByTypeThenKeyThenValue() throws {
    #expect(order(.document(try document(#"{"a": 1}"#)), .document(try document(#"{"a": 1.0}"#))) == 0)
    #expect(order(.document(try document(#"{"a": 1}"#)), .document(try document(#"{"b": 0}"#))) == -1)
    #expect(order(.document(try document(#"{"a": 1}"#)), .document(try document(#"{"a": 1, "b": 0}"#))) == -1)
    #expect(order(.document(try document(#"{"a": "x"}"#)), .document(try document(#"{"a": 9}"#))) == 1)
  }

  @Test func nullMatchesNullAndMissingButNotUndefined() throws {
    #expect(try matches(#"{"a": null}"#, #"{"b": 1}"#))
    #expect(try matches(#"{"a": null}"#, #"{"a": null}"#))
    #expect(try !matches(#"{"a": null}"#, #"{"a": {"$undefined": true}}"#))
    #expect(try matches(#"{"a.b": null}"#, #"{"a": [{"b": 1}, {"c": 2}]}"#))
    #expect(try !matches(#"{"a": {"$ne": null}}"#, #"{"b": 1}"#))
    #expect(try !matches(#"{"a": null}"#, #"{"a": []}"#))
  }

  @Test func arraysAreTraversedOneLevel() throws {
    let doc = #"{"tags": ["a", ["b"]], "addresses": [{"city": "Paris"}, {"city": "Rome"}]}"#
    #expect(try matches(#"{"tags": "a"}"#, doc))
    #expect(try !matches(#"{"tags": "b"}"#, doc))
    #expect(try matches(#"{"tags": ["b"]}"#, doc))
    #expect(try matches(#"{"tags": ["a", ["b"]]}"#, doc))
    #expect(try matches(#"{"addresses.city": "Rome"}"#, doc))
    #expect(try matches(#"{"addresses.1.city": "Rome"}"#, doc))
    #expect(try !matches(#"{"addresses.0.city": "Rome"}"#, doc))
  }

  @Test func rangeOperatorsBracketTypes() throws {
    #expect(try !matches(#"{"a": {"$gt": 1}}"#, #"{"a": "z"}"#))
    #expect(try matches(#"{"a": {"$gt": "y"}}"#, #"{"a": "z"}"#))
    #expect(try matches(#"{"a": {"$gt": {"$minKey": 1}}}"#, #"{"a": "z"}"#))
    #expect(try !matches(#"{"a": {"$lt": 5}}"#, #"{"a": {"$numberDouble": "NaN"}}"#))
    #expect(try matches(#"{"a": {"$gte": {"$numberDouble": "NaN"}}}"#, #"{"a": {"$numberDouble": "NaN"}}"#))
    #expect(try matches(#"{"a": {"$lte": null}}"#, #"{"b": 1}"#))
  }

  @Test func unsupportedAndUnknownOperatorsAreErrors() throws {
    for (filter, text) in [
      (#"{"$where": "this.a"}"#, "$where"), (#"{"a": {"$foo": 1}}"#, "$foo"), (#"{"a": {"$size": "a"}}"#, "$size"),
      (#"{"$and": []}"#, "$and"), (#"{"a": {"$mod": [0, 1]}}"#, "divisor"), (#"{"a": {"$in": 5}}"#, "$in"),
      (#"{"a": {"$regex": "x", "$options": "q"}}"#, "option"), (#"{"a": {"$regex": "("}}"#, "regular expression"),
    ] {
      let error = #expect(throws: QueryError.self, "\(filter)") { try Query(filter: document(filter)) }
      #expect(error?.description.contains(text) == true, "\(String(describing: error))")
    }
  }

  @Test func sortUsesArrayMinimumAscendingAndMaximumDescending() throws {
    let documents = try [
      #"{"_id": 1, "v": [3, 9]}"#, #"{"_id": 2, "v": 5}"#, #"{"_id": 3}"#, #"{"_id": 4, "v": []}"#,
      #"{"_id": 5, "v": "s"}"#,
    ].map(document)
    let ascending = try SortSpecification(document(#"{"v": 1}"#)).sorted(documents).map { $0["_id"]! }
    #expect(ascending == [4, 3, 1, 2, 5])
    let descending = try SortSpecification(document(#"{"v": -1}"#)).sorted(documents).map { $0["_id"]! }
    #expect(descending == [5, 1, 2, 3, 4])
  }

  @Test func projectionIncludesExcludesAndSlices() throws {
    let doc = try document(
      #"{"_id": 1, "name": "A", "address": {"city": "X", "zip": "1"}, "tags": [1, 2, 3], "items": [{"p": 1, "q": 2}, 5]}"#
    )
    let include = try Projection(document(#"{"address.city": 1, "items.p": 1}"#)).apply(doc)
    #expect(include == (try document(#"{"_id": 1, "address": {"city": "X"}, "items": [{"p": 1}]}"#)))
    let exclude = try Projection(document(#"{"_id": 0, "address.zip": 0, "items.q": 0, "tags": 0}"#)).apply(doc)
    #expect(exclude == (try document(#"{"name": "A", "address": {"city": "X"}, "items": [{"p": 1}, 5]}"#)))
    let slice = try Projection(document(#"{"tags": {"$slice": -2}}"#)).apply(doc)
    #expect(slice["tags"] == [2, 3])
    #expect(throws: QueryError.self) { try Projection(document(#"{"a": 1, "b": 0}"#)) }
  }
}

/// The sort's fast path (rank and 128-bit prefixes) against the plain comparison of values.
@Suite struct SortPrefixTests {
  struct Generator {
    var state: UInt64
    mutating func next() -> UInt64 {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return state >> 11
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
  }

  static func value(_ random: inout Generator) -> BSON? {
    let strings = [
      "", "a", "a\u{0}", "a\u{0}b", "Los Angeles", "Los Angeles, CA", "Los Angeles, California",
      "Los Angeles, Californiz", "Zürich", "z",
    ]
    switch random.below(14) {
    case 0: return nil
    case 1: return .null
    case 2, 3: return .string(strings[random.below(strings.count)])
    case 4: return .int32(Int32(random.below(7)) - 3)
    case 5: return .int64([9_007_199_254_740_993, 9_007_199_254_740_992, -3, 2][random.below(4)])
    case 6: return .double([-0.0, 0.0, 2.0, -3.5, .nan, .infinity, 9_007_199_254_740_992][random.below(7)])
    case 7: return .decimal128(Decimal128(["2", "2.000", "-3.5", "1E400", "NaN", "0.1"][random.below(6)])!)
    case 8: return .datetime(BSONDateTime(millisecondsSinceEpoch: Int64(random.below(5)) - 2))
    case 9: return .objectId(ObjectId("64b7f1a2c3d4e5f60123456\(random.below(3))")!)
    case 10: return .bool(random.below(2) == 0)
    case 11: return .array(BSONArray((0..<random.below(3)).compactMap { _ in .int32(Int32(random.below(5))) }))
    case 12: return .document(["k": .int32(Int32(random.below(3)))])
    default: return random.below(2) == 0 ? .minKey : .maxKey
    }
  }

  @Test(arguments: [true, false])
  func fastSortAgreesWithComparingValues(ascending: Bool) throws {
    var random = Generator(state: 42)
    for round in 0..<20 {
      let documents = (0..<300).map { index -> Document in
        var builder = DocumentBuilder()
        builder.append("_id", index)
        if let value = SortPrefixTests.value(&random) { builder.append("v", value) }
        // Not an array when `v` is one: two keys may not reach two arrays (parallel arrays).
        if let value = SortPrefixTests.value(&random) {
          if case .array = value, case .array? = builder.document["v"] {
            builder.append("w", .int32(7))
          } else {
            builder.append("w", value)
          }
        }
        return builder.document
      }
      for keys in [
        [SortKey(FieldPath("v"), ascending: ascending)],
        [SortKey(FieldPath("v"), ascending: ascending), SortKey(FieldPath("w"), ascending: !ascending)],
      ] {
        let sort = SortSpecification(keys)
        let fast = try sort.sorted(documents).map { $0["_id"]! }
        // The reference: a stable insertion of each document after every one that is not greater.
        var reference: [Document] = []
        for document in documents {
          let position = try reference.lastIndex { try sort.compare($0, document) <= 0 }.map { $0 + 1 } ?? 0
          reference.insert(document, at: position)
        }
        #expect(fast == reference.map { $0["_id"]! }, "round \(round), \(keys.count) keys")
      }
    }
  }
}

@Suite struct FuzzFoundTests {
  @Test func nestedValueElementMatch() throws {
    let query = try Query(
      filter: Document(extendedJSON: #"{"a": {"$elemMatch": {"$elemMatch": {"$lt": 6, "$gt": 4}}}}"#))
    #expect(query.matches(try Document(extendedJSON: #"{"a": [[5]]}"#)))
    #expect(!query.matches(try Document(extendedJSON: #"{"a": [5, [7]]}"#)))
  }

  @Test func extremeSlicesAreClamped() throws {
    let doc = try Document(extendedJSON: #"{"tags": [1, 2, 3]}"#)
    let smallest = try Projection(
      Document(extendedJSON: #"{"tags": {"$slice": {"$numberLong": "-9223372036854775808"}}}"#))
    #expect(smallest.apply(doc)["tags"] == [1, 2, 3])
    let largest = try Projection(
      Document(extendedJSON: #"{"tags": {"$slice": [1, {"$numberLong": "9223372036854775807"}]}}"#))
    #expect(largest.apply(doc)["tags"] == [2, 3])
    let before = try Projection(
      Document(extendedJSON: #"{"tags": {"$slice": [{"$numberLong": "-9223372036854775808"}, 1]}}"#))
    #expect(before.apply(doc)["tags"] == [1])
  }

  @Test func negativeSkipCountsAsZero() throws {
    let docs = try [#"{"_id": 2}"#, #"{"_id": 1}"#].map { try Document(extendedJSON: $0) }
    let sorted = try Query(.constant(true)).find(
      in: docs, options: FindOptions(sort: SortSpecification([SortKey(FieldPath("_id"))]), skip: -1))
    #expect(sorted.map { $0["_id"]! } == [1, 2])
  }
}
