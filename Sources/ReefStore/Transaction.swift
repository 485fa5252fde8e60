import CLMDB
import ReefBSON
import ReefQuery

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A read or write transaction on a store. Get one from ``Store/read(_:)`` or
/// ``Store/write(_:)``; it is valid only inside that closure and on that thread.
public final class Transaction {
  let store: Store
  let lmdb: LMDBTransaction
  /// Whether the transaction is read-only.
  public var isReadOnly: Bool { lmdb.readOnly }
  private var finished = false
  /// Whether the transaction has ended (committed, rolled back, or its read closure returned).
  var isFinished: Bool { finished }
  /// Catalog entries read or written in this transaction.
  var catalog: [String: CollectionInfo] = [:]
  /// A read transaction's last catalog entry: a snapshot's entries do not change, and a loop of
  /// point reads on one collection then looks it up once, without a table.
  private var lastReadEntry: (name: String, info: CollectionInfo)?
  /// Whether ending the transaction unlocks the store's write lock (``Store/beginWrite()``).
  var ownsWriteLock = false
  /// The documents this write transaction changed, for the change feed (made at the first).
  var changeRecorder: ChangeRecorder?

  init(store: Store, readOnly: Bool) throws(StoreError) {
    self.store = store
    // Readers begin under the store's begin lock so that the map never grows under them; a
    // writer already holds the write lock, under which the map grows.
    if readOnly { store.log?.releaseStalePin(writeLock: store.writeLock) }
    let begin = { () throws(StoreError) -> LMDBTransaction in
      let transaction: LMDBTransaction
      if readOnly, let idle = store.idleReaders.popLast() {
        // A reset read transaction of this store (the pool is guarded by the begin lock, held here).
        try idle.renew()
        transaction = idle
      } else {
        transaction = try LMDBTransaction(environment: store.environment, readOnly: readOnly)
        if !readOnly, let log = store.log {
          do throws(StoreError) {
            try log.prepareWrite(environment: store.environment)
          } catch {
            transaction.abort()
            throw error
          }
          log.record.reset()
          transaction.record = log.record
        }
      }
      store.openTransactions.add(1)
      return transaction
    }
    var attempt = 0
    while true {
      do {
        lmdb = readOnly ? try store.beginLock.withLock(begin) : try begin()
        return
      } catch  where error.lmdbCode == MDB_MAP_RESIZED && attempt < 200 {
        // Adopt the size another process gave the map, once no transaction of ours is open.
        attempt += 1
        let adopted = store.beginLock.withLock { () -> Bool in
          guard store.openTransactions.load() == 0 else { return false }
          return mdb_env_set_mapsize(store.environment, 0) == 0
        }
        if !adopted { usleep(1_000) }
      }
    }
  }

  deinit {
    // An open-ended transaction dropped without commit or rollback is rolled back.
    if ownsWriteLock || !finished {
      finish(commit: false)
      releaseWriteLock()
    }
  }

  func finish(commit: Bool) {
    guard !finished else { return }
    finished = true
    defer { store.openTransactions.add(-1) }
    if lmdb.readOnly {
      // A read transaction's handles were the store's as soon as they were opened; a reader
      // that opened none is reset and kept for the next read (see Store.idleReaders).
      if !store.keepIdleReader(lmdb) { _ = try? lmdb.commit() }
      return
    }
    var committed = false
    if commit { committed = (try? commitWrites(durability: store.options.durability)) != nil } else { lmdb.abort() }
    lmdb.record?.reset()
    store.settleHandles(of: lmdb, committed: committed)
  }

  /// Commits a write transaction: through the commit log when the store has one.
  private func commitWrites(durability: Durability) throws(StoreError) {
    let changed = changeRecorder.map { !$0.isEmpty } ?? false
    if changed {
      do {
        try writeChangeRecord()
      } catch {
        lmdb.abort()
        throw error
      }
    }
    defer { if changed { store.signalChangeWatcher() } }
    if let log = store.log, lmdb.record != nil {
      do {
        try log.commit(lmdb, durability: durability, environment: store.environment)
      } catch {
        lmdb.abort()  // a no-op if LMDB's commit itself failed (it ends the transaction)
        throw error
      }
    } else {
      try lmdb.commit()
    }
  }

