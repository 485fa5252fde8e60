import ArgumentParser
import ReefBSON
import ReefQuery
import ReefStore

/// `reef schema`: the object types a store holds, as MongoDB JSON Schemas, and the documents
/// that do not fit them.
public struct SchemaCommand: ParsableCommand {
  /// The command's name and help.
  public static let configuration = CommandConfiguration(
    commandName: "schema",
    abstract: "Print the JSON Schema of each object type in a store; with --check, the documents that do not fit.",
    discussion: """
      The object layer (ReefSwift) stores each type's schema in the file. `reef export` writes it \
      into metadata.json as the collection's validator.

      Examples:
        reef schema --store app.reef
        reef schema --store app.reef --collection Contact
        reef schema --store app.reef --check
      """
  )

  @OptionGroup public var storeOptions: StoreOptionsGroup

  @Option(help: "Only this object type (collection).")
  public var collection: String?

  @Flag(help: "Check every document against its type's schema; exit 1 when any does not fit.")
  public var check = false

  /// Creates the command (ArgumentParser fills in its properties).
  public init() {}

  /// Prints the schemas, or the documents that break them.
  public func run() throws {
    let broken = try withStore(storeOptions.store, readOnly: true) { store in
      try store.read { transaction in
        var schemas = try transaction.jsonSchemas()
        if let collection {
          schemas = schemas.filter { $0.collection == collection }
          if schemas.isEmpty {
            throw ValidationError("the store \(storeOptions.store) has no schema for \(collection)")
          }
        }
        if !check {
          for (_, schema) in schemas { print(schema.extendedJSON(.relaxed, pretty: true)) }
          return 0
        }
        return try SchemaCommand.check(schemas, in: transaction)
      }
    }
    if broken > 0 { throw ExitCode(1) }
  }

  /// Prints each document that breaks its type's schema; returns how many.
  static func check(_ schemas: [(collection: String, schema: Document)], in transaction: Transaction) throws -> Int {
    var broken = 0
    for (name, document) in schemas {
      let schema = try JSONSchema(document)
      var checked = 0
      var failed = 0
      try transaction.collection(name).forEach { stored in
        checked += 1
        let violations = schema.violations(in: stored)
        guard !violations.isEmpty else { return true }
        failed += 1
        let id = stored["_id"].map { $0.extendedJSON(.relaxed) } ?? "(no _id)"
        for violation in violations { print("\(name) _id \(id): \(violation)") }
        return true
      }
      print("\(name): \(checked) documents, \(failed) do not fit")
      broken += failed
    }
    return broken
  }
}
