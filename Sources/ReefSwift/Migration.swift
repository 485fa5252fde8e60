import ReefBSON
import ReefStore

/// A migration block: called with a ``Migration`` and the schema version the file had, to change
/// the stored data for the new schema (``Reef/Configuration/migrationBlock``). Realm's
/// `MigrationBlock`, the same type as ``Reef/MigrationBlock``.
public typealias MigrationBlock = Reef.MigrationBlock

/// The block ``Migration/enumerateObjects(ofType:_:)`` calls with each object as it was before the
/// migration (read-only) and as it is now: Realm's `MigrationObjectEnumerateBlock`.
public typealias MigrationObjectEnumerateBlock = (_ oldObject: MigrationObject?, _ newObject: MigrationObject?) -> Void

/// What a migration block gets: Realm's `Migration`, to change the stored objects of each type
/// for the new schema.
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
/// The migration runs in one write transaction of the `Reef` being opened: what it changes is
/// committed with the new schema version, or, when the block records an error (a store error,
/// a duplicate primary key of an object created), nothing is and opening throws.
///
/// Objects are ``MigrationObject``s, read and written by property name (``DynamicObject``): a
/// value as its Swift type (`String`, `Int` for every integer width, `Double`, `Float` for a
/// `Float` property of the model, `Bool`, `Date`, `Data`, `ObjectId`, `UUID`, `Decimal128`),
/// a link as the linked ``MigrationObject``, an embedded object as a ``MigrationObject`` of its
/// subdocument, a list or set of objects as a `List<MigrationObject>`, other arrays and maps as
/// Swift arrays and dictionaries. A link is found through the type's stored link map or its
/// model class. Setting a value writes it at once; a `List<MigrationObject>` given out is
/// written back when the enumeration's block returns and when the migration ends. A name
/// neither the model class, the stored schema nor the document has stops ("Invalid property
/// name 'x' for class 'T'."), as Realm's, once the program's model class of the type is known
/// (in ``Reef/Configuration/objectTypes``, or used before in the process): Linux has no list
/// of a program's classes, so until then any name is taken.
///
/// Properties a model added since its type's schema was stored get their default values in the
/// stored objects when the type is first used at the new version, as Realm gives them.
public final class Migration {
  unowned let reef: Reef
  /// The `_id`s of the objects created by the migration, by type: not enumerated.
  private var created: [String: Set<BSON>] = [:]
  /// The documents as they were before the migration changed them, by type and `_id`: what old
  /// objects read.
  private var originals: [String: [BSON: Document]] = [:]
  /// The lists given out and not written back yet.
  private var lists: [(record: MigrationRecord, key: String, list: List<DynamicObject>)] = []
  /// The stored JSON Schemas and link maps read, by type (as the file held them when the
  /// migration began).
  private var storedSchemas: [String: Document?] = [:]
  private var linkMaps: [String: [LinkMap.Entry]] = [:]

  init(reef: Reef) { self.reef = reef }

  /// The write transaction the migration runs in.
  var transaction: Transaction {
    do throws(StoreError) {
      return try reef.transaction()
    } catch {
      reefStop("the migration's write transaction is gone: \(error)")
    }
  }

  /// Records a store error: the migration fails and opening throws it.
  func record(_ error: StoreError, type typeName: String) { reef.record(error, type: typeName) }

  /// Calls `block` with each object of a type stored before the migration began, as it was then
  /// (`oldObject`, read-only) and as it is now (`newObject`, whose changes are stored): Realm's
  /// `enumerateObjects(ofType:_:)`. Objects created by the migration are not enumerated, nor
  /// those deleted (``delete(_:)``) before their turn. A type with no stored objects, or no
  /// type of that name, calls nothing.
  /// - Parameters:
  ///   - typeName: The type's name.
  ///   - block: Called with the old and the new object.
  /// - Complexity: O(*n*) reads for the *n* objects of the type.
  public func enumerateObjects(
    ofType typeName: String, _ block: MigrationObjectEnumerateBlock
  ) {
    let collection = transaction.collection(typeName)
    let ids: [BSON]
    do throws(StoreError) {
      ids = try collection.find().toArray().map { $0["_id"] ?? .null }
    } catch {
      return record(error, type: typeName)
    }
    for id in ids where created[typeName]?.contains(id) != true {
      let current: Document?
      do throws(StoreError) {
        current = try collection.document(forID: id)
      } catch {
        return record(error, type: typeName)
      }
      // Deleted by the block of an earlier object.
      guard let current else { continue }
      let old = MigrationRecord(
        migration: self, typeName: typeName, id: id, document: original(typeName, id) ?? current)
      old.isOld = true
      let new = MigrationRecord(migration: self, typeName: typeName, id: id, document: current)
      block(DynamicObject(migrationRecord: old), DynamicObject(migrationRecord: new))
      writeLists()
    }
  }

