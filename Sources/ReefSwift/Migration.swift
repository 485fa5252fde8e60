import ReefBSON
import ReefStore

/// What a migration block gets: the stored objects of each type, to change for the new schema.
///
/// ```swift
/// configuration.schemaVersion = 2
/// configuration.migrationBlock = { migration, oldSchemaVersion in
///     if oldSchemaVersion < 2 {
///         migration.enumerateObjects(ofType: "Person") { old, new in
///             new!["fullName"] = "\(old!["firstName"] as! String) \(old!["lastName"] as! String)"
///         }
///     }
/// }
/// ```
/// Adding or removing properties needs no code: a property missing from a stored document
/// reads as a mismatch until it is given a value, so set new required properties here.
public final class Migration {
  let transaction: Transaction

  init(transaction: Transaction) { self.transaction = transaction }

  /// Calls `block` with each stored object of a type, before (`oldObject`) and after
  /// (`newObject`) the migration; changes to `newObject` are stored.
  public func enumerateObjects(
    ofType typeName: String, _ block: (_ oldObject: MigrationObject?, _ newObject: MigrationObject?) -> Void
  ) {
    let collection = transaction.collection(typeName)
    guard let documents = try? collection.find().toArray() else { return }
    for document in documents {
      let old = MigrationObject(document: document)
      let new = MigrationObject(document: document)
      block(old, new)
      if new.deleted {
        _ = try? collection.deleteDocument(forID: document["_id"] ?? .null)
      } else if new.document != document {
        _ = try? collection.replaceDocument(forID: document["_id"] ?? .null, with: new.document)
      }
    }
  }

  /// Renames a stored field in every object of a type.
  public func renameProperty(onType typeName: String, from oldName: String, to newName: String) {
    _ = try? transaction.collection(typeName).updateMany([:], ["$rename": [oldName: .string(newName)]])
  }

  /// Creates an object of a type from a dictionary of field values.
  @discardableResult
  public func create(_ typeName: String, value: [String: Any] = [:]) -> MigrationObject {
    let object = MigrationObject(document: Document())
    for (key, value) in value { object[key] = value }
    if let id = try? transaction.collection(typeName).insert(object.document) {
      object.document = (try? transaction.collection(typeName).document(forID: id)) ?? object.document
    }
    return object
  }

  /// Deletes an object found by ``enumerateObjects(ofType:_:)``.
  public func delete(_ object: MigrationObject) { object.deleted = true }

  /// Deletes every object of a type and the type's stored schema; returns whether there was any.
  @discardableResult
  public func deleteData(forType typeName: String) -> Bool {
    let dropped = (try? transaction.collection(typeName).drop()) ?? false
    try? transaction.setJSONSchema(nil, forCollection: typeName)
    return dropped
  }
}

/// A stored object seen by a migration: its fields by stored name, as Swift values.
public final class MigrationObject {
  var document: Document
  var deleted = false
  init(document: Document) { self.document = document }

  /// A field's value (`String`, `Int`, `Double`, `Bool`, `Date`, `ObjectId`, `Document`, …),
  /// or nil when missing. Setting nil stores null.
  public subscript(key: String) -> Any? {
    get { document[key].map(MigrationObject.swiftValue) }
    set {
      document.set(newValue.flatMap { BSONArgument.bson($0) } ?? .null, forKey: key)
    }
  }

  static func swiftValue(_ value: BSON) -> Any {
    switch value {
    case .string(let x): x
    case .int32(let x): Int(x)
    case .int64(let x): Int(x)
    case .double(let x): x
    case .bool(let x): x
    case .objectId(let x): x
    case .decimal128(let x): x
    case .datetime(let x): Date(timeIntervalSince1970: Double(x.millisecondsSinceEpoch) / 1000)
    case .document(let x): x
    case .array(let x): Array(x).map(swiftValue)
    default: value
    }
  }
}

/// The schema version a Reef file was last opened with: Realm's `schemaVersionAtURL`.
/// - Parameters:
///   - fileURL: The store file.
///   - encryptionKey: Realm's; Reef files are not encrypted, so it must be nil.
/// - Throws: ``ReefError`` of kind ``ReefError/Kind/store`` when there is no file, it cannot be
///   read, or no `Reef` ever opened it (it has no schema version); ``ReefError/Kind/invalidValue``
///   for an encryption key.
public func schemaVersionAtURL(_ fileURL: URL, encryptionKey: Data? = nil) throws -> UInt64 {
  guard encryptionKey == nil else {
    throw ReefError(.invalidValue, "Reef files are not encrypted: schemaVersionAtURL takes no encryptionKey")
  }
  let path = fileURL.path
  let stored = try StoreTable.reading(path: path) { store in
    try store.read { transaction in try transaction.metadata(forKey: "schemaVersion")?["version"] }
  }
  guard case .int64(let version)? = stored, version >= 0 else {
    throw ReefError(.store, "Reef at path '\(path)' has not been initialized.")
  }
  return UInt64(version)
}

extension Reef {
  /// Opens a file and runs its configuration's migration (as opening it would), then closes it:
  /// Realm's `performMigration(for:)`, to choose when a migration runs.
  ///
  /// The file must not be open in this process: migrating an open file stops, with Realm's
  /// message ("Cannot migrate Reefs that are already open.").
  /// - Parameter configuration: The file, its schema version and migration block.
  /// - Throws: what ``init(configuration:queue:)`` throws (the migration's errors among them).
  public static func performMigration(for configuration: Configuration = .defaultConfiguration) throws {
    if StoreTable.isOpen(path: configuration.path) { fatalError("Cannot migrate Reefs that are already open.") }
    // Not kept among the open Reefs: closed on return.
    _ = try Reef(configuration: configuration, confinement: .thread(.current))
  }

  /// Runs the migration when the file's schema version is lower than the configuration's, and
  /// records the new version.
  func migrateIfNeeded() throws {
    guard !configuration.readOnly else { return }
    let stored = try storeCall { () throws(StoreError) in
      try transaction().metadata(forKey: "schemaVersion")?["version"]
    }
    let storedVersion: UInt64 =
      switch stored {
      case .int64(let x)?: UInt64(x)
      default: 0
      }
    if stored != nil && storedVersion == configuration.schemaVersion { return }
    if storedVersion > configuration.schemaVersion {
      throw ReefError(
        .schemaMismatch,
        "the file's schema version \(storedVersion) is newer than the configuration's \(configuration.schemaVersion)")
    }
    let block = configuration.migrationBlock
    let deleteAll = configuration.deleteReefIfMigrationNeeded && stored != nil
    try storeCall { () throws(StoreError) in
      let transaction = try store.beginWrite()
      do throws(StoreError) {
        if deleteAll {
          for name in try transaction.collectionNames() { _ = try transaction.collection(name).drop() }
          for (name, _) in try transaction.jsonSchemas() { try transaction.setJSONSchema(nil, forCollection: name) }
        } else if stored != nil, let block {
          block(Migration(transaction: transaction), storedVersion)
        }
        try transaction.setMetadata(["version": .int64(Int64(configuration.schemaVersion))], forKey: "schemaVersion")
        try transaction.commit()
      } catch {
        transaction.rollback()
        throw error
      }
    }
    refresh()
  }
}
