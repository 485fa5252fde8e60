import ArgumentParser
import ReefBSON

/// `reef validate`: checks every document of a BSON stream.
public struct ValidateCommand: ParsableCommand {
  /// The command's name, help text and examples.
  public static let configuration = CommandConfiguration(
    commandName: "validate",
    abstract: "Check that every document of a BSON stream is valid.",
    discussion: """
      Validates every document of a BSON stream (a .bson file, gzip-compressed when it ends in \
      .gz or starts with the gzip magic bytes): lengths, terminators, type bytes, UTF-8, size \
      (at most 16 MiB + 16 KiB) and, with --max-depth, nesting depth. Arrays whose keys are \
      not "0", "1", … in order are valid, as libbson reads them, unless --strict-array-keys is \
      given.

      When all are valid, prints a summary such as "3 documents, 1234 bytes, all valid" and \
      exits 0. Otherwise reports the first error on standard error, with the document's index \
      (from 0), the byte offset of the problem in the stream and the reason, and exits 1.

      Examples:
        reef validate dump/shop/orders.bson
        gunzip -c orders.bson.gz | reef validate
      """
  )

  /// The input file; `-` (the default) reads standard input.
  @Argument(help: ArgumentHelp("The BSON file to check, or - for standard input.", valueName: "path"))
  public var path: String = "-"

  /// Validation limits.
  @OptionGroup public var validation: ValidationFlags

  /// Creates the command (ArgumentParser fills in its properties).
  public init() {}

  /// Validates the input.
  public func run() throws {
    var reader: BSONStreamReader
    do throws(BSONError) {
      reader = try openBSON(path, options: validation.options, command: "validate")
      while try reader.next() != nil {}
    } catch {
      throw failure(error, input: path)
    }
    let documents = reader.documentsRead == 1 ? "1 document" : "\(reader.documentsRead) documents"
    let bytes = reader.bytesRead == 1 ? "1 byte" : "\(reader.bytesRead) bytes"
    print("\(documents), \(bytes), all valid")
  }
}
