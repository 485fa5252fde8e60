import Foundation
import ReefTestSupport
import Testing

/// `reef query` over Extended JSON input (mongoexport's lines and `--jsonArray`), and the BSON-only
/// commands' refusal of it.
@Suite struct QueryJSONInputTests {
  /// The same queries over bsondump's `all_types.bson` (every BSON type) and over its canonical
  /// Extended JSON, as lines and as an array, print the same documents.
  @Test func jsonInputGivesTheAnswersOfItsBSON() throws {
    guard let shared = sharedDirectory("the bsondump test data") else { return }
    let bson = shared + "/interop/bsondump-testdata/all_types.bson"
    let directory = try TemporaryDirectory()
    let dumped = try reef("dump", bson, "--format", "canonical")
    try #require(dumped.status == 0, "\(dumped.stderr)")
    let lines = try directory.write("all_types.json", dumped.stdoutBytes)
    // The same documents as mongoexport --jsonArray writes them (pretty: one per line).
    let documents = dumped.stdout.split(separator: "\n").joined(separator: ",\n  ")
    let array = try directory.write("all_types-array.json", text: "[\n  \(documents)\n]\n")
    let queries: [[String]] = [
      [],
      ["--filter", #"{"type": {"$in": ["date", "regex", "oid"]}}"#],
      ["--filter", #"{"ex": {"$type": "timestamp"}}"#, "--project", #"{"_id": 0}"#],
      ["--where", "type BEGINSWITH 'd'", "--sort", #"{"type": -1}"#],
      ["--count"],
      ["--sort", #"{"ex": 1}"#, "--limit", "3", "--format", "relaxed"],
    ]
    for arguments in queries {
      let expected = try runProcess(reefBinary, ["query", bson] + arguments)
      #expect(expected.status == 0, "\(arguments): \(expected.stderr)")
      #expect(!expected.stdoutBytes.isEmpty, "\(arguments)")
      for input in [lines, array] {
        let result = try runProcess(reefBinary, ["query", input] + arguments)
        #expect(result.status == 0, "\(input) \(arguments): \(result.stderr)")
        #expect(result.stdout == expected.stdout, "\(input) \(arguments)")
      }
    }
  }

  @Test func aBadJSONDocumentStopsTheQueryWithItsPlace() throws {
    let directory = try TemporaryDirectory()
    let input = try directory.write("bad.json", Array("{\"a\": 1}\n{\"a\": 2}\n{\"a\": }\n".utf8))
    let result = try reef("query", input, "--filter", #"{"a": {"$gte": 1}}"#)
    #expect(result.status == 1)
    #expect(result.stdout == "{\"a\":{\"$numberInt\":\"1\"}}\n{\"a\":{\"$numberInt\":\"2\"}}\n")
    #expect(result.stderr.contains("document 2") && result.stderr.contains("line 3, column 7"), "\(result.stderr)")
  }

  /// `--skip-invalid` steps over a JSON document whose braces balance but whose content is bad,
  /// in lines and in an array, for `query` and `convert`: each skip is reported with the
  /// document's index, line and column, the others are printed, and the exit code is 1.
  @Test func skipInvalidStepsOverABadJSONDocument() throws {
    let directory = try TemporaryDirectory()
    let lines = try directory.write(
      "bad.json", Array("{\"a\": 1}\n{\"a\": }\n{\"a\": {\"$date\": \"2020-02-30T00:00:00Z\"}}\n{\"a\": 4}\n".utf8))
    let array = try directory.write(
      "bad-array.json",
      Array("[\n  {\"a\": 1},\n  {\"a\": }, {\"a\": {\"$date\": \"2020-02-30T00:00:00Z\"}},\n  {\"a\": 4}\n]\n".utf8))
    for (input, positions) in [(lines, ["line 2, column 7", "line 3"]), (array, ["line 3, column 9", "line 3"])] {
      for command in [["query", input, "--skip-invalid"], ["convert", input, "--to", "canonical", "--skip-invalid"]] {
        let result = try runProcess(reefBinary, command)
        #expect(result.status == 1, "\(command): \(result.stderr)")
        #expect(result.stdout == "{\"a\":{\"$numberInt\":\"1\"}}\n{\"a\":{\"$numberInt\":\"4\"}}\n", "\(command)")
        let reports = result.stderr.split(separator: "\n").filter { $0.contains("skipped:") }
        #expect(reports.count == 2, "\(command): \(result.stderr)")
        for (report, (index, position)) in zip(reports, zip([1, 2], positions)) {
          #expect(report.contains("document \(index)") && report.contains(position), "\(command): \(report)")
        }
        #expect(result.stderr.contains("2 documents skipped"), "\(command): \(result.stderr)")
      }
    }
    // Text that is not a document cannot be stepped over: the query stops there.
    let unframed = try directory.write("unframed.json", Array("{\"a\": 1}\nnot json\n{\"a\": 2}\n".utf8))
    let stopped = try reef("query", unframed, "--skip-invalid")
    #expect(stopped.status == 1)
    #expect(stopped.stdout == "{\"a\":{\"$numberInt\":\"1\"}}\n")
    #expect(stopped.stderr.contains("line 2, column 1"), "\(stopped.stderr)")
  }

  @Test func dumpAndValidateSayJSONIsNotBSON() throws {
    let directory = try TemporaryDirectory()
    let lines = try directory.write("lines.json", Array("{\"a\": 1}\n".utf8))
    let array = try directory.write("array.json", Array("  [{\"a\": 1}]".utf8))
    for (command, input, form) in [
      ("dump", lines, "Extended JSON text"), ("validate", array, "a JSON array of documents"),
      ("dump", array, "a JSON array of documents"),
    ] {
      let result = try reef(command, input)
      #expect(result.status == 1)
      #expect(result.stdout.isEmpty)
      #expect(
        result.stderr.contains("expected BSON, found \(form)") && result.stderr.contains("reef convert"),
        "\(command): \(result.stderr)")
    }
  }
}
