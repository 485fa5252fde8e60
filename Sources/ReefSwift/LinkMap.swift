import ReefBSON
import ReefQuery
import ReefStore

/// Where a type's documents hold links: each path (through embedded objects), whether it holds
/// several keys, and the linked type. In a path, ``anyKey`` stands for every key of a map (a
/// map key cannot start with `$`). Stored in the file beside the type's JSON Schema, so that
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

  /// The path segment that stands for every key of a map.
  static let anyKey = "$*"

  /// The links of a type's documents.
  static func entries(of schema: ObjectSchema) -> [Entry] {
    var result: [Entry] = []
    func visit(_ current: ObjectSchema, prefix: String, depth: Int) {
      guard depth < 16 else { return }
      for property in current.properties where property.shape.isStored && property.type == .object {
        // A map's values are under each of its keys.
        let path = prefix + property.columnName + (property.isMap ? "." + anyKey : "")
        if property.isEmbedded {
          visit(ObjectSchema.of(property.objectClass!), prefix: path + ".", depth: depth + 1)
        } else {
          result.append(
            Entry(
              origin: schema.className, path: path, many: property.isArray || property.isSet,
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

  /// Removes the links to a deleted object: a to-one link (or a map's value, whose key stays)
  /// becomes null, a list or set loses the key, inside embedded objects, lists and maps of them
  /// too.
  /// - Complexity: a query per path that links to the type; a path through a map reads every
  ///   document that has the map.
  static func removeLinks(
    to typeName: String, identity: BSON, in transaction: Transaction, registered: [ObjectSchema]
  ) throws(StoreError) {
    for entry in try all(in: transaction, registered: registered) where entry.target == typeName {
      let collection = transaction.collection(entry.origin)
      let segments = entry.path.split(separator: ".").map(String.init)
      let holders: [Document]
      if let wildcard = segments.firstIndex(of: anyKey) {
        // No filter names every key: the documents with the map are read.
        let map = segments[..<wildcard].joined(separator: ".")
        holders = try collection.find([map: ["$exists": true]]).toArray()
      } else {
        holders = try collection.find([entry.path: identity]).toArray()
      }
      for holder in holders {
        guard
          case .document(let changed) = removing(identity, segments[...], many: entry.many, from: .document(holder)),
          changed != holder, let id = holder["_id"]
        else { continue }
        try collection.replaceDocument(forID: id, with: changed)
      }
    }
  }

  private static func removing(_ identity: BSON, _ segments: ArraySlice<String>, many: Bool, from value: BSON) -> BSON {
    switch value {
    case .document(var document):
      if segments.first == anyKey {
        // Each value of a map holds the rest of the path (or is the link).
        var pairs: [(String, BSON)] = []
        for element in document {
          let value = element.value
          if segments.count > 1 {
            pairs.append((element.key, removing(identity, segments.dropFirst(), many: many, from: value)))
          } else {
            pairs.append((element.key, compareBSON(value, identity) == 0 ? .null : value))
          }
        }
        return .document(Document(pairs))
      }
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
