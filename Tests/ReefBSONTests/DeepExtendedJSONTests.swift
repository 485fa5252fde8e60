import ReefBSON
import ReefTestSupport
import Testing

/// The Extended JSON parser keeps its open documents and arrays on the heap instead of
/// recursing, so any depth limit a user sets is safe, even on a thread with a small stack (the
/// recursive parser it replaced had to stop at 100 levels).
@Suite("Deep nesting: Extended JSON input")
struct DeepExtendedJSONTests {
  /// `{"a":{"a":…{}…}}` with `levels` documents below the top-level one: the one at depth `d`
  /// starts at character `5 * d`. It is the Extended JSON of `DeepNestingTests.nested(levels)`.
  static func nestedText(_ levels: Int) -> String {
    String(repeating: #"{"a":"#, count: levels) + "{}" + String(repeating: "}", count: levels)
  }

  /// What a parse on the small-stack thread gave.
  final class Outcome: @unchecked Sendable {
    var error: BSONError?
    var document: Document?
  }

  /// Parses `text` with `maximumDepth` on a 256 KiB thread.
  static func parse(_ text: String, maximumDepth: Int?) -> Outcome {
    let outcome = Outcome()
    DeepNestingTests.onSmallStack {
      do throws(BSONError) {
        if let maximumDepth {
          outcome.document = try Document(extendedJSON: text, maximumDepth: maximumDepth)
        } else {
          outcome.document = try Document(extendedJSON: text)
        }
      } catch {
        outcome.error = error
      }
    }
    return outcome
  }

  @Test("100,000 levels on a 256 KiB thread: parsed under an explicit limit, the bytes exact")
  func acceptedUnderAnExplicitLimit() {
    let levels = 100_000
    let text = Self.nestedText(levels)
    for limit in [levels, ValidationOptions.unlimitedDepth] {
      let outcome = Self.parse(text, maximumDepth: limit)
      #expect(outcome.error == nil, "limit \(limit)")
      #expect(outcome.document?.bytes == DeepNestingTests.nested(levels), "limit \(limit)")
    }
  }

  @Test("past the default limit of 100: refused at the 101st level, with its position and key path")
  func refusedPastTheDefaultLimit() {
    let outcome = Self.parse(Self.nestedText(100_000), maximumDepth: nil)
    #expect(outcome.document == nil)
    let error = outcome.error
    #expect(error?.kind == .depthLimitExceeded)
    #expect(error?.message == "expected documents and arrays nested at most 100 deep, found deeper nesting")
    #expect(error?.offset == 505)
    #expect(error?.line == 1)
    #expect(error?.column == 506)
    #expect(error?.keyPath == Array(repeating: "a", count: 101))
  }

  @Test("an explicit limit below the depth is enforced at its own level")
  func refusedPastAnExplicitLimit() {
    let outcome = Self.parse(Self.nestedText(100_000), maximumDepth: 50_000)
    #expect(outcome.error?.kind == .depthLimitExceeded)
    #expect(outcome.error?.message == "expected documents and arrays nested at most 50000 deep, found deeper nesting")
    #expect(outcome.error?.offset == 5 * 50_001)
    #expect(outcome.error?.keyPath.count == 50_001)
  }

  @Test("deep arrays, a code-with-scope and wrappers inside it: parsed and written back unchanged")
  func deepScope() {
    let levels = 50_000
    // Canonical and compact, so that the writer gives back the same text.
    let scope =
      #"{"d":"# + String(repeating: "[", count: levels) + #"{"$numberLong":"1"}"#
      + String(repeating: "]", count: levels) + #","e":{"$date":{"$numberLong":"0"}}}"#
    let text = #"{"c":{"$code":"x","$scope":"# + scope + #"},"after":{"$numberInt":"2"}}"#
    let outcome = Self.parse(text, maximumDepth: ValidationOptions.unlimitedDepth)
    #expect(outcome.error == nil)
    #expect(outcome.document?.extendedJSON(.canonical) == text)
    #expect(outcome.document?["after"] == .int32(2))
    // The scope is a level of its own: its arrays reach 50,001 levels, one past this limit. The
    // key path runs through the code-with-scope, its scope and every array but the refused one.
    let limited = Self.parse(text, maximumDepth: 50_000)
    #expect(limited.error?.kind == .depthLimitExceeded)
    #expect(limited.error?.keyPath.prefix(3) == ["c", "$scope", "d"])
    #expect(limited.error?.keyPath.count == 3 + 49_999)
    #expect(Self.parse(text, maximumDepth: 50_001).error == nil)
  }

  @Test("a wrapper's value nested without end is an error, not a crash, with no limit")
  func endlessWrapperValue() {
    let text = #"{"a": {"$regex": "# + String(repeating: "[", count: 100_000) + "}}"
    let outcome = Self.parse(text, maximumDepth: ValidationOptions.unlimitedDepth)
    #expect(outcome.document == nil)
    #expect(outcome.error?.kind == .invalidJSON)
    #expect(outcome.error?.message == "expected a value, found '}'")
  }
}
