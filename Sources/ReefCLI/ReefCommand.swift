import ArgumentParser
import ReefBSON

/// The `reef` command line tool.
public struct ReefCommand: ParsableCommand {
  /// The tool's name, summary and subcommands.
  public static let configuration = CommandConfiguration(
    commandName: "reef",
    abstract:
      "Read, check, convert and query BSON and Extended JSON, keep it in a store, port Realm models, infer models from data.",
    discussion: """
      BSON streams are concatenated documents, as in mongodump's and bsondump's .bson files. \
      Files ending in .gz are read and written gzip-compressed; compressed standard input is \
      recognised by its magic bytes.

      Exit codes: 0 success, 1 bad data or an I/O error, 64 a usage error.
      """,
    subcommands: [
      DumpCommand.self, ValidateCommand.self, ConvertCommand.self, QueryCommand.self, StatsCommand.self,
      IndexCommand.self, ImportCommand.self, ExportCommand.self, SchemaCommand.self, ModelsCommand.self,
      PortCommand.self,
    ]
  )

  /// Creates the command (ArgumentParser fills in its properties).
  public init() {}
}
