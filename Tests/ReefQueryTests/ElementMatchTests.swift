import ReefBSON
import Testing

@testable import ReefQuery

/// `$elemMatch` in both forms and numeric path components, as MongoDB 8.0 has them; the broad
/// cases are in `Specs/query/elemmatch_arrays.json` and `Specs/query/numeric_paths.json`.
@Suite struct ElementMatchTests {
  func document(_ json: String) throws -> Document { try Document(extendedJSON: json) }

  func ids(_ filter: String, _ documents: [String]) throws -> [Int] {
    let query = try Query(filter: document(filter))
    return try documents.enumerated().filter { query.matches(try document($0.element)) }.map { $0.offset }
  }

  /// jstests/core/query/elemmatch/elemmatch_value.js: the object form tests the array's own
  /// elements; `b` is tested with array semantics inside an element.
  @Test func objectFormTestsTheArraysOwnElements() throws {
    let filter = #"{"a": {"$elemMatch": {"b": {"$lt": 6, "$gt": 4}}}}"#
    #expect(try ids(filter, [#"{"a": [{"b": 5}]}"#, #"{"a": [{"b": [3, 7]}]}"#, #"{"a": [[{"b": 5}]]}"#]) == [0, 1])
    // An array element is a document of its indexes: its field 0 is there, b is not.
    #expect(try ids(#"{"a": {"$elemMatch": {"0.b": 5}}}"#, [#"{"a": [[{"b": 5}]]}"#, #"{"a": [{"b": 5}]}"#]) == [0])
  }

