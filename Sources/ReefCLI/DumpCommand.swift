import ArgumentParser
import ReefBSON

/// `reef dump`: a BSON stream to Extended JSON, one document per line (like bsondump).
public struct DumpCommand: ParsableCommand {
  /// The command's name, help text and examples.
  public static let configuration = CommandConfiguration(
    commandName: "dump",
    abstract: "Print a BSON stream as Extended JSON v2, one document per line.",
    discussion: """
      Reads concatenated BSON documents (a mongodump or bsondump .bson file, gzip-compressed \
      when it ends in .gz or starts with the gzip magic bytes) and prints each as Extended JSON \
      v2 on standard output, like bsondump. Every document is validated first.

      If a document is malformed, the documents before it are printed, then the error is \
      reported on standard error with the document's index (from 0), the byte offset of the \
      problem in the stream and the reason, and the exit code is 1. With --skip-invalid, a \
      damaged document whose length prefix is plausible is reported the same way and skipped, \
      and the dump goes on with the next one (the exit code is still 1).

      Examples:
        reef dump dump/shop/orders.bson
        reef dump --format canonical orders.bson.gz > orders.json
        gunzip -c orders.bson.gz | reef dump -
      """
  )

  /// The input file; `-` (the default) reads standard input.
  @Argument(help: ArgumentHelp("The BSON file to read, or - for standard input.", valueName: "path"))
  public var path: String = "-"

  /// The Extended JSON output form.
  @Option(help: "Extended JSON form: canonical or relaxed.")
  public var format: JSONFormat = .relaxed

  /// Validation limits.
  @OptionGroup public var validation: ValidationFlags

  /// Whether to step over damaged documents.
  @OptionGroup public var skipping: SkipFlags

  /// Whether to indent each document over several lines.
  @Flag(help: "Indent each document over several lines.")
  public var pretty = false

  /// Creates the command (ArgumentParser fills in its properties).
  public init() {}

  /// Dumps the input.
  public func run() throws {
    let out = try ByteSink.standardOutput()
    var skipped: SkipCounter?
    do throws(BSONError) {
      var reader = try openBSON(path, options: validation.options, command: "dump")
      skipped = skipping.install(on: &reader, input: path)
      let mode = format.mode
      let pretty = pretty
      // Output is written in large chunks; a person watching a terminal sees each document at once.
      let interactive = standardOutputIsTerminal()
      while let document = try reader.next() {
        try out.write(document, as: mode, pretty: pretty)
        if interactive { try out.flush() }
      }
      try out.close()
    } catch {
      try? out.close()  // Print the documents before the bad one, then the error.
      _ = skipped?.failureIfAny()
      throw failure(error, input: path)
    }
    if let code = skipped?.failureIfAny() { throw code }
  }
}
