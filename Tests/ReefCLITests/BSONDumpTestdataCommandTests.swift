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
}
