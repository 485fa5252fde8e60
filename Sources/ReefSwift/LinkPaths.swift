import ReefBSON
import ReefQuery
import ReefStore

/// Queries through links: a condition on `dog.name` (where `dog` links to a `Dog`) runs on the
/// `Dog` collection first, and becomes `dog IN [keys of the matching dogs]`.
///
/// The store has no joins; this resolves each linked condition with one query on the target
/// type (using its indexes), each time the results are read.
enum LinkPaths {
  /// `node` with every condition whose path crosses a link resolved.
  static func resolve(_ node: QueryNode, schema: ObjectSchema, reef: Reef) throws(StoreError) -> QueryNode {
    switch node {
    case .constant: return node
    case .and(let nodes):
      return .and(try nodes.map { (n) throws(StoreError) in try resolve(n, schema: schema, reef: reef) })
    case .or(let nodes):
      return .or(try nodes.map { (n) throws(StoreError) in try resolve(n, schema: schema, reef: reef) })
    case .nor(let nodes):
      return .nor(try nodes.map { (n) throws(StoreError) in try resolve(n, schema: schema, reef: reef) })
    case .not(let inner): return .not(try resolve(inner, schema: schema, reef: reef))
    case .match(let path, let test, let quantifier):
      guard let (link, target, rest) = split(path, schema) else { return node }
      let inner = try resolve(.match(rest, test, quantifier), schema: target, reef: reef)
      return try keys(of: target, matching: inner, reef: reef, at: link)
    case .exists(let path, let exists):
      guard let (link, target, rest) = split(path, schema) else { return node }
      let inner = try resolve(.exists(rest, exists), schema: target, reef: reef)
      return try keys(of: target, matching: inner, reef: reef, at: link)
    case .aggregate(let path, let aggregate, let subpath, let op, let value):
      if let (link, target, rest) = split(path, schema) {
        let inner = try resolve(.aggregate(rest, aggregate, subpath: subpath, op, value), schema: target, reef: reef)
        return try keys(of: target, matching: inner, reef: reef, at: link)
      }
      guard aggregate != .count, let subpath, let target = linkedCollection(at: path, schema) else { return node }
      return try identities(of: schema, reef: reef, aggregating: target, at: path) {
        .aggregate(FieldPath("linked"), aggregate, subpath: subpath, op, value)
      }
    case .subquery(let path, let inner, let op, let value):
      if let (link, target, rest) = split(path, schema) {
        let resolved = try resolve(.subquery(rest, inner, op, value), schema: target, reef: reef)
        return try keys(of: target, matching: resolved, reef: reef, at: link)
      }
      guard let target = linkedCollection(at: path, schema) else { return node }
      // The condition runs on the linked documents, where its own links are resolved.
      let condition = try resolve(inner, schema: target, reef: reef)
      return try identities(of: schema, reef: reef, aggregating: target, at: path) {
        .subquery(FieldPath("linked"), condition, op, value)
      }
    default: return node
    }
  }

  /// The path up to its first link (when more follows), the linked type and the rest.
  private static func split(_ path: FieldPath, _ schema: ObjectSchema) -> (FieldPath, ObjectSchema, FieldPath)? {
    let segments = path.segments
    var current = schema
    var offset = 0
    while offset < segments.count - 1 {
      guard segments[offset].index == nil else {
        offset += 1
        continue
      }
      guard let property = current.property(named: String(decoding: segments[offset].name, as: UTF8.self)),
        let objectClass = property.objectClass, property.type == .object
      else { return nil }
      // In a map, the next segment is a key.
      let end = property.isMap ? offset + 1 : offset
      guard end < segments.count - 1 else { return nil }
      let target = ObjectSchema.of(objectClass)
      if property.isLink {
        return (
          FieldPath(segments: Array(segments[...end])), target, FieldPath(segments: Array(segments[(end + 1)...]))
        )
      }
      current = target
      offset = end + 1
    }
    return nil
  }

