import ReefBSON
import ReefQuery
import ReefStore

/// Where a type's documents hold links: each path (through embedded objects), whether it holds
/// several keys, and the linked type. Stored in the file beside the type's JSON Schema, so that
/// deleting an object removes the links to it from every type in the file, also those the
/// deleting `Reef` has not used.
enum LinkMap {
  struct Entry: Hashable {
    var origin: String
    var path: String
    var many: Bool
    var target: String
  }

  static func metadataKey(_ typeName: String) -> String { "links:\(typeName)" }

  /// The links of a type's documents.
  static func entries(of schema: ObjectSchema) -> [Entry] {
    var result: [Entry] = []
    func visit(_ current: ObjectSchema, prefix: String, depth: Int) {
      guard depth < 16 else { return }
      for property in current.properties where property.shape.isStored && property.type == .object {
        let path = prefix + property.columnName
        if property.isEmbedded {
          // The links inside a map's embedded objects are under keys no fixed path names.
          if property.isMap { continue }
          visit(ObjectSchema.of(property.objectClass!), prefix: path + ".", depth: depth + 1)
        } else {
          result.append(
            Entry(
              origin: schema.className, path: path, many: property.isArray || property.isSet || property.isMap,
              target: property.objectClassName ?? ""))
        }
      }
    }
    visit(schema, prefix: "", depth: 0)
    return result
  }

  /// The stored form: `{"links": [{"path": …, "many": …, "target": …}, …]}`.
  static func document(for schema: ObjectSchema) -> Document {
    let links = entries(of: schema).map { entry -> BSON in
      ["path": .string(entry.path), "many": .bool(entry.many), "target": .string(entry.target)]
    }
    return ["links": .array(BSONArray(links))]
  }

  /// Every link entry stored in the file, and those of the types a `Reef` has used.
  static func all(in transaction: Transaction, registered: [ObjectSchema]) throws(StoreError) -> Set<Entry> {
    var result = Set(registered.filter { !$0.isEmbedded }.flatMap(entries))
    for key in try transaction.metadataKeys(withPrefix: "links:") {
      guard let document = try transaction.metadata(forKey: key), case .array(let links)? = document["links"] else {
        continue
      }
      let origin = String(key.dropFirst("links:".count))
      for case .document(let link) in links {
        guard case .string(let path)? = link["path"], case .bool(let many)? = link["many"],
          case .string(let target)? = link["target"]
        else { continue }
        result.insert(Entry(origin: origin, path: path, many: many, target: target))
      }
    }
    return result
  }

  /// Removes the links to a deleted object: a to-one link becomes null, a list or set loses the
  /// key, inside embedded objects and lists of them too.
  static func removeLinks(
    to typeName: String, identity: BSON, in transaction: Transaction, registered: [ObjectSchema]
  ) throws(StoreError) {
    for entry in try all(in: transaction, registered: registered) where entry.target == typeName {
      let collection = transaction.collection(entry.origin)
      let holders = try collection.find([entry.path: identity]).toArray()
      let segments = entry.path.split(separator: ".").map(String.init)
      for holder in holders {
        guard
          case .document(let changed) = removing(identity, segments[...], many: entry.many, from: .document(holder)),
          let id = holder["_id"]
        else { continue }
        try collection.replaceDocument(forID: id, with: changed)
      }
    }
  }

  private static func removing(_ identity: BSON, _ segments: ArraySlice<String>, many: Bool, from value: BSON) -> BSON {
    switch value {
    case .document(var document):
      guard let first = segments.first, let inner = document.value(forKey: first) else { return value }
      let new: BSON
      if segments.count == 1 {
        if many, case .array(let keys) = inner {
          new = .array(BSONArray(keys.filter { compareBSON($0, identity) != 0 }))
        } else if compareBSON(inner, identity) == 0 {
          new = .null
        } else {
          return value
        }
      } else {
        new = removing(identity, segments.dropFirst(), many: many, from: inner)
      }
      document.set(new, forKey: first)
      return .document(document)
    case .array(let elements):
      // A list of embedded objects: each element holds the rest of the path.
      return .array(BSONArray(elements.map { removing(identity, segments, many: many, from: $0) }))
    default:
      return value
    }
  }
}
