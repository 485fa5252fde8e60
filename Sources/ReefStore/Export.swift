import ReefBSON

/// How far an export has got, reported after each collection and every 1,000 documents.
public struct ExportProgress: Sendable {
  /// Documents written so far.
  public var documents: Int
  /// Documents to write in all (counted in the export's snapshot).
  public var totalDocuments: Int
  /// The collection being written.
  public var collection: String
}

/// What an export wrote.
public struct ExportReport: Sendable {
  /// One collection written.
  public struct Entry: Sendable, Hashable {
    /// The collection's name in the store.
    public var collection: String
    /// The namespace it was written as (its database empty when the writer's default applies).
    public var namespace: Namespace
    /// Documents written.
    public var documents: Int
    /// Indexes in its metadata, the `_id` index included.
    public var indexes: Int
  }
  /// The collections, in the order written.
  public var entries: [Entry] = []
  /// Documents written in all.
  public var documents = 0
}

extension Store {
  /// Writes collections to a dump (directory, `.bson`, archive, Extended JSON), as mongodump
  /// would, from one read transaction: a consistent snapshot, streamed one document at a time.
  ///
  /// A collection named `db.coll` is written as the namespace `db.coll` (split at the first
  /// dot); a name without a dot as a namespace without a database, which the writer puts under
  /// its ``DumpWriter/defaultDatabase``. So importing the dump again gives the same names. Its
  /// metadata holds its indexes (the `_id` index first, then the others, as `listIndexes`
  /// gives them) and its UUID. A collection that does not exist is written as an empty one (as
  /// MongoDB reads it). Documents are written in `_id` order, byte for byte as stored.
  ///
  /// The writer is closed at the end (for an archive, that is when the file is written).
  /// - Parameters:
  ///   - writer: where to write; it must not have been written to.
  ///   - collections: the collections to export, in this order; `nil` for all, sorted by name.
  ///   - progress: called after each collection and every 1,000 documents, on this thread.
  /// - Returns: what was written.
  /// - Throws: ``BSONError`` from the writer (I/O, a second collection for a single file),
  ///   ``StoreError`` from the store.
  /// - Complexity: O(n) in the documents; memory is one document (and the store's pages read,
  ///   released whenever they pass 64 MB: ``releaseMappedPages(ifMappedMemoryExceeds:)``).
  @discardableResult
  public func exportDump(
    to writer: DumpWriter, collections: [String]? = nil, progress: ((ExportProgress) -> Void)? = nil
  ) throws -> ExportReport {
    var report = ExportReport()
    try read { transaction in
      let names = try collections ?? transaction.collectionNames()
      var total = 0
      for name in names { total += try transaction.collection(name).count() }
      for name in names {
        let collection = transaction.collection(name)
        let namespace = Namespace(name) ?? Namespace(database: "", collection: name)
        var indexes = try collection.listIndexes()
        if indexes.isEmpty { indexes = [IndexSpecification.primary] }
        var options = Document()
        if let schema = try transaction.jsonSchema(forCollection: name) {
          options = ["validator": ["$jsonSchema": .document(schema)]]
        }
        let metadata = CollectionMetadata(indexes: indexes, uuid: try collection.uuid(), options: options)
        try writer.beginNamespace(namespace, metadata: metadata)
        var count = 0
        try collection.forEach { document in
          try writer.write(document)
          count += 1
          if count % 256 == 0 { releaseMappedPages(ifMappedMemoryExceeds: Store.mappedMemoryLimit) }
          if count % 1000 == 0 {
            progress?(
              ExportProgress(documents: report.documents + count, totalDocuments: total, collection: name))
          }
          return true
        }
        try writer.endNamespace()
        report.documents += count
        report.entries.append(
          ExportReport.Entry(collection: name, namespace: namespace, documents: count, indexes: indexes.count))
        progress?(ExportProgress(documents: report.documents, totalDocuments: total, collection: name))
      }
    }
    try writer.close()
    return report
  }
}
