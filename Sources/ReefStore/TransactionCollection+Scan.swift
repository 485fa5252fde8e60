import CLMDB
@_spi(ReefInternal) import ReefBSON
@_spi(ReefInternal) import ReefQuery

extension TransactionCollection {
  /// Visits the documents that match `filter` one at a time, in `_id` order, without collecting
  /// them, so memory stays flat whatever the size of the collection (an export streams this way).
  ///
  /// ```swift
  /// try store.read { transaction in
  ///   try transaction.collection("contacts").forEach { document in
  ///     try writer.write(document)
  ///     return true
  ///   }
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - filter: Which documents to visit; the whole collection by default.
  ///   - body: Called with each matching document, a view of the store's memory map that is
  ///     valid only during the call (keep it with `copied()`). Returns `false`
  ///     to stop.
  /// - Throws: ``StoreError`` when the filter does not compile or a stored document is damaged;
  ///   whatever `body` throws, which stops the visit.
  /// - Complexity: O(*n*) in the collection's documents.
  public func forEach(_ filter: Document = Document(), _ body: (Document) throws -> Bool) throws {
    let query = try compile(filter)
    guard let info = try transaction.info(name, create: false),
      let documentsDB = try transaction.documentsDatabase(info, create: false)
    else { return }
    var scan = try DocumentScan(self, documentsDB)
    defer { scan.close() }
    while let (_, bson) = try scan.next() {
      guard try query.storedMatches(bson) else { continue }
      guard try body(Document(trustedBytesNoCopy: bson, owner: nil)) else { return }
    }
  }
}

/// One pass over a collection's stored documents in `_id` (key) order, through one
/// ``LMDBCursor``: each value's checksum is verified before its BSON is returned.
///
/// Every scan of a collection's documents reads through ``next()`` (queries that scan,
/// ``TransactionCollection/forEach(_:_:)``, building an index), so a check of each stored document
/// (keys in increasing order, the `_id` matching the key) belongs there, in one place.
struct DocumentScan {
  let collection: TransactionCollection
  private let cursor: LMDBCursor
  /// Each entry's checksum, its key's order and its `_id` against its key.
  private let check: DocumentScanCheck

  /// A scan of the documents database `documentsDB` of `collection`, from its first document.
  init(_ collection: TransactionCollection, _ documentsDB: MDB_dbi) throws(StoreError) {
    self.collection = collection
    check = DocumentScanCheck(collection: collection.name)
    cursor = try LMDBCursor(collection.lmdb, documentsDB)
    try cursor.seek(nil)
  }

  /// The next stored document: its primary key and its verified BSON, views of the map valid
  /// until the transaction ends (or, in a write transaction, the collection changes).
  /// - Throws: ``StoreError/Kind/corrupt`` for a value that fails its checksum, a key that does
  ///   not follow the one before, or a document whose `_id` is not its key (``DocumentScanCheck``).
  @inline(__always)
  mutating func next() throws(StoreError) -> (primaryKey: UnsafeRawBufferPointer, bson: UnsafeRawBufferPointer)? {
    guard let (key, value) = try cursor.next() else { return nil }
    return (key, try check.document(key: key, value: value))
  }

  /// Closes the cursor (before a write transaction ends; a read transaction's may also be closed after).
  func close() { cursor.close() }
}
