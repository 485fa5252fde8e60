import ReefBSON
import Testing

/// Small sharp edges found by using the tools as a hostile user would.
@Suite("Sharp edges")
struct SharpEdgeTests {
  @Test(
    "a $date whose day its month does not have is refused, with the reason",
    arguments: [
      ("2020-02-30T00:00:00Z", "2020-02 has 29 days, found day 30"),
      ("2021-02-29T00:00:00Z", "2021-02 has 28 days, found day 29"),
      ("1900-02-29T00:00:00Z", "1900-02 has 28 days, found day 29"),
      ("2020-04-31T12:00:00Z", "2020-04 has 30 days, found day 31"),
      ("2020-01-00T00:00:00Z", "2020-01 has 31 days, found day 0"),
    ])
  func impossibleDates(text: String, reason: String) {
    do {
      let document = try Document(extendedJSON: #"{"d": {"$date": "\#(text)"}}"#)
      Issue.record("accepted \(text) as \(document)")
    } catch {
      #expect(error.kind == .invalidExtendedJSON)
      #expect(error.message.contains(reason), "\(error.message)")
      #expect(error.message.contains(text), "\(error.message)")
    }
  }

  @Test(
    "the last day of each month, and February 29th of leap years, are dates",
    arguments: [
      ("2020-02-29T00:00:00Z", "2020-02-29T00:00:00Z"), ("2000-02-29T00:00:00Z", "2000-02-29T00:00:00Z"),
      ("2021-04-30T00:00:00Z", "2021-04-30T00:00:00Z"), ("2021-12-31T23:59:59Z", "2021-12-31T23:59:59Z"),
    ])
  func possibleDates(text: String, printed: String) throws {
    let document = try Document(extendedJSON: #"{"d": {"$date": "\#(text)"}}"#)
    #expect(document.extendedJSON(.relaxed) == #"{"d":{"$date":"\#(printed)"}}"#)
  }

  @Test("an error's key path escapes control characters and backslashes, as dump escapes strings")
  func keyPathsAreEscaped() {
    let error = BSONError(
      .invalidLength, "bad", offset: 3, keyPath: ["a\u{1B}[31m", "b\n\t", "c\\", "\u{9B}d", "é"])
    #expect(error.description == #"invalidLength at byte offset 3, key path 'a\u001b[31m.b\n\t.c\\.\u009bd.é': bad"#)
    #expect(error.dottedKeyPath == "a\u{1B}[31m.b\n\t.c\\.\u{9B}d.é")
  }
}
