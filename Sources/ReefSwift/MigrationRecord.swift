import ReefBSON
import ReefStore

/// The stored object a ``MigrationObject`` stands for: a document of a collection, or an
/// embedded object's subdocument in one (at a field, or at a position of an array field), read
/// and written by name in the migration's write transaction (see ``Migration``).
final class MigrationRecord {
  unowned let migration: Migration
  /// The object's type: its collection's name, or an embedded object's type name.
  let typeName: String
  /// A top-level object's `_id` (nil for an embedded object).
  let topID: BSON?
  /// For an embedded object: the object whose document holds it, its field and its position in
  /// an array field.
  let parent: MigrationRecord?
  let field: String
  let index: Int?
  /// The document as this record last read or wrote it.
  private(set) var document: Document
  /// An old object (read-only): as the object was before the migration.
  var isOld = false
  /// Deleted by ``Migration/delete(_:)``.
  var isDeleted = false
  /// The lists of objects given out, by field: written back as they are when the enumeration's
  /// block returns.
  private var lists: [String: List<DynamicObject>] = [:]

  init(migration: Migration, typeName: String, id: BSON, document: Document) {
    self.migration = migration
    self.typeName = typeName
    topID = id
    parent = nil
    field = ""
    index = nil
    self.document = document
  }

  init(migration: Migration, typeName: String, parent: MigrationRecord, field: String, index: Int?, document: Document)
  {
    self.migration = migration
    self.typeName = typeName
    topID = nil
    self.parent = parent
    self.field = field
    self.index = index
    self.document = document
    isOld = parent.isOld
  }

  // MARK: Schemas

  /// The schema of the program's model class of a type, if it has one.
  static func modelSchema(_ typeName: String) -> ObjectSchema? { ObjectSchema.named(typeName) }

  /// The schema of this object's model class, if the program has one.
  var modelSchema: ObjectSchema? { Self.modelSchema(typeName) }

  /// The model's property a name stands for (its Swift or stored name).
  private func modelProperty(_ key: String) -> Property? {
    guard let schema = modelSchema else { return nil }
    return schema.property(named: key) ?? schema.properties.first { $0.columnName == key }
  }

  /// The stored field a name stands for.
  private func column(_ key: String) -> String { modelProperty(key)?.columnName ?? key }

  /// The top-level object this record is in, and the path of this object's fields from it
  /// (`""` for the top one, `"address."` for its embedded object at `address`).
  private var top: (record: MigrationRecord, prefix: String) {
    guard let parent else { return (self, "") }
    let above = parent.top
    return (above.record, above.prefix + field + ".")
  }

  /// The stored JSON Schema of this object: its collection's, or the part of its parent's that
  /// describes it.
  private var storedSchema: Document? {
    guard let parent else { return migration.storedSchema(typeName) }
    guard let property = parent.storedSchema?["properties"]?.asDocument?[field]?.asDocument else { return nil }
    return index == nil ? property : property["items"]?.asDocument
  }

  /// The field names of a stored JSON Schema, in order.
  static func storedFields(_ schema: Document) -> [String] { schema["properties"]?.asDocument?.keys ?? [] }

  /// Whether a name may be one the object has: in its model class, its stored schema or its
  /// document; any name when the program's model class of the type is not known (it may be a
  /// property the new model adds: Linux has no list of a program's classes to find it in).
  private func isKnown(_ column: String) -> Bool {
    modelSchema == nil || modelProperty(column) != nil || document.element(forKey: column) != nil
      || storedSchema.map { Self.storedFields($0).contains(column) } == true
  }

  /// The linked type of a field that holds links, and whether it holds several: from the file's
  /// link map of the top-level type, or from the model class.
  private func link(_ column: String) -> (target: String, many: Bool)? {
    let (record, prefix) = top
    if let entry = migration.links(of: record.typeName).first(where: { $0.path == prefix + column }) {
      return (entry.target, entry.many)
    }
    guard let property = modelProperty(column), property.isLink, let target = property.objectClassName else {
      return nil
    }
    return (target, property.isArray || property.isSet)
  }

  // MARK: Reading

