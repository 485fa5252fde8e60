import ReefBSON
import ReefStore

extension InferredModels {
  /// The shapes of a store's collections, from every document, in name order.
  /// - Parameters:
  ///   - store: the store.
  ///   - collections: only these collections (all when nil).
  /// - Throws: ``StoreError`` when a collection cannot be read (a damaged document).
  /// - Complexity: O(n) in the size of the documents.
  public static func shapes(of store: Store, collections: [String]? = nil) throws -> [(
    name: String, shape: DocumentShape
  )] {
    try store.read { transaction in
      var result: [(name: String, shape: DocumentShape)] = []
      let names = try transaction.collectionNames()
      for name in collections ?? names {
        guard names.contains(name) else {
          throw StoreError(.namespace, "the store has no collection \(name)")
        }
        let shape = DocumentShape()
        try transaction.collection(name).forEach { document in
          shape.add(document)
          return true
        }
        result.append((name, shape))
      }
      return result
    }
  }

  /// The shapes of a dump's namespaces (a mongodump directory, a `.bson` or `.bson.gz` file, an
  /// archive, or Extended JSON), named as `reef import` names their collections (`db.coll`, or
  /// a single file's name), empty ones included.
  /// - Parameters:
  ///   - path: the dump.
  ///   - collections: only these collections (all when nil).
  /// - Throws: ``BSONError`` when the dump cannot be read.
  /// - Complexity: O(n) in the size of the dump; memory O(shape).
  public static func shapes(ofDump path: String, collections: [String]? = nil) throws(BSONError) -> [(
    name: String, shape: DocumentShape
  )] {
    let source = try DumpSource(path: path)
    var shapes: [String: DocumentShape] = [:]
    var order: [String] = []
    func shape(_ namespace: Namespace) -> DocumentShape? {
      let name = namespace.dotted
      if let collections, !collections.contains(name) { return nil }
      if let known = shapes[name] { return known }
      let made = DocumentShape()
      shapes[name] = made
      order.append(name)
      return made
    }
    for (namespace, _) in try source.prelude() { _ = shape(namespace) }
    while let (namespace, document) = try source.nextArchiveDocument() { shape(namespace)?.add(document) }
    if let collections, let missing = collections.first(where: { shapes[$0] == nil }) {
      throw BSONError(.invalidValue, "\(path) has no collection \(missing)")
    }
    return order.map { ($0, shapes[$0]!) }
  }
}
