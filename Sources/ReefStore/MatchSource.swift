import CLMDB
@_spi(ReefInternal) import ReefBSON
@_spi(ReefInternal) import ReefQuery

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The documents of a collection that match a query, read one at a time through the query's
/// plan: one document by its primary key, an index's key ranges, or a scan of the collection in
/// `_id` order. Each stored document is checked against its checksum and tested in place; only
/// matches are copied out of the map, into shared chunks (``DocumentLifetime/shared``).
///
/// Its memory is constant, but for an index plan whose results must be put back in `_id` order
/// (several ranges, a multikey or compound index): it first collects the matching index
/// entries' primary keys (pointers into the map, 16 bytes each), sorts and de-duplicates them.
/// Every 16,384 documents read, it lets go of the store's mapped pages past 40 MB (as imports
/// and exports do past 64 MB: ``Store/releaseMappedPages(ifMappedMemoryExceeds:)``), so that a
/// scan's resident memory stays flat too.
struct MatchSource: DocumentSource {
  let collection: TransactionCollection
  let query: Query
  /// What the plan read so far (``Explain/returned`` is the cursor's).
  private(set) var explain = Explain(index: nil, keysExamined: 0, documentsExamined: 0, returned: 0)
  /// The plan: at most one of these (none when it has ended). Optional properties rather than
  /// an enum, so that each is changed in place.
  private var primaryKeyValue: UnsafeRawBufferPointer?
  private var scan: DocumentScan?
  private var index: IndexRead?
  private var arena = DocumentArena()

  /// The plan for `query` on `collection`; nothing is read until ``next()``.
  init(_ collection: TransactionCollection, query: Query) throws(StoreError) {
    self.collection = collection
    self.query = query
    let transaction = collection.transaction
    guard let info = try transaction.info(collection.name, create: false),
      let documentsDB = try transaction.documentsDatabase(info, create: false)
    else { return }
    if let id = Planner.primaryKey(query.node) {
      // An `_id` equality reads one document by its primary key; the whole query is still tested.
      explain.index = "_id_"
      primaryKeyValue = try KeyEncoding.withPrimaryKey(id) { (primaryKey) throws(StoreError) in
        primaryKey.count <= 511 ? try collection.lmdb.get(documentsDB, primaryKey) : nil
      }
      if primaryKeyValue != nil { explain.keysExamined = 1 }
    } else if let indexPlan = Planner.plan(query.node, indexes: info.indexes),
      let indexDB = try transaction.database(info.indexName(indexPlan.index), create: false)
    {
      explain.index = indexPlan.index.name
      let tree = collection.lmdb.lookupTree(documentsDB, name: info.documentsName)
      index = IndexRead(plan: indexPlan, indexDB: indexDB, documentsDB: documentsDB, tree: tree)
    } else {
      scan = try DocumentScan(collection, documentsDB)
    }
  }

  /// The next matching document (a copy in shared chunks); nil after the last.
  /// - Throws: ``StoreError/Kind/corrupt`` for a damaged stored document; LMDB's errors.
  mutating func next() throws(StoreError) -> Document? {
    if scan != nil {
      while let (_, bson) = try scan!.next() {
        explain.documentsExamined += 1
        if explain.documentsExamined & 0x3FFF == 0 { releaseMappedPages() }
        if try query.storedMatches(bson) { return arena.copy(trusted: bson) }
      }
      close()
    } else if index != nil {
      do {
        while let value = try index!.nextValue(collection.lmdb, explain: &explain) {
          if let bson = try test(value) { return arena.copy(trusted: bson) }
        }
      } catch {
        close()
        throw error
      }
      close()
    } else if let value = primaryKeyValue {
      primaryKeyValue = nil
      return try test(value).map { arena.copy(trusted: $0) }
    }
    return nil
  }