  func commitTransaction(durability: Durability) throws(StoreError) {
    guard !finished else { return }
    finished = true
    defer { store.openTransactions.add(-1) }
    do {
      try commitWrites(durability: durability)
    } catch {
      store.settleHandles(of: lmdb, committed: false)
      throw error
    }
    store.settleHandles(of: lmdb, committed: true)
  }

  /// The collection named `name`, seen through this transaction.
  public func collection(_ name: String) -> TransactionCollection {
    TransactionCollection(transaction: self, name: name)
  }

  /// The names of the collections, sorted (in byte order).
  ///
  /// Collections an import is still filling (reserved names starting with `__`) are left out.
  public func collectionNames() throws(StoreError) -> [String] {
    try catalogNames().filter { !$0.hasPrefix("__") }
  }

  /// Every name in the catalog, reserved ones included.
  func catalogNames() throws(StoreError) -> [String] {
    guard let catalogDB = try database(Transaction.catalogName, create: false) else { return [] }
    var names: [String] = []
    try lmdb.scan(catalogDB) { key, _ throws(StoreError) in
      names.append(String(decoding: key, as: UTF8.self))
      return true
    }
    return names
  }

  // MARK: Catalog

  static let catalogName = "__catalog"
  static let metaName = "__meta"

  /// Opens the handle of every database the catalog names (each collection's documents and
  /// indexes). The store does this in a short read transaction when it opens, so that the
  /// handles are shared before any long-lived snapshot (a `Reef`'s) could be the first to open
  /// one: LMDB keeps a handle private to the transaction that opened it until that transaction
  /// ends, and other transactions using it meanwhile fail with EINVAL.
  ///
  /// Best effort: a damaged catalog entry is skipped here (reading that collection reports it),
  /// so that the others stay readable.
  func openNamedDatabases() {
    _ = try? database(Transaction.metaName, create: false)
    _ = try? database(Transaction.changesName, create: false)
    for name in (try? catalogNames()) ?? [] {
      guard let info = try? info(name, create: false, reserved: true) else { continue }
      _ = try? database(info.documentsName, create: false)
      for index in info.indexes { _ = try? database(info.indexName(index), create: false) }
    }
  }

  func database(_ name: String, create: Bool) throws(StoreError) -> MDB_dbi? {
    try store.handle(name, in: lmdb, create: create)
  }

  /// The documents database of the collection used last in this transaction, so that a loop
  /// of inserts finds it without building its name and looking it up in the store's table.
  private var lastDocuments: (collection: Int64, handle: MDB_dbi)?

  /// The database of a collection's documents (``database(_:create:)`` of its `documentsName`).
  func documentsDatabase(_ info: CollectionInfo, create: Bool) throws(StoreError) -> MDB_dbi? {
    if let lastDocuments, lastDocuments.collection == info.id { return lastDocuments.handle }
    guard let handle = try database(info.documentsName, create: create) else { return nil }
    lastDocuments = (info.id, handle)
    return handle
  }

  /// Forgets a dropped collection's documents database (and its index databases).
  func forgetDocumentsDatabase(_ info: CollectionInfo) {
    if lastDocuments?.collection == info.id { lastDocuments = nil }
    forgetIndexDatabases(info)
  }

  /// The index databases of the collection written last in this transaction, by index name, so
  /// that a loop of inserts finds them without building their names.
  private var lastIndexes: (collection: Int64, handles: [(name: String, handle: MDB_dbi)])?

  /// The database of a collection's index (``database(_:create:)`` of its `indexName`).
  func indexDatabase(_ info: CollectionInfo, _ index: IndexSpecification, create: Bool) throws(StoreError) -> MDB_dbi? {
    if let lastIndexes, lastIndexes.collection == info.id,
      let found = lastIndexes.handles.first(where: { $0.name == index.name })
    {
      return found.handle
    }
    guard let handle = try database(info.indexName(index), create: create) else { return nil }
    if lastIndexes?.collection != info.id { lastIndexes = (info.id, []) }
    lastIndexes?.handles.append((index.name, handle))
    return handle
  }

  /// Forgets a collection's index databases (an index dropped, or the collection).
  func forgetIndexDatabases(_ info: CollectionInfo) {
    if lastIndexes?.collection == info.id { lastIndexes = nil }
  }