  /// A property's value (see ``Migration``).
  func value(forKey key: String) -> Any? {
    let column = column(key)
    guard isKnown(column) else { reefStop("Invalid property name '\(key)' for class '\(typeName)'.") }
    if let list = lists[column] { return list }
    let element = document.element(forKey: column)
    if let link = link(column) {
      if link.many {
        let list = List<DynamicObject>()
        if case .array(let keys)? = element?.value {
          for key in keys {
            if let found = migration.object(link.target, identity: key) { list.append(found) }
          }
        }
        return giveOut(list, column)
      }
      guard let element, element.type != .null else { return nil }
      return migration.object(link.target, identity: element.value)
    }
    let property = modelProperty(column)
    switch element?.value {
    case .document(let subdocument)?:
      if property?.isMap == true
        || storedSchema?["properties"]?.asDocument?[column]?.asDocument?["additionalProperties"] != nil
      {
        return Self.swiftValue(.document(subdocument), property)
      }
      return DynamicObject(migrationRecord: embedded(column, index: nil, subdocument))
    case .array(let array)? where property?.isEmbedded == true || (property == nil && isEmbeddedList(column, array)):
      let list = List<DynamicObject>()
      for (index, item) in Array(array).enumerated() {
        if case .document(let subdocument) = item {
          list.append(DynamicObject(migrationRecord: embedded(column, index: index, subdocument)))
        }
      }
      return giveOut(list, column)
    case nil, .null?:
      if property?.isEmbedded == true && (property?.isArray == true || property?.isSet == true) {
        return giveOut(List<DynamicObject>(), column)
      }
      return nil
    case let value?:
      return Self.swiftValue(value, property)
    }
  }

  /// Whether an array field of an object with no model holds embedded objects (its stored
  /// schema's items are objects, or its elements are documents).
  private func isEmbeddedList(_ column: String, _ array: BSONArray) -> Bool {
    if let items = storedSchema?["properties"]?.asDocument?[column]?.asDocument?["items"]?.asDocument {
      return items["properties"] != nil
    }
    return !array.isEmpty && array.allSatisfy { $0.asDocument != nil }
  }

  /// The record of an embedded object of this one.
  private func embedded(_ column: String, index: Int?, _ subdocument: Document) -> MigrationRecord {
    let property = modelProperty(column)
    let stored = storedSchema?["properties"]?.asDocument?[column]?.asDocument
    let title = (index == nil ? stored : stored?["items"]?.asDocument)?["title"]?.asString
    return MigrationRecord(
      migration: migration, typeName: property?.objectClassName ?? title ?? column, parent: self, field: column,
      index: index, document: subdocument)
  }

  /// Keeps a list given out, to write it back (a new object's) and to give it out again.
  private func giveOut(_ list: List<DynamicObject>, _ column: String) -> List<DynamicObject> {
    lists[column] = list
    if !isOld { migration.gaveOut(list, of: self, key: column) }
    return list
  }

  /// A stored value as a Swift value: every integer as `Int`, a double as `Float` for a `Float`
  /// property, binary data as `UUID` (subtype 4) or `Data`, a date as `Date`, documents and
  /// arrays as dictionaries and arrays of Swift values.
  static func swiftValue(_ value: BSON, _ property: Property?) -> Any? {
    switch value {
    case .null, .undefined: return nil
    case .string(let x): return x
    case .int32(let x): return Int(x)
    case .int64(let x): return Int(x)
    case .double(let x): return property?.type == .float ? Float(x) : x
    case .bool(let x): return x
    case .objectId(let x): return x
    case .decimal128(let x): return x
    case .datetime(let x): return Date(timeIntervalSince1970: Double(x.millisecondsSinceEpoch) / 1000)
    case .binary(let x):
      if x.subtype == .uuid && x.data.count == 16 {
        return x.data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
      }
      return Data(x.data)
    case .document(let x):
      var dictionary: [String: Any] = [:]
      for element in x { dictionary[element.key] = swiftValue(element.value, nil) as Any }
      return dictionary
    case .array(let x): return x.map { swiftValue($0, nil) as Any }
    default: return value
    }
  }

  // MARK: Writing

  /// Sets a property of a new object (see ``Migration``): stored at once.
  func setValue(_ value: Any?, forKey key: String) {
    let column = column(key)
    if isOld { reefStop("Cannot change an old object of a migration: \(typeName).\(key) is read-only") }
    guard isKnown(column) else { reefStop("Invalid property name '\(key)' for class '\(typeName)'.") }
    let givenOut = lists[column]
    lists[column] = nil
    migration.forgetList(of: self, key: column)
    document.set(Self.bson(value as Any, migration: migration, key: key, type: typeName), forKey: column)
    store()
    // A list given out before follows the assignment, as Realm's live list does: it is refilled
    // with the new elements and given out again.
    if let givenOut, givenOut !== (value as AnyObject?), let fresh = self.value(forKey: key) as? List<DynamicObject> {
      let elements = Array(fresh)
      givenOut.removeAll()
      givenOut.append(objectsIn: elements)
      _ = giveOut(givenOut, column)
    }
  }

