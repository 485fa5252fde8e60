import ArgumentParser
import ReefBSON
@_spi(ReefTesting) import ReefStore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `reef import`: a dump into a store, as mongorestore (and mongoimport for Extended JSON).
public struct ImportCommand: ParsableCommand {
  /// The command's name, help text and examples.
  public static let configuration = CommandConfiguration(
    commandName: "import",
    abstract: "Import a mongodump directory, .bson file, archive or Extended JSON into a store.",
    discussion: """
      SOURCE is a mongodump directory (a dump root, or one database folder), a .bson or .bson.gz \
      file, a mongodump --archive file (gzipped or not), or Extended JSON as mongoexport writes \
      it (lines or an array); - reads standard input. Each namespace db.coll goes into the \
      collection named db.coll; a single file goes into the collection named after it. --db and \
      --collection rename, as with mongorestore; --nsInclude and --nsExclude select namespaces of \
      the source (* matches any characters). The indexes in the metadata are created.

      The import adds to existing collections (--drop replaces them) and is all or nothing: if \
      a document cannot be read or stored, nothing is imported and the exit code is 1. With \
      --skip-invalid such documents are skipped and listed on standard error instead. Files and \
      folders of a dump directory that are not dump files are listed on standard error as not \
      imported.

      Imports into the same collection take turns (the later one waits, and says so). If \
      another writer changes a target collection while the import runs, the import fails and \
      nothing is imported: no acknowledged write is lost.

      A progress bar is shown on standard error when it is a terminal; a summary line is printed \
      at the end.

      Examples:
        reef import dump --store app.reef
        reef import dump.archive --store app.reef --nsInclude 'shop.*' --drop
        reef import contacts.jsonl --store app.reef --collection contacts
      """
  )

  /// The source.
  @Argument(help: ArgumentHelp("The dump directory, .bson file, archive or Extended JSON file.", valueName: "source"))
  public var source: String

  @OptionGroup public var storeOptions: StoreOptionsGroup

  /// The target collection name.
  @Option(help: ArgumentHelp("Import into this collection (a single namespace only).", valueName: "name"))
  public var collection: String?

  /// The target database.
  @Option(help: ArgumentHelp("Import into this database: collections are named <db>.<collection>.", valueName: "name"))
  public var db: String?

  /// Namespaces to import.
  @Option(
    name: .customLong("nsInclude"), help: ArgumentHelp("Import the namespaces matching this pattern.", valueName: "ns"))
  public var include: [String] = []

  /// Namespaces to leave out.
  @Option(
    name: .customLong("nsExclude"),
    help: ArgumentHelp("Leave out the namespaces matching this pattern.", valueName: "ns"))
  public var exclude: [String] = []

  /// Replace the target collections.
  @Flag(help: "Replace each target collection instead of adding to it.")
  public var drop = false

  /// Skip invalid documents.
  @Flag(help: "Skip documents that cannot be read or stored, and list them, instead of failing.")
  public var skipInvalid = false

  /// Validation limits.
  @OptionGroup public var validation: ValidationFlags

  /// Creates the command (ArgumentParser fills in its properties).
  public init() {}

  /// Checks the options.
  public func validate() throws {
    if let collection, collection.isEmpty { throw ValidationError("--collection must not be empty") }
    if let db, db.isEmpty || db.contains(".") { throw ValidationError("--db must be a name without dots") }
    for pattern in include + exclude where pattern.isEmpty {
      throw ValidationError("--nsInclude and --nsExclude need a pattern")
    }
  }

