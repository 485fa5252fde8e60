import Foundation
import ReefBSON
import ReefTestSupport
import Testing

/// The BSON corpus's valid arrays whose keys are not "0", "1", … (`array.json`'s
/// `degenerate_bson` cases: an empty key, "ab", a duplicated "0"). libbson and MongoDB read them;
/// the file tools do too by default, and print them renumbered, as the corpus's canonical
/// Extended JSON says. `--strict-array-keys` refuses them.
@Suite("reef binary: degenerate arrays from the BSON corpus")
struct DegenerateArrayTests {
  /// One corpus case: its description, its degenerate bytes and its canonical Extended JSON.
  struct Case: CustomTestStringConvertible, Sendable {
    var description: String
    var degenerate: [UInt8]
    var canonicalJSON: String
    var testDescription: String { description }
  }

  /// The `degenerate_bson` cases of `array.json`, from `$BSON_CORPUS_DIR` (default
  /// `../shared/bson-corpus`); empty, after saying why, when the corpus is absent.
  static let cases: [Case] = {
    let directory = getenvString("BSON_CORPUS_DIR") ?? sharedDirectory("the BSON corpus").map { $0 + "/bson-corpus" }
    guard let directory, let data = FileManager.default.contents(atPath: directory + "/array.json") else {
      print("DegenerateArrayTests: no array.json in the BSON corpus; skipped")
      return []
    }
    guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
      let valid = root["valid"] as? [[String: Any]]
    else { return [] }
    return valid.compactMap { entry in
      guard let hex = entry["degenerate_bson"] as? String, let json = entry["canonical_extjson"] as? String,
        let description = entry["description"] as? String
      else { return nil }
      return Case(description: description, degenerate: bytes(hex: hex), canonicalJSON: json)
    }
  }()

  @Test("array.json has the three degenerate arrays", .enabled(if: !cases.isEmpty))
  func corpusHasThem() {
    #expect(Self.cases.count == 3)
  }

  /// The canonical Extended JSON line Reef prints for the corpus's canonical form of a case.
  static func expectedLine(_ testCase: Case) throws -> String {
    try Document(extendedJSON: testCase.canonicalJSON).extendedJSON(.canonical) + "\n"
  }

  @Test("dump, convert and query print them renumbered", arguments: cases)
  func printed(testCase: Case) throws {
    let dir = try TemporaryDirectory()
    let path = try dir.write("degenerate.bson", testCase.degenerate + testCase.degenerate)
    let expected = try Self.expectedLine(testCase)
    for arguments in [
      ["dump", "--format", "canonical", path], ["convert", path, "--to", "canonical"],
      ["query", path, "--format", "canonical"], ["query", path, "--filter", #"{"a": 10}"#],
    ] {
      let result = try runProcess(reefBinary, arguments)
      #expect(result.status == 0, "\(arguments): \(result.stderr)")
      #expect(result.stdout == expected + expected, "\(arguments)")
      #expect(result.stderr.isEmpty)
    }
  }

  @Test("validate accepts them, and refuses them with --strict-array-keys", arguments: cases)
  func validated(testCase: Case) throws {
    let dir = try TemporaryDirectory()
    let path = try dir.write("degenerate.bson", testCase.degenerate)
    let lenient = try reef("validate", path)
    #expect(lenient.status == 0, "\(lenient.stderr)")
    #expect(lenient.stdout == "1 document, \(testCase.degenerate.count) bytes, all valid\n")
    for command in ["validate", "dump", "query"] {
      let strict = try reef(command, "--strict-array-keys", path)
      #expect(strict.status == 1, "\(command)")
      #expect(strict.stderr.contains("invalidArrayKey") || strict.stderr.contains("array key"), "\(strict.stderr)")
    }
  }
}
