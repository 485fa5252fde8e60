import ReefBSON
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

/// Store errors have a kind callers can switch on, and extend (issue 13).
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
    #expect(handling(StoreError(.callersOwn, "mine")) == "the caller's own")
    #expect(handling(StoreError(.full, "full")) == "something else")
    #expect(StoreError.Kind.duplicateKey.rawValue == "duplicateKey")
    #expect("\(StoreError.Kind.callersOwn)" == "callersOwn")
  }
}
