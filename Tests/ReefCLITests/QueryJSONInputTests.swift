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
    let skipping = try reef("query", input, "--skip-invalid")
    #expect(skipping.status == 2)
    #expect(skipping.stderr.contains("--skip-invalid applies to BSON input"), "\(skipping.stderr)")
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
