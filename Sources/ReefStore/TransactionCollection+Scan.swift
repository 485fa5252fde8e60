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
  /// - Throws: ``StoreError`` when the filter does not compile or a stored document is damaged
  ///   (its checksum, or its place: keys out of order, an `_id` other than its key:
  ///   ``StoreError/Kind/corrupt``, naming the collection and the position);
  ///   whatever `body` throws, which stops the visit.
  /// - Complexity: O(*n*) in the collection's documents.
  public func forEach(_ filter: Document = Document(), _ body: (Document) throws -> Bool) throws {
    let query = try compile(filter)
    guard let info = try transaction.info(name, create: false),
      let documentsDB = try transaction.documentsDatabase(info, create: false)
    else { return }
    var failure: (any Error)?
    let check = DocumentScanCheck(collection: name)
    try lmdb.scan(documentsDB) { key, bytes throws(StoreError) in
      let bson = try check.document(key: key, value: bytes)
      guard query.matches(trustedBytes: bson) else { return true }
      do {
        return try body(Document(trustedBytesNoCopy: bson, owner: nil))
      } catch {
        failure = error
        return false
      }
    }
    if let failure { throw failure }
  }
}
