import ReefBSON

/// A MongoDB `$jsonSchema` document that documents can be checked against: the keywords the
/// object layer writes (`bsonType`, `required`, `properties`, `items`, `additionalProperties`,
/// `uniqueItems`, and the annotations `title` and `description`).
///
/// ```swift
/// let schema = try JSONSchema(["bsonType": "object", "required": ["name"],
///                              "properties": ["name": ["bsonType": "string"]]])
/// schema.violations(in: ["name": 3])  // name: expected string, found int
/// ```
/// Keywords outside that list are refused when the schema is made, so that a check never
/// passes a document by ignoring a rule.
public struct JSONSchema: Sendable {
  /// The schema document.
  public let document: Document

  /// One way a document breaks the schema.
  public struct Violation: Sendable, Hashable, CustomStringConvertible {
    /// The dotted path of the value (`address.city`, `addresses.2.city`); empty for the document.
    public var path: String
    /// What the schema asks for.
    public var expected: String
    /// What the document holds.
    public var found: String
    public var description: String {
      "\(path.isEmpty ? "the document" : path): expected \(expected), found \(found)"
    }
  }

  private static let keywords: Set<String> = [
    "bsonType", "required", "properties", "items", "additionalProperties", "uniqueItems", "title", "description",
  ]

  /// Checks that `document` is a schema of the supported keywords.
  /// - Throws: ``QueryError`` naming the key path of an unsupported keyword or a malformed value.
  public init(_ document: Document) throws(QueryError) {
    try Self.checkSchema(document, path: [])
    self.document = document
  }

  private static func checkSchema(_ schema: Document, path: [String]) throws(QueryError) {
    for element in schema {
      let here = path + [element.key]
      guard keywords.contains(element.key) else {
        throw QueryError(.unsupported, "unsupported JSON Schema keyword \(element.key)", keyPath: here)
      }
      switch (element.key, element.value) {
      case ("bsonType", .string(let name)):
        guard typeCodes(name) != nil else { throw QueryError(.badValue, "unknown bsonType \"\(name)\"", keyPath: here) }
      case ("bsonType", .array(let names)):
        for name in names {
          guard case .string(let name) = name, typeCodes(name) != nil else {
            throw QueryError(.badValue, "bsonType lists \(name), which is not a type name", keyPath: here)
          }
        }
      case ("required", .array(let names)):
        for name in names {
          guard case .string = name else {
            throw QueryError(.badValue, "required lists \(name), not a field name", keyPath: here)
          }
        }
      case ("properties", .document(let properties)):
        for property in properties {
          guard case .document(let inner) = property.value else {
            throw QueryError(.badValue, "a property's schema must be a document", keyPath: here + [property.key])
          }
          try checkSchema(inner, path: here + [property.key])
        }
      case ("items", .document(let inner)), ("additionalProperties", .document(let inner)):
        try checkSchema(inner, path: here)
      case ("additionalProperties", .bool), ("uniqueItems", .bool), ("title", .string), ("description", .string):
        break
      default:
        throw QueryError(.badValue, "\(element.key) cannot be \(element.value.type.name)", keyPath: here)
      }
    }
  }

  /// The BSON type codes a `bsonType` name allows (`number` is any numeric type).
  private static func typeCodes(_ name: String) -> [UInt8]? {
    if name == "number" { return [0x01, 0x10, 0x12, 0x13] }
    for code in [UInt8](0x01...0x13) + [0xFF, 0x7F] where BSONType(rawValue: code).name == name { return [code] }
    return nil
  }

  /// Every way `document` breaks the schema, in document order.
  public func violations(in document: Document) -> [Violation] {
    var found: [Violation] = []
    Self.check(.document(document), against: self.document, path: "", into: &found)
    return found
  }

  private static func check(_ value: BSON, against schema: Document, path: String, into found: inout [Violation]) {
    if case .array(let names)? = schema["bsonType"] ?? nil {
      let allowed = names.compactMap { if case .string(let s) = $0 { s } else { nil } }
      guard allowed.contains(where: { typeCodes($0)?.contains(value.type.rawValue) == true }) else {
        found.append(Violation(path: path, expected: allowed.joined(separator: " or "), found: describe(value)))
        return
      }
    } else if case .string(let name)? = schema["bsonType"] ?? nil {
      guard typeCodes(name)?.contains(value.type.rawValue) == true else {
        found.append(Violation(path: path, expected: name, found: describe(value)))
        return
      }
    }
    func join(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }
    switch value {
    case .document(let document):
      if case .array(let required)? = schema["required"] ?? nil {
        for case .string(let name) in required where document.value(forKey: name) == nil {
          found.append(Violation(path: join(name), expected: "a value (required)", found: "nothing"))
        }
      }
      let properties: Document? = if case .document(let p)? = schema["properties"] ?? nil { p } else { nil }
      for element in document {
        if let properties, case .document(let inner)? = properties.value(forKey: element.key) {
          check(element.value, against: inner, path: join(element.key), into: &found)
        } else if case .document(let inner)? = schema["additionalProperties"] ?? nil {
          check(element.value, against: inner, path: join(element.key), into: &found)
        } else if case .bool(false)? = schema["additionalProperties"] ?? nil {
          found.append(Violation(path: join(element.key), expected: "no such field", found: describe(element.value)))
        }
      }
    case .array(let array):
      if case .document(let items)? = schema["items"] ?? nil {
        for (index, element) in array.enumerated() {
          check(element, against: items, path: join(String(index)), into: &found)
        }
      }
      if case .bool(true)? = schema["uniqueItems"] ?? nil {
        let values = Array(array)
        for (index, element) in values.enumerated()
        where values[..<index].contains(where: { compareBSON($0, element) == 0 }) {
          found.append(
            Violation(
              path: join(String(index)), expected: "unique items",
              found: "a repeat of \(element.extendedJSON(.relaxed))"))
        }
      }
    default: break
    }
  }

  private static func describe(_ value: BSON) -> String {
    let text = value.extendedJSON(.relaxed)
    return "\(value.type.name) \(text.count > 40 ? String(text.prefix(40)) + "…" : text)"
  }
}
