import ReefQuery

/// Finds the property names of key paths that their types do not declare, so that a sort, a
/// filter, a distinct or an aggregate naming one stops at the call, as Realm's does (a missing
/// field would otherwise match nothing and sort as null, silently).
///
/// A name is a property's Swift name or its stored name (`propertiesMapping()`); a top-level
/// type's `_id` is known (hidden or not). Past a link, an embedded object or a `LinkingObjects`
/// the names are those of its type; a map's key and an array index are not names; past an
/// `AnyReefValue`, or past a property of another type, nothing is checked.
enum KeyPathCheck {
  /// An undeclared name: the name and the type that does not declare it.
  struct Unknown: Equatable {
    let name: String
    let typeName: String
  }

  /// The first undeclared name of a path of `schema`'s objects, or nil.
  static func unknown(in path: FieldPath, of schema: ObjectSchema) -> Unknown? { walk(path, from: schema).unknown }

  /// The first undeclared name of a dotted key path, or nil.
  static func unknown(in keyPath: String, of schema: ObjectSchema) -> Unknown? {
    unknown(in: FieldPath(keyPath), of: schema)
  }

  /// The first undeclared name anywhere in a query of `schema`'s objects, or nil.
  static func unknown(in node: QueryNode, of schema: ObjectSchema) -> Unknown? {
    switch node {
    case .constant: return nil
    case .and(let nodes), .or(let nodes), .nor(let nodes):
      for node in nodes { if let found = unknown(in: node, of: schema) { return found } }
      return nil
    case .not(let inner): return unknown(in: inner, of: schema)
    case .match(let path, _, _), .exists(let path, _), .size(let path, _), .elementMatchValue(let path, _):
      return unknown(in: path, of: schema)
    case .elementMatch(let path, let inner), .subquery(let path, let inner, _, _):
      let (found, target) = walk(path, from: schema)
      return found ?? target.flatMap { unknown(in: inner, of: $0) }
    case .aggregate(let path, _, let subpath, _, _):
      let (found, target) = walk(path, from: schema)
      return found ?? subpath.flatMap { subpath in target.flatMap { unknown(in: subpath, of: $0) } }
    }
  }

  /// Walks a path from `schema`: the first undeclared name, and the type of the objects the path
  /// ends at (nil when it ends at a value, or past what is checked).
  private static func walk(_ path: FieldPath, from schema: ObjectSchema) -> (unknown: Unknown?, target: ObjectSchema?) {
    var current: ObjectSchema? = schema
    var nextIsKey = false
    for (offset, segment) in path.segments.enumerated() {
      if nextIsKey || segment.index != nil {
        nextIsKey = false
        continue
      }
      guard let type = current else { return (nil, nil) }
      let name = String(decoding: segment.name, as: UTF8.self)
      guard let property = type.property(named: name) ?? type.properties.first(where: { $0.columnName == name })
      else {
        if name == "_id" && !type.isEmbedded {
          current = nil
          continue
        }
        // Realm's names for a collection of values (`self`) and the parser's list operators
        // are not properties.
        if name == "self" || name.hasPrefix("@") || (offset > 0 && name.hasPrefix("$")) { return (nil, nil) }
        return (Unknown(name: name, typeName: type.className), nil)
      }
      nextIsKey = property.isMap
      switch property.type {
      case .object, .linkingObjects: current = property.objectClass.map(ObjectSchema.of)
      default: current = nil
      }
      if current == nil && !property.isMap && offset < path.segments.count - 1 { return (nil, nil) }
    }
    return (nil, current)
  }
}

extension ObjectSchema {
  /// Stops, with Realm's message, when a sort or distinct key path names no property, or, for
  /// a distinct key path (`distinct` true), goes through a collection (a `List`, `MutableSet`,
  /// `Map` or `LinkingObjects`: Realm distincts by one value per object). A sort through an
  /// array follows MongoDB's order for arrays.
  func requireSortable(_ keyPath: String, distinct: Bool = false) {
    if let unknown = KeyPathCheck.unknown(in: keyPath, of: self) {
      reefStop(
        "Cannot sort on key path '\(keyPath)': property '\(unknown.typeName).\(unknown.name)' does not exist.")
    }
    guard distinct else { return }
    var current: ObjectSchema? = self
    for name in keyPath.split(separator: ".").map(String.init) {
      guard let type = current, let property = type.property(named: name) else { return }
      let collection =
        property.type == .linkingObjects
        ? "linking objects" : property.isArray ? "array" : property.isSet ? "set" : property.isMap ? "dictionary" : nil
      if let collection {
        reefStop(
          "Cannot sort on key path '\(keyPath)': property '\(type.className).\(property.name)' is of unsupported type '\(collection)'."
        )
      }
      current = property.objectClass.map(ObjectSchema.of)
    }
  }

  /// Stops, with Realm's message, when an aggregate's property path names no property.
  func requireProperty(_ keyPath: String) {
    guard let unknown = KeyPathCheck.unknown(in: keyPath, of: self) else { return }
    reefStop("Property '\(unknown.name)' not found in object of type '\(unknown.typeName)'")
  }
}