  /// Writes back a list given out: the linked objects' keys, or the embedded objects'
  /// documents.
  func write(_ list: List<DynamicObject>, forKey column: String) {
    var values: [BSON] = []
    for element in list {
      guard let record = element.migrationRecord else { continue }
      do throws(StoreError) {
        values.append(record.topID == nil ? .document(record.document) : try record.identity())
      } catch {
        return migration.record(error, type: record.typeName)
      }
    }
    let array = BSON.array(BSONArray(values))
    if document[column] == array { return }
    document.set(array, forKey: column)
    store()
  }

  /// The value links store for this top-level object: its primary key, or its `_id`.
  func identity() throws(StoreError) -> BSON {
    if let key = modelSchema?.primaryKeyProperty, key.columnName != "_id" { return document[key.columnName] ?? .null }
    return topID ?? .null
  }

  /// Stores the document: a top-level one in its collection (the old document kept first), an
  /// embedded one in its parent's.
  private func store() {
    if let topID {
      migration.keepOriginal(typeName, topID)
      do throws(StoreError) {
        try migration.transaction.collection(typeName).replaceDocument(forID: topID, with: document)
      } catch {
        migration.record(error, type: typeName)
      }
    } else if let parent {
      parent.childChanged(field, index: index, document)
    }
  }

  /// Takes an embedded object's new document into this one's and stores it (an element of a
  /// list given out is written with the list).
  private func childChanged(_ column: String, index: Int?, _ child: Document) {
    if let index {
      if lists[column] != nil { return }
      guard case .array(let array)? = document[column] else { return }
      var values = Array(array)
      guard index < values.count else { return }
      values[index] = .document(child)
      document.set(.array(BSONArray(values)), forKey: column)
    } else {
      document.set(.document(child), forKey: column)
    }
    store()
  }

  /// The stored form of a value set in a migration: a migration object's key (or document, for
  /// an embedded one), a model object added (or encoded, for an embedded one), arrays and
  /// dictionaries of these, and the values a query argument takes.
  static func bson(_ value: Any, migration: Migration, key: String, type typeName: String) -> BSON {
    switch value {
    case let object as DynamicObject:
      guard let record = object.migrationRecord else { return .null }
      if record.topID == nil { return .document(record.document) }
      do throws(StoreError) {
        return try record.identity()
      } catch {
        migration.record(error, type: record.typeName)
        return .null
      }
    case let list as List<DynamicObject>:
      return .array(BSONArray(list.map { bson($0, migration: migration, key: key, type: typeName) }))
    case let object as EmbeddedObject:
      do {
        return .document(
          try ObjectEncoding.document(
            of: object, schema: ObjectSchema.of(Swift.type(of: object)), id: nil,
            migration.reef.writeContext(path: [])))
      } catch {
        migration.reef.record(error)
        return .null
      }
    case let object as Object:
      if object._managed != nil { return BSONArgument.bson(object) ?? .null }
      do {
        return try migration.reef.addObject(object, policy: .error)
      } catch {
        migration.reef.record(error)
        return .null
      }
    case is NSNull: return .null
    case let array as [Any]:
      return .array(BSONArray(array.map { bson($0, migration: migration, key: key, type: typeName) }))
    case let dictionary as [String: Any]:
      return .document(
        Document(
          dictionary.sorted { $0.key < $1.key }.map {
            ($0.key, bson($0.value, migration: migration, key: key, type: typeName))
          }))
    default:
      guard let stored = BSONArgument.bson(value) else {
        reefStop("Invalid value '\(value)' of type '\(Swift.type(of: value))' for property '\(typeName).\(key)'.")
      }
      return stored
    }
  }
}

extension Migration {
  /// The migration object of a stored object of a type by its link value (primary key or
  /// `_id`), or nil when it is gone.
  func object(_ typeName: String, identity: BSON) -> DynamicObject? {
    let collection = transaction.collection(typeName)
    let found: Document?
    do throws(StoreError) {
      if let key = MigrationRecord.modelSchema(typeName)?.primaryKeyProperty, key.columnName != "_id" {
        found = try collection.findOne([key.columnName: identity])
      } else {
        found = try collection.document(forID: identity)
      }
    } catch {
      record(error, type: typeName)
      return nil
    }
    guard let found else { return nil }
    return DynamicObject(
      migrationRecord: MigrationRecord(migration: self, typeName: typeName, id: found["_id"] ?? .null, document: found))
  }
}

extension BSON {
  /// The document, for a document value.
  var asDocument: Document? {
    if case .document(let document) = self { return document }
    return nil
  }

  /// The string, for a string value.
  var asString: String? {
    if case .string(let string) = self { return string }
    return nil
  }
}