  /// The value form parses every operator into a test on each element.
  @Test func valueFormTakesEveryOperator() throws {
    let node = try parseFilter(
      document(
        #"{"a": {"$elemMatch": {"$exists": true, "$size": 2, "$all": [1], "$not": {"$size": 0}, "#
          + #""$elemMatch": {"b": 1}, "$nin": [3]}}}"#))
    #expect(
      render(node)
        == "ELEMMATCH(a; EXISTS(true), SIZE(2), == 1i32, NOT SIZE(0), ELEMMATCH{MONGO b == 1i32}, NOT IN {3i32})")
  }

  /// MongoDB's `$all` rules: "$all/$elemMatch has to be consistent" when the first entry is an
  /// `$elemMatch` and a later one is not; "no $ expressions in $all" for an operator among
  /// values. Each error names the entry.
  @Test(arguments: [
    (#"{"x": {"$all": [{"$elemMatch": {"$gt": 1}}, 5]}}"#, "$all/$elemMatch has to be consistent", ["x", "$all", "1"]),
    (#"{"x": {"$all": [{"$elemMatch": {}}, {"y": 1}]}}"#, "$all/$elemMatch has to be consistent", ["x", "$all", "1"]),
    (#"{"x": {"$all": [5, {"$elemMatch": {"$gt": 1}}]}}"#, "no $ expressions in $all", ["x", "$all", "1"]),
    (#"{"x": {"$all": [{"$in": [1]}]}}"#, "no $ expressions in $all", ["x", "$all", "0"]),
    (
      #"{"x": {"$elemMatch": {"$all": [{"$elemMatch": {"$gt": 1}}, "s"]}}}"#, "$all/$elemMatch has to be consistent",
      ["x", "$elemMatch", "$all", "1"]
    ),
    (#"{"x": {"$elemMatch": {"$size": -1}}}"#, "may not be negative", ["x", "$elemMatch", "$size"]),
    (
      #"{"x": {"$elemMatch": {"$not": {"$ne": {"$regularExpression": {"pattern": "a", "options": ""}}}}}}"#,
      "$ne cannot take a regular expression",
      ["x", "$elemMatch", "$not", "$ne"]
    ),
    (
      #"{"x": {"$elemMatch": {"$elemMatch": {"$gt": 1, "y": 2}}}}"#, "unknown operator y",
      ["x", "$elemMatch", "$elemMatch", "y"]
    ),
  ])
  func malformedOperatorsAreErrorsWithTheirPlace(_ filter: String, _ message: String, _ keyPath: [String]) throws {
    do {
      _ = try Query(filter: document(filter))
      Issue.record("\(filter) compiled")
    } catch let error as QueryError {
      #expect(error.description.contains(message), "\(error)")
      #expect(error.keyPath == keyPath, "\(error)")
    }
  }

  /// The second element of `[true, {"1": false}, false]` is a document without a field `1`
  /// inside `false`: a missing branch, which MongoDB tests as null.
  @Test func numericComponentsFollowMongoDB() throws {
    let document = #"{"a": [true, {"1": false}, false]}"#
    #expect(try ids(#"{"a.1.1": null}"#, [document]) == [0])
    #expect(try ids(#"{"a.1.1": false}"#, [document]) == [0])
    #expect(try ids(#"{"a.1.1": {"$ne": null}}"#, [document]) == [])
    #expect(try ids(#"{"a.1": {"$exists": true}}"#, [document]) == [0])
    #expect(try ids(#"{"a.2.1": {"$exists": true}}"#, [document]) == [])
    // A positional path that ends on an array: the array whole, never its elements.
    let tags = #"{"tags": [["ssl", "security"], "warning"]}"#
    #expect(try ids(#"{"tags.0": "security"}"#, [tags]) == [])
    #expect(try ids(#"{"tags.0": {"$size": 2}}"#, [tags]) == [0])
    #expect(try ids(#"{"tags.0": {"$elemMatch": {"$eq": "ssl"}}}"#, [tags]) == [0])
    #expect(try ids(#"{"tags.0": {"$all": ["ssl"]}}"#, [tags]) == [])
    #expect(try ids(#"{"tags.0": {"$type": "array"}}"#, [tags]) == [0])
  }

  /// A projection's `$elemMatch` takes the first element that the object form matches: an array
  /// element is not searched for documents.
  @Test func projectionElementMatchSkipsArraysOfDocuments() throws {
    let projection = try Projection(document(#"{"a": {"$elemMatch": {"b": 5}}, "_id": 0}"#))
    let projected = projection.apply(try document(#"{"a": [[{"b": 5}], {"b": 5, "c": 1}]}"#))
    #expect(projected == (try document(#"{"a": [{"b": 5, "c": 1}]}"#)))
  }

  /// Hostile input: `$elemMatch` nested as deep as a filter may go, on arrays nested as deep as a
  /// document may go, and a long array, end quickly with the right answer.
  @Test func deepNestingAndLongArrays() throws {
    let levels = 48
    var filter = BSON.document(Document([("$size", .int32(0))]))
    for _ in 0..<levels { filter = .document(Document([("$elemMatch", filter)])) }
    var value = BSON.array(BSONArray())
    for _ in 0..<levels { value = .array(BSONArray([.int32(1), value])) }
    let query = try Query(filter: Document([("a", filter)]))
    #expect(query.matches(Document([("a", value)])))
    #expect(!query.matches(Document([("a", .array(BSONArray([value])))])))

    // A numeric path 90 components long through 90 nested arrays.
    var nested = BSON.int32(7)
    for _ in 0..<90 { nested = .array(BSONArray([nested])) }
    let deep = Document([("a", nested)])
    let path = "a" + String(repeating: ".0", count: 90)
    #expect(try Query(filter: Document([(path, .int32(7))])).matches(deep))
    #expect(try !Query(filter: Document([(path, .null)])).matches(deep))
    #expect(try !Query(filter: Document([(String(path.dropLast(2)), .int32(7))])).matches(deep))

    // 200,000 elements, the match at the end.
    var elements = [BSON](repeating: .array(BSONArray([.int32(1)])), count: 200_000)
    elements.append(.array(BSONArray([.int32(1), .int32(2)])))
    let long = Document([("a", .array(BSONArray(elements)))])
    let clock = ContinuousClock()
    let start = clock.now
    #expect(try Query(filter: document(#"{"a": {"$elemMatch": {"$size": 2, "$all": [[1, 2]]}}}"#)).matches(long))
    #expect(try !Query(filter: document(#"{"a": {"$elemMatch": {"$size": 3}}}"#)).matches(long))
    #expect(try Query(filter: document(#"{"a": {"$elemMatch": {"1": 2}}}"#)).matches(long))
    #expect(clock.now - start < .seconds(5))
  }
}
