import ReefBSON
import ReefStore

// A model that changed without a new schema version is refused, as Realm refuses it: each
// type's stored schema records the schema version it was written at ("typeVersion:<Type>"), and
// a type whose model differs from its stored schema (a property added, removed or of another
// type, a link to another type) is refused while that version is still the file's. A stored
// schema written at an older version (a migration came since), or by a version of Reef that
// did not record it, is simply written anew.

extension Reef {
  /// The metadata key of a type's schema version.
  static func typeVersionKey(_ typeName: String) -> String { "typeVersion:\(typeName)" }

  /// The version a type's stored schema is written at: the file's once it is open (a migration
  /// raises it to the configuration's first).
  var typeVersionDocument: Document { ["version": .int64(Int64(configuration.schemaVersion))] }

  /// Checks each type's stored schema against its model (see above).
  /// - Throws: ``ReefError/Kind/schemaMismatch`` naming the differences, Realm's way
  ///   ("Migration is required due to the following errors: …"); with
  ///   ``Configuration/deleteReefIfMigrationNeeded`` the type's objects are deleted instead
  ///   (when its schema is written).
  func checkStoredSchemas(of schemas: [ObjectSchema]) throws(ReefError) {
    guard !schemas.isEmpty else { return }
    let (fileVersion, stored) = try storeCall { () throws(StoreError) in
      let transaction = try transaction()
      let version = try transaction.metadata(forKey: "schemaVersion")?["version"]
      let stored = try schemas.map { schema throws(StoreError) in
        (
          json: try transaction.jsonSchema(forCollection: schema.className),
          links: try transaction.metadata(forKey: LinkMap.metadataKey(schema.className)),
          version: try transaction.metadata(forKey: Reef.typeVersionKey(schema.className))?["version"]
        )
      }
      return (version, stored)
    }
    // Read-write, the file is at the configuration's version once open (and a migration under
    // way is bringing it there); read-only, at its own.
    let current: BSON? = configuration.readOnly ? fileVersion : .int64(Int64(configuration.schemaVersion))
    for (schema, stored) in zip(schemas, stored) {
      guard let json = stored.json, let version = stored.version, version == current else { continue }
      let differences = StoredSchemaDifferences.between(
        stored: json, storedLinks: stored.links, model: ObjectJSONSchema.document(for: schema),
        modelLinks: LinkMap.document(for: schema), type: schema.className)
      guard !differences.isEmpty else { continue }
      if configuration.deleteReefIfMigrationNeeded && !configuration.readOnly {
        typesToClear.insert(schema.className)
        continue
      }
      throw ReefError(
        .schemaMismatch,
        "Migration is required due to the following errors:\n"
          + differences.map { "- \($0)" }.joined(separator: "\n")
          + "\n(raise Configuration.schemaVersion, with a migrationBlock if the data needs one)",
        type: schema.className)
    }
  }
}

/// The differences between a type's stored schema and its model's, in Realm's words.
enum StoredSchemaDifferences {
  static func between(stored: Document, storedLinks: Document?, model: Document, modelLinks: Document, type: String)
    -> [String]
  {
    var differences: [String] = []
    let old = properties(stored)
    let new = properties(model)
    for (name, schema) in new {
      guard let before = old.first(where: { $0.name == name })?.schema else {
        differences.append("Property '\(type).\(name)' has been added.")
        continue
      }
      if canonical(.document(before)) != canonical(.document(schema)) {
        differences.append(
          "Property '\(type).\(name)' has been changed from '\(describe(before))' to '\(describe(schema))'.")
      }
    }
    for (name, _) in old where !new.contains(where: { $0.name == name }) {
      differences.append("Property '\(type).\(name)' has been removed.")
    }
    let linksBefore = links(storedLinks)
    for (path, target) in links(modelLinks) {
      if let before = linksBefore[path], before != target {
        differences.append("Property '\(type).\(path)' has been changed from '<\(before)>' to '<\(target)>'.")
      }
    }
    return differences
  }

  private static func properties(_ schema: Document) -> [(name: String, schema: Document)] {
    guard case .document(let properties)? = schema["properties"] else { return [] }
    return properties.compactMap { element in
      guard case .document(let property) = element.value else { return nil }
      return (element.key, property)
    }
  }

  /// The link map's targets by path.
  private static func links(_ map: Document?) -> [String: String] {
    guard case .array(let entries)? = map?["links"] else { return [:] }
    var result: [String: String] = [:]
    for case .document(let entry) in entries {
      if case .string(let path)? = entry["path"], case .string(let target)? = entry["target"] { result[path] = target }
    }
    return result
  }

  /// A value with every document's keys sorted (so that a property moved in its class, or a
  /// `required` list in another order, is the same schema).
  private static func canonical(_ value: BSON) -> BSON {
    switch value {
    case .document(let document):
      return .document(
        Document(document.map { ($0.key, canonical($0.value)) }.sorted { $0.0 < $1.0 }.map { ($0.0, $0.1) }))
    case .array(let array):
      let elements = array.map(canonical)
      if elements.allSatisfy({ if case .string = $0 { true } else { false } }) {
        return .array(BSONArray(elements.sorted { "\($0)" < "\($1)" }))
      }
      return .array(BSONArray(elements))
    default: return value
    }
  }

  /// A property's stored type, as the change message names it (`long`, `string?`, `object`).
  private static func describe(_ schema: Document) -> String {
    switch schema["bsonType"] {
    case .string(let type)?: return type
    case .array(let types)?:
      let names = types.compactMap { if case .string(let name) = $0 { name } else { nil } }
      let optional = names.contains("null")
      return (names.filter { $0 != "null" }.first ?? "?") + (optional ? "?" : "")
    default: return "?"
    }
  }
}

extension Reef {
  /// Gives the stored objects of a type the default value of each property its model added
  /// since its schema was stored (after a migration: a model that changed without one is
  /// refused first), as Realm gives them: the model's initial value, an empty collection, nil
  /// for a link or an embedded object.
  func fillAddedProperties(of schema: ObjectSchema, storedBefore: Document, in transaction: Transaction)
    throws(StoreError)
  {
    guard case .document(let before)? = storedBefore["properties"] else { return }
    let added = schema.storedProperties.filter { !$0.isPrimary && before.element(forKey: $0.columnName) == nil }
    guard !added.isEmpty else { return }
    let prototype = schema.objectClass.init()
    let collection = transaction.collection(schema.className)
    for property in added {
      let value: BSON
      if property.type == .object && !(property.isArray || property.isSet || property.isMap) {
        value = .null
      } else {
        do {
          value = try property.codec.encode(at: prototype.valuePointer(property.ordinal), writeContext(path: []))
        } catch {
          throw StoreError(
            .invalidDocument, "the default of \(schema.className).\(property.name) cannot be stored: \(error)")
        }
      }
      _ = try collection.updateMany(
        [property.columnName: ["$exists": false]], ["$set": .document([property.columnName: value])])
    }
  }
}
