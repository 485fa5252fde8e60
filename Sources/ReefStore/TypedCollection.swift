import ReefBSON
import ReefQuery

/// A collection of Codable values: the same operations, with values encoded by `BSONEncoder`
/// and decoded by `BSONDecoder`.
public struct TypedCollection<Value: Codable>: Sendable {
  /// The underlying document collection.
  public let collection: DocumentCollection

  /// Inserts a value; returns its `_id`.
  @discardableResult
  public func insert(_ value: Value) throws -> BSON { try collection.insert(BSONEncoder().encode(value)) }

  /// The values whose documents match `filter`.
  public func find(_ filter: Document = Document(), options: FindOptions = FindOptions()) throws -> [Value] {
    let decoder = BSONDecoder()
    return try collection.find(filter, options: options).toArray().map { try decoder.decode(Value.self, from: $0) }
  }

  /// The values whose documents match a Realm-style predicate.
  public func find(predicate: String, arguments: [BSON] = []) throws -> [Value] {
    let decoder = BSONDecoder()
    return try collection.find(predicate: predicate, arguments: arguments).toArray().map {
      try decoder.decode(Value.self, from: $0)
    }
  }

  /// The first matching value.
  public func findOne(_ filter: Document = Document()) throws -> Value? {
    try collection.findOne(filter).map { try BSONDecoder().decode(Value.self, from: $0) }
  }

  /// Replaces the first matching document with the value's encoding.
  @discardableResult
  public func replaceOne(_ filter: Document, with value: Value, upsert: Bool = false) throws -> UpdateResult {
    try collection.replaceOne(filter, with: BSONEncoder().encode(value), upsert: upsert)
  }

  /// See ``DocumentCollection/count(_:)``.
  public func count(_ filter: Document = Document()) throws -> Int { try collection.count(filter) }

  /// See ``DocumentCollection/deleteMany(_:)``.
  @discardableResult
  public func deleteMany(_ filter: Document) throws -> Int { try collection.deleteMany(filter) }
}
