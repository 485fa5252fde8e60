import ReefBSON

/// A collection's MongoDB JSON Schema (a dump's `validator.$jsonSchema`, or what ReefSwift
/// stores for its types), read where the documents cannot say: the type of a field that is
/// null or missing everywhere, that a field may be null, and the names (`title`) of object
/// types. One node of the schema: an object's, a property's or an array's items'.
struct SchemaHint {
  /// The schema node.
  let node: Document

  /// Reads a schema node.
  init(_ node: Document) { self.node = node }

  /// The node of property `name`, if the schema has one.
  func property(_ name: String) -> SchemaHint? {
    guard case .document(let properties)? = node["properties"], case .document(let inner)? = properties[key: name]
    else { return nil }
    return SchemaHint(inner)
  }

  /// The node of an array's elements.
  var items: SchemaHint? {
    guard case .document(let inner)? = node["items"] else { return nil }
    return SchemaHint(inner)
  }

  /// The object type's name (ReefSwift writes its class name).
  var title: String? {
    guard case .string(let title)? = node["title"] else { return nil }
    return title
  }

  /// The `bsonType`s allowed (one, or an array of them).
  var bsonTypes: [String] {
    switch node["bsonType"] {
    case .string(let type)?: return [type]
    case .array(let types)?:
      return types.compactMap { if case .string(let type) = $0 { type } else { nil } }
    default: return []
    }
  }

  /// Whether the schema allows null here.
  var allowsNull: Bool { bsonTypes.contains("null") }

  /// The Swift type of a scalar `bsonType` (with null or not), when it has exactly one;
  /// `binData` says nothing (Data or UUID).
  var scalarType: String? {
    let types = bsonTypes.filter { $0 != "null" }
    guard types.count == 1 else { return nil }
    switch types[0] {
    case "string": return "String"
    case "int", "long": return "Int"
    case "double": return "Double"
    case "bool": return "Bool"
    case "date": return "Date"
    case "objectId": return "ObjectId"
    case "decimal": return "Decimal128"
    default: return nil
    }
  }
}