  /// Runs the import.
  public func run() throws {
    var options = ImportOptions(
      database: db, collection: collection, include: include, exclude: exclude, drop: drop, skipInvalid: skipInvalid)
    options.beforeSwap = Self.testPauseBeforeSwap()
    let report = try withStore(storeOptions.store, readOnly: false) { store in
      let bar = ProgressBar.onTerminal()
      defer { bar?.finish() }
      // What the store keeps has MongoDB's limits: 100 levels, array keys "0", "1", … in order.
      var readOptions = validation.options(defaultDepth: ValidationOptions.default.maximumDepth)
      readOptions.checksArrayKeys = true
      let dumpSource = try DumpSource(path: source, options: readOptions)
      return try store.importDump(from: dumpSource, options: options) { progress in
        bar?.update(
          done: progress.bytesRead, total: progress.totalBytes,
          label: "\(progress.documents) documents\(progress.skipped > 0 ? ", \(progress.skipped) skipped" : "")",
          bytes: true)
      }
    }
    for entry in report.ignored { printError("reef: not imported: \(entry)") }
    for skip in report.skipped { printError("reef: skipped \(skip)") }
    if report.skippedCount > report.skipped.count {
      printError("reef: … and \(report.skippedCount - report.skipped.count) more skipped")
    }
    let names = report.targets.count == 1 ? "1 collection" : "\(report.targets.count) collections"
    print(
      "imported \(report.documents) \(report.documents == 1 ? "document" : "documents") into \(names), \(report.skippedCount) skipped"
    )
  }
}

extension ImportCommand {
  /// For tests only: with `REEF_TEST_PAUSE_BEFORE_SWAP=<folder>`, an import that has written its
  /// last batch creates `<folder>/paused.<pid>` and waits until `<folder>/resume` exists before
  /// it swaps its collections in, so that a test can make other writers overlap it.
  static func testPauseBeforeSwap() -> (@Sendable () -> Void)? {
    guard let value = getenv("REEF_TEST_PAUSE_BEFORE_SWAP") else { return nil }
    let folder = String(cString: value)
    return {
      let marker = open("\(folder)/paused.\(getpid())", O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
      if marker >= 0 { close(marker) }
      while access("\(folder)/resume", F_OK) != 0 { usleep(10_000) }
    }
  }
}

/// The export formats, as command line values.
extension DumpFormat: ExpressibleByArgument {}

/// `reef export`: collections of a store to a dump, as mongodump (and mongoexport for JSON).
public struct ExportCommand: ParsableCommand {
  /// The command's name, help text and examples.
  public static let configuration = CommandConfiguration(
    commandName: "export",
    abstract: "Export collections of a store to a mongodump directory, .bson file, archive or Extended JSON.",
    discussion: """
      A collection named db.coll is written as the namespace db.coll; a name without a dot goes \
      under --db (default reef), so importing the output again gives the same names. The dump \
      format writes <out>/<db>/<collection>.bson and .metadata.json (with the indexes and the \
      collection's UUID), which mongorestore accepts; bson, json and jsonl write one file (for \
      one collection) or, when --out is a directory or ends in /, the same layout; archive \
      writes a mongodump --archive file. --gzip compresses the files. Documents are written in \
      _id order from one snapshot. A collection that does not exist is written as empty.

      Examples:
        reef export --store app.reef --out dump
        reef export --store app.reef --collection contacts --out contacts.jsonl --format jsonl
        reef export --store app.reef --out backup.archive.gz --format archive --gzip
      """
  )

  @OptionGroup public var storeOptions: StoreOptionsGroup

  /// The collections; all when none.
  @Option(help: ArgumentHelp("A collection to export (repeat for several; default: all).", valueName: "name"))
  public var collection: [String] = []

  /// Where to write.
  @Option(help: ArgumentHelp("The output directory or file; - for standard output.", valueName: "path"))
  public var out: String

  /// The output format.
  @Option(help: "dump, bson, archive, json (an array) or jsonl (one document per line).")
  public var format: DumpFormat = .dump

  /// Gzip the output.
  @Flag(help: "Gzip the output files.")
  public var gzip = false

  /// The database of collections without a dot.
  @Option(help: ArgumentHelp("The database of collections whose names have no dot.", valueName: "name"))
  public var db: String = "reef"

