/// The object types of a ``Reef``, as Realm's `Schema` (what `realm.schema` returns): each
/// type's ``ObjectSchema``, by class name.
///
/// ```swift
/// let dog = reef.schema["Dog"]!
/// print(dog.properties.map(\.name), dog.primaryKeyProperty?.name ?? "no primary key")
/// ```
/// Linux has no list of a program's classes, so a schema holds the types known to the process
/// (see ``Reef/schema``). Each type's MongoDB JSON Schema is ``Reef/jsonSchema``.
public struct Schema: CustomStringConvertible, Equatable, @unchecked Sendable {
  /// The object schemas, by class name in alphabetical order.
  public let objectSchema: [ObjectSchema]

  init(_ schemas: [ObjectSchema]) {
    var seen = Set<ObjectIdentifier>()
    objectSchema = schemas.filter { seen.insert(ObjectIdentifier($0.objectClass)).inserted }
      .sorted { $0.className < $1.className }
  }

  /// The schema of the type named `className`, or nil when there is none.
  ///
  /// - Complexity: O(n) in the number of types.
  public subscript(className: String) -> ObjectSchema? {
    objectSchema.first { $0.className == className }
  }

  /// Realm's form: each type's description, indented by a tab.
  public var description: String {
    var text = "Schema {\n"
    for schema in objectSchema {
      text += "\t" + schema.description.replacingOccurrences(of: "\n", with: "\n\t") + "\n"
    }
    return text + "}"
  }

  /// Whether both hold the same types, alike.
  public static func == (a: Schema, b: Schema) -> Bool { a.objectSchema == b.objectSchema }
}

extension Reef {
  /// The object types of this `Reef`, as Realm's `realm.schema`: with
  /// ``Configuration/objectTypes``, those types and the types they link to or embed; without,
  /// every model type the process has used so far (Realm lists every `Object` subclass of the
  /// program, which Linux cannot enumerate) and every type this `Reef` has set up. A type the
  /// schema check refuses is not listed.
  ///
  /// Each type's MongoDB JSON Schema (what `reef export` writes) is ``jsonSchema``.
  ///
  /// - Complexity: O(n log n) in the number of types known.
  public var schema: Schema {
    let candidates: [ObjectSchema]
    if let objectTypes = configuration.objectTypes {
      candidates = objectTypes.map(ObjectSchema.of).flatMap(SchemaCheck.reachable)
    } else {
      // Reef's own DynamicObject is not a model; the base classes are left out below.
      let made = ObjectBase.madeClasses.filter { $0 != DynamicObject.self }.map(ObjectSchema.of)
      candidates = registeredSchemas + ObjectSchema.known + made
    }
    return Schema(candidates.filter(Reef.isModelSchema))
  }

  /// Whether a schema is a model's: not one of the base classes, and kept by the schema check.
  private static func isModelSchema(_ schema: ObjectSchema) -> Bool {
    let base: [ObjectBase.Type] = [ObjectBase.self, Object.self, EmbeddedObject.self]
    if base.contains(where: { $0 == schema.objectClass }) { return false }
    do {
      try SchemaCheck.check([schema])
      return true
    } catch {
      return false
    }
  }
}

extension ObjectBase {
  /// The schema of this class, as Realm's `sharedSchema()`: the same as an instance's
  /// ``objectSchema``; nil for the base classes (`Object`, `EmbeddedObject`).
  public class func sharedSchema() -> ObjectSchema? {
    if self == ObjectBase.self || self == Object.self || self == EmbeddedObject.self { return nil }
    return ObjectSchema.of(self)
  }
}

extension PropertyType {
  /// Realm's spelling of ``uuid``.
  public static var UUID: PropertyType { .uuid }
}