  /// Counts the remaining matches without copying them, then closes.
  /// - Throws: as ``next()``.
  mutating func countRemaining() throws(StoreError) -> Int {
    var count = 0
    if scan != nil {
      while let (_, bson) = try scan!.next() {
        explain.documentsExamined += 1
        if explain.documentsExamined & 0x3FFF == 0 { releaseMappedPages() }
        if try query.storedMatches(bson) { count += 1 }
      }
      close()
      return count
    }
    if index != nil {
      do {
        while let value = try index!.nextValue(collection.lmdb, explain: &explain) {
          if try test(value) != nil { count += 1 }
        }
      } catch {
        close()
        throw error
      }
      close()
      return count
    }
    while try next() != nil { count += 1 }
    return count
  }

  /// Stops reading: closes the cursors and frees the lookup batch.
  mutating func close() {
    scan?.close()
    scan = nil
    index?.close()
    index = nil
    primaryKeyValue = nil
  }

  /// A stored value's BSON when the document matches, nil when not.
  @inline(__always)
  private mutating func test(_ value: UnsafeRawBufferPointer) throws(StoreError) -> UnsafeRawBufferPointer? {
    explain.documentsExamined += 1
    if explain.documentsExamined & 0x3FFF == 0 { releaseMappedPages() }
    let bson = try collection.storedBSON(value)
    return try query.storedMatches(bson) ? bson : nil
  }

  @inline(never)
  private func releaseMappedPages() {
    collection.transaction.store.releaseMappedPages(ifMappedMemoryExceeds: Store.scanMappedMemoryLimit)
  }
}

/// The reading of an index plan: its ranges' primary keys, then their documents, looked up a
/// batch of keys at a time in a read transaction (`reef_lookup_many`: their searches' cache
/// misses overlap), one at a time otherwise and for the first document (a query that wants
/// one reads one).
struct IndexRead {
  let ranges: [KeyRange]
  let indexDB: MDB_dbi
  let documentsDB: MDB_dbi
  let tree: reef_tree?
  /// One equality range of a single-field index lists each document at most once (a multikey
  /// document has one entry per distinct element) and in `_id` order (each key ends with the
  /// `_id`): its keys are read as they come. Otherwise a document can come up in several ranges
  /// or under several elements, and keys come in index order: the primary keys are collected,
  /// sorted and de-duplicated first.
  let inIDOrder: Bool
  private var cursor: LMDBCursor?
  private var sortedKeys: [UnsafeRawBufferPointer]?
  private var sortedPosition = 0
  /// Documents looked up, not yet tested, and the next one's position.
  private var fetched: [UnsafeRawBufferPointer] = []
  private var fetchedPosition = 0
  private var batch: UnsafeMutablePointer<reef_lookup>?
  private var refills = 0
  private(set) var finished = false

  init(plan: Planner.Plan, indexDB: MDB_dbi, documentsDB: MDB_dbi, tree: reef_tree?) {
    ranges = plan.ranges
    self.indexDB = indexDB
    self.documentsDB = documentsDB
    self.tree = tree
    inIDOrder = plan.ranges.count == 1 && plan.ranges[0].isEquality && plan.index.keys.count == 1
  }

  /// The next candidate document's stored value, or nil after the last.
  mutating func nextValue(_ lmdb: LMDBTransaction, explain: inout Explain) throws(StoreError)
    -> UnsafeRawBufferPointer?
  {
    while fetchedPosition == fetched.count {
      guard !finished else { return nil }
      try refill(lmdb, explain: &explain)
    }
    fetchedPosition += 1
    return fetched[fetchedPosition - 1]
  }

