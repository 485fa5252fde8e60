import ReefBSON
import ReefQuery
import ReefStore

/// A stored document that does not fit its object type: what ``Reef/validate(_:)`` lists.
public struct SchemaViolation: Hashable, Sendable, CustomStringConvertible {
  /// The collection (the object type's name).
  public var collection: String
  /// The document's `_id`.
  public var id: BSON
  /// The dotted path of the field (`address.city`, `addresses.1.city`).
  public var field: String
  /// The type the schema asks for.
  public var expected: String
  /// What the document holds.
  public var found: String

  public var description: String {
    "\(collection) _id \(id.extendedJSON(.relaxed)): \(field): expected \(expected), found \(found)"
  }
}

extension Reef {
  /// Every stored document of the given types (by default, every type this `Reef` has used)
  /// that does not fit its type: data imported from a dump opens as objects only where it fits.
  ///
  /// Reading a field that does not fit stops the program with the same message, so
  /// validate data from elsewhere first.
  /// - Complexity: a scan of each type's collection.
  public func validate(_ types: [Object.Type]? = nil) throws -> [SchemaViolation] {
    checkThread()
    let schemas = try (types ?? []).map { (type) throws(ReefError) in try register(type) }
    let checked = types == nil ? registeredSchemas.filter { !$0.isEmbedded } : schemas
    var violations: [SchemaViolation] = []
    for schema in checked.sorted(by: { $0.className < $1.className }) {
      let jsonSchema = try ReefQuery.JSONSchema(ObjectJSONSchema.document(for: schema))
      try storeCall { () throws(StoreError) in
        let cursor = try transaction().collection(schema.className).find()
        while let document = try cursor.next() {
          for violation in jsonSchema.violations(in: document) {
            violations.append(
              SchemaViolation(
                collection: schema.className, id: document["_id"] ?? .null, field: violation.path,
                expected: violation.expected, found: violation.found))
          }
        }
      }
    }
    return violations
  }
}
