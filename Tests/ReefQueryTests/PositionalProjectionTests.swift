import ReefBSON
import Testing

@testable import ReefQuery

/// The positional projection (`"grades.$"`): of the first array on its path, the element the
/// query matched, with MongoDB's expected outputs (jstests/core/query/project/
/// positional_projection.js) and the shapes MongoDB rejects.
@Suite struct PositionalProjectionTests {
  /// The projected document (without `_id`), through `find` as a user runs it.
  static func project(_ filter: String, _ projection: String, _ document: String) throws -> Document {
    let query = try Query(filter: Document(extendedJSON: filter))
    var withoutID = try Document(extendedJSON: projection)
    withoutID[key: "_id"] = .int32(0)
    let options = FindOptions(projection: try Projection(withoutID))
    let results = try query.find(in: [try Document(extendedJSON: document)], options: options)
    try #require(results.count == 1, "\(filter) does not match \(document)")
    return results[0]
  }

  static func expect(
    _ filter: String, _ projection: String, _ document: String, _ expected: String,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let projected = try project(filter, projection, document)
    #expect(
      projected == (try Document(extendedJSON: expected)), "\(filter) \(projection): \(projected)",
      sourceLocation: sourceLocation)
  }

  static func failure(_ filter: String, _ projection: String, _ document: String) throws -> QueryError? {
    #expect(throws: QueryError.self, "\(filter) \(projection)") { try project(filter, projection, document) }
  }

  static let xy = #"""
    {"x": [{"a": 1, "b": 2}, {"a": 2, "c": 3}, {"a": 1, "d": 5}], "y": [{"aa": 1, "bb": 2}, {"aa": 2, "cc": 3}, {"aa": 1, "dd": 5}]}
    """#

  @Test func theElementAConditionMatchedThrough() throws {
    // positional_projection.js: single object match, nested paths.
    try Self.expect(#"{"x.a": 2}"#, #"{"x.$": 1}"#, Self.xy, #"{"x": [{"a": 2, "c": 3}]}"#)
    try Self.expect(#"{"x.a": 1}"#, #"{"x.$": 1}"#, Self.xy, #"{"x": [{"a": 1, "b": 2}]}"#)
    try Self.expect(#"{"y.dd": 5}"#, #"{"y.$": 1}"#, Self.xy, #"{"y": [{"aa": 1, "dd": 5}]}"#)
    try Self.expect(
      #"{"x.y.a": 1}"#, #"{"x.y.$": 1}"#, #"{"x": {"y": [{"a": 1, "b": 1}, {"a": 1, "b": 2}]}}"#,
      #"{"x": {"y": [{"a": 1, "b": 1}]}}"#)
    // MongoDB's documentation example: the first grade of at least 85.
    try Self.expect(
      #"{"semester": 1, "grades": {"$gte": 85}}"#, #"{"grades.$": 1}"#,
      #"{"semester": 1, "grades": [70, 87, 90]}"#, #"{"grades": [87]}"#)
  }

  @Test func pathsWithoutAnArrayOrWithoutAValue() throws {
    // positional_projection.js: a missing path projects nothing and is no error; the existing
    // part of a path is kept; a path without an array is an inclusion.
    try Self.expect("{}", #"{"g.$": 1}"#, Self.xy, "{}")
    try Self.expect(#"{"a.b": 1}"#, #"{"g.$": 1}"#, #"{"a": {"b": 1}}"#, "{}")
    try Self.expect(#"{"x": 1}"#, #"{"a.$": 1}"#, #"{"x": 1}"#, "{}")
    try Self.expect(
      #"{"x": {"$gt": 0}}"#, #"{"a.b.c.$": 1}"#,
      #"{"x": [-1, 1, 2], "a": {"b": {"d": [1, 2, 3], "f": 456}, "e": 123}}"#,
      #"{"a": {"b": {}}}"#)
    try Self.expect(
      #"{"x": {"$gt": 0}}"#, #"{"a.b.c.$": 1}"#, #"{"x": [-1, 1, 2], "a": {"b": {"c": {"d": {"e": 1}}}}}"#,
      #"{"a": {"b": {"c": {"d": {"e": 1}}}}}"#)
    try Self.expect(
      #"{"x": {"$gt": 0}}"#, #"{"a.b.c.$": 1}"#, #"{"x": [-1, 1, 2], "a": {"b": {"c": 123}}}"#,
      #"{"a": {"b": {"c": 123}}}"#)
  }

  @Test func theFirstArrayOnThePathIsTheOneLimited() throws {
    // positional_projection.js: the recorded position applies to the first array on the path.
    try Self.expect(
      #"{"x": 1}"#, #"{"a.b.c.$": 1}"#, #"{"x": [1], "a": [{"b": [[[{"c": 1, "d": 2}]]]}]}"#,
      #"{"a": [{"b": [[[{"c": 1}]]]}]}"#)
    let z = #"{"x": {"y": {"z": [0, 1, 2]}}, "#
    try Self.expect(
      #"{"x.y.z": 1}"#, #"{"a.b.c.$": 1}"#, z + #""a": [{"b": {"c": [1, 2, 3]}}, {"b": {"c": [4, 5, 6]}}]}"#,
      #"{"a": [{"b": {"c": [4, 5, 6]}}]}"#)
    try Self.expect(
      #"{"x.y.z": 1}"#, #"{"a.b.c.$": 1}"#, z + #""a": {"b": [{"c": [1, 2, 3]}, {"c": [4, 5, 6]}]}}"#,
      #"{"a": {"b": [{"c": [4, 5, 6]}]}}"#)
    try Self.expect(
      #"{"x.y.z": 1}"#, #"{"a.b.c.$": 1}"#, z + #""a": {"b": {"c": [1, 2, 3]}}}"#, #"{"a": {"b": {"c": [2]}}}"#)
  }

  @Test func elementMatchInTheQuery() throws {
    // positional_projection.js: $elemMatch (both forms, nested) records its element; SERVER-61839.
    try Self.expect(
      #"{"x": {"$elemMatch": {"$gt": 1, "$lt": 3}}}"#, #"{"x.$": 1}"#, #"{"x": [1, 2, 3]}"#, #"{"x": [2]}"#)
    try Self.expect(
      #"{"x": {"$elemMatch": {"y": {"$gt": 1}}}}"#, #"{"x.$": 1}"#, #"{"x": [{"y": 1}, {"y": 2}, {"y": 3}]}"#,
      #"{"x": [{"y": 2}]}"#)
    try Self.expect(#"{"x": {"$elemMatch": {"a": 1, "b": 2}}}"#, #"{"x.$": 1}"#, Self.xy, #"{"x": [{"a": 1, "b": 2}]}"#)
    try Self.expect(
      #"{"a": {"$elemMatch": {"$elemMatch": {"$eq": 3}}}}"#, #"{"b.$": 1}"#,
      #"{"a": [[1, 2], [3, 4]], "b": [[5, 6], [7, 8]]}"#, #"{"b": [[7, 8]]}"#)
    let pq = #"{"a": [{"p": [1, 2], "q": [3, 4]}, {"p": [5, 6], "q": [7, 8]}], "b": [11, 12]}"#
    try Self.expect(#"{"a": {"$elemMatch": {"p": {"$elemMatch": {"$eq": 2}}}}}"#, #"{"b.$": 1}"#, pq, #"{"b": [11]}"#)
    try Self.expect(#"{"a": {"$elemMatch": {"p": {"$elemMatch": {"$eq": 6}}}}}"#, #"{"b.$": 1}"#, pq, #"{"b": [12]}"#)
    try Self.expect(#"{"a": {"$elemMatch": {"q": {"$elemMatch": {"$eq": 3}}}}}"#, #"{"b.$": 1}"#, pq, #"{"b": [11]}"#)
    try Self.expect(#"{"a": {"$elemMatch": {"q": {"$elemMatch": {"$eq": 7}}}}}"#, #"{"b.$": 1}"#, pq, #"{"b": [12]}"#)
    try Self.expect(
      #"{"a": {"$elemMatch": {"y": {"$exists": true}}}}"#, #"{"a.$": 1}"#, #"{"a": [{"y": 1}, {"y": 2}]}"#,
      #"{"a": [{"y": 1}]}"#)
    let typed = #"{"a": [{"y": {"$numberDouble": "1"}}, {"y": []}]}"#
    try Self.expect(
      #"{"a": {"$elemMatch": {"y": {"$type": ["array"]}}}}"#, #"{"a.$": 1}"#, typed, #"{"a": [{"y": []}]}"#)
    try Self.expect(
      #"{"a": {"$elemMatch": {"y": {"$type": ["array", "double"]}}}}"#, #"{"a.$": 1}"#, typed,
      #"{"a": [{"y": {"$numberDouble": "1"}}]}"#)
  }

  @Test func andInAndOr() throws {
    // positional_projection.js: the last child of $and; the first match of $in, and of an $or
    // that is an $in; several arrays in one query do not fail.
    let ab = #"{"a": [1, 2, 3], "b": [4, 5, 6]}"#
    try Self.expect(#"{"$and": [{"a": 1}, {"a": 2}, {"a": 3}]}"#, #"{"b.$": 1}"#, ab, #"{"b": [6]}"#)
    try Self.expect(#"{"$and": [{"a": 3}, {"a": 2}, {"a": 1}]}"#, #"{"b.$": 1}"#, ab, #"{"b": [4]}"#)
    try Self.expect(#"{"a": {"$in": [2, 3]}}"#, #"{"b.$": 1}"#, ab, #"{"b": [5]}"#)
    try Self.expect(#"{"$or": [{"a": 2}, {"a": 3}]}"#, #"{"b.$": 1}"#, ab, #"{"b": [5]}"#)
    try Self.expect(
      #"{"a": 2, "b": 5}"#, #"{"c.$": 1}"#, #"{"a": [1, 2, 3], "b": [4, 5, 6], "c": [7, 8, 9]}"#, #"{"c": [8]}"#)
  }

  @Test func noRecordedElementIsAnError() throws {
    // positional_projection.js (51246): no condition holds through an element of an array.
    let abc = #"{"a": [1, 2, 3], "b": [4, 5, 6], "c": [7, 8, 9]}"#
    for (filter, projection) in [
      ("{}", #"{"x.$": 1}"#), (#"{"b": [4, 5, 6]}"#, #"{"c.$": 1}"#),
      (#"{"$or": [{"a": 1}, {"b": 5}]}"#, #"{"a.$": 1}"#),
      (#"{"$or": [{"a": 0}, {"b": 5}]}"#, #"{"a.$": 1}"#), (#"{"$nor": [{"a": -1}, {"a": -2}]}"#, #"{"a.$": 1}"#),
      (#"{"a": {"$not": {"$elemMatch": {"$eq": 100}}}}"#, #"{"a.$": 1}"#),
    ] {
      let document = projection == #"{"x.$": 1}"# ? Self.xy : abc
      let error = try #require(try Self.failure(filter, projection, document))
      #expect(error.kind == .badValue && error.message.contains("found no matching element"), "\(error)")
      #expect(error.keyPath.count == 1 && error.keyPath[0].hasSuffix(".$"), "\(error)")
    }
    // The recorded element past the end of the projected array (51247).
    let short = try #require(
      try Self.failure(#"{"a": 3}"#, #"{"b.$": 1}"#, #"{"a": [1, 2, 3], "b": [4]}"#))
    #expect(short.message.contains("no element 2 in an array of 1"), "\(short)")
  }

  @Test func shapesMongoDBRejects() throws {
    func error(_ projection: String) throws -> QueryError? {
      let document = try Document(extendedJSON: projection)
      return #expect(throws: QueryError.self, "\(projection)") { try Projection(document) }
    }
    // positional_projection.js: with $slice (31271), in an exclusion (31254), two of them
    // (31276), '.$' alone (5392900); and with $elemMatch, or as an exclusion.
    #expect(try error(#"{"x.$": {"$slice": 1}}"#)?.message.contains("cannot be used with $slice") == true)
    #expect(try error(#"{"x.$": 1, "y": 0}"#)?.kind == .conflict)
    let two = try error(#"{"x.$": 1, "y.$": 1}"#)
    #expect(two?.kind == .conflict && two?.message.contains("only one positional") == true)
    #expect(try error(#"{".$": 1}"#)?.kind == .badPath)
    #expect(try error(#"{"x.$": 1, "y": {"$elemMatch": {"a": 1}}}"#)?.message.contains("$elemMatch") == true)
    #expect(try error(#"{"x.$": 0}"#)?.kind == .badValue)
    #expect(try error(#"{"x.$": 1, "x": 1}"#)?.kind == .conflict)
    #expect(try error(#"{"x.$": 1, "x.a": 1}"#)?.kind == .conflict)
    // '$' elsewhere in a path, and a segment that starts with '$'.
    for (projection, text) in [
      (#"{"a.$.b": 1}"#, "may only end a projection path"), (#"{"a.$.$": 1}"#, "may only end a projection path"),
      (#"{"a.$b": 1}"#, "cannot start with '$'"), (#"{"a.b.$slice": 1}"#, "cannot start with '$'"),
      (#"{"a..$": 1}"#, "empty segments"), (#"{"$": 1}"#, "start with '$'"),
    ] {
      let rejected = try #require(try error(projection))
      #expect(rejected.kind == .badPath && rejected.message.contains(text), "\(projection): \(rejected)")
    }
    // Without the query, a positional projection cannot be applied; with it, it can.
    let projection = try Projection(Document(extendedJSON: #"{"a.$": 1}"#))
    #expect(projection.isPositional)
    let document = try Document(extendedJSON: #"{"_id": 1, "a": [5, 6]}"#)
    let projected = try projection.apply(document, matching: Query(filter: ["a": 6]))
    #expect(projected == (try Document(extendedJSON: #"{"_id": 1, "a": [6]}"#)))
  }

  @Test func elementMatchOnlyOnTopLevelFields() throws {
    // MongoDB: "Cannot use $elemMatch projection on a nested field." (31275).
    let nested = #expect(throws: QueryError.self) {
      try Projection(Document(extendedJSON: #"{"a.b": {"$elemMatch": {"c": 1}}}"#))
    }
    #expect(nested?.kind == .badValue && nested?.keyPath == ["a.b", "$elemMatch"])
    let document = try Document(extendedJSON: #"{"_id": 1, "a": [{"c": 2}, {"c": 1}], "b": {"d": [1, 2, 3]}}"#)
    let matched = try Projection(Document(extendedJSON: #"{"a": {"$elemMatch": {"c": 1}}}"#)).apply(document)
    #expect(matched == (try Document(extendedJSON: #"{"_id": 1, "a": [{"c": 1}]}"#)))
    let sliced = try Projection(Document(extendedJSON: #"{"b.d": {"$slice": -1}}"#)).apply(document)
    #expect(sliced == (try Document(extendedJSON: #"{"_id": 1, "a": [{"c": 2}, {"c": 1}], "b": {"d": [3]}}"#)))
    for projection in [
      #"{"a": {"$elemMatch": {"c": 1}, "$slice": 1}}"#, #"{"a": {"$slice": 1}, "a.c": 1}"#,
      #"{"a": {"$elemMatch": {"c": 1}}, "a.c": 1}"#,
    ] {
      #expect(throws: QueryError.self, "\(projection)") { try Projection(Document(extendedJSON: projection)) }
    }
  }

  @Test func withoutItsQueryThePositionalFieldIsLeftOutWhereItMeetsAnArray() throws {
    // apply(_:) knows no element: the field is left out where the path meets an array (where
    // apply(_:matching:) with a query that records none throws), kept where it meets none.
    let projection = try Projection(["a.$": 1, "b": 1])
    #expect(projection.apply(["_id": 1, "a": [1, 2], "b": 3]) == ["_id": 1, "b": 3])
    #expect(projection.apply(["_id": 1, "a": 5, "b": 3]) == ["_id": 1, "a": 5, "b": 3])
    #expect(throws: QueryError.self) { try projection.apply(["_id": 1, "a": [1, 2]], matching: Query(filter: [:])) }
  }

  @Test func hostileInputsEndQuickly() throws {
    // A path of 1,000 segments ending in '$', a '$' among 2,000 segments, and an array of
    // 100,000 elements.
    let long = Array(repeating: "a", count: 1_000).joined(separator: ".")
    #expect(try Projection(Document(extendedJSON: #"{"\#(long).$": 1}"#)).isPositional)
    #expect(throws: QueryError.self) { try Projection(Document(extendedJSON: #"{"\#(long).$.\#(long)": 1}"#)) }
    var wide = DocumentBuilder()
    wide.append("_id", .int32(1))
    wide.append("a", .array(BSONArray((0..<100_000).map { .int32(Int32($0)) })))
    let projection = try Projection(Document(extendedJSON: #"{"a.$": 1}"#))
    let projected = try projection.apply(wide.document, matching: Query(filter: ["a": 99_999]))
    #expect(projected["a"] == [99_999])
  }
}
