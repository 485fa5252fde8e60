import CLMDB
import ReefBSON
import ReefQuery

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension Store {
  /// Begins a read transaction that stays open until ``Transaction/end()``: a snapshot for
  /// callers that read across calls (the object layer's live objects read through one).
  ///
  /// The transaction belongs to the calling thread; end it on that thread. While it is open,
  /// the pages of its snapshot cannot be reused, so a snapshot held for long makes the file grow
  /// under writes: end it, or begin a new one, when the reader wants newer data.
  public func beginRead() throws(StoreError) -> Transaction {
    try Transaction(store: self, readOnly: true)
  }

  /// Begins the write transaction and returns it, for callers whose writes do not fit in one
  /// closure (``write(_:)`` is the closure form). It waits for any other writer, in any process.
  ///
  /// End it with ``Transaction/commit()`` or ``Transaction/rollback()`` on the same thread; a
  /// transaction dropped without either is rolled back.
  /// - Throws: ``StoreError/Kind/readOnly`` for a read-only store; what beginning LMDB's
  ///   transaction throws.
  public func beginWrite() throws(StoreError) -> Transaction {
    guard !options.readOnly else { throw StoreError(.readOnly, "the store \(path) is open read-only") }
    let ticket = writeWatch?.begin()
    writeLock.lock()
    defer { if let ticket { writeWatch?.end(ticket) } }
    return try beginWriteHoldingLock()
  }

  /// Begins the write transaction, this process's write lock held (the transaction lets go of
  /// it when it ends); lets go of the lock when it cannot begin.
  func beginWriteHoldingLock() throws(StoreError) -> Transaction {
    do {
      try growMapIfNeeded()
      let transaction = try Transaction(store: self, readOnly: false)
      transaction.ownsWriteLock = true
      return transaction
    } catch {
      writeLock.unlock()
      throw error
    }
  }
}

extension Transaction {
  /// Commits a write transaction begun with ``Store/beginWrite()`` with the store's durability;
  /// ends a read transaction begun with ``Store/beginRead()``.
  ///
  /// Calling it on a transaction that has ended does nothing.
  /// - Throws: what the commit throws; the transaction has then been rolled back.
  public func commit() throws(StoreError) {
    try commit(durability: store.options.durability)
  }

  /// ``commit()`` with `durability` for this transaction instead of the store's (as
  /// ``Store/write(durability:_:)``): for example ``Durability/normal`` for commits that a
  /// later ``Store/sync()`` makes durable together.
  public func commit(durability: Durability) throws(StoreError) {
    defer { releaseWriteLock() }
    if isReadOnly {
      finish(commit: true)
    } else {
      try commitTransaction(durability: durability)
    }
  }

  /// Rolls back a write transaction begun with ``Store/beginWrite()``: nothing it wrote is
  /// kept. Ends a read transaction. Calling it on a transaction that has ended does nothing.
  public func rollback() {
    finish(commit: false)
    releaseWriteLock()
  }

  /// Ends a read transaction begun with ``Store/beginRead()`` (the same as ``rollback()``).
  public func end() { rollback() }

  /// Whether the transaction has ended (committed, rolled back or ended).
  public var hasEnded: Bool { isFinished }

  func releaseWriteLock() {
    guard ownsWriteLock else { return }
    ownsWriteLock = false
    store.writeLock.unlock()
  }
}

extension Transaction {
  /// The key under which ``metadata(forKey:)`` stores `key` in the store's own table.
  private static func metadataKey(_ key: String) -> [UInt8] { Array("app:\(key)".utf8) }

  /// A document stored with ``setMetadata(_:forKey:)``, or nil.
  ///
  /// Metadata lives in the store's own table, beside its collections: the object layer keeps
  /// its schema there.
  public func metadata(forKey key: String) throws(StoreError) -> Document? {
    guard let metaDB = try database(Transaction.metaName, create: false),
      let bytes = try lmdb.get(metaDB, Self.metadataKey(key))
    else { return nil }
    do {
      return try Document(bytes: bytes)
    } catch {
      throw StoreError(.corrupt, "the metadata \"\(key)\" of \(store.path) is damaged: \(error)")
    }
  }

  /// Stores `document` under `key` in the store's own table, or removes the key when `document`
  /// is nil.
  /// - Throws: ``StoreError/Kind/readOnly`` in a read transaction.
  public func setMetadata(_ document: Document?, forKey key: String) throws(StoreError) {
    try requireWritable()
    let metaDB = try database(Transaction.metaName, create: true)!
    if let document {
      try lmdb.put(metaDB, Self.metadataKey(key), document.bytes)
    } else if try lmdb.get(metaDB, Self.metadataKey(key)) != nil {
      try lmdb.delete(metaDB, Self.metadataKey(key))
    }
  }