  /// Creates the command (ArgumentParser fills in its properties).
  public init() {}

  /// Checks the options.
  public func validate() throws {
    if db.isEmpty || db.contains(".") { throw ValidationError("--db must be a name without dots") }
    if format == .dump && out == "-" { throw ValidationError("the dump format writes a directory; give --out a path") }
  }

  /// Runs the export.
  public func run() throws {
    let report = try withStore(storeOptions.store, readOnly: true) { store in
      let bar = out == "-" ? nil : ProgressBar.onTerminal()
      defer { bar?.finish() }
      let writer = try DumpWriter(path: out, format: format, gzip: gzip, defaultDatabase: db)
      return try store.exportDump(to: writer, collections: collection.isEmpty ? nil : collection) { progress in
        bar?.update(
          done: progress.documents, total: progress.totalDocuments, label: "\(progress.documents) documents",
          bytes: false)
      }
    }
    let names = report.entries.count == 1 ? "1 collection" : "\(report.entries.count) collections"
    let summary =
      "exported \(report.documents) \(report.documents == 1 ? "document" : "documents") from \(names) to \(out)"
    if out == "-" { printError(summary) } else { print(summary) }
  }
}

/// A one-line progress bar on standard error: done and total, rate, time left.
final class ProgressBar {
  private let start: Double
  private var lastDraw = -1.0
  private var drawn = false

  private init() { start = Self.now() }

  /// A bar when standard error is a terminal, else `nil` (quiet).
  static func onTerminal() -> ProgressBar? { isatty(2) != 0 ? ProgressBar() : nil }

  /// Redraws, at most ten times a second.
  func update(done: Int, total: Int?, label: String, bytes: Bool) {
    let now = Self.now()
    guard now - lastDraw >= 0.1 else { return }
    lastDraw = now
    let elapsed = max(now - start, 0.001)
    let rate = Double(done) / elapsed
    var line = ""
    if let total, total > 0 {
      let fraction = min(1, Double(done) / Double(total))
      let width = 24
      let filled = Int(fraction * Double(width))
      line += "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] "
      line += "\(Int(fraction * 100))%  "
      line += bytes ? "\(Self.size(done)) / \(Self.size(total))  " : ""
      let left = rate > 0 ? Double(total - done) / rate : 0
      line += "\(label)  \(bytes ? Self.size(Int(rate)) + "/s" : "\(Int(rate)) docs/s")  \(Self.time(left)) left"
    } else {
      line += "\(label)  \(bytes ? Self.size(done) + "  " + Self.size(Int(rate)) + "/s" : "\(Int(rate)) docs/s")"
    }
    printRaw("\r\u{1B}[K" + line)
    drawn = true
  }

  /// Clears the bar.
  func finish() {
    if drawn { printRaw("\r\u{1B}[K") }
    drawn = false
  }

  private func printRaw(_ text: String) {
    let bytes = Array(text.utf8)
    bytes.withUnsafeBytes { raw in _ = write(2, raw.baseAddress, raw.count) }
  }

  private static func now() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
  }

  static func size(_ bytes: Int) -> String {
    let units = ["B", "KB", "MB", "GB", "TB"]
    var value = Double(bytes)
    var unit = 0
    while value >= 1000 && unit < units.count - 1 {
      value /= 1000
      unit += 1
    }
    if unit == 0 { return "\(bytes) B" }
    let tenths = Int((value * 10).rounded())
    return "\(tenths / 10).\(tenths % 10) \(units[unit])"
  }

  static func time(_ seconds: Double) -> String {
    let total = Int(seconds.rounded())
    let two = { (n: Int) in n < 10 ? "0\(n)" : "\(n)" }
    return total >= 3600
      ? "\(total / 3600):\(two(total / 60 % 60)):\(two(total % 60))" : "\(total / 60):\(two(total % 60))"
  }
}
