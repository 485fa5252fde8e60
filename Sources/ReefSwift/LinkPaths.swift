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
    default: return node
    }
  }

  /// The path up to its first link (when more follows), the linked type and the rest.
  private static func split(_ path: FieldPath, _ schema: ObjectSchema) -> (FieldPath, ObjectSchema, FieldPath)? {
    var current = schema
    for (offset, segment) in path.segments.enumerated() where segment.index == nil {
      guard offset < path.segments.count - 1,
        let property = current.property(named: String(decoding: segment.name, as: UTF8.self)),
        let objectClass = property.objectClass, property.type == .object
      else { return nil }
      let target = ObjectSchema.of(objectClass)
      if property.isLink {
        return (
          FieldPath(segments: Array(path.segments[...offset])), target,
          FieldPath(segments: Array(path.segments[(offset + 1)...]))
        )
      }
      current = target
    }
    return nil
  }

  /// `link IN [keys of the target objects matching inner]`.
  private static func keys(of target: ObjectSchema, matching inner: QueryNode, reef: Reef, at link: FieldPath)
    throws(StoreError) -> QueryNode
  {
    let query: Query
    do {
      query = try Query(inner)
    } catch {
      throw StoreError(.invalidQuery, error.description, queryError: error)
    }
    let cursor = try reef.transaction().collection(target.className).find(query)
    var keys: [BSON] = []
    while let document = try cursor.next() { keys.append(reef.identity(of: target, document: document)) }
    return .match(link, .in(keys), .any)
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
