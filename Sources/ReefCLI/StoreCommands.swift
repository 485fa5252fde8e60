import ArgumentParser
import ReefBSON
import ReefQuery
import ReefStore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `--store PATH`, shared by the commands that work on a store.
public struct StoreOptionsGroup: ParsableArguments {
  /// The store file.
  @Option(help: ArgumentHelp("The store file.", valueName: "path"))
  public var store: String

  /// Creates the options (ArgumentParser fills in their values).
  public init() {}
}

/// Reports a store error on standard error and returns exit code 1.
func failure(_ error: Error) -> ExitCode {
  printError("reef: error: \(error)")
  return ExitCode.failure
}

/// Opens a store, reporting failure as exit code 1.
///
/// A writer says why it waits on standard error: behind another import into the same
/// collection always, behind another writer ("waiting for another writer…") when standard
/// error is a terminal.
func openStore(_ path: String, readOnly: Bool) throws -> Store {
  var options = StoreOptions(readOnly: readOnly)
  if !readOnly {
    let terminal = isatty(2) != 0
    options.onWait = { wait in
      guard terminal || wait.kind != .writer else { return }
      printError("reef: \(wait)")
    }
  }
  do {
    return try Store(path: path, options: options)
  } catch {
    throw failure(error)
  }
}

/// Opens a store and runs `body` on it, reporting a failure of either as exit code 1.
func withStore<R>(_ path: String, readOnly: Bool, _ body: (Store) throws -> R) throws -> R {
  let store = try openStore(path, readOnly: readOnly)
  do {
    return try body(store)
  } catch {
    throw failure(error)
  }
}

/// `reef stats`: the collections of a store, their counts and sizes, and their indexes.
public struct StatsCommand: ParsableCommand {
  /// The command's name and help.
  public static let configuration = CommandConfiguration(
    commandName: "stats",
    abstract: "Print a store's collections, their document counts and sizes, and their indexes.",
    discussion: """
      Example:
        reef stats --store app.reef
      """
  )

  @OptionGroup public var storeOptions: StoreOptionsGroup

  /// Creates the command (ArgumentParser fills in its properties).
  public init() {}

  /// Prints the statistics.
  public func run() throws {
    try withStore(storeOptions.store, readOnly: true) { store in
      let collections = try store.statistics()
      let objectTypes = Set(try store.read { try $0.jsonSchemas().map(\.collection) })
      print("store \(storeOptions.store): \(collections.count) collections, \(store.fileSize) bytes on disk")
      for collection in collections {
        let kind = objectTypes.contains(collection.name) ? " (object type)" : ""
        print("\(collection.name)\(kind): \(collection.count) documents, \(collection.dataBytes) bytes")
        for index in collection.indexes {
          print("  index \(index.name): \(index.entries) keys, \(index.bytes) bytes")
        }
      }
    }
  }
}

/// `reef index create|drop|list`.
public struct IndexCommand: ParsableCommand {
  /// The command's name, help and subcommands.
  public static let configuration = CommandConfiguration(
    commandName: "index",
    abstract: "Create, drop or list a collection's indexes.",
    subcommands: [Create.self, Drop.self, List.self]
  )

  /// Creates the command.
  public init() {}

  /// `reef index create`.
  public struct Create: ParsableCommand {
    /// The command's name and help.
    public static let configuration = CommandConfiguration(
      abstract: "Create an index (built from the documents already stored).",
      discussion: """
        Example:
          reef index create --store app.reef --collection contacts --keys '{"address.city": 1}' --unique
        """
    )
    @OptionGroup public var storeOptions: StoreOptionsGroup
    /// The collection.
    @Option(help: "The collection.") public var collection: String
    /// The key document.
    @Option(help: ArgumentHelp("The index keys: {\"field\": 1 or -1, …}.", valueName: "json")) public var keys: String
    /// The index name.
    @Option(help: "The index name (default: field_direction pairs).") public var name: String?
    /// Unique index.
    @Flag(help: "At most one document per key.") public var unique = false
    /// Sparse index.
    @Flag(help: "Leave out documents without the fields.") public var sparse = false

    /// Creates the command.
    public init() {}

    /// Creates the index.
    public func run() throws {
      let keyDocument: Document
      do {
        keyDocument = try Document(extendedJSON: keys)
      } catch {
        printError("reef: error: --keys: \(error)")
        throw ExitCode.failure
      }
      try withStore(storeOptions.store, readOnly: false) { store in
        try store.collection(collection).createIndex(keyDocument, name: name, unique: unique, sparse: sparse)
      }
    }
  }

  /// `reef index drop`.
  public struct Drop: ParsableCommand {
    /// The command's name and help.
    public static let configuration = CommandConfiguration(abstract: "Drop an index by name.")
    @OptionGroup public var storeOptions: StoreOptionsGroup
    /// The collection.
    @Option(help: "The collection.") public var collection: String
    /// The index name.
    @Option(help: "The index name.") public var name: String

    /// Creates the command.
    public init() {}

    /// Drops the index.
    public func run() throws {
      let dropped = try withStore(storeOptions.store, readOnly: false) { store in
        try store.collection(collection).dropIndex(name)
      }
      guard dropped else {
        printError("reef: error: \(collection) has no index named \(name)")
        throw ExitCode.failure
      }
    }
  }

  /// `reef index list`.
  public struct List: ParsableCommand {
    /// The command's name and help.
    public static let configuration = CommandConfiguration(abstract: "List a collection's indexes as Extended JSON.")
    @OptionGroup public var storeOptions: StoreOptionsGroup
    /// The collection.
    @Option(help: "The collection.") public var collection: String

    /// Creates the command.
    public init() {}

    /// Lists the indexes.
    public func run() throws {
      try withStore(storeOptions.store, readOnly: true) { store in
        for index in try store.collection(collection).listIndexes() { print(index.extendedJSON(.relaxed)) }
      }
    }
  }
}
