import ArgumentParser
import ReefBSON

/// The `reef` command line tool.
public struct ReefCommand: ParsableCommand {
  public static let configuration = CommandConfiguration(
    commandName: "reef",
    abstract: "Read, check and convert BSON and Extended JSON.",
    subcommands: []
  )
  public init() {}
}
