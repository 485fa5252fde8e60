import ReefQuery

/// Rewrites Swift property names to stored field names (`propertiesMapping()`) in query paths,
/// through embedded and linked types.
struct FieldMapping {
  let schema: ObjectSchema

  init(_ schema: ObjectSchema) { self.schema = schema }

  /// The stored path for a path of Swift names (names already stored pass unchanged).
  func map(_ path: FieldPath) -> FieldPath { mapped(path).path }

  /// The stored path, and the type of the objects it ends at (nil when it ends at a value or at
  /// a name no type declares): a subquery's condition and an aggregate's subpath start there.
  private func mapped(_ path: FieldPath) -> (path: FieldPath, target: ObjectSchema?) {
    var current: ObjectSchema? = schema
    var target: ObjectSchema? = schema
    var segments: [FieldPath.Segment] = []
    var isKey = false
    for segment in path.segments {
      guard !isKey, segment.index == nil, let schema = current,
        let property = schema.property(named: String(decoding: segment.name, as: UTF8.self))
      else {
        // A map's key, an array index or a name no type declares passes unchanged.
        target = isKey || segment.index != nil ? current : nil
        isKey = false
        segments.append(segment)
        continue
      }
      segments.append(FieldPath.Segment(property.columnName))
      current = property.objectClass.map(ObjectSchema.of)
      target = current
      isKey = property.isMap
    }
    return (FieldPath(segments: segments), target)
  }

  /// The query with every path mapped.
  func map(_ node: QueryNode) -> QueryNode {
    guard needsMapping else { return node }
    switch node {
    case .constant: return node
    case .and(let nodes): return .and(nodes.map(map))
    case .or(let nodes): return .or(nodes.map(map))
    case .nor(let nodes): return .nor(nodes.map(map))
    case .not(let inner): return .not(map(inner))
    case .match(let path, let test, let quantifier): return .match(map(path), test, quantifier)
    case .exists(let path, let exists): return .exists(map(path), exists)
    case .size(let path, let size): return .size(map(path), size)
    case .elementMatch(let path, let inner):
      let (stored, target) = mapped(path)
      return .elementMatch(stored, target.map { FieldMapping($0).map(inner) } ?? inner)
    case .elementMatchValue(let path, let tests): return .elementMatchValue(map(path), tests)
    case .aggregate(let path, let aggregate, let subpath, let op, let value):
      let (stored, target) = mapped(path)
      let storedSubpath = subpath.map { subpath in target.map { FieldMapping($0).map(subpath) } ?? subpath }
      return .aggregate(stored, aggregate, subpath: storedSubpath, op, value)
    case .subquery(let path, let inner, let op, let value):
      let (stored, target) = mapped(path)
      return .subquery(stored, target.map { FieldMapping($0).map(inner) } ?? inner, op, value)
    }
  }

  /// Whether any reachable type maps a name (most do not: queries then pass unchanged).
  private var needsMapping: Bool {
    var seen = Set<ObjectIdentifier>()
    var stack = [schema]
    while let next = stack.popLast() {
      guard seen.insert(ObjectIdentifier(next.objectClass)).inserted else { continue }
      if next.allProperties.contains(where: { $0.name != $0.columnName }) { return true }
      stack.append(contentsOf: next.allProperties.compactMap { $0.objectClass.map(ObjectSchema.of) })
    }
    return false
  }
}
