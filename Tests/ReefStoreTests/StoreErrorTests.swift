import ReefBSON
import ReefQuery
import Testing

@testable import ReefStore

extension StoreError.Kind {
  /// A kind defined outside the library, as a caller's own layer would.
  fileprivate static let callersOwn = StoreError.Kind(rawValue: "callersOwn")
}

/// The store error of a call that must fail; `nil` (and a recorded issue) when it succeeds or
/// throws something else.
private func storeError(
  sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) -> StoreError? {
  do {
    try body()
    Issue.record("expected a StoreError", sourceLocation: sourceLocation)
    return nil
  } catch let error as StoreError {
    return error
  } catch {
    Issue.record("expected a StoreError, got \(error)", sourceLocation: sourceLocation)
    return nil
  }
}

/// Store errors have a kind callers can switch on (and extend), and wrap the query, update or
/// BSON error behind them instead of flattening it into the message (issue 13).
@Suite struct StoreErrorTests {
  @Test func callersSwitchOnTheKindAndAddTheirOwn() throws {
    func handling(_ error: StoreError) -> String {
      switch error.kind {
      case .duplicateKey: "already there"
      case .invalidQuery: "fix the query"
      case .callersOwn: "the caller's own"
      default: "something else"
      }
    }
    let temporary = try TemporaryStore()
    let people = temporary.store.collection("people")
    try people.insert(["_id": 1])
    let duplicate = try #require(storeError { try people.insert(["_id": 1]) })
    #expect(duplicate.kind == .duplicateKey)
    #expect(handling(duplicate) == "already there")
    #expect(duplicate.queryError == nil && duplicate.updateError == nil && duplicate.bsonError == nil)
    #expect(handling(StoreError(.callersOwn, "mine")) == "the caller's own")
    #expect(handling(StoreError(.full, "full")) == "something else")
    #expect(StoreError.Kind.duplicateKey.rawValue == "duplicateKey")
    #expect("\(StoreError.Kind.callersOwn)" == "callersOwn")
  }

  @Test func aBadFilterKeepsItsQueryError() throws {
    let temporary = try TemporaryStore()
    let people = temporary.store.collection("people")
    try people.insert(["_id": 1, "a": 1])
    let error = try #require(storeError { _ = try people.find(try Document(extendedJSON: #"{"a": {"$foo": 1}}"#)) })
    #expect(error.kind == .invalidQuery)
    let query = try #require(error.queryError)
    #expect(query.kind == .unknownOperator)
    #expect(query.keyPath == ["a", "$foo"])
    #expect(error.message == query.description, "the message is the one the store gave before")

    let unsupported = try #require(storeError { _ = try people.count(try Document(extendedJSON: #"{"$where": "1"}"#)) })
    #expect(unsupported.queryError?.kind == .unsupported)
    let badValue = try #require(
      storeError { _ = try people.deleteMany(try Document(extendedJSON: #"{"a": {"$in": 1}}"#)) })
    #expect(badValue.queryError?.kind == .badValue)
    #expect(badValue.queryError?.keyPath == ["a", "$in"])
  }

  @Test func aBadPredicateKeepsItsQueryErrorAndColumn() throws {
    let temporary = try TemporaryStore()
    let people = temporary.store.collection("people")
    let error = try #require(storeError { _ = try people.find(predicate: "a == ") })
    #expect(error.kind == .invalidQuery)
    #expect(error.queryError?.kind == .syntax)
    #expect(error.queryError?.column == 6)
    #expect(error.message == error.queryError?.description)
    let unknown = try #require(storeError { _ = try people.find(predicate: "a FOO 1") })
    #expect(unknown.queryError?.kind == .unknownOperator)
    #expect(unknown.queryError?.column == 3)
  }

  @Test func aBadUpdateKeepsItsUpdateError() throws {
    let temporary = try TemporaryStore()
    let people = temporary.store.collection("people")
    try people.insert(["_id": 1, "a": 1, "s": "text"])

    let increment = try #require(storeError { try people.updateOne(["_id": 1], ["$inc": ["a": "x"]]) })
    #expect(increment.kind == .invalidQuery)
    #expect(increment.updateError?.kind == .badValue)
    #expect(increment.updateError?.keyPath == ["a"])
    #expect(increment.message == increment.updateError?.description)

    let id = try #require(storeError { try people.updateOne(["_id": 1], ["$set": ["_id": 2]]) })
    #expect(id.kind == .invalidQuery)
    #expect(id.updateError?.kind == .immutableField)
    #expect(id.updateError?.keyPath == ["_id"])

    let type = try #require(storeError { try people.updateMany([:], ["$inc": ["s": 1]]) })
    #expect(type.updateError?.kind == .typeMismatch)
    let unknown = try #require(storeError { try people.updateOne(["_id": 1], ["$foo": ["a": 1]]) })
    #expect(unknown.updateError?.kind == .unknownOperator)
    let upsert = try #require(
      storeError { try people.updateOne(["_id": 2, "s": "x"], ["$inc": ["s": 1]], upsert: true) })
    #expect(upsert.updateError?.kind == .typeMismatch)
    let pull = try #require(
      storeError { try people.updateOne(["_id": 1], ["$pull": ["a": ["$foo": 1]]]) })
    #expect(pull.updateError?.kind == .badValue)
    #expect(pull.updateError?.queryError?.kind == .unknownOperator)
    #expect(try people.findOne(["_id": 1]) == ["_id": 1, "a": 1, "s": "text"], "nothing was written")
  }

  @Test func aDocumentTooDeepKeepsItsBSONError() throws {
    let temporary = try TemporaryStore()
    var document: Document = ["x": 1]
    for _ in 0..<120 { document = ["a": .document(document)] }
    let error = try #require(storeError { try temporary.store.collection("deep").insert(document) })
    #expect(error.kind == .invalidDocument)
    #expect(error.bsonError?.kind == .depthLimitExceeded, "\(error)")
  }
}
