import ReefBSON
import ReefStore

/// The MongoDB JSON Schema of an object type, in the form of Realm's documentation: `title`,
/// `bsonType`, `required`, `properties`, embedded objects inline, lists as `array` with `items`.
///
/// It is what `reef export` writes as each collection's `validator` (`{"$jsonSchema": …}`), so
/// that `mongorestore` creates validated collections.
enum ObjectJSONSchema {
  static func document(for schema: ObjectSchema, depth: Int = 0) -> Document {
    var properties: [(String, BSON)] = []
    var required: [BSON] = []
    if !schema.isEmbedded && schema.property(named: "_id") == nil && !schema.primaryKeyIsID {
      properties.append(("_id", ["bsonType": "objectId"]))
      required.append("_id")
    }
    for property in schema.allProperties where property.shape.isStored {
      properties.append((property.columnName, .document(propertySchema(property, depth: depth))))
      if !property.isOptional || property.isArray || property.isSet || property.isMap {
        required.append(.string(property.columnName))
      }
    }
    var pairs: [(String, BSON)] = [("title", .string(schema.className)), ("bsonType", "object")]
    if !required.isEmpty { pairs.append(("required", .array(BSONArray(required)))) }
    pairs.append(("properties", .document(Document(properties))))
    return Document(pairs)
  }

  private static func propertySchema(_ property: Property, depth: Int) -> Document {
    let element = elementSchema(property, depth: depth)
    if property.isArray || property.isSet {
      var pairs: [(String, BSON)] = [("bsonType", "array"), ("items", .document(element))]
      if property.isSet { pairs.append(("uniqueItems", true)) }
      return Document(pairs)
    }
    if property.isMap {
      return ["bsonType": "object", "additionalProperties": .document(element)]
    }
    return element
  }

  private static func elementSchema(_ property: Property, depth: Int) -> Document {
    let type: String
    switch property.type {
    case .bool: type = "bool"
    case .int: type = "long"
    case .float, .double: type = "double"
    case .string: type = "string"
    case .data, .uuid: type = "binData"
    case .date: type = "date"
    case .decimal128: type = "decimal"
    case .objectId: type = "objectId"
    case .any, .linkingObjects: return Document()
    case .object:
      let target = ObjectSchema.of(property.objectClass!)
      if target.isEmbedded {
        var embedded: Document = depth < 32 ? document(for: target, depth: depth + 1) : ["bsonType": "object"]
        // A to-one embedded object (or a map's) is optional: nil is stored as null.
        if property.isOptional && !property.isArray && !property.isSet {
          embedded.set(["object", "null"], forKey: "bsonType")
        }
        return embedded
      }
      // A link stores the target's primary key (or its `_id`).
      let key = target.primaryKeyProperty
      switch key?.type {
      case .int: type = "long"
      case .string: type = "string"
      case .uuid: type = "binData"
      default: type = "objectId"
      }
      return optional(type, property.isOptional || !property.isArray)
    }
    return optional(type, property.isOptional)
  }

  private static func optional(_ type: String, _ isOptional: Bool) -> Document {
    isOptional ? ["bsonType": [.string(type), "null"]] : ["bsonType": .string(type)]
  }
}

extension Reef {
  /// Each object type's MongoDB JSON Schema, by type name (see the `JSONSchema` form above):
  /// the types this `Reef` has used, and those stored in the file. (``schema`` is Realm's
  /// ``Schema`` of the object types.)
  /// - Throws: ``ReefError`` of kind ``ReefError/Kind/store`` when the stored schemas cannot be
  ///   read (never a shorter answer).
  public var jsonSchema: [String: Document] {
    get throws(ReefError) {
      var result: [String: Document] = [:]
      let stored = try storeCall { () throws(StoreError) in try self.transaction().jsonSchemas() }
      for (name, schema) in stored { result[name] = schema }
      for schema in registeredSchemas where !schema.isEmbedded {
        result[schema.className] = ObjectJSONSchema.document(for: schema)
      }
      return result
    }
  }
}
