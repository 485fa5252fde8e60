import ArgumentParser
import ReefBSON
import Testing

@testable import ReefCLI

@Suite("reef command parsing")
struct CommandParsingTests {
  @Test("dump defaults to standard input and relaxed JSON")
  func dumpDefaults() throws {
    let command = try #require(try ReefCommand.parseAsRoot(["dump"]) as? DumpCommand)
    #expect(command.path == "-")
    #expect(command.format == .relaxed)
    #expect(!command.pretty)
    // The file tools read what libbson reads: any depth, degenerate array keys.
    #expect(
      command.validation.options
        == ValidationOptions(maximumDepth: ValidationOptions.unlimitedDepth, checksArrayKeys: false))
    #expect(command.validation.options(defaultDepth: 100).maximumDepth == 100)
  }

  @Test("dump takes a path, a format, --pretty and --max-depth")
  func dumpOptions() throws {
    let command = try #require(
      try ReefCommand.parseAsRoot(["dump", "people.bson", "--format", "canonical", "--pretty", "--max-depth", "500"])
        as? DumpCommand)
    #expect(command.path == "people.bson")
    #expect(command.format == .canonical)
    #expect(command.format.mode == .canonical)
    #expect(command.pretty)
    #expect(command.validation.options.maximumDepth == 500)
  }

  @Test("validate takes a path")
  func validate() throws {
    let command = try #require(try ReefCommand.parseAsRoot(["validate", "x.bson.gz"]) as? ValidateCommand)
    #expect(command.path == "x.bson.gz")
    let stdin = try #require(try ReefCommand.parseAsRoot(["validate", "-"]) as? ValidateCommand)
    #expect(stdin.path == "-")
  }

  @Test("convert needs --to and takes -o")
  func convert() throws {
    let command = try #require(
      try ReefCommand.parseAsRoot(["convert", "in.json", "--to", "bson", "-o", "out.bson.gz"]) as? ConvertCommand)
    #expect(command.path == "in.json")
    #expect(command.to == .bson)
    #expect(command.output == "out.bson.gz")
    let long = try #require(
      try ReefCommand.parseAsRoot(["convert", "--to", "canonical", "--output", "o.json"]) as? ConvertCommand)
    #expect(long.path == "-")
    #expect(long.to == .canonical)
    #expect(long.output == "o.json")
  }

  @Test(
    "usage errors exit with 64",
    arguments: [
      ["dump", "--bogus"], ["dump", "--format", "xml"], ["convert", "x.bson"], ["convert", "--to", "yaml"],
      ["validate", "a", "b"], ["nosuchcommand"], ["convert", "--to", "bson", "--pretty", "-o", "x.bson"],
      ["validate", "--max-depth=-1"],
    ])
  func usageErrors(arguments: [String]) {
    do {
      var command = try ReefCommand.parseAsRoot(arguments)
      try command.validate()
      Issue.record("expected \(arguments) to be refused")
    } catch {
      #expect(ReefCommand.exitCode(for: error) == .validationFailure)
      #expect(ReefCommand.exitCode(for: error).rawValue == 64)
    }
  }

  @Test(
    "help names the usage and gives examples",
    arguments: [
      (DumpCommand.self as ParsableCommand.Type, "reef dump [<path>] [--format <format>]"),
      (ValidateCommand.self, "reef validate [<path>]"), (ConvertCommand.self, "reef convert [<path>] --to <to>"),
    ])
  func help(command: ParsableCommand.Type, usage: String) {
    let text = ReefCommand.helpMessage(for: command)
    #expect(text.contains("USAGE: \(usage)"))
    #expect(text.contains("Examples:"))
    #expect(text.contains("--max-depth <n>"))
    #expect(ReefCommand.helpMessage().contains("SUBCOMMANDS:"))
  }

  @Test("format detection: BSON lengths win over a leading { byte; JSON otherwise")
  func detection() throws {
    let dir = try TemporaryDirectory()
    func detect(_ bytes: [UInt8]) throws -> DocumentStreamFormat {
      let path = try dir.write("input-\(bytes.count)-\(bytes.first ?? 0)", bytes)
      return try DocumentStreamFormat.detect(try ByteSource(path: path))
    }
    #expect(try detect(Array("{\"a\": 1}\n".utf8)) == .extendedJSONSequence)
    #expect(try detect(Array("  \n\t[{\"a\": 1}]".utf8)) == .extendedJSONArray)
    #expect(try detect(Array(String(repeating: " ", count: 100).utf8) + Array("{}".utf8)) == .extendedJSONSequence)
    #expect(try detect(Array(String(repeating: "\n", count: 5000).utf8) + Array("[]".utf8)) == .extendedJSONArray)
    #expect(try detect(Array("\n\n".utf8)) == .extendedJSONSequence)
    #expect(try detect(Array("{}".utf8)) == .extendedJSONSequence)
    #expect(try detect(Array("[".utf8)) == .extendedJSONArray)
    #expect(try detect([]) == .bson)
    #expect(try detect(sampleDocuments(count: 1)[0].bytes) == .bson)
    // A 123-byte document starts with 0x7B, which is `{`.
    let doc123 = largeDocument(size: 123)
    #expect(doc123.byteCount == 123)
    #expect(doc123.bytes[0] == UInt8(ascii: "{"))
    #expect(try detect(doc123.bytes) == .bson)
    // A 32-byte document starts with a space.
    var b = DocumentBuilder()
    b.append("k", "0123456789012345678")
    #expect(b.document.byteCount == 32)
    #expect(try detect(b.document.bytes) == .bson)
    // Text that is neither: JSON, so that the reader says what it found at line 1, column 1.
    #expect(try detect(Array("hello".utf8)) == .extendedJSONSequence)
    // Binary that is neither: BSON, so that the reader says what length it found.
    #expect(try detect([0x01, 0x00, 0x00, 0x00, 0x00]) == .bson)
    #expect(try detect([0x20, 0x00, 0x00]) == .bson)
    #expect(try detect([0xEF, 0xBB, 0xBF, 0x00, 0x01]) == .bson)
  }
}
