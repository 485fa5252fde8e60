import ArgumentParser
import ReefBSON

/// `reef convert`: between a BSON stream and Extended JSON, detecting the input's format.
public struct ConvertCommand: ParsableCommand {
  /// The command's name, help text and examples.
  public static let configuration = CommandConfiguration(
    commandName: "convert",
    abstract: "Convert between a BSON stream and Extended JSON v2.",
    discussion: """
      The input's format is detected: a BSON stream when its first four bytes hold a zero byte \
      (as every BSON document length up to 16 MiB does), otherwise Extended JSON (documents \
      one per line, a JSON array of documents, or pretty-printed documents one after another; \
      a UTF-8 byte-order mark and leading blanks are skipped). Input ending in .gz, or starting \
      with the gzip magic bytes, is decompressed. Both are read as a stream: memory stays flat \
      whatever the size of the input.

      The output is a BSON stream (--to bson) or Extended JSON, one document per line (--to \
      canonical or relaxed). It goes to standard output, or to the -o file, gzip-compressed \
      when its name ends in .gz. Binary BSON is not written to a terminal.

      Bad input exits with code 1 after converting the documents before it; the error names \
      the line and column (JSON) or the document index and byte offset (BSON). With \
      --skip-invalid, a damaged document is reported and skipped, and the conversion goes on \
      (exit code 1), when the stream's framing allows it: a BSON document whose length prefix is \
      plausible, a JSON document whose braces balance.

      Examples:
        reef convert people.json --to bson -o people.bson
        reef convert people.bson.gz --to canonical -o people.json.gz
        mongoexport ... | reef convert --to bson > people.bson
      """
  )

  /// What to write.
  public enum Target: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// A BSON stream.
    case bson
    /// Canonical Extended JSON lines.
    case canonical
    /// Relaxed Extended JSON lines.
    case relaxed
  }

  /// The input file; `-` (the default) reads standard input.
  @Argument(help: ArgumentHelp("The file to convert, or - for standard input.", valueName: "path"))
  public var path: String = "-"

  /// The output format.
  @Option(help: "Output format: bson, canonical or relaxed.")
  public var to: Target

  /// The output file; standard output when absent.
  @Option(
    name: .shortAndLong,
    help: ArgumentHelp("Output file (.gz to compress), or - for standard output.", valueName: "out"))
  public var output: String = "-"

  /// Validation limits.
  @OptionGroup public var validation: ValidationFlags

  /// Whether to step over damaged BSON documents.
  @OptionGroup public var skipping: SkipFlags

  /// Whether to indent JSON output.
  @Flag(help: "Indent each JSON document over several lines.")
  public var pretty = false

  /// Creates the command (ArgumentParser fills in its properties).
  public init() {}

  /// Refuses to write binary BSON to a terminal.
  public func validate() throws {
    if to == .bson && output == "-" && standardOutputIsTerminal() {
      throw ValidationError("refusing to write binary BSON to a terminal: redirect standard output or use -o FILE")
    }
    if pretty && to == .bson {
      throw ValidationError("--pretty applies to JSON output only")
    }
    if path != "-" && output != "-" && isSameFile(path, output) {
      throw ValidationError("the output '\(output)' is the input: write to another file")
    }
  }

  /// Converts the input.
  public func run() throws {
    var sink: ByteSink?
    var failed: BSONError?
    var skipped: SkipCounter?
    do throws(BSONError) {
      let source = try ByteSource(path: path)
      let out = try ByteSink(path: output)
      sink = out
      let options = validation.options
      if try DocumentStreamFormat.detect(source, maximumSize: options.maximumSize).isExtendedJSON {
        var reader = ExtendedJSONStreamReader(source: source, options: options)
        skipped = skipping.install(on: &reader, input: path)
        while let document = try reader.next() { try emit(document, to: out) }
      } else {
        var reader = BSONStreamReader(source: source, options: options)
        skipped = skipping.install(on: &reader, input: path)
        while let document = try reader.next() { try emit(document, to: out) }
      }
      try out.close()
    } catch {
      failed = error
    }
    if let failed {
      try? sink?.close()  // Keep what was converted before the bad document.
      _ = skipped?.failureIfAny()
      throw failure(failed, input: path)
    }
    if let code = skipped?.failureIfAny() { throw code }
  }

  private func emit(_ document: Document, to out: ByteSink) throws(BSONError) {
    let mode: ExtendedJSONMode? =
      switch to {
      case .bson: nil
      case .canonical: .canonical
      case .relaxed: .relaxed
      }
    try out.write(document, as: mode, pretty: pretty)
  }
}