  /// Creates an object of a type, stored at once, and returns it: Realm's `create(_:value:)`.
  ///
  /// For a type the program has a model class of, `value` is taken as
  /// ``Reef/create(_:value:update:)`` takes it (a dictionary, an array in property order, an
  /// object; the model's defaults fill the rest); otherwise a dictionary's entries, or an
  /// array's values in the stored schema's order, are stored as they are. A type neither the
  /// program nor the file knows stops ("Object type 'X' is not managed by the Reef.").
  /// - Parameters:
  ///   - typeName: The type's name.
  ///   - value: The values.
  /// - Returns: The new object.
  @discardableResult
  public func create(_ typeName: String, value: Any = [String: Any]()) -> MigrationObject {
    let document: Document
    if let schema = MigrationRecord.modelSchema(typeName), !schema.isEmbedded {
      let object = schema.objectClass.init()
      do {
        try ObjectPopulation(copyingFor: reef).populateChecked(object, from: value)
      } catch {
        // Realm raises at the call for a value that does not fit.
        reefStop(error.message)
      }
      do throws(ReefError) {
        let identity = try reef.addObject(object, policy: .error)
        let found = try storeCall { () throws(StoreError) in try reef.document(of: schema, identity: identity) }
        guard let found else { return DynamicObject() }
        document = found
      } catch {
        reef.record(error)
        return DynamicObject()
      }
    } else {
      let stored: Document?
      do throws(StoreError) {
        stored = try transaction.jsonSchema(forCollection: typeName)
      } catch {
        record(error, type: typeName)
        return DynamicObject()
      }
      guard let stored else { reefStop("Object type '\(typeName)' is not managed by the Reef.") }
      let fields = MigrationRecord.storedFields(stored).filter { $0 != "_id" }
      var built: Document = ["_id": .objectId(ObjectId())]
      if let dictionary = value as? [String: Any] {
        for (key, item) in dictionary.sorted(by: { $0.key < $1.key }) {
          built.set(MigrationRecord.bson(item, migration: self, key: key, type: typeName), forKey: key)
        }
      } else if let array = value as? [Any] {
        if array.count > fields.count {
          reefStop("Invalid array input: more values (\(array.count)) than properties (\(fields.count)).")
        }
        for (key, item) in zip(fields, array) {
          built.set(MigrationRecord.bson(item, migration: self, key: key, type: typeName), forKey: key)
        }
      }
      do throws(StoreError) {
        _ = try transaction.collection(typeName).insert(built)
      } catch {
        record(error, type: typeName)
        return DynamicObject()
      }
      document = built
    }
    let id = document["_id"] ?? .null
    created[typeName, default: []].insert(id)
    return DynamicObject(
      migrationRecord: MigrationRecord(migration: self, typeName: typeName, id: id, document: document))
  }

  /// Deletes an object from the file: Realm's `delete(_:)` (allowed in an enumeration's block).
  /// The links to it are removed, as when a `Reef` deletes it.
  /// - Parameter object: A new object of the migration (deleting an old one stops).
  public func delete(_ object: MigrationObject) {
    guard let deleted = object.migrationRecord, !deleted.isOld, let id = deleted.topID else {
      reefStop("Only the new objects of a migration can be deleted")
    }
    let typeName = deleted.typeName
    keepOriginal(typeName, id)
    do throws(StoreError) {
      let identity = try deleted.identity()
      _ = try transaction.collection(typeName).deleteDocument(forID: id)
      try LinkMap.removeLinks(
        to: typeName, identities: Identities([identity]), in: transaction, registered: reef.registeredSchemas)
    } catch {
      record(error, type: typeName)
    }
    deleted.isDeleted = true
  }

  /// Deletes every object of a type, its stored schema and link map: Realm's
  /// `deleteData(forType:)`.
  /// - Parameter typeName: The type's name.
  /// - Returns: Whether the file held the type.
  @discardableResult
  public func deleteData(forType typeName: String) -> Bool {
    do throws(StoreError) {
      let hadSchema = try transaction.jsonSchema(forCollection: typeName) != nil
      let dropped = try transaction.collection(typeName).drop()
      try transaction.setJSONSchema(nil, forCollection: typeName)
      try transaction.setMetadata(nil, forKey: LinkMap.metadataKey(typeName))
      originals[typeName] = nil
      return dropped || hadSchema
    } catch {
      record(error, type: typeName)
      return false
    }
  }

  /// Renames a stored field in every object of a type: Realm's
  /// `renameProperty(onType:from:to:)`. Old objects keep the old name.
  /// - Parameters:
  ///   - typeName: The type's name.
  ///   - oldName: The field's name before.
  ///   - newName: Its name after.
  public func renameProperty(onType typeName: String, from oldName: String, to newName: String) {
    let collection = transaction.collection(typeName)
    do throws(StoreError) {
      for document in try collection.find().toArray() {
        keepOriginal(typeName, document["_id"] ?? .null, document)
      }
      _ = try collection.updateMany([:], ["$rename": [oldName: .string(newName)]])
    } catch {
      record(error, type: typeName)
    }
  }

