import Foundation
import ReefBSON
import ReefTestSupport
import Testing

@testable import ReefCLI

/// Small sharp edges of the commands, found by using them as a hostile user would.
@Suite("reef binary: sharp edges")
struct SharpEdgeCommandTests {
  @Test("a JSON file starting with a UTF-8 byte-order mark is read as JSON")
  func byteOrderMark() throws {
    let dir = try TemporaryDirectory()
    for text in ["{\"a\": 1}\n{\"a\": 2}\n", "[{\"a\": 1}, {\"a\": 2}]", "  \n{\"a\": 1}\n{\"a\": 2}"] {
      let path = try dir.write("bom.json", [0xEF, 0xBB, 0xBF] + Array(text.utf8))
      #expect(try DocumentStreamFormat.detect(try ByteSource(path: path)).isExtendedJSON)
      let result = try reef("convert", path, "--to", "relaxed")
      #expect(result.status == 0, "\(text): \(result.stderr)")
      #expect(result.stdout == "{\"a\":1}\n{\"a\":2}\n")
    }
  }

  @Test("convert refuses the date 2020-02-30 with the reason")
  func impossibleDate() throws {
    let dir = try TemporaryDirectory()
    let path = try dir.write("dates.json", text: "{\"d\": {\"$date\": \"2020-02-30T00:00:00Z\"}}\n")
    let result = try reef("convert", path, "--to", "canonical")
    #expect(result.status == 1)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.contains("2020-02 has 29 days, found day 30"), "\(result.stderr)")
  }

  @Test("--filter '' is an error, not a filter that matches everything")
  func emptyFilter() throws {
    let dir = try TemporaryDirectory()
    let path = try dir.write("people.bson", stream(sampleDocuments(count: 3)))
    for filter in ["", "  "] {
      let result = try reef("query", path, "--filter", filter, "--count")
      #expect(result.status == 1)
      #expect(result.stdout.isEmpty)
      #expect(result.stderr.hasPrefix("reef: error: --filter: expected a filter document"), "\(result.stderr)")
    }
    #expect(try reef("query", path, "--filter", "{}", "--count").stdout == "3\n")
    #expect(try reef("query", path, "--count").stdout == "3\n")
  }

  @Test("a value starting with - is the option's value, in both spellings")
  func dashValues() throws {
    let dir = try TemporaryDirectory()
    let documents: [Document] = [["a": -5], ["a": 5]]
    let path = try dir.write("numbers.bson", stream(documents))
    for arguments in [["--filter", "-1"], ["--filter=-1"]] {
      // Parsed as a filter (and refused as JSON: exit 1), not a usage error (exit 64).
      let result = try runProcess(reefBinary, ["query", path] + arguments)
      #expect(result.status == 1, "\(arguments)")
      #expect(result.stderr.hasPrefix("reef: error: --filter: "), "\(arguments): \(result.stderr)")
    }
    for arguments in [["--arg", "-5"], ["--arg=-5"]] {
      let result = try runProcess(reefBinary, ["query", path, "--where", "a == $0", "--count"] + arguments)
      #expect(result.status == 0, "\(arguments): \(result.stderr)")
      #expect(result.stdout == "1\n")
    }
    let help = try reef("query", "--help")
    #expect(help.stdout.contains("--filter=<json>"))
  }

  @Test("an error's key path from the data is printed with its control characters escaped")
  func escapedKeyPath() throws {
    let dir = try TemporaryDirectory()
    // {"a\u{1B}[31m": {"b": <a boolean byte of 2>}}
    var inner = [UInt8]([0x08, 0x62, 0x00, 0x02])
    inner = le32(Int32(inner.count + 5)) + inner + [0]
    var outer = [UInt8]([0x03]) + Array("a\u{1B}[31m".utf8) + [0] + inner
    outer = le32(Int32(outer.count + 5)) + outer + [0]
    let path = try dir.write("escape.bson", outer)
    let result = try reef("dump", path)
    #expect(result.status == 1)
    #expect(result.stderr.contains(#"key path 'a\u001b[31m.b'"#), "\(result.stderr)")
    #expect(!result.stderr.contains("\u{1B}"))
  }
}
