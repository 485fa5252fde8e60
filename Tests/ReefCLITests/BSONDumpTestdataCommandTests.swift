import Foundation
import ReefBSON
import ReefTestSupport
import Testing

/// The built `reef` on bsondump's own test inputs (mongodb/mongo-tools,
/// `test/qa-tests/jstests/bson/testdata`), read in place from
/// `$REEF_SHARED_DIR/interop/bsondump-testdata` (default `../shared`). `InteropTests` checks what
/// the library reads from each file; these check what the commands print.
@Suite("reef binary: bsondump's test data")
struct BSONDumpTestdataCommandTests {
  static let directory: String? = {
    guard let shared = sharedDirectory("bsondump's test data") else { return nil }
    let directory = shared + "/interop/bsondump-testdata"
    return FileManager.default.fileExists(atPath: directory + "/sample.bson") ? directory : nil
  }()

  static func path(_ name: String) throws -> String { try #require(directory) + "/" + name }

  @Test(
    "deep_nested.bson (500 levels) dumps with no --max-depth, as bsondump prints it", .enabled(if: directory != nil))
  func deepNested() throws {
    let path = try Self.path("deep_nested.bson")
    let dump = try reef("dump", "--format", "canonical", path)
    #expect(dump.status == 0, "\(dump.stderr)")
    #expect(dump.stderr.isEmpty)
    #expect(dump.stdoutLines.count == 1)
    #expect(dump.stdout.components(separatedBy: #""sub":"#).count == 501)
    #expect(dump.stdout.hasSuffix(String(repeating: "}", count: 501) + "\n"))
    let validate = try reef("validate", path)
    #expect(validate.status == 0, "\(validate.stderr)")
    #expect(validate.stdout == "1 document, 5022 bytes, all valid\n")
    let query = try reef("query", path, "--filter", #"{"sub.sub.sub": {"$exists": true}}"#, "--count")
    #expect(query.stdout == "1\n", "\(query.stderr)")
    let dir = try TemporaryDirectory()
    let convert = try reef("convert", path, "--to", "bson", "-o", dir.path("copy.bson"))
    #expect(convert.status == 0, "\(convert.stderr)")
    #expect(try dir.read("copy.bson") == [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
    // MongoDB's limit of 100 levels, when asked for.
    let limited = try reef("dump", "--max-depth", "100", path)
    #expect(limited.status == 1)
    #expect(limited.stdout.isEmpty)
    #expect(limited.stderr.contains("depthLimitExceeded at document 0, byte offset 926"), "\(limited.stderr)")
  }

  /// sample.json, which holds sample.bson's four documents as canonical Extended JSON lines.
  static func sampleLines() throws -> [Substring] {
    let text = try String(contentsOfFile: try path("sample.json"), encoding: .utf8)
    return text.split(separator: "\n")
  }

  // The folder has no bsondump output to compare with but sample.json, which is sample.bson's
  // four documents as bsondump prints them in canonical mode; the other good files are checked
  // document by document in InteropTests.
  @Test("dump --format canonical prints sample.bson exactly as sample.json has it", .enabled(if: directory != nil))
  func sampleIsPrintedAsBSONDumpPrintsIt() throws {
    let result = try reef("dump", "--format", "canonical", try Self.path("sample.bson"))
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == (try String(contentsOfFile: try Self.path("sample.json"), encoding: .utf8)))
  }

  @Test(
    "--skip-invalid steps over a damaged document and prints the others, exit 1",
    .enabled(if: directory != nil),
    arguments: [
      ("bad_type.bson", "unknownType at document 0, byte offset 21, key path 'a': "),
      // The key's control characters are escaped, as dump escapes them in strings.
      ("bad_cstring.bson", #"invalidLength at document 0, byte offset 37, key path 'b\u0001\u000e': "#),
    ])
  func skipInvalid(name: String, report: String) throws {
    let path = try Self.path(name)
    let expected = try Self.sampleLines().dropFirst().map { $0 + "\n" }.joined()
    for arguments in [
      ["dump", "--format", "canonical", "--skip-invalid", path],
      ["convert", path, "--to", "canonical", "--skip-invalid"],
      ["query", path, "--skip-invalid"],
    ] {
      let result = try runProcess(reefBinary, arguments)
      #expect(result.status == 1, "\(arguments)")
      #expect(result.stdout == expected, "\(arguments)")
      let lines = result.stderr.split(separator: "\n")
      #expect(lines.count == 2, "\(arguments): \(result.stderr)")
      #expect(lines.first?.hasPrefix("reef: skipped: \(path): \(report)") == true, "\(result.stderr)")
      #expect(lines.last == "reef: 1 document skipped")
    }
    // Without the flag, the first damaged document ends the dump.
    let strict = try reef("dump", path)
    #expect(strict.status == 1)
    #expect(strict.stdout.isEmpty)
    #expect(strict.stderr.hasPrefix("reef: error: \(path): \(report)"), "\(strict.stderr)")
  }

  @Test("--skip-invalid cannot step over a truncated stream: it stops there", .enabled(if: directory != nil))
  func skipInvalidTruncated() throws {
    let path = try Self.path("partial_file.bson")
    let result = try reef("dump", "--format", "canonical", "--skip-invalid", path)
    #expect(result.status == 1)
    #expect(result.stdout == (try Self.sampleLines().prefix(2).map { $0 + "\n" }.joined()))
    #expect(result.stderr.hasPrefix("reef: error: \(path): truncated at document 2, byte offset 164: "))
  }

  @Test(
    "broken_array.bson reads whole (its keys are degenerate), or skips one with --strict-array-keys",
    .enabled(if: directory != nil))
  func brokenArray() throws {
    let path = try Self.path("broken_array.bson")
    let lenient = try reef("dump", path)
    #expect(lenient.status == 0, "\(lenient.stderr)")
    #expect(lenient.stdoutLines.count == 20)
    let strict = try reef("dump", "--strict-array-keys", "--skip-invalid", path)
    #expect(strict.status == 1)
    #expect(strict.stdoutLines.count == 19)
    #expect(strict.stderr.contains("invalidArrayKey at document 11, byte offset 629"), "\(strict.stderr)")
  }
}