  // MARK: For the records

  /// The document of an object before the migration changed it, if it did.
  func original(_ typeName: String, _ id: BSON) -> Document? { originals[typeName]?[id] }

  /// Keeps an object's document as it was before the migration changes it (once).
  func keepOriginal(_ typeName: String, _ id: BSON, _ known: Document? = nil) {
    guard originals[typeName]?[id] == nil, created[typeName]?.contains(id) != true else { return }
    let document: Document?
    if let known {
      document = known
    } else {
      do throws(StoreError) {
        document = try transaction.collection(typeName).document(forID: id)
      } catch {
        return record(error, type: typeName)
      }
    }
    if let document { originals[typeName, default: [:]][id] = document }
  }

  /// The stored JSON Schema of a type (read once).
  func storedSchema(_ typeName: String) -> Document? {
    if let known = storedSchemas[typeName] { return known }
    do throws(StoreError) {
      let stored = try transaction.jsonSchema(forCollection: typeName)
      storedSchemas[typeName] = stored
      return stored
    } catch {
      record(error, type: typeName)
      return nil
    }
  }

  /// The stored link map of a type: where its documents hold links (read once).
  func links(of typeName: String) -> [LinkMap.Entry] {
    if let known = linkMaps[typeName] { return known }
    var entries: [LinkMap.Entry] = []
    do throws(StoreError) {
      if case .array(let links)? = try transaction.metadata(forKey: LinkMap.metadataKey(typeName))?["links"] {
        for case .document(let link) in links {
          guard case .string(let path)? = link["path"], case .string(let target)? = link["target"] else { continue }
          entries.append(LinkMap.Entry(origin: typeName, path: path, many: link["many"] == .bool(true), target: target))
        }
      }
    } catch {
      record(error, type: typeName)
    }
    linkMaps[typeName] = entries
    return entries
  }

  /// Forgets a list given out whose field is set anew.
  func forgetList(of record: MigrationRecord, key: String) {
    lists.removeAll { $0.record === record && $0.key == key }
  }

  /// Remembers a list given out, to write it back.
  func gaveOut(_ list: List<DynamicObject>, of record: MigrationRecord, key: String) {
    lists.append((record, key, list))
  }

  /// Writes back the lists given out.
  func writeLists() {
    let waiting = lists
    lists = []
    for (record, key, list) in waiting where !record.isDeleted { record.write(list, forKey: key) }
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
    if StoreTable.isOpen(path: configuration.path) { reefStop("Cannot migrate Reefs that are already open.") }
    // Not kept among the open Reefs: closed on return.
    _ = try Reef(configuration: configuration, confinement: .thread(.current))
  }

  /// Runs the migration when the file's schema version is lower than the configuration's, in a
  /// write transaction of this `Reef`, and records the new version.
  func migrateIfNeeded() throws {
    guard !configuration.readOnly else { return }
    let stored = try storedSchemaVersion()
    if let stored, stored == configuration.schemaVersion { return }
    if let stored, stored > configuration.schemaVersion {
      throw ReefError(
        .schemaMismatch,
        "Provided schema version \(configuration.schemaVersion) is less than last set version \(stored).")
    }
    _ = try beginWrite(waiting: true)
    do {
      let transaction = try storeCall { () throws(StoreError) in try self.transaction() }
      if let stored {
        if configuration.deleteReefIfMigrationNeeded {
          try storeCall { () throws(StoreError) in try Reef.deleteAllData(in: transaction) }
        } else if let block = configuration.migrationBlock {
          let migration = Migration(reef: self)
          block(migration, stored)
          migration.writeLists()
        }
      }
      try storeCall { () throws(StoreError) in
        try transaction.setMetadata(["version": .int64(Int64(configuration.schemaVersion))], forKey: "schemaVersion")
      }
      try commitWrite()
    } catch {
      if isInWriteTransaction { cancelWrite() }
      throw error
    }
  }

  /// The schema version the file records, or nil for a file no `Reef` has opened yet.
  func storedSchemaVersion() throws(ReefError) -> UInt64? {
    let stored = try storeCall { () throws(StoreError) in
      try transaction().metadata(forKey: "schemaVersion")?["version"]
    }
    guard let stored else { return nil }
    guard case .int64(let version) = stored, version >= 0 else {
      throw ReefError(.store, "the file's schema version is not a version: \(stored)")
    }
    return UInt64(version)
  }

  /// Deletes every object, stored schema and link map of the file (``Configuration/deleteReefIfMigrationNeeded``).
  static func deleteAllData(in transaction: Transaction) throws(StoreError) {
    for name in try transaction.collectionNames() {
      _ = try transaction.collection(name).drop()
      try transaction.setMetadata(nil, forKey: LinkMap.metadataKey(name))
    }
    for (name, _) in try transaction.jsonSchemas() {
      try transaction.setJSONSchema(nil, forCollection: name)
      try transaction.setMetadata(nil, forKey: LinkMap.metadataKey(name))
    }
  }
}