  /// The keys stored with ``setMetadata(_:forKey:)`` that start with `prefix`, in byte order.
  public func metadataKeys(withPrefix prefix: String = "") throws(StoreError) -> [String] {
    guard let metaDB = try database(Transaction.metaName, create: false) else { return [] }
    let start = Self.metadataKey(prefix)
    var keys: [String] = []
    try lmdb.scan(metaDB, from: start) { key, _ throws(StoreError) in
      guard key.starts(with: start) else { return false }
      keys.append(String(decoding: key.dropFirst(4), as: UTF8.self))
      return true
    }
    return keys
  }
}

extension TransactionCollection {
  /// Replaces the document whose `_id` is `id` with `document` (which gets that `_id`, first);
  /// returns false, writing nothing, when there is none. Indexes are kept up to date.
  ///
  /// The point form of ``replaceOne(_:with:upsert:)``, without a filter to compile.
  /// - Throws: ``StoreError/Kind/invalidDocument`` for a document that cannot be stored, or one
  ///   whose `_id` differs from `id`; ``StoreError/Kind/duplicateKey`` for a unique index.
  @discardableResult
  public func replaceDocument(forID id: BSON, with document: Document) throws(StoreError) -> Bool {
    try transaction.requireWritable()
    guard let old = try self.document(forID: id) else { return false }
    if let newID = document["_id"], compareBSON(newID, id) != 0 {
      throw StoreError(.invalidDocument, "replacing a document cannot change its _id (from \(id) to \(newID))")
    }
    var info = try transaction.info(name, create: true)!
    let (stored, _) = try prepare(document["_id"] == nil ? withID(document, id) : document)
    if stored == old { return true }
    try put(stored, id: id, info: &info, replacing: old)
    try transaction.noteChange(&info)
    return true
  }

  /// Deletes the document whose `_id` is `id`; returns whether there was one.
  @discardableResult
  public func deleteDocument(forID id: BSON) throws(StoreError) -> Bool {
    try transaction.requireWritable()
    guard var info = try transaction.info(name, create: false),
      let documentsDB = try transaction.documentsDatabase(info, create: false),
      let old = try document(forID: id)
    else { return false }
    let primaryKey = KeyEncoding.encode([id])
    try lmdb.delete(documentsDB, primaryKey)
    try removeIndexEntries(old, primaryKey: primaryKey, info: info)
    transaction.recordChange(name, id: old["_id"] ?? id, old: old, new: nil)
    try transaction.noteChange(&info)
    return true
  }
}

extension Transaction {
  private static let schemaPrefix = "schema:"

  /// The MongoDB JSON Schema stored for a collection (the object layer stores one per object
  /// type), or nil.
  public func jsonSchema(forCollection name: String) throws(StoreError) -> Document? {
    try metadata(forKey: Self.schemaPrefix + name)
  }

  /// Stores a collection's JSON Schema (nil removes it). `reef export` writes it into the
  /// collection's `metadata.json` as its `validator`, so that `mongorestore` creates a validated
  /// collection.
  public func setJSONSchema(_ schema: Document?, forCollection name: String) throws(StoreError) {
    try setMetadata(schema, forKey: Self.schemaPrefix + name)
  }

  /// The collections that have a stored JSON Schema, with it, sorted by name.
  public func jsonSchemas() throws(StoreError) -> [(collection: String, schema: Document)] {
    var result: [(collection: String, schema: Document)] = []
    for key in try metadataKeys(withPrefix: Self.schemaPrefix) {
      let name = String(key.dropFirst(Self.schemaPrefix.count))
      if let schema = try metadata(forKey: key) { result.append((name, schema)) }
    }
    return result
  }
}

extension Store {
  /// Writes a copy of the store, as of its latest commit, to a new file at `path` (which must
  /// not exist). The copy opens as a store of its own; writers go on while it is made.
  /// - Throws: ``StoreError/Kind/open`` when `path` exists; ``StoreError/Kind/storage`` for
  ///   LMDB's errors.
  public func writeCopy(to path: String) throws(StoreError) {
    guard !Store.files(at: path).contains(where: { FileSystemCheck.exists($0) }) else {
      var error = StoreError(.open, "cannot copy the store to \(path): a file is there already")
      error.systemErrorNumber = EEXIST
      throw error
    }
    let code = mdb_env_copy2(environment, path, 0)
    guard code == 0 else {
      var error = StoreError(
        .storage, "copying the store \(self.path) to \(path): \(String(cString: mdb_strerror(code)))")
      if code > 0 { error.systemErrorNumber = code }
      throw error
    }
  }
}

/// Whether a path exists, without Foundation.
enum FileSystemCheck {
  static func exists(_ path: String) -> Bool {
    var status = stat()
    return stat(path, &status) == 0
  }
}
