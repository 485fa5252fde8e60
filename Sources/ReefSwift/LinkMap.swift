import ReefBSON
import ReefQuery
import ReefStore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

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
    forEachStoredProperty(of: schema) { property, path in
      guard property.type == .object else { return }
      result.append(
        Entry(
          origin: schema.className, path: path, many: property.isArray || property.isSet,
          target: property.objectClassName ?? ""))
    }
    return result
  }

  /// The paths of a type's `AnyReefValue` properties (alone, in a list, set or map, through
  /// embedded objects): a value there may hold DBRefs to objects of any type.
  static func mixedPaths(of schema: ObjectSchema) -> [String] {
    var result: [String] = []
    forEachStoredProperty(of: schema) { property, path in
      if property.type == .any { result.append(path) }
    }
    return result
  }

  /// Calls `body` with each stored property of a type that is not an embedded object, and its
  /// path through the embedded objects that hold it.
  private static func forEachStoredProperty(of schema: ObjectSchema, _ body: (Property, String) -> Void) {
    func visit(_ current: ObjectSchema, prefix: String, depth: Int) {
      guard depth < 16 else { return }
      for property in current.allProperties where property.shape.isStored {
        // The values of a map of links or of embedded objects are under each of its keys (a
        // map of AnyReefValue is walked as a value).
        let path = prefix + property.columnName + (property.isMap && property.type == .object ? "." + anyKey : "")
        if property.isEmbedded {
          visit(ObjectSchema.of(property.objectClass!), prefix: path + ".", depth: depth + 1)
        } else {
          body(property, path)
        }
      }
    }
    visit(schema, prefix: "", depth: 0)
  }

  /// The stored form: `{"links": [{"path": …, "many": …, "target": …}, …]}`, and for a type with
  /// `AnyReefValue` properties `"mixed": [path, …]`.
  static func document(for schema: ObjectSchema) -> Document {
    let links = entries(of: schema).map { entry -> BSON in
      ["path": .string(entry.path), "many": .bool(entry.many), "target": .string(entry.target)]
    }
    var document: Document = ["links": .array(BSONArray(links))]
    let mixed = mixedPaths(of: schema)
    if !mixed.isEmpty { document.set(.array(BSONArray(mixed.map(BSON.string))), forKey: "mixed") }
    return document
  }

  /// Where the documents of a file hold links.
  struct Stored {
    /// Every link entry.
    var links: Set<Entry> = []
    /// For each type whose documents hold `AnyReefValue`s, their paths.
    var mixed: [String: Set<String>] = [:]
  }

  /// Every link entry and `AnyReefValue` path stored in the file, and those of the types a `Reef`
  /// has used.
  static func all(in transaction: Transaction, registered: [ObjectSchema]) throws(StoreError) -> Stored {
    var result = Stored()
    for schema in registered where !schema.isEmbedded {
      result.links.formUnion(entries(of: schema))
      let mixed = mixedPaths(of: schema)
      if !mixed.isEmpty { result.mixed[schema.className, default: []].formUnion(mixed) }
    }
    for key in try transaction.metadataKeys(withPrefix: "links:") {
      guard let document = try transaction.metadata(forKey: key) else { continue }
      let origin = String(key.dropFirst("links:".count))
      if case .array(let links)? = document["links"] {
        for case .document(let link) in links {
          guard case .string(let path)? = link["path"], case .bool(let many)? = link["many"],
            case .string(let target)? = link["target"]
          else { continue }
          result.links.insert(Entry(origin: origin, path: path, many: many, target: target))
        }
      }
      if case .array(let paths)? = document["mixed"] {
        for case .string(let path) in paths { result.mixed[origin, default: []].insert(path) }
      }
    }
    return result
  }

  /// Removes the links to deleted objects of one type (their identities): a to-one link (or a
  /// map's value, whose key stays) becomes null, a list or set loses the key, inside embedded
  /// objects, lists and maps of them too; and the DBRefs to them in `AnyReefValue`s (see
  /// ``removeReferences(to:paths:in:)``).
  /// - Complexity: a query per path that links to the type; a path through a map reads every
  ///   document that has the map; the collections with `AnyReefValue`s are read once. Deleting
  ///   many objects at once (``Reef/delete(_:)-(S)``) does this once for all of them.
  static func removeLinks(
    to typeName: String, identities: Identities, in transaction: Transaction, registered: [ObjectSchema]
  ) throws(StoreError) {
    let stored = try all(in: transaction, registered: registered)
    for entry in stored.links where entry.target == typeName {
      let collection = transaction.collection(entry.origin)
      let segments = entry.path.split(separator: ".").map(String.init)
      let holders: [Document]
      if let wildcard = segments.firstIndex(of: anyKey) {
        // No filter names every key: the documents with the map are read.
        let map = segments[..<wildcard].joined(separator: ".")
        holders = try collection.find([map: ["$exists": true]]).toArray()
      } else {
        holders = try collection.find([entry.path: identities.filter]).toArray()
      }
      for holder in holders {
        guard
          case .document(let changed) = removing(
            identities, segments[...], many: entry.many, from: .document(holder)),
          changed != holder, let id = holder["_id"]
        else { continue }
        try collection.replaceDocument(forID: id, with: changed)
      }
    }
    for (origin, paths) in stored.mixed.sorted(by: { $0.key < $1.key }) {
      try removeReferences(
        to: DBRefTarget(typeName: typeName, identities: identities), paths: paths.sorted(),
        in: transaction.collection(origin))
    }
  }

  /// A deleted object, as the DBRefs of `AnyReefValue`s name it: `{"$ref": type, "$id": key}`.
  private struct DBRefTarget {
    var typeName: String
    var identities: Identities

    /// The bytes of the `$ref` element every DBRef to the target has: type, key, length, name.
    var referenceBytes: [UInt8] {
      let name = Array(typeName.utf8)
      let length = UInt32(name.count + 1)
      return [0x02] + Array("$ref".utf8) + [0]
        + [
          UInt8(truncatingIfNeeded: length), UInt8(truncatingIfNeeded: length >> 8),
          UInt8(truncatingIfNeeded: length >> 16), UInt8(truncatingIfNeeded: length >> 24),
        ] + name + [0]
    }

    func isReferenced(by value: BSON) -> Bool {
      guard case .document(let document) = value, case .string(let name)? = document["$ref"], name == typeName,
        let id = document["$id"]
      else { return false }
      return identities.contains(id)
    }
  }

  /// Removes the DBRefs to a deleted object from the `AnyReefValue`s at `paths` of a
  /// collection's documents, as Realm does: a value that is the link becomes null, a list (or
  /// set) loses the element, a dictionary's value becomes null; inside nested lists and
  /// dictionaries too. DBRefs are not indexed, so this reads each document of the collection
  /// (without copying it); only the types whose schema has `AnyReefValue` properties are read.
  /// - Complexity: O(*n*) in the collection's documents.
  private static func removeReferences(
    to target: DBRefTarget, paths: [String], in collection: TransactionCollection
  ) throws(StoreError) {
    let segments = paths.map { $0.split(separator: ".").map(String.init) }
    let needle = target.referenceBytes
    var changed: [(id: BSON, document: Document)] = []
    do {
      try collection.forEach { holder in
        // Most documents hold no DBRef to the target: their bytes lack its `$ref` element, and
        // they are passed over without being walked.
        guard holder.withUnsafeBytes({ contains(needle, in: $0) }) else { return true }
        var value = BSON.document(holder)
        var found = false
        for path in segments {
          guard let new = withoutReferences(to: target, path[...], in: value) else { continue }
          (value, found) = (new, true)
        }
        // Rebuilt (the path's first field was set), so it owns its bytes, unlike `holder`.
        if found, case .document(let document) = value, let id = document["_id"] { changed.append((id, document)) }
        return true
      }
    } catch let error as StoreError {
      throw error
    } catch {
      // The body throws nothing, so what `forEach` throws is a StoreError.
      throw StoreError(.storage, "\(error)")
    }
    // Written once the scan is over: a write transaction's cursors do not survive its writes.
    for (id, document) in changed { try collection.replaceDocument(forID: id, with: document) }
  }

  /// Whether `needle` occurs in `bytes`.
  private static func contains(_ needle: [UInt8], in bytes: UnsafeRawBufferPointer) -> Bool {
    guard let first = needle.first, bytes.count >= needle.count else { return false }
    var start = 0
    let last = bytes.count - needle.count
    while start <= last {
      guard let base = bytes.baseAddress,
        let found = memchr(base + start, Int32(first), last - start + 1)
      else { return false }
      let offset = base.distance(to: UnsafeRawPointer(found))
      if needle.withUnsafeBytes({ memcmp(base + offset, $0.baseAddress!, needle.count) }) == 0 { return true }
      start = offset + 1
    }
    return false
  }

  /// `value` without the DBRefs to `target` in the `AnyReefValue` at `segments` (through
  /// embedded objects and lists of them), or nil when it holds none.
  private static func withoutReferences(to target: DBRefTarget, _ segments: ArraySlice<String>, in value: BSON)
    -> BSON?
  {
    guard let first = segments.first else { return withoutReferences(to: target, inMixed: value) }
    switch value {
    case .document(var document) where first == anyKey:
      // A map of embedded objects: each value holds the rest of the path.
      var changed = false
      for element in document {
        guard let new = withoutReferences(to: target, segments.dropFirst(), in: element.value) else { continue }
        document.set(new, forKey: element.key)
        changed = true
      }
      return changed ? .document(document) : nil
    case .document(var document):
      guard let inner = document.value(forKey: first),
        let new = withoutReferences(to: target, segments.dropFirst(), in: inner)
      else { return nil }
      document.set(new, forKey: first)
      return .document(document)
    case .array(let elements):
      // A list of embedded objects: each element holds the rest of the path.
      var changed = false
      let new = elements.map { element -> BSON in
        guard let new = withoutReferences(to: target, segments, in: element) else { return element }
        changed = true
        return new
      }
      return changed ? .array(BSONArray(new)) : nil
    default:
      return nil
    }
  }

  /// An `AnyReefValue` without the DBRefs to `target`, or nil when it holds none: the link itself
  /// becomes null, a list loses it, a dictionary's value becomes null.
  private static func withoutReferences(to target: DBRefTarget, inMixed value: BSON) -> BSON? {
    if target.isReferenced(by: value) { return .null }
    switch value {
    case .array(let elements):
      var changed = false
      var kept: [BSON] = []
      for element in elements {
        if target.isReferenced(by: element) {
          changed = true
        } else if let new = withoutReferences(to: target, inMixed: element) {
          changed = true
          kept.append(new)
        } else {
          kept.append(element)
        }
      }
      return changed ? .array(BSONArray(kept)) : nil
    case .document(let document):
      var changed = false
      var fields: [(String, BSON)] = []
      for element in document {
        if let new = withoutReferences(to: target, inMixed: element.value) {
          changed = true
          fields.append((element.key, new))
        } else {
          fields.append((element.key, element.value))
        }
      }
      return changed ? .document(Document(fields)) : nil
    default:
      return nil
    }
  }

  private static func removing(
    _ identities: Identities, _ segments: ArraySlice<String>, many: Bool, from value: BSON
  ) -> BSON {
    switch value {
    case .document(var document):
      if segments.first == anyKey {
        // Each value of a map holds the rest of the path (or is the link).
        var pairs: [(String, BSON)] = []
        for element in document {
          let value = element.value
          if segments.count > 1 {
            pairs.append((element.key, removing(identities, segments.dropFirst(), many: many, from: value)))
          } else {
            pairs.append((element.key, identities.contains(value) ? .null : value))
          }
        }
        return .document(Document(pairs))
      }
      guard let first = segments.first, let inner = document.value(forKey: first) else { return value }
      let new: BSON
      if segments.count == 1 {
        if many, case .array(let keys) = inner {
          new = .array(BSONArray(keys.filter { !identities.contains($0) }))
        } else if identities.contains(inner) {
          new = .null
        } else {
          return value
        }
      } else {
        new = removing(identities, segments.dropFirst(), many: many, from: inner)
      }
      document.set(new, forKey: first)
      return .document(document)
    case .array(let elements):
      // A list of embedded objects: each element holds the rest of the path.
      return .array(BSONArray(elements.map { removing(identities, segments, many: many, from: $0) }))
    default:
      return value
    }
  }
}

/// The identities (primary keys or `_id`s) of the objects deleted together, compared as MongoDB
/// compares values (1 and 1.0 are the same key).
struct Identities {
  /// Sorted in MongoDB's order when there are many (searched by halves).
  private let values: [BSON]

  init(_ values: [BSON]) {
    self.values = values.count > 8 ? values.sorted { compareBSON($0, $1) < 0 } : values
  }

  /// The filter a query for the holders of links to them uses.
  var filter: BSON { values.count == 1 ? values[0] : ["$in": .array(BSONArray(values))] }

  func contains(_ value: BSON) -> Bool {
    guard values.count > 8 else { return values.contains { compareBSON($0, value) == 0 } }
    var (low, high) = (0, values.count)
    while low < high {
      let middle = (low + high) / 2
      let order = compareBSON(values[middle], value)
      if order == 0 { return true }
      if order < 0 { low = middle + 1 } else { high = middle }
    }
    return false
  }
}
