import ArgumentParser

/// `reef port`: Realm Swift files into ReefSwift, as a diff or in place.
public struct PortCommand: ParsableCommand {
  /// The command's name, help text and examples.
  public static let configuration = CommandConfiguration(
    commandName: "port",
    abstract:
      "Rewrite Realm Swift files for ReefSwift: older models into the @Persisted form, Realm's names into Reef's.",
    discussion: """
      In model classes (subclasses of Object or EmbeddedObject, or of another model class of the \
      files given together): `@objc dynamic var x = v` and `dynamic var` become `@Persisted var \
      x = v` (`= nil` after an optional type and `= ObjectId.generate()` go: they are the \
      defaults); `let x = List<T>()`, `MutableSet<T>()` and `Map<K, V>()` become `@Persisted var \
      x: List<T>`…; `let x = RealmOptional<T>()` and `RealmProperty<T?>()` become `@Persisted var \
      x: ReefProperty<T?>` (x.value still reads it); `let x = LinkingObjects(fromType: T.self, \
      property: "p")` becomes `@Persisted(originProperty: "p") var x: LinkingObjects<T>`. The \
      primaryKey(), indexedProperties() and ignoredProperties() overrides become \
      @Persisted(primaryKey: true), @Persisted(indexed: true) and plain properties, and go; so \
      do @objcMembers and @objc, which Linux cannot compile. `import RealmSwift` becomes `import \
      ReefSwift` (`import Realm` goes), and Realm's names become Reef's (Realm -> Reef, \
      RealmSwift -> ReefSwift, RealmProperty -> ReefProperty, AnyRealmValue -> AnyReefValue, \
      RealmCollectionChange -> ReefCollectionChange, RealmEnum -> PersistableEnum, …) in code \
      only: strings, comments and `realm` variables stay as they are.

      By default the changes are printed as a unified diff (apply it with `patch -p0`); \
      --in-place writes them into the files. Each change that could not be made is one line \
      FILE:LINE: why on standard error, and the line is left as it was: the exit code stays 0. \
      The exit code is 1 only for an error: a file that cannot be read or written, or Swift \
      source that does not lex (a string or comment that does not end); the other files are \
      still ported.

      Examples:
        reef port Models.swift
        reef port Sources/App/*.swift | patch -p0
        reef port --in-place Models.swift Dog.swift
      """
  )

  /// The files to port.
  @Argument(help: ArgumentHelp("The Swift files to port (ported together).", valueName: "file"))
  public var files: [String]

  /// Write the files instead of printing a diff.
  @Flag(help: "Write the ported source into the files instead of printing a diff.")
  public var inPlace = false

  /// Creates the command (ArgumentParser fills in its properties).
  public init() {}

  /// Checks the arguments.
  public func validate() throws {
    if files.isEmpty { throw ValidationError("give at least one Swift file") }
  }

  /// Ports the files.
  public func run() throws {
    var failed = false
    var inputs: [(path: String, source: String)] = []
    for path in files {
      do {
        inputs.append((path, try readTextFile(path)))
      } catch {
        printError("reef: error: \(error)")
        failed = true
      }
    }
    for (path, result) in ModelPort.port(inputs) {
      switch result {
      case .failure(let error):
        printError("reef: error: \(path):\(error.line): \(error.message)")
        failed = true
      case .success(let port):
        let original = inputs.first { $0.path == path }!.source
        for note in port.notes { printError("\(path):\(note.line): \(note.message)") }
        guard port.changed else { continue }
        if inPlace {
          do {
            try writeTextFile(path, port.source)
          } catch {
            printError("reef: error: \(error)")
            failed = true
          }
        } else {
          print(UnifiedDiff.diff(original, port.source, oldName: path, newName: path), terminator: "")
        }
      }
    }
    if failed { throw ExitCode.failure }
  }
}
