import ReefBSON
import Testing

@testable import ReefQuery

/// The positional projection (`"grades.$"`) is not supported: it is rejected when the projection
/// is compiled, with an error that names the path and says what to use instead, rather than
/// answered with an empty array. The shapes MongoDB rejects are errors too
/// (jstests/core/query/project/positional_projection.js, projection operators' restrictions).
@Suite struct PositionalProjectionTests {
  func error(_ projection: String) throws -> QueryError? {
    let document = try Document(extendedJSON: projection)
    return #expect(throws: QueryError.self, "\(projection)") { try Projection(document) }
  }

  @Test func thePositionalProjectionIsRejectedWithWhatToUseInstead() throws {
    // MongoDB's example: find({grades: {$gte: 85}}, {"grades.$": 1}).
    let rejected = try #require(try error(#"{"grades.$": 1}"#))
    #expect(rejected.kind == .unsupported)
    #expect(rejected.keyPath == ["grades.$"])
    #expect(rejected.message.contains(#"the positional projection "grades.$" is not supported"#))
    #expect(rejected.message.contains(#"{"grades": {"$elemMatch": <condition>}}"#), "\(rejected)")
    // Nested paths, other values, beside other fields, and with $slice (MongoDB's 31271).
    for projection in [
      #"{"a.b.c.$": 1}"#, #"{"x.$": true}"#, #"{"name": 1, "x.$": 1}"#, #"{"x.$": {"$slice": 1}}"#,
      #"{"x.$": 0}"#, #"{"_id": 0, "x.$": 1}"#,
    ] {
      #expect(try error(projection)?.kind == .unsupported, "\(projection)")
    }
  }

  @Test func misplacedDollarsAreBadPaths() throws {
    // MongoDB: '$' only at the end of a path; no field name that starts with '$'; no empty path.
    for (projection, text) in [
      (#"{"a.$.b": 1}"#, "may only end a projection path"), (#"{"a.$.$": 1}"#, "may only end a projection path"),
      (#"{"a.$b": 1}"#, "cannot start with '$'"), (#"{"a.b.$slice": 1}"#, "cannot start with '$'"),
      (#"{".$": 1}"#, "empty segments"), (#"{"a..$": 1}"#, "empty segments"), (#"{"$": 1}"#, "start with '$'"),
    ] {
      let rejected = try #require(try error(projection))
      #expect(rejected.kind == .badPath, "\(projection): \(rejected)")
      #expect(rejected.message.contains(text), "\(projection): \(rejected)")
      #expect(rejected.keyPath.count == 1, "\(projection): \(rejected)")
    }
  }

  @Test func elementMatchOnlyOnTopLevelFields() throws {
    // MongoDB: "Cannot use $elemMatch projection on a nested field." (31275).
    let nested = try #require(try error(#"{"a.b": {"$elemMatch": {"c": 1}}}"#))
    #expect(nested.kind == .badValue)
    #expect(nested.keyPath == ["a.b", "$elemMatch"])
    // On a top-level field it keeps the first matching element; $slice may be dotted.
    let document = try Document(extendedJSON: #"{"_id": 1, "a": [{"c": 2}, {"c": 1}], "b": {"d": [1, 2, 3]}}"#)
    let matched = try Projection(Document(extendedJSON: #"{"a": {"$elemMatch": {"c": 1}}}"#)).apply(document)
    #expect(matched == (try Document(extendedJSON: #"{"_id": 1, "a": [{"c": 1}]}"#)))
    let sliced = try Projection(Document(extendedJSON: #"{"b.d": {"$slice": -1}}"#)).apply(document)
    #expect(sliced == (try Document(extendedJSON: #"{"_id": 1, "a": [{"c": 2}, {"c": 1}], "b": {"d": [3]}}"#)))
    // $slice and $elemMatch on one field, or beside a sub-field, collide.
    for projection in [
      #"{"a": {"$elemMatch": {"c": 1}, "$slice": 1}}"#, #"{"a": {"$slice": 1}, "a.c": 1}"#,
      #"{"a": {"$elemMatch": {"c": 1}}, "a.c": 1}"#,
    ] {
      #expect(try error(projection) != nil, "\(projection)")
    }
  }

  @Test func hostilePathsAreRejectedQuickly() throws {
    // A path of 10,000 segments ending in '$', and one with a '$' segment among them.
    let long = Array(repeating: "a", count: 10_000).joined(separator: ".")
    #expect(try error(#"{"\#(long).$": 1}"#)?.kind == .unsupported)
    #expect(try error(#"{"\#(long).$.\#(long)": 1}"#)?.kind == .badPath)
  }
}