  func requireWritable() throws(StoreError) {
    if isReadOnly { throw StoreError(.readOnly, "this is a read transaction; write in store.write { … }") }
  }

  /// The catalog entry of a collection; with `create`, made when missing. Reserved names (`__…`)
  /// are refused unless `reserved`, which only the store's own machinery (imports) sets.
  func info(_ name: String, create: Bool, reserved: Bool = false) throws(StoreError) -> CollectionInfo? {
    if let lastReadEntry, lastReadEntry.name == name { return lastReadEntry.info }
    if let cached = catalog[name] { return cached }
    if let catalogDB = try database(Transaction.catalogName, create: false),
      let bytes = try catalogEntry(catalogDB, name)
    {
      // The entry parsed by an earlier transaction, when its bytes are the same.
      if let known = store.cachedCatalogEntry(name, bytes) {
        // A read transaction keeps only its last entry rather than allocate a table: most read
        // one collection.
        if lmdb.readOnly { lastReadEntry = (name, known) } else { catalog[name] = known }
        return known
      }
      let document: Document
      do {
        document = try Document(bytes: bytes)
      } catch {
        throw StoreError(.corrupt, "the catalog entry of \(name) is damaged: \(error)", bsonError: error)
      }
      let info = try CollectionInfo(document, name: name)
      store.cacheCatalogEntry(name, Array(bytes), info)
      catalog[name] = info
      return info
    }
    guard create else { return nil }
    try requireWritable()
    try Transaction.checkName(name, reserved: reserved)
    let metaDB = try database(Transaction.metaName, create: true)!
    var next: Int64 = 1
    // Little-endian in the file, whatever the machine (`Specs/store/layout.md`).
    if let bytes = try lmdb.get(metaDB, Array("nextCollection".utf8)), bytes.count == 8 {
      next = Int64(littleEndian: bytes.loadUnaligned(as: Int64.self))
    }
    try lmdb.put(metaDB, Array("nextCollection".utf8), withUnsafeBytes(of: (next + 1).littleEndian) { Array($0) })
    let info = CollectionInfo(name: name, id: next, uuid: randomUUID(), indexes: [])
    try save(info)
    // The documents' database is made with the catalog entry, not at the first insert: a read
    // transaction that sees the entry then finds the database's handle opened before it began.
    // (A handle opened after a read transaction began cannot be used in it: LMDB answers
    // EINVAL. A long-lived snapshot, a Reef's, read a collection another Reef of the process had
    // created empty, then filled.)
    _ = try documentsDatabase(info, create: true)
    return info
  }

  /// The catalog's entry for `name`, looked up by the name's UTF-8 bytes without copying them.
  private func catalogEntry(_ catalogDB: MDB_dbi, _ name: String) throws(StoreError) -> UnsafeRawBufferPointer? {
    var name = name
    let found = name.withUTF8 { utf8 in
      Result { () throws(StoreError) in try lmdb.get(catalogDB, UnsafeRawBufferPointer(utf8)) }
    }
    return try found.get()
  }

  /// Checks that the store's format is the one this build reads; a new store gets it written.
  func checkFormat(path: String) throws(StoreError) {
    let key = Array("format".utf8)
    let current = Int64(ReefStoreVersion.formatVersion)
    let metaDB = try database(Transaction.metaName, create: false)
    if let metaDB, let bytes = try lmdb.get(metaDB, key) {
      let found = bytes.count == 8 ? Int64(littleEndian: bytes.loadUnaligned(as: Int64.self)) : -1
      guard found == current else {
        throw StoreError(
          .open,
          "the store \(path) has store format \(found), this version of Reef reads format \(current)")
      }
      return
    }
    guard try catalogNames().isEmpty else {
      throw StoreError(
        .open,
        "the store \(path) has store format 1 (from before stored documents carried checksums); "
          + "this version of Reef reads format \(current): export it with the Reef that wrote it and import it again")
    }
    guard !lmdb.readOnly else { return }
    let created = try database(Transaction.metaName, create: true)!
    try lmdb.put(created, key, withUnsafeBytes(of: current.littleEndian) { Array($0) })
  }

