import ReefBSON
import Testing

@_spi(ReefInternal) @testable import ReefQuery

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Regular expressions through PCRE2: MongoDB's options, and the limits that end a query on a
/// pattern that backtracks exponentially instead of letting it run for hours.
@Suite struct RegexTests {
  func document(_ string: String) -> Document { ["s": .string(string)] }

  func filter(_ json: String) throws -> Query { try Query(filter: try Document(extendedJSON: json)) }

  /// Seconds taken by `body`, on the monotonic clock.
  func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
  }

  /// The error of a find over `documents`, which must be a regex limit naming the pattern.
  func expectLimitError(_ query: Query, _ documents: [Document], pattern: String) {
    var thrown: QueryError?
    let elapsed = seconds {
      do {
        _ = try query.find(in: documents)
      } catch let error as QueryError {
        thrown = error
      } catch {
        Issue.record("not a QueryError: \(error)")
      }
    }
    #expect(thrown?.kind == .regexLimit, "/\(pattern)/: \(String(describing: thrown))")
    #expect(thrown?.message.contains("/\(pattern)/") == true, "\(String(describing: thrown))")
    #expect(thrown?.message.contains("limit") == true, "\(String(describing: thrown))")
    #expect(elapsed < 5, "/\(pattern)/ took \(elapsed) s")
  }

  /// On the strings of the issue (only `a`s), PCRE2 answers at once: it first looks for the `b`
  /// the pattern requires, finds none, and reports no match without backtracking (Swift's
  /// `Regex` took 75 s and over 30 s).
  @Test func theIssuesPatternsOnRunsOfAsAnswerAtOnce() throws {
    for (pattern, count) in [("^(a|aa)+b$", 40), ("(a+)+b", 22), ("(a+)+b", 10_000)] {
      let query = try Query(.match(FieldPath("s"), .regex(pattern: pattern, options: ""), .mongo))
      var found: [Document] = []
      let elapsed = try seconds { found = try query.find(in: [document(String(repeating: "a", count: count))]) }
      #expect(found.isEmpty)
      #expect(elapsed < 5, "/\(pattern)/ took \(elapsed) s")
    }
  }

  /// With the `b` present after the run, the match backtracks exponentially: the match limit ends
  /// the find with an error naming the pattern and the limit.
  @Test func alternationThatBacktracksExponentiallyEndsWithAnError() throws {
    let query = try filter(#"{"s": {"$regex": "^(a|aa)+b$"}}"#)
    let hostile = document(String(repeating: "a", count: 40) + "ba")
    expectLimitError(query, [document("ok"), hostile], pattern: "^(a|aa)+b$")
  }

  @Test func nestedQuantifierEndsWithAnError() throws {
    let query = try filter(#"{"s": {"$regex": "(a+)+b"}}"#)
    expectLimitError(query, [document(String(repeating: "a", count: 22) + "cb")], pattern: "(a+)+b")
    // Longer runs are worse for a backtracking matcher; the limit still ends it.
    expectLimitError(query, [document(String(repeating: "a", count: 10_000) + "cb")], pattern: "(a+)+b")
    // Without a required character to look for first.
    let anchored = try filter(#"{"s": {"$regex": "(a+)+$"}}"#)
    expectLimitError(anchored, [document(String(repeating: "a", count: 30) + "!")], pattern: "(a+)+$")
  }

  @Test func theSamePatternThroughInEndsWithAnError() throws {
    let query = try filter(#"{"s": {"$in": ["x", {"$regularExpression": {"pattern": "^(a|aa)+b$", "options": ""}}]}}"#)
    expectLimitError(query, [document(String(repeating: "a", count: 40) + "ba")], pattern: "^(a|aa)+b$")
  }

  @Test func theSamePatternUnderNotEndsWithAnError() throws {
    let query = try filter(#"{"s": {"$not": {"$regularExpression": {"pattern": "(a+)+b", "options": ""}}}}"#)
    expectLimitError(query, [document(String(repeating: "a", count: 30) + "cb")], pattern: "(a+)+b")
  }

  /// A pattern that scans a long string once, backtracking a few steps per byte, is no hostile
  /// pattern: the match limit grows with the string (8 steps per byte past a million).
  @Test func aLinearPatternOnAStringOfMegabytesIsNoError() throws {
    let query = try filter(#"{"s": {"$regex": "^a.*b.*c"}}"#)
    let run = String(repeating: "a", count: 2_000_000)
    #expect(try !query.evaluate(document(run + "b")))
    #expect(try query.evaluate(document(run + "bc")))
  }

  @Test func evaluateThrowsWhereMatchesSaysNoMatch() throws {
    let query = try filter(#"{"s": {"$regex": "(a+)+b"}}"#)
    let hostile = document(String(repeating: "a", count: 30) + "cb")
    #expect(!query.matches(hostile))
    #expect(throws: QueryError.self) { try query.evaluate(hostile) }
    // The failure of one document does not stay with the thread: the next one is evaluated afresh.
    #expect(try query.evaluate(document("aaab")))
    #expect(try !query.evaluate(document("ccc")))
  }

  @Test func aThreeThousandBracketPatternIsAnErrorNotACrash() {
    #expect {
      _ = try filter(#"{"s": {"$regex": ""# + String(repeating: "[", count: 3_000) + #""}}"#)
    } throws: { error in
      (error as? QueryError)?.kind == .regex
    }
  }

  @Test func deepNestingIsRejectedBeforeCompiling() {
    let pattern = String(repeating: "(", count: 3_000) + "a" + String(repeating: ")", count: 3_000)
    #expect {
      _ = try Query(.match(FieldPath("s"), .regex(pattern: pattern, options: ""), .mongo))
    } throws: { error in
      guard let error = error as? QueryError else { return false }
      return error.kind == .limit && error.message.contains("3000 deep") && error.message.contains("at most 250")
    }
  }

  @Test func aTooLongPatternIsRejectedBeforeCompiling() throws {
    let pattern = String(repeating: "a", count: 40_000)
    #expect {
      _ = try Query(.match(FieldPath("s"), .regex(pattern: pattern, options: ""), .mongo))
    } throws: { error in
      guard let error = error as? QueryError else { return false }
      return error.kind == .limit && error.message.contains("40000 bytes") && error.message.contains("32764")
    }
    // MongoDB's longest pattern compiles.
    _ = try Query(.match(FieldPath("s"), .regex(pattern: String(repeating: "a", count: 32_764), options: ""), .mongo))
  }

  @Test func aPatternWithANulByteIsAnError() {
    #expect {
      _ = try Query(.match(FieldPath("s"), .regex(pattern: "a\u{0}b", options: ""), .mongo))
    } throws: { error in
      (error as? QueryError)?.kind == .regex
    }
  }

  /// MongoDB's options: i, m, s and x as PCRE2's, u accepted (UTF-8 is always on).
  @Test(arguments: [
    // i: letters match either case, non-ASCII letters too (UTF mode).
    ("ABC", "i", "xabcx", true), ("ABC", "", "xabcx", false), ("ÉVA", "i", "éva", true),
    // m: ^ and $ match at each line's start and end; without it, only at the string's.
    ("^b$", "m", "a\nb\nc", true), ("^b$", "", "a\nb\nc", false), ("c$", "", "a\nb\nc", true),
    // $ without m matches before a final newline, as in PCRE.
    ("c$", "", "abc\n", true),
    // s: . matches a newline too.
    ("a.b", "s", "a\nb", true), ("a.b", "", "a\nb", false),
    // x: whitespace and # comments in the pattern are ignored, except in a class or escaped.
    ("a b # comment", "x", "ab", true), ("a b # comment", "", "ab", false), ("a[ ]b", "x", "a b", true),
    ("a\\ b", "x", "a b", true),
    // u: accepted, changes nothing; . is one code point either way.
    ("^.$", "u", "é", true), ("^.$", "", "é", true), ("^..$", "", "é", false),
    // An empty pattern matches every string, the empty one too.
    ("", "", "", true), ("", "", "abc", true),
    // Combined.
    ("^B.C$", "ims", "a\nb\nc", true),
    // PCRE syntax Swift's Regex lacked or read differently: possessive quantifiers, atomic groups,
    // \Q…\E, named groups and back-references, lookbehind.
    ("^a++b", "", "aaab", true), ("(?>a+)b", "", "aab", true), ("\\Q.*\\E", "", "x.*y", true),
    ("\\Q.*\\E", "", "xy", false), ("(?<q>['\"]).*\\k<q>", "", "'x'", true), ("(?<=a)b", "", "ab", true),
    ("(?<=a)b", "", "cb", false),
  ])
  func optionsBehaveAsMongoDBSays(pattern: String, options: String, subject: String, matches: Bool) throws {
    let query = try Query(.match(FieldPath("s"), .regex(pattern: pattern, options: options), .mongo))
    #expect(try query.evaluate(document(subject)) == matches, "/\(pattern)/\(options) on \(subject.debugDescription)")
  }

  @Test func aStringThatIsNotValidUTF8MatchesOnlyInItsValidParts() throws {
    // A string element with bytes 'a', 0xFF, 'b' (Document(trusted...) skips validation: a
    // trusted view of bytes Reef did not write may hold anything).
    let bytes: [UInt8] = [
      0x10, 0, 0, 0, 0x02, 0x73, 0, 4, 0, 0, 0, 0x61, 0xFF, 0x62, 0, 0,
    ]
    let query = try Query(.match(FieldPath("s"), .regex(pattern: "b$", options: ""), .mongo))
    let dot = try Query(.match(FieldPath("s"), .regex(pattern: "a.b", options: ""), .mongo))
    try bytes.withUnsafeBytes { raw throws in
      #expect(try query.evaluate(trustedBytes: raw))
      #expect(try !dot.evaluate(trustedBytes: raw))
    }
  }

  /// Realm's LIKE is a glob, not a regex: many stars on a long string that almost matches cost at
  /// most the string's length times the pattern's, and never a limit error.
  @Test func aLikePatternWithManyStarsAnswersAtOnce() throws {
    let query = try Query(predicate: "s LIKE '*a*a*a*a*a*a*a*a*a*a*a*a*b'")
    var found: [Document] = []
    let elapsed = try seconds { found = try query.find(in: [document(String(repeating: "a", count: 20_000))]) }
    #expect(found.isEmpty)
    #expect(elapsed < 5, "LIKE took \(elapsed) s")
    #expect(try query.find(in: [document(String(repeating: "a", count: 12) + "b")]).count == 1)
  }

  @Test func oneQueryMatchesOnManyThreadsAtOnce() async throws {
    let query = try filter(#"{"s": {"$regex": "^x+y$", "$options": "i"}}"#)
    let strings = (0..<200).map { String(repeating: "x", count: $0) + ($0 % 2 == 0 ? "Y" : "z") }
    let counts = try await withThrowingTaskGroup(of: Int.self) { group in
      for _ in 0..<8 {
        group.addTask { try strings.filter { try query.evaluate(self.document($0)) }.count }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    // "Y" for 0 x's is not a match (x+ needs one).
    #expect(counts == Array(repeating: 99, count: 8))
  }
}