  /// Looks up the documents of the next primary keys: one the first time, a batch after.
  private mutating func refill(_ lmdb: LMDBTransaction, explain: inout Explain) throws(StoreError) {
    fetched.removeAll(keepingCapacity: true)
    fetchedPosition = 0
    let wanted = refills == 0 ? 1 : Int(reef_lookup_batch)
    refills += 1
    if wanted > 1, lmdb.readOnly, var tree {
      if batch == nil { batch = .allocate(capacity: Int(reef_lookup_batch)) }
      let lookups = batch!
      var count = 0
      while count < wanted, let key = try nextPrimaryKey(lmdb, explain: &explain) {
        lookups[count] = reef_lookup(key: key.baseAddress, key_size: key.count, data: nil, data_size: 0, status: -1)
        count += 1
      }
      if count < wanted { finished = true }
      guard count > 0 else { return }
      reef_lookup_many(&tree, lookups, UInt32(count))
      for index in 0..<count {
        let lookup = lookups[index]
        switch lookup.status {
        case 1: fetched.append(UnsafeRawBufferPointer(start: lookup.data, count: lookup.data_size))
        case 0: continue
        default:
          // Anything the batched search did not expect: LMDB's own search decides (and reports damage).
          let key = UnsafeRawBufferPointer(start: lookup.key, count: lookup.key_size)
          if let found = try lmdb.get(documentsDB, key) { fetched.append(found) }
        }
      }
      return
    }
    var count = 0
    while count < wanted, let key = try nextPrimaryKey(lmdb, explain: &explain) {
      count += 1
      if let value = try lmdb.get(documentsDB, key) {
        reef_prefetch(value.baseAddress, value.count)
        fetched.append(value)
      }
    }
    if count < wanted { finished = true }
  }

  /// The next primary key from the index (a view of the map), or nil after the last.
  private mutating func nextPrimaryKey(_ lmdb: LMDBTransaction, explain: inout Explain) throws(StoreError)
    -> UnsafeRawBufferPointer?
  {
    if inIDOrder {
      if cursor == nil {
        cursor = try LMDBCursor(lmdb, indexDB)
        try cursor!.seek(ranges[0].start)
      }
      while let (key, primaryKey) = try cursor!.next() {
        explain.keysExamined += 1
        switch ranges[0].step(key) {
        case .stop:
          cursor!.close()
          return nil
        case .skip: continue
        case .take: return primaryKey
        }
      }
      return nil
    }
    if sortedKeys == nil { sortedKeys = try collectPrimaryKeys(lmdb, explain: &explain) }
    guard sortedPosition < sortedKeys!.count else { return nil }
    sortedPosition += 1
    return sortedKeys![sortedPosition - 1]
  }

  /// Every range's primary keys, in `_id` order, each once.
  private func collectPrimaryKeys(_ lmdb: LMDBTransaction, explain: inout Explain) throws(StoreError)
    -> [UnsafeRawBufferPointer]
  {
    var keys: [UnsafeRawBufferPointer] = []
    for range in ranges {
      let cursor = try LMDBCursor(lmdb, indexDB)
      defer { cursor.close() }
      try cursor.seek(range.start)
      scan: while let (key, primaryKey) = try cursor.next() {
        explain.keysExamined += 1
        switch range.step(key) {
        case .stop: break scan
        case .skip: continue
        case .take: keys.append(primaryKey)
        }
      }
    }
    keys.sort { compareBytes($0, $1) < 0 }
    var unique: [UnsafeRawBufferPointer] = []
    unique.reserveCapacity(keys.count)
    for key in keys where unique.last.map({ compareBytes($0, key) != 0 }) ?? true { unique.append(key) }
    return unique
  }

  /// Closes the index cursor and frees the batch.
  mutating func close() {
    finished = true
    cursor?.close()
    cursor = nil
    batch?.deallocate()
    batch = nil
    fetched = []
    fetchedPosition = 0
    sortedKeys = nil
  }
}

/// The byte order of two keys (memcmp, then the shorter first).
func compareBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
  let common = min(a.count, b.count)
  if common > 0 {
    let difference = memcmp(a.baseAddress!, b.baseAddress!, common)
    if difference != 0 { return difference < 0 ? -1 : 1 }
  }
  return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
}