  /// The type a `List` or `MutableSet` of links at the end of `path` links to (nil when the
  /// path ends elsewhere or crosses a link before).
  private static func linkedCollection(at path: FieldPath, _ schema: ObjectSchema) -> ObjectSchema? {
    var current = schema
    for (offset, segment) in path.segments.enumerated() {
      guard segment.index == nil, let property = current.property(named: String(decoding: segment.name, as: UTF8.self)),
        let objectClass = property.objectClass, property.type == .object
      else { return nil }
      if offset == path.segments.count - 1 {
        return property.isLink && (property.isArray || property.isSet) ? ObjectSchema.of(objectClass) : nil
      }
      guard !property.isLink, !property.isArray, !property.isSet, !property.isMap else { return nil }
      current = ObjectSchema.of(objectClass)
    }
    return nil
  }

  /// An aggregate or a subquery count over the objects a collection of links names
  /// (`dogs.@avg.age`, `SUBQUERY(dogs, $d, $d.age > 2).@count`), which the store cannot compute
  /// from the keys: `_id IN [the objects whose linked objects' aggregate
  /// passes]`. Each object's linked documents, in the collection's order (a key that names no
  /// object is left out), are put under `linked` in a document the aggregate is tested on.
  /// - Complexity: reads every object of `schema` and of `target` once, each time the results
  ///   are read. A to-one link before the collection is resolved first (``keys(of:matching:reef:at:)``).
  private static func identities(
    of schema: ObjectSchema, reef: Reef, aggregating target: ObjectSchema, at path: FieldPath,
    _ makeTest: () -> QueryNode
  ) throws(StoreError) -> QueryNode {
    let test = try compiled(makeTest())
    let transaction = try reef.transaction()
    var linked: [BSON: Document] = [:]
    let targets = try transaction.collection(target.className).find(try compiled(.constant(true)))
    while let document = try targets.next() { linked[reef.identity(of: target, document: document)] = document }
    var matching: [BSON] = []
    let owners = try transaction.collection(schema.className).find(try compiled(.constant(true)))
    while let document = try owners.next() {
      // A missing or null collection is empty, as the store reads it.
      var keys: [BSON] = []
      if case .array(let array)? = document[path.description] { keys = Array(array) }
      let documents = keys.compactMap { linked[$0].map(BSON.document) }
      if test.matches(Document([("linked", .array(BSONArray(documents)))])) {
        matching.append(document["_id"] ?? .null)
      }
    }
    return .match(FieldPath("_id"), .in(matching), .any)
  }

  /// `link IN [keys of the target objects matching inner]`.
  private static func keys(of target: ObjectSchema, matching inner: QueryNode, reef: Reef, at link: FieldPath)
    throws(StoreError) -> QueryNode
  {
    let cursor = try reef.transaction().collection(target.className).find(try compiled(inner))
    var keys: [BSON] = []
    while let document = try cursor.next() { keys.append(reef.identity(of: target, document: document)) }
    return .match(link, .in(keys), .any)
  }

  private static func compiled(_ node: QueryNode) throws(StoreError) -> Query {
    do {
      return try Query(node)
    } catch {
      throw StoreError(.invalidQuery, error.description, queryError: error)
    }
  }

  /// For a distinct key path through a to-one link: a function that reads the value at the
  /// path from the linked document, or nil when a link on the way is null or names no object
  /// (Realm leaves such objects out of distinct results); nil when the path crosses no link.
  static func distinctValue(of path: FieldPath, schema: ObjectSchema)
    -> ((Document, Reef) throws(StoreError) -> BSON?)?
  {
    guard let (link, target, rest) = split(path, schema) else { return nil }
    let inner = distinctValue(of: rest, schema: target)
    return { (document, reef) throws(StoreError) -> BSON? in
      guard let identity = document[link.description], identity != .null,
        let linked = try reef.document(of: target, identity: identity)
      else { return nil }
      if let inner { return try inner(linked, reef) }
      return linked[rest.description] ?? .null
    }
  }

  /// For a sort path through a to-one link: how to read a document's sort value (the linked
  /// object's field; null when the link is null or dangling). Nil for a path without a link.
  static func sortValue(of path: FieldPath, schema: ObjectSchema) -> ((Document, Reef) -> BSON)? {
    guard let (link, target, rest) = split(path, schema) else { return nil }
    let inner = sortValue(of: rest, schema: target)
    return { document, reef in
      guard let identity = document[link.description], identity != .null,
        let linked = try? reef.document(of: target, identity: identity)
      else { return .null }
      return inner?(linked, reef) ?? linked[rest.description] ?? .null
    }
  }
}
