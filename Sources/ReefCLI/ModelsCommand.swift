import ArgumentParser
import ReefBSON
import ReefStore

/// `reef models`: Swift source of `@Persisted` models inferred from a store's or a dump's
/// documents.
public struct ModelsCommand: ParsableCommand {
  /// The command's name, help text and examples.
  public static let configuration = CommandConfiguration(
    commandName: "models",
    abstract: "Print ReefSwift models (@Persisted) inferred from the documents of a store or a dump.",
    discussion: """
      SOURCE is a mongodump directory, a .bson or .bson.gz file, a mongodump --archive file or \
      Extended JSON, as reef import reads them; --store reads a store instead. Every document is \
      read. Each collection becomes an Object whose className() is the collection's name as reef \
      import stores it (db.coll), each subdocument path an EmbeddedObject (the shapes of every \
      subdocument at that path merged), each array a List. A property is optional where its \
      field is missing or null in some documents; where types mix it is AnyReefValue (ints and \
      doubles together are Double); the _id is the primary key with its type (ObjectId, String, \
      Int or UUID). Names become Swift identifiers, and propertiesMapping() keeps the stored \
      names that are not. A field whose values ReefSwift has no type for (a regex, a timestamp, \
      code) is left out, with a comment saying so. A collection's JSON Schema (its validator in \
      a dump's metadata.json, or the schema a ReefSwift store keeps for its type) gives the type \
      of a field that is null or missing everywhere, makes a field it allows to be null \
      optional, and names embedded classes after its titles. Classes come in collection order, \
      properties in the order their fields first appear (in _id order in a store, in file order \
      in a dump).

      The models open the data through ReefSwift once it is in a store: reef import DUMP \
      --store app.reef, then Reef(configuration: .init(fileURL: URL(fileURLWithPath: "app.reef"))).

      Examples:
        reef models dump > Models.swift
        reef models --store app.reef -o Sources/App/Models.swift
        reef models shop.archive --collection shop.orders
      """
  )

  /// The dump to read.
  @Argument(help: ArgumentHelp("The dump directory, .bson file, archive or Extended JSON file.", valueName: "source"))
  public var source: String?

  /// The store to read instead.
  @Option(help: ArgumentHelp("Read this store instead of a dump.", valueName: "path"))
  public var store: String?

  /// The collections to model.
  @Option(help: ArgumentHelp("Only this collection (repeat for several; default: all).", valueName: "name"))
  public var collection: [String] = []

  /// Where to write the source.
  @Option(name: .shortAndLong, help: ArgumentHelp("Write the Swift source to this file.", valueName: "file"))
  public var output: String?

  /// Creates the command (ArgumentParser fills in its properties).
  public init() {}

  /// Checks that exactly one input is given.
  public func validate() throws {
    if (source == nil) == (store == nil) { throw ValidationError("give either a dump or --store, not both") }
  }

  /// Infers and prints the models.
  public func run() throws {
    let selected = collection.isEmpty ? nil : collection
    let collections: [InferredModels.CollectionSample]
    let origin: String
    if let store {
      collections = try withStore(store, readOnly: true) { try InferredModels.collections(of: $0, only: selected) }
      origin = "the store \(store)"
    } else {
      do {
        collections = try InferredModels.collections(ofDump: source!, only: selected)
      } catch {
        throw failure(error, input: source!)
      }
      origin = source!
    }
    let documents = collections.reduce(0) { $0 + $1.shape.count }
    let models = InferredModels(collections: collections)
    let header = """
      Models inferred by `reef models` from \(origin):
      \(collections.count) \(collections.count == 1 ? "collection" : "collections"), \(documents) \(documents == 1 ? "document" : "documents").
      """
    let text = models.swiftSource(header: header)
    if let output {
      do {
        try writeTextFile(output, text)
      } catch {
        printError("reef: error: \(error)")
        throw ExitCode.failure
      }
    } else {
      print(text, terminator: "")
    }
  }
}
