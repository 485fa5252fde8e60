import Foundation
import ReefBSON
import Testing

/// Runs the built `reef` on real files: exit codes, standard output and standard error for the
/// paths that involve only BSON.
@Suite("reef binary: BSON paths")
struct ReefBinaryTests {
  @Test("the binary exists next to the test bundle")
  func binaryExists() {
    #expect(FileManager.default.isExecutableFile(atPath: reefBinary), "no reef at \(reefBinary)")
  }

  @Test("validate prints a summary and exits 0 for a good stream")
  func validateGood() throws {
    let dir = try TemporaryDirectory()
    let documents = sampleDocuments(count: 3)
    let path = try dir.write("people.bson", stream(documents))
    let result = try reef("validate", path)
    #expect(result.status == 0)
    #expect(result.stdout == "3 documents, \(stream(documents).count) bytes, all valid\n")
    #expect(result.stderr.isEmpty)
  }

  @Test("validate reads standard input by default, and gzip there too")
  func validateStdin() throws {
    let dir = try TemporaryDirectory()
    let documents = sampleDocuments(count: 1)
    let plain = try dir.write("one.bson", stream(documents))
    let compressed = try dir.write("one.gz.stdin", try gzipped(stream(documents), in: dir))
    for input in [plain, compressed] {
      for arguments in [["validate"], ["validate", "-"]] {
        let result = try runProcess(reefBinary, arguments, stdinPath: input)
        #expect(result.status == 0, "\(arguments) < \(input): \(result.stderr)")
        #expect(result.stdout == "1 document, \(documents[0].byteCount) bytes, all valid\n")
      }
    }
  }

  @Test("validate exits 1 with the document index, byte offset and reason")
  func validateBad() throws {
    let dir = try TemporaryDirectory()
    let documents = sampleDocuments(count: 3)
    let bytes = stream(documents)
    let path = try dir.write("cut.bson", Array(bytes.dropLast(10)))
    let result = try reef("validate", path)
    #expect(result.status == 1)
    #expect(result.stdout.isEmpty)
    let start = documents[0].byteCount + documents[1].byteCount
    #expect(result.stderr.hasPrefix("reef: error: \(path): truncated at document 2, byte offset \(start): "))
    #expect(result.stderr.hasSuffix("\n"))
  }

  @Test("a missing input exits 1 with the reason")
  func missingFile() throws {
    for command in ["validate", "dump"] {
      let result = try reef(command, "/nonexistent/x.bson")
      #expect(result.status == 1)
      #expect(result.stderr == "reef: error: io: cannot open '/nonexistent/x.bson': No such file or directory\n")
    }
  }

  @Test(
    "usage errors exit 64 with the usage on standard error",
    arguments: [["dump", "--bogus"], ["convert", "x.bson"], ["dump", "--format", "xml"], ["frobnicate"]])
  func usageErrors(arguments: [String]) throws {
    let result = try runProcess(reefBinary, arguments)
    #expect(result.status == 64)
    #expect(result.stderr.contains("Usage: reef") || result.stderr.contains("USAGE: reef"))
    #expect(result.stdout.isEmpty)
  }

  @Test(
    "--help exits 0", arguments: [["--help"], ["dump", "--help"], ["validate", "--help"], ["convert", "--help"]])
  func help(arguments: [String]) throws {
    let result = try runProcess(reefBinary, arguments)
    #expect(result.status == 0)
    #expect(result.stdout.contains("USAGE: reef"))
  }

  @Test("validate has no depth limit unless --max-depth sets one")
  func maxDepth() throws {
    let dir = try TemporaryDirectory()
    var doc: Document = ["leaf": 1]
    for _ in 0..<150 { doc = ["sub": .document(doc)] }
    let path = try dir.write("deep.bson", doc.bytes)
    let strict = try reef("validate", "--max-depth", "100", path)
    #expect(strict.status == 1)
    #expect(strict.stderr.contains("depthLimitExceeded at document 0"))
    let lenient = try reef("validate", path)
    #expect(lenient.status == 0, "\(lenient.stderr)")
  }

  @Test("convert BSON to BSON copies the stream, through gzip and back")
  func convertBSONToBSON() throws {
    let dir = try TemporaryDirectory()
    let documents = sampleDocuments(count: 500)
    let input = try dir.write("in.bson", stream(documents))
    let toGzip = try reef("convert", input, "--to", "bson", "-o", dir.path("out.bson.gz"))
    #expect(toGzip.status == 0, "\(toGzip.stderr)")
    let compressed = try dir.read("out.bson.gz")
    #expect(compressed.starts(with: [0x1F, 0x8B]))
    let back = try reef("convert", dir.path("out.bson.gz"), "--to", "bson")
    #expect(back.status == 0)
    #expect(back.stdoutBytes == stream(documents))
  }

  @Test("convert of bad BSON keeps the documents before the bad one and exits 1")
  func convertBadBSON() throws {
    let dir = try TemporaryDirectory()
    let documents = sampleDocuments(count: 3)
    var bytes = stream(documents)
    bytes[documents[0].byteCount + 4] = 0xEE  // Type byte of document 1's first element.
    let result = try reef("convert", try dir.write("bad.bson", bytes), "--to", "bson", "-o", dir.path("out.bson"))
    #expect(result.status == 1)
    #expect(result.stderr.contains("unknownType at document 1, byte offset \(documents[0].byteCount + 4)"))
    #expect(try dir.read("out.bson") == documents[0].bytes)
  }

  @Test("validate streams a large input through a pipe")
  func largeStream() throws {
    let dir = try TemporaryDirectory()
    let chunk = stream(sampleDocuments(count: 1000))
    let path = dir.path("large.bson")
    _ = FileManager.default.createFile(atPath: path, contents: nil)
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    for _ in 0..<100 { try handle.write(contentsOf: chunk) }
    try handle.close()
    let result = try runProcess(reefBinary, ["validate"], stdinPath: path)
    #expect(result.status == 0)
    #expect(result.stdout == "100000 documents, \(chunk.count * 100) bytes, all valid\n")
  }

  @Test(
    "convert refuses to write binary BSON to a terminal (exit 64)",
    .enabled(
      if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"),
      "needs script(1) at /usr/bin/script for a pseudo-terminal"))
  func binaryToTerminal() throws {
    let dir = try TemporaryDirectory()
    let input = try dir.write("in.bson", stream(sampleDocuments(count: 1)))
    // script(1) runs the command with a pseudo-terminal as its standard output; -e passes on the exit code.
    let result = try runProcess(
      "/usr/bin/script", ["-qec", "'\(reefBinary)' convert '\(input)' --to bson", "/dev/null"])
    #expect(result.status == 64)
    #expect(result.stdout.contains("refusing to write binary BSON to a terminal"))
  }

  @Test("convert refuses to overwrite its input (exit 64)")
  func convertOntoInput() throws {
    let dir = try TemporaryDirectory()
    let bytes = stream(sampleDocuments(count: 2))
    let input = try dir.write("in.bson", bytes)
    let result = try reef("convert", input, "--to", "bson", "-o", input)
    #expect(result.status == 64)
    #expect(result.stderr.contains("is the input"))
    #expect(try dir.read("in.bson") == bytes)
  }
}
