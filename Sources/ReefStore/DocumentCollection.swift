import ReefBSON
import ReefQuery

/// A named collection of a store. Each call runs in a transaction of its own: reads in a read
/// transaction, writes in the write transaction. To group several calls atomically, use
/// ``Store/write(_:)`` and ``Transaction/collection(_:)``.
public struct DocumentCollection: Sendable {
  let store: Store
  /// The collection's name.
  public let name: String

  func reading<R>(_ body: (TransactionCollection) throws -> R) throws -> R {
    try store.read { transaction in try body(transaction.collection(name)) }
  }

  func writing<R>(_ body: (TransactionCollection) throws -> R) throws -> R {
    try store.write { transaction in try body(transaction.collection(name)) }
  }

  /// The documents that match `filter`, after sort, skip, limit and projection, read one at a
  /// time from one snapshot (see ``Cursor``).
  ///
  /// The cursor holds a read transaction of its own until its last result is read, it is
  /// closed, or it is released: read it to the end or close it, since a snapshot held long
  /// keeps the file from reusing pages that later writes free.
  /// - Parameters:
  ///   - filter: a MongoDB filter document; every document by default.
  ///   - options: sort, skip, limit, projection, and the memory of a sort.
  /// - Throws: ``StoreError/Kind/invalidQuery`` when the filter does not compile; LMDB's errors.
  /// - Complexity: O(1) until the first result is read (see ``TransactionCollection/find(_:options:)``).
  public func find(_ filter: Document = Document(), options: FindOptions = FindOptions()) throws(StoreError) -> Cursor {
    try cursor(options: options) { (collection) throws(StoreError) in try collection.compile(filter) }
  }

  /// The documents that match a Realm-style predicate, with its SORT, DISTINCT and LIMIT, read
  /// one at a time from one snapshot (see ``find(_:options:)``).
  /// - Throws: ``StoreError/Kind/invalidQuery`` when the predicate does not compile.
  public func find(predicate: String, arguments: [BSON] = [], options: FindOptions = FindOptions()) throws(StoreError)
    -> Cursor
  {
    try cursor(options: options) { (collection) throws(StoreError) in
      try collection.compile(predicate: predicate, arguments: arguments)
    }
  }

  /// The documents that match a compiled query, with its own SORT, DISTINCT and LIMIT and then
  /// the options, read one at a time from one snapshot (see ``find(_:options:)``).
  public func find(_ query: Query, options: FindOptions = FindOptions()) throws(StoreError) -> Cursor {
    try cursor(options: options) { _ in query }
  }

  /// A cursor that holds a read transaction of its own.
  private func cursor(options: FindOptions, _ query: (TransactionCollection) throws(StoreError) -> Query)
    throws(StoreError) -> Cursor
  {
    let transaction = try Transaction(store: store, readOnly: true)
    do {
      let collection = transaction.collection(name)
      return try Cursor(collection, query: query(collection), options: options, ownsTransaction: true)
    } catch {
      transaction.finish(commit: true)
      throw error
    }
  }

  /// See ``TransactionCollection/document(forID:)``.
  public func document(forID id: BSON) throws -> Document? { try reading { try $0.document(forID: id) } }

  /// See ``TransactionCollection/findOne(_:sort:)``.
  public func findOne(_ filter: Document = Document(), sort: SortSpecification? = nil) throws -> Document? {
    try reading { try $0.findOne(filter, sort: sort) }
  }

  /// See ``TransactionCollection/count(_:)``.
  public func count(_ filter: Document = Document()) throws -> Int { try reading { try $0.count(filter) } }

  /// See ``TransactionCollection/distinct(_:filter:)``.
  public func distinct(_ key: String, filter: Document = Document()) throws -> [BSON] {
    try reading { try $0.distinct(key, filter: filter) }
  }

  /// See ``TransactionCollection/explain(_:options:)``.
  public func explain(_ filter: Document = Document(), options: FindOptions = FindOptions()) throws -> Explain {
    try reading { try $0.explain(filter, options: options) }
  }

  /// See ``TransactionCollection/listIndexes()``.
  public func listIndexes() throws -> [Document] { try reading { try $0.listIndexes() } }

  /// See ``TransactionCollection/insert(_:)``.
  @discardableResult
  public func insert(_ document: Document) throws -> BSON { try writing { try $0.insert(document) } }

  /// Inserts documents in one transaction: all of them or, on the first error, none.
  @discardableResult
  public func insertMany(_ documents: [Document]) throws -> [BSON] { try writing { try $0.insertMany(documents) } }

  /// See ``TransactionCollection/replaceOne(_:with:upsert:)``.
  @discardableResult
  public func replaceOne(_ filter: Document, with replacement: Document, upsert: Bool = false) throws -> UpdateResult {
    try writing { try $0.replaceOne(filter, with: replacement, upsert: upsert) }
  }

  /// See ``TransactionCollection/updateOne(_:_:upsert:arrayFilters:)``.
  @discardableResult
  public func updateOne(_ filter: Document, _ update: Document, upsert: Bool = false, arrayFilters: [Document] = [])
    throws -> UpdateResult
  {
    try writing { try $0.updateOne(filter, update, upsert: upsert, arrayFilters: arrayFilters) }
  }

  /// See ``TransactionCollection/updateMany(_:_:upsert:arrayFilters:)``.
  @discardableResult
  public func updateMany(_ filter: Document, _ update: Document, upsert: Bool = false, arrayFilters: [Document] = [])
    throws -> UpdateResult
  {
    try writing { try $0.updateMany(filter, update, upsert: upsert, arrayFilters: arrayFilters) }
  }

  /// See ``TransactionCollection/deleteOne(_:)``.
  @discardableResult
  public func deleteOne(_ filter: Document) throws -> Int { try writing { try $0.deleteOne(filter) } }

  /// See ``TransactionCollection/deleteMany(_:)``.
  @discardableResult
  public func deleteMany(_ filter: Document) throws -> Int { try writing { try $0.deleteMany(filter) } }

  /// See ``TransactionCollection/drop()``.
  @discardableResult
  public func drop() throws -> Bool { try writing { try $0.drop() } }

  /// See ``TransactionCollection/createIndex(_:name:unique:sparse:)``.
  public func createIndex(_ keys: Document, name: String? = nil, unique: Bool = false, sparse: Bool = false) throws {
    try writing { try $0.createIndex(keys, name: name, unique: unique, sparse: sparse) }
  }

  /// See ``TransactionCollection/dropIndex(_:)``.
  @discardableResult
  public func dropIndex(_ name: String) throws -> Bool { try writing { try $0.dropIndex(name) } }
}