  /// Moves a catalog entry to another name: the documents and indexes stay where they are (their
  /// databases are named by the collection's id), so this is O(1) whatever the collection's size.
  /// With `dropTarget`, a collection already named `newName` is dropped first.
  func renameCollection(_ name: String, to newName: String, dropTarget: Bool, reserved: Bool) throws(StoreError) {
    try requireWritable()
    try Transaction.checkName(newName, reserved: reserved)
    guard var info = try info(name, create: false) else {
      throw StoreError(.namespace, "cannot rename \(name) to \(newName): \(name) does not exist")
    }
    if newName == name { return }
    var replacedGeneration: Int64 = 0
    if let existing = try self.info(newName, create: false) {
      guard dropTarget else {
        throw StoreError(
          .namespace, "cannot rename \(name) to \(newName): \(newName) exists (drop it, or pass dropTarget)")
      }
      replacedGeneration = existing.generation
      try collection(newName).drop()
    }
    try removeFromCatalog(name)
    info.name = newName
    // A change of the collection under both names: its generation passes the one it replaces.
    info.raiseGeneration(to: max(info.generation, replacedGeneration) &+ 1)
    info.changedInTransaction = true
    try save(info)
    recordReset(name)
    recordReset(newName)
  }

  func save(_ info: CollectionInfo) throws(StoreError) {
    var info = info
    let catalogDB = try database(Transaction.catalogName, create: true)!
    let bytes = info.encoded ?? info.document.bytes
    info.encoded = bytes
    try lmdb.put(catalogDB, Array(info.name.utf8), bytes)
    catalog[info.name] = info
    // The next transaction finds these bytes parsed (if this one rolls back, the bytes it reads
    // differ, and it parses them).
    var parsed = info
    parsed.changedInTransaction = false
    store.cacheCatalogEntry(info.name, bytes, parsed)
  }

  /// Records that this transaction changes a collection (its documents or indexes): the first
  /// time, its generation goes up by one, in its catalog entry. One catalog write per collection
  /// and transaction; the other changes only test a flag.
  @inline(__always)
  func noteChange(_ info: inout CollectionInfo) throws(StoreError) {
    if info.changedInTransaction { return }
    try saveChange(&info)
  }

  /// Saves a changed catalog entry, its generation raised once per transaction.
  @inline(never)
  func saveChange(_ info: inout CollectionInfo) throws(StoreError) {
    if !info.changedInTransaction {
      info.raiseGeneration(to: info.generation &+ 1)
      info.changedInTransaction = true
    }
    try save(info)
  }

  func removeFromCatalog(_ name: String) throws(StoreError) {
    if let catalogDB = try database(Transaction.catalogName, create: false) {
      try lmdb.delete(catalogDB, Array(name.utf8))
    }
    catalog[name] = nil
  }
}

/// 16 random bytes shaped as a version 4 UUID.
func randomUUID() -> [UInt8] {
  var generator = SystemRandomNumberGenerator()
  var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
  bytes[6] = (bytes[6] & 0x0F) | 0x40
  bytes[8] = (bytes[8] & 0x3F) | 0x80
  return bytes
}

/// What the catalog knows about a collection.
struct CollectionInfo {
  var name: String
  let id: Int64
  var uuid: [UInt8]
  var indexes: [IndexSpecification] { didSet { encoded = nil } }
  /// How many write transactions have changed the collection (its documents, its indexes, its
  /// name): with ``id``, what an import checks to know that no one else wrote to its target.
  /// Entries written before it existed have none, read as 0. Set with ``raiseGeneration(to:)``.
  private(set) var generation: Int64 = 0
  /// The entry's BSON bytes (``document``) when known: as read, or as last saved. Raising the
  /// generation patches them in place (it is their first field), so that the catalog write of
  /// a transaction that only changes documents does not build the entry again.
  var encoded: [UInt8]?
  /// Whether this transaction has raised ``generation`` already (not stored).
  var changedInTransaction = false
  /// The database of documents, keyed by encoded `_id` (made once: entries are cached by the store).
  let documentsName: String

  init(name: String, id: Int64, uuid: [UInt8], indexes: [IndexSpecification]) {
    self.name = name
    self.id = id
    documentsName = "c:\(id)"
    self.uuid = uuid
    self.indexes = indexes
  }

