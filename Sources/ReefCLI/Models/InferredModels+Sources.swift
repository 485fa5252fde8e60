import ReefBSON
import ReefStore

extension InferredModels {
  /// The shapes of a store's collections, from every document, in name order, each with the
  /// JSON Schema the store keeps for it (a ReefSwift type's), if any.
  /// - Parameters:
  ///   - store: the store.
  ///   - collections: only these collections (all when nil).
  /// - Throws: ``StoreError`` when a collection cannot be read (a damaged document), or of kind
  ///   `.namespace` for a collection the store does not have.
  /// - Complexity: O(n) in the size of the documents.
  public static func collections(of store: Store, only collections: [String]? = nil) throws -> [CollectionSample] {
    try store.read { transaction in
      var result: [CollectionSample] = []
      let names = try transaction.collectionNames()
      var schemas: [String: Document] = [:]
      for (name, schema) in try transaction.jsonSchemas() { schemas[name] = schema }
      for name in collections ?? names {
        guard names.contains(name) else {
          throw StoreError(.namespace, "the store has no collection \(name)")
        }
        let shape = DocumentShape()
        try transaction.collection(name).forEach { document in
          shape.add(document)
          return true
        }
        result.append(CollectionSample(name: name, shape: shape, schema: schemas[name]))
      }
      return result
    }
  }

  /// The shapes of a dump's namespaces (a mongodump directory, a `.bson` or `.bson.gz` file, an
  /// archive, or Extended JSON), named as `reef import` names their collections (`db.coll`, or
  /// a single file's name), empty ones included, each with the JSON Schema of its metadata's
  /// validator (`options.validator.$jsonSchema`), if any.
  /// - Parameters:
  ///   - path: the dump.
  ///   - collections: only these collections (all when nil).
  /// - Throws: ``BSONError`` when the dump cannot be read, or of kind `.invalidValue` for a
  ///   collection it does not have.
  /// - Complexity: O(n) in the size of the dump; memory O(shape).
  public static func collections(ofDump path: String, only collections: [String]? = nil) throws(BSONError)
    -> [CollectionSample]
  {
    let source = try DumpSource(path: path)
    var found: [String: CollectionSample] = [:]
    var order: [String] = []
    func shape(_ namespace: Namespace, _ metadata: CollectionMetadata?) -> DocumentShape? {
      let name = namespace.dotted
      if let collections, !collections.contains(name) { return nil }
      if let known = found[name] { return known.shape }
      var schema: Document?
      if case .document(let validator)? = metadata?.options["validator"],
        case .document(let jsonSchema)? = validator["$jsonSchema"]
      {
        schema = jsonSchema
      }
      let made = CollectionSample(name: name, shape: DocumentShape(), schema: schema)
      found[name] = made
      order.append(name)
      return made.shape
    }
    for (namespace, metadata) in try source.prelude() { _ = shape(namespace, metadata) }
    while let (namespace, document) = try source.nextArchiveDocument() { shape(namespace, nil)?.add(document) }
    if let collections, let missing = collections.first(where: { found[$0] == nil }) {
      throw BSONError(.invalidValue, "\(path) has no collection \(missing)")
    }
    return order.map { found[$0]! }
  }
}
