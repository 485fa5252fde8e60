import ReefBSON
import ReefQuery
import Testing

extension QueryError.Kind {
  /// A kind defined outside the library, as a caller's own layer would.
  fileprivate static let callersOwn = QueryError.Kind(rawValue: "callersOwn")
}

/// The error of a filter that must not compile; `nil` (and a recorded issue) when it compiles.
private func filterError(_ json: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> QueryError? {
  let filter = try Document(extendedJSON: json)
  do {
    _ = try Query(filter: filter)
    Issue.record("\(json) compiled", sourceLocation: sourceLocation)
    return nil
  } catch {
    return error
  }
}

/// The error of a predicate that must not compile; `nil` (and a recorded issue) when it compiles.
private func predicateError(
  _ predicate: String, _ arguments: [BSON] = [], sourceLocation: SourceLocation = #_sourceLocation
) -> QueryError? {
  do {
    _ = try Query(predicate: predicate, arguments: arguments)
    Issue.record("\(predicate.debugDescription) compiled", sourceLocation: sourceLocation)
    return nil
  } catch {
    return error
  }
}

/// Query errors carry a kind that callers can switch on, with the key path or column that says
/// where the problem is (issue 13).
@Suite struct QueryErrorTests {
  @Test(arguments: [
    (#"{"a": {"$foo": 1}}"#, QueryError.Kind.unknownOperator, ["a", "$foo"]),
    (#"{"$foo": [{"a": 1}]}"#, .unknownOperator, ["$foo"]),
    (#"{"$where": "this.a"}"#, .unsupported, ["$where"]),
    (#"{"a": {"$near": [0, 0]}}"#, .unsupported, ["a", "$near"]),
    (#"{"a": {"$in": 5}}"#, .badValue, ["a", "$in"]),
    (#"{"a": {"$mod": [0, 1]}}"#, .badValue, ["a", "$mod"]),
    (#"{"$and": []}"#, .badValue, ["$and"]),
    (#"{"a": {"$size": "a"}}"#, .badValue, ["a", "$size"]),
    (#"{"a": {"$regex": "("}}"#, .regex, []),
    (#"{"a": {"$regex": "x", "$options": "q"}}"#, .regex, []),
    (
      #"{"a": {"$regex": {"$regularExpression": {"pattern": "x", "options": "i"}}, "$options": "m"}}"#, .conflict,
      ["a", "$regex"]
    ),
  ])
  func filterErrorsHaveAKindAndAKeyPath(filter: String, kind: QueryError.Kind, keyPath: [String]) throws {
    let error = try filterError(filter)
    #expect(error?.kind == kind, "\(filter): \(String(describing: error))")
    if !keyPath.isEmpty { #expect(error?.keyPath == keyPath, "\(filter): \(String(describing: error))") }
    #expect(error?.column == nil)
  }

  @Test(arguments: [
    ("a == ", QueryError.Kind.syntax, 6),
    ("(a == 1", .syntax, 8),
    ("a == 'open", .syntax, 6),
    ("a FOO 1", .unknownOperator, 3),
    ("a.@foo == 1", .unknownOperator, 1),
    ("a ==[x] 'b'", .unknownOperator, 6),
    ("a == $1", .argument, 6),
    ("%K == 1", .argument, 1),
    ("a == %c", .unsupported, 6),
    ("a == b", .unsupported, 6),
    ("a BEGINSWITH 5", .badValue, 14),
    ("a BETWEEN {1, 2, 3}", .badValue, 11),
  ])
  func predicateErrorsHaveAKindAndAColumn(predicate: String, kind: QueryError.Kind, column: Int) {
    let error = predicateError(predicate, [1])
    #expect(error?.kind == kind, "\(predicate): \(String(describing: error))")
    #expect(error?.column == column, "\(predicate): \(String(describing: error))")
  }

  @Test func aFilterDeeperThanTheLimitWrapsTheBSONError() throws {
    var filter: Document = ["x": 1]
    for _ in 0..<120 { filter = ["a": .document(filter)] }
    let error = #expect(throws: QueryError.self) { try Query(filter: filter) }
    #expect(error?.kind == .invalidDocument)
    #expect(error?.bsonError?.kind == .depthLimitExceeded, "\(String(describing: error))")
  }

  @Test func projectionAndSortErrorsHaveKinds() throws {
    let mixed = #expect(throws: QueryError.self) { try Projection(["a": 1, "b": 0]) }
    #expect(mixed?.kind == .conflict)
    let empty = #expect(throws: QueryError.self) { try Projection(["": 1]) }
    #expect(empty?.kind == .badPath)
    let direction = #expect(throws: QueryError.self) { try SortSpecification(["a": 2]) }
    #expect(direction?.kind == .badValue)
    #expect(direction?.keyPath == ["a"])
  }

  @Test func callersSwitchOnTheKindAndAddTheirOwn() throws {
    func handling(_ error: QueryError) -> String {
      switch error.kind {
      case .syntax: "fix the predicate"
      case .unknownOperator, .unsupported: "use another operator"
      case .callersOwn: "the caller's own"
      default: "something else"
      }
    }
    #expect(handling(try #require(predicateError("a == "))) == "fix the predicate")
    #expect(handling(try #require(try filterError(#"{"a": {"$foo": 1}}"#))) == "use another operator")
    #expect(handling(QueryError(.callersOwn, "mine")) == "the caller's own")
    #expect(QueryError.Kind.callersOwn.description == "callersOwn")
    #expect(QueryError.Kind(rawValue: "syntax") == .syntax)
  }
}