  init(_ document: Document, name: String) throws(StoreError) {
    guard case .int64(let id)? = document["id"], case .binary(let uuid)? = document["uuid"],
      case .array(let indexes)? = document["indexes"]
    else { throw StoreError(.corrupt, "the catalog entry of \(name) is damaged") }
    self.name = name
    self.id = id
    documentsName = "c:\(id)"
    self.uuid = uuid.data
    encoded = document.bytes
    switch document["generation"] {
    case nil: generation = 0
    case .int64(let value)?: generation = value
    default: throw StoreError(.corrupt, "the generation of \(name) in the catalog is damaged")
    }
    var specs: [IndexSpecification] = []
    for entry in indexes {
      guard case .document(let spec) = entry else { throw StoreError(.corrupt, "an index of \(name) is damaged") }
      specs.append(try IndexSpecification(spec))
    }
    self.indexes = specs
  }

  var document: Document {
    var builder = DocumentBuilder()
    // First, at a fixed offset: see `raiseGeneration(to:)`.
    builder.append("generation", .int64(generation))
    builder.append("id", .int64(id))
    builder.append("uuid", .binary(Binary(subtype: .uuid, data: uuid)))
    builder.append("indexes", .array(BSONArray(indexes.map { .document($0.document) })))
    return builder.document
  }

  func indexName(_ index: IndexSpecification) -> String { "i:\(id):\(index.name)" }

  /// The bytes that start an entry whose first field is the generation: the document's 4-byte
  /// length comes before them, the generation's 8 bytes after (at offset 16).
  private static let generationPrefix: [UInt8] = [0x12] + Array("generation".utf8) + [0]

  /// Sets the generation, patching ``encoded`` in place when the generation is its first field
  /// (entries written since it exists), else forgetting it.
  mutating func raiseGeneration(to value: Int64) {
    generation = value
    guard var bytes = encoded, bytes.count >= 24, bytes[4..<16].elementsEqual(Self.generationPrefix) else {
      encoded = nil
      return
    }
    encoded = nil  // the array is then uniquely referenced: patched without a copy
    withUnsafeBytes(of: value.littleEndian) { bytes.replaceSubrange(16..<24, with: $0) }
    encoded = bytes
  }

  /// The collection's identity and generation: another value means it was dropped (and maybe
  /// made again) or changed.
  var version: CollectionVersion { CollectionVersion(id: id, generation: generation) }

  /// The UUID as mongodump writes it: 32 hex digits.
  var uuidString: String {
    uuid.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
  }
}

/// A collection's id and generation at one point (``CollectionInfo/version``).
struct CollectionVersion: Hashable {
  var id: Int64
  var generation: Int64
}

/// The size of a collection and its indexes.
public struct CollectionStatistics: Sendable {
  /// The collection's name.
  public var name: String
  /// Its documents.
  public var count: Int
  /// Bytes of the pages holding its documents.
  public var dataBytes: Int
  /// Each index (the `_id` index is the documents' own order): name, entries, bytes.
  public var indexes: [(name: String, entries: Int, bytes: Int)]
}

extension Transaction {
  /// Sizes of every collection and index.
  public func statistics() throws(StoreError) -> [CollectionStatistics] {
    var result: [CollectionStatistics] = []
    for name in try collectionNames() {
      guard let info = try info(name, create: false) else { continue }
      var statistics = CollectionStatistics(name: name, count: 0, dataBytes: 0, indexes: [])
      if let documents = try database(info.documentsName, create: false) {
        statistics.count = try lmdb.count(documents)
        statistics.dataBytes = try lmdb.size(documents)
      }
      for index in info.indexes {
        guard let handle = try database(info.indexName(index), create: false) else { continue }
        statistics.indexes.append((index.name, try lmdb.count(handle), try lmdb.size(handle)))
      }
      result.append(statistics)
    }
    return result
  }
}

extension Store {
  /// Sizes of every collection and index, from one snapshot.
  public func statistics() throws -> [CollectionStatistics] {
    try read { transaction in try transaction.statistics() }
  }

  /// The size of the store file in bytes.
  public var fileSize: Int {
    var info = stat()
    return stat(path, &info) == 0 ? Int(info.st_size) : 0
  }
}
