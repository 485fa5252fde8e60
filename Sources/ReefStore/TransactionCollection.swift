import CLMDB
@_spi(ReefInternal) import ReefBSON
@_spi(ReefInternal) import ReefQuery

/// What a query did: the index it used (or a collection scan) and how much it read.
public struct Explain: Sendable, CustomStringConvertible {
  /// The index used, or nil for a full collection scan.
  public var index: String?
  /// Index keys read.
  public var keysExamined: Int
  /// Documents read and tested.
  public var documentsExamined: Int
  /// Documents returned.
  public var returned: Int

  public var description: String {
    "\(index.map { "IXSCAN \($0)" } ?? "COLLSCAN"): \(keysExamined) keys and \(documentsExamined) documents examined, \(returned) returned"
  }
}

/// The result of an update or replace.
public struct UpdateResult: Sendable, Equatable {
  /// Documents that matched the filter.
  public var matched: Int
  /// Documents that changed.
  public var modified: Int
  /// The `_id` of the document an upsert inserted.
  public var upsertedID: BSON?
}

/// A collection seen through one transaction. Every method reads or writes in that transaction;
/// documents returned are copies that stay valid after it ends.
public struct TransactionCollection {
  let transaction: Transaction
  /// The collection's name.
  public let name: String

  var lmdb: LMDBTransaction { transaction.lmdb }

  // MARK: Reading

  /// The documents that match `filter`, after sort, skip, limit and projection.
  public func find(_ filter: Document = Document(), options: FindOptions = FindOptions()) throws(StoreError)
    -> [Document]
  {
    try find(query: compile(filter), options: options).documents
  }

  /// The documents that match a Realm-style predicate, with its SORT, DISTINCT and LIMIT.
  public func find(predicate: String, arguments: [BSON] = [], options: FindOptions = FindOptions()) throws(StoreError)
    -> [Document]
  {
    let query: Query
    do {
      query = try Query(predicate: predicate, arguments: arguments)
    } catch {
      throw StoreError(.invalidQuery, error.description)
    }
    return try find(query: query, options: options).documents
  }

  /// The documents that match a compiled query (a filter or a predicate), with its own SORT,
  /// DISTINCT and LIMIT and then the options.
  public func find(_ query: Query, options: FindOptions = FindOptions()) throws(StoreError) -> [Document] {
    try find(query: query, options: options).documents
  }

  /// The document whose `_id` is `id`, read straight from the primary key (as Realm's
  /// `object(ofType:forPrimaryKey:)` reads an object), or nil. Numbers match across types:
  /// `document(forID: .int64(1))` finds `_id: 1`.
  public func document(forID id: BSON) throws(StoreError) -> Document? {
    guard let info = try transaction.info(name, create: false),
      let documentsDB = try transaction.documentsDatabase(info, create: false),
      let bytes = try KeyEncoding.withPrimaryKey(id, { (key) throws(StoreError) in try lmdb.get(documentsDB, key) })
    else { return nil }
    guard let bson = StoredDocument.verifiedBSON(bytes) else { throw damaged(bytes, id: id) }
    return Document(trustedCopying: bson)
  }

  /// The first document that matches, in input order (or sorted by `sort`).
  public func findOne(_ filter: Document = Document(), sort: SortSpecification? = nil) throws(StoreError) -> Document? {
    try find(filter, options: FindOptions(sort: sort, limit: 1)).first
  }

  /// How many documents match.
  public func count(_ filter: Document = Document()) throws(StoreError) -> Int {
    if filter.isEmpty {
      guard let info = try transaction.info(name, create: false),
        let documents = try transaction.documentsDatabase(info, create: false)
      else { return 0 }
      return try lmdb.count(documents)
    }
    return try find(query: compile(filter), options: FindOptions()).documents.count
  }

  /// The distinct values at `key` among the matching documents (array elements count one by
  /// one), in MongoDB's order.
  public func distinct(_ key: String, filter: Document = Document()) throws(StoreError) -> [BSON] {
    let spec = try IndexSpecification(keys: ["\(key)": 1] as Document, name: "distinct")
    // By encoded key: equal values share an encoding, and its byte order is MongoDB's order.
    var values: [[UInt8]: BSON] = [:]
    for document in try find(filter) {
      for entry in try spec.entries(for: document) {
        let value = entry[0]
        if case .undefined = value { continue }
        if case .null = value, document[key] == nil { continue }
        let encoded = KeyEncoding.encode([value])
        if values[encoded] == nil { values[encoded] = value }  // the first of equal values
      }
    }
    return values.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map(\.value)
  }

  /// How the query would run, after running it.
  public func explain(_ filter: Document = Document(), options: FindOptions = FindOptions()) throws(StoreError)
    -> Explain
  {
    try find(query: compile(filter), options: options).explain
  }

  func compile(_ filter: Document) throws(StoreError) -> Query {
    do {
      return try Query(filter: filter)
    } catch {
      throw StoreError(.invalidQuery, error.description)
    }
  }

  /// Runs a query: through the best index for it, or a scan of the whole collection.
  ///
  /// Each stored document is checked against its checksum and tested in place; only matches
  /// are copied out of the map.
  func find(query: Query, options: FindOptions) throws(StoreError) -> (documents: [Document], explain: Explain) {
    guard let info = try transaction.info(name, create: false),
      let documentsDB = try transaction.documentsDatabase(info, create: false)
    else { return ([], Explain(index: nil, keysExamined: 0, documentsExamined: 0, returned: 0)) }
    // The closures below reach the run's state through a pointer: captured `var`s would be
    // boxed, with a run-time exclusivity check at every access (about 5% of an indexed query).
    var state = QueryRun(collection: self, query: query)
    try withUnsafeMutablePointer(to: &state) { (run) throws(StoreError) in
      if let id = Planner.primaryKey(query.node) {
        // An `_id` equality reads one document by its primary key; the whole query is still tested.
        run.pointee.explain.index = "_id_"
        try KeyEncoding.withPrimaryKey(id) { (primaryKey) throws(StoreError) in
          guard primaryKey.count <= 511, let value = try lmdb.get(documentsDB, primaryKey) else { return }
          run.pointee.explain.keysExamined = 1
          _ = try run.pointee.test(value)
        }
      } else if let plan = Planner.plan(query.node, indexes: info.indexes),
        let indexDB = try transaction.database(info.indexName(plan.index), create: false)
      {
        run.pointee.explain.index = plan.index.name
        // One equality range of a single-field index lists each document at most once (a multikey
        // document has one entry per distinct element) and in `_id` order (each key ends with the
        // `_id`). Otherwise a document can come up in several ranges or under several elements, and
        // keys come in index order: those results are de-duplicated and put back in `_id` order.
        let inIDOrder = plan.ranges.count == 1 && plan.ranges[0].isEquality && plan.index.keys.count == 1
        // In a read transaction, from the second document on, the documents are looked up a batch
        // of primary keys at a time, their searches' cache misses overlapping (`reef_lookup_many`);
        // otherwise (and for a single match, which the batch's setup would only slow) one at a time.
        run.pointee.mayBatch = lmdb.readOnly
        defer { run.pointee.batch?.deallocate() }
        // Each document is read (and its bytes prefetched) one step ahead of being tested, so that
        // its cache misses overlap the test of the one before. Pointers into the map stay valid
        // for the whole read or write transaction, which changes nothing here.
        // The primary key is kept (copied once, for `seen`) only when results are re-sorted.
        for range in plan.ranges {
          try lmdb.scan(indexDB, from: range.start) { key, primaryKey throws(StoreError) in
            run.pointee.explain.keysExamined += 1
            switch range.step(key) {
            case .stop: return false
            case .skip: return true
            case .take: break
            }
            var copiedKey: [UInt8]?
            if !inIDOrder {
              let key = Array(primaryKey)
              guard run.pointee.seen.insert(key).inserted else { return true }
              copiedKey = key
            }
            if run.pointee.mayBatch && run.pointee.pending != nil {
              run.pointee.mayBatch = false
              if let tree = lmdb.lookupTree(documentsDB, name: info.documentsName) {
                try run.pointee.testPending()  // the first document, before the batch's
                run.pointee.batch = DocumentBatch(tree: tree)
              }
            }
            if run.pointee.batch != nil {
              run.pointee.batch!.append(primaryKey, copiedKey: copiedKey)
              if run.pointee.batch!.isFull { try run.pointee.testBatch(lmdb, documentsDB) }
              return true
            }
            guard let value = try lmdb.get(documentsDB, primaryKey) else { return true }
            reef_prefetch(value.baseAddress, value.count)
            try run.pointee.testPending()
            run.pointee.pending = (value, copiedKey)
            return true
          }
        }
        try run.pointee.testBatch(lmdb, documentsDB)
        try run.pointee.testPending()
        if !inIDOrder {
          let keys = run.pointee.matchKeys
          let order = keys.indices.sorted { keys[$0].lexicographicallyPrecedes(keys[$1]) }
          run.pointee.matches = order.map { run.pointee.matches[$0] }
        }
      } else {
        // In natural order, the scan can stop once the matches that decide the result are found.
        let needed = query.matchesNeeded(for: options)
        let check = DocumentScanCheck(collection: name)
        try lmdb.scan(documentsDB) { key, value throws(StoreError) in
          _ = try run.pointee.test(bson: check.document(key: key, value: value))
          return needed.map { run.pointee.matches.count < $0 } ?? true
        }
      }
    }
    var explain = state.explain
    let results = query.arrange(state.matches, options: options)
    explain.returned = results.count
    return (results, explain)
  }

  /// The indexes, the `_id` index first, as MongoDB lists them.
  public func listIndexes() throws(StoreError) -> [Document] {
    guard let info = try transaction.info(name, create: false) else { return [] }
    return [IndexSpecification.primary] + info.indexes.map(\.document)
  }

  // MARK: Writing

  /// Inserts a document and returns its `_id`, generated as an ObjectId (and placed first) when
  /// missing. Throws for a duplicate `_id` or unique key, naming the collection and the key.
  @discardableResult
  public func insert(_ document: Document) throws(StoreError) -> BSON {
    try transaction.requireWritable()
    var info = try transaction.info(name, create: true)!
    let (stored, id) = try prepare(document)
    try put(stored, id: id, info: &info, replacing: nil)
    return id
  }

  /// Inserts documents in order; the first failure throws and, as the transaction rolls back,
  /// none of them is stored.
  @discardableResult
  public func insertMany(_ documents: some Sequence<Document>) throws(StoreError) -> [BSON] {
    var ids: [BSON] = []
    for document in documents { ids.append(try insert(document)) }
    return ids
  }

  /// Replaces the first matching document (keeping its `_id`); with `upsert`, inserts the
  /// replacement when nothing matches.
  @discardableResult
  public func replaceOne(_ filter: Document, with replacement: Document, upsert: Bool = false) throws(StoreError)
    -> UpdateResult
  {
    try transaction.requireWritable()
    if replacement.contains(where: { $0.key.hasPrefix("$") }) {
      throw StoreError(.invalidQuery, "a replacement document cannot contain update operators")
    }
    guard let old = try find(filter, options: FindOptions(limit: 1)).first else {
      guard upsert else { return UpdateResult(matched: 0, modified: 0, upsertedID: nil) }
      var seeded = replacement
      if seeded["_id"] == nil, let id = Update.upsertSeed(from: filter)["_id"] { seeded = withID(seeded, id) }
      return UpdateResult(matched: 0, modified: 0, upsertedID: try insert(seeded))
    }
    let id = old["_id"]!
    if let newID = replacement["_id"], compareBSON(newID, id) != 0 {
      throw StoreError(.invalidQuery, "replacing a document cannot change its _id (from \(id) to \(newID))")
    }
    var info = try transaction.info(name, create: true)!
    let (stored, _) = try prepare(withID(replacement, id))
    if stored == old { return UpdateResult(matched: 1, modified: 0, upsertedID: nil) }
    try put(stored, id: id, info: &info, replacing: old)
    return UpdateResult(matched: 1, modified: 1, upsertedID: nil)
  }

  /// Applies an update document (`$set`, `$inc`, `$push`, …) to the first matching document;
  /// with `upsert`, to a new document seeded from the filter's equalities when none matches.
  @discardableResult
  public func updateOne(_ filter: Document, _ update: Document, upsert: Bool = false) throws(StoreError) -> UpdateResult
  {
    try self.update(filter, update, upsert: upsert, many: false)
  }

  /// Applies an update document to every matching document.
  @discardableResult
  public func updateMany(_ filter: Document, _ update: Document, upsert: Bool = false) throws(StoreError)
    -> UpdateResult
  {
    try self.update(filter, update, upsert: upsert, many: true)
  }

  func update(_ filter: Document, _ updateDocument: Document, upsert: Bool, many: Bool) throws(StoreError)
    -> UpdateResult
  {
    try transaction.requireWritable()
    let update: Update
    do {
      update = try Update(updateDocument)
    } catch {
      throw StoreError(.invalidQuery, error.description)
    }
    let targets = try find(filter, options: FindOptions(limit: many ? nil : 1))
    if targets.isEmpty {
      guard upsert else { return UpdateResult(matched: 0, modified: 0, upsertedID: nil) }
      let seed = Update.upsertSeed(from: filter)
      let inserted: Document
      do {
        inserted = try update.apply(to: seed, isInsert: true)
      } catch {
        throw StoreError(.invalidQuery, error.description)
      }
      return UpdateResult(matched: 0, modified: 0, upsertedID: try insert(inserted))
    }
    var info = try transaction.info(name, create: true)!
    var modified = 0
    for old in targets {
      let new: Document
      do {
        new = try update.apply(to: old)
      } catch {
        throw StoreError(.invalidQuery, error.description)
      }
      guard new != old else { continue }
      let id = old["_id"]!
      guard let newID = new["_id"], compareBSON(newID, id) == 0 else {
        throw StoreError(.invalidQuery, "an update cannot change _id (\(id))")
      }
      let (stored, _) = try prepare(new)
      try put(stored, id: id, info: &info, replacing: old)
      modified += 1
    }
    return UpdateResult(matched: targets.count, modified: modified, upsertedID: nil)
  }

  /// Deletes the first matching document; returns how many were deleted (0 or 1).
  @discardableResult
  public func deleteOne(_ filter: Document) throws(StoreError) -> Int {
    try delete(filter, limit: 1)
  }

  /// Deletes every matching document; returns how many.
  @discardableResult
  public func deleteMany(_ filter: Document) throws(StoreError) -> Int {
    try delete(filter, limit: nil)
  }

  func delete(_ filter: Document, limit: Int?) throws(StoreError) -> Int {
    try transaction.requireWritable()
    guard let info = try transaction.info(name, create: false),
      let documentsDB = try transaction.documentsDatabase(info, create: false)
    else { return 0 }
    let targets = try find(filter, options: FindOptions(limit: limit))
    for old in targets {
      let primaryKey = KeyEncoding.encode([old["_id"]!])
      try lmdb.delete(documentsDB, primaryKey)
      try removeIndexEntries(old, primaryKey: primaryKey, info: info)
    }
    return targets.count
  }

  /// Removes the collection, its documents and its indexes. Returns whether it existed.
  @discardableResult
  public func drop() throws(StoreError) -> Bool {
    try transaction.requireWritable()
    guard let info = try transaction.info(name, create: false) else { return false }
    transaction.forgetDocumentsDatabase(info)
    for database in [info.documentsName] + info.indexes.map(info.indexName) {
      if let handle = try transaction.database(database, create: false) {
        try lmdb.drop(handle)
        transaction.store.forgetHandle(database, droppedIn: lmdb)
      }
    }
    try transaction.removeFromCatalog(name)
    return true
  }

  /// Creates an index and builds it from the documents already stored. Creating an index that
  /// exists with the same specification does nothing; the same name with another specification
  /// is an error.
  public func createIndex(_ index: IndexSpecification) throws(StoreError) {
    try transaction.requireWritable()
    var info = try transaction.info(name, create: true)!
    if let existing = info.indexes.first(where: { $0.name == index.name }) {
      if existing == index { return }
      throw StoreError(.index, "an index named \(index.name) already exists on \(name) with another specification")
    }
    let indexDB = try transaction.database(info.indexName(index), create: true)!
    if let documentsDB = try transaction.documentsDatabase(info, create: false) {
      let check = DocumentScanCheck(collection: name)
      try lmdb.scan(documentsDB) { primaryKey, bytes throws(StoreError) in
        let document = Document(trustedBytesNoCopy: try check.document(key: primaryKey, value: bytes), owner: nil)
        try addEntries(document, primaryKey: Array(primaryKey), index: index, database: indexDB)
        return true
      }
    }
    info.indexes.append(index)
    try transaction.save(info)
  }

  /// Creates an index from a key document: `createIndex(["address.city": 1])`.
  public func createIndex(_ keys: Document, name: String? = nil, unique: Bool = false, sparse: Bool = false)
    throws(StoreError)
  {
    try createIndex(IndexSpecification(keys: keys, name: name, unique: unique, sparse: sparse))
  }

  /// Drops an index by name. Returns whether it existed.
  @discardableResult
  public func dropIndex(_ indexName: String) throws(StoreError) -> Bool {
    try transaction.requireWritable()
    guard indexName != "_id_" else { throw StoreError(.index, "the _id index cannot be dropped") }
    guard var info = try transaction.info(name, create: false),
      let position = info.indexes.firstIndex(where: { $0.name == indexName })
    else { return false }
    let index = info.indexes.remove(at: position)
    if let handle = try transaction.database(info.indexName(index), create: false) {
      try lmdb.drop(handle)
      transaction.store.forgetHandle(info.indexName(index), droppedIn: lmdb)
    }
    try transaction.save(info)
    return true
  }

  /// Renames the collection, as MongoDB's `renameCollection`: its documents, indexes and UUID
  /// go with it, in O(1) (the catalog entry moves; the data stays where it is).
  /// - Parameters:
  ///   - newName: the new name (non-empty, without NUL, not starting with `__`).
  ///   - dropTarget: drop a collection already named `newName` first, in the same transaction.
  /// - Throws: ``StoreError/Kind/namespace`` when this collection does not exist or `newName`
  ///   exists and `dropTarget` is false; ``StoreError/Kind/invalidQuery`` for an invalid name;
  ///   ``StoreError/Kind/readOnly`` in a read transaction.
  public func rename(to newName: String, dropTarget: Bool = false) throws(StoreError) {
    try transaction.renameCollection(name, to: newName, dropTarget: dropTarget, reserved: false)
  }

  /// The collection's UUID as 32 lowercase hexadecimal digits (the form mongodump's metadata
  /// uses), or `nil` when the collection does not exist. It is made when the collection is
  /// created, and kept by ``rename(to:dropTarget:)``.
  public func uuid() throws(StoreError) -> String? {
    try transaction.info(name, create: false)?.uuidString
  }

  // MARK: Storing

  /// Checks a document for storage and gives it an `_id` (first) when it has none.
  func prepare(_ document: Document) throws(StoreError) -> (Document, BSON) {
    var stored = document
    let id: BSON
    if let existing = document["_id"] {
      switch existing {
      case .array, .regex, .undefined:
        throw StoreError(.invalidDocument, "_id cannot be of type \(existing.type.name) (collection \(name))")
      default: id = existing
      }
    } else {
      id = .objectId(ObjectId())
      stored = withID(document, id)
    }
    // Validated again here unless its bytes were validated with the default options when the
    // document was made: a document built in memory has not been checked for depth or size.
    if !stored.isKnownValid {
      do {
        try stored.validate()
      } catch {
        throw StoreError(.invalidDocument, "the document cannot be stored in \(name): \(error)")
      }
    }
    return (stored, id)
  }

  func withID(_ document: Document, _ id: BSON) -> Document {
    var builder = DocumentBuilder(capacity: document.byteCount + 32)
    builder.append("_id", id)
    for element in document where element.key != "_id" { builder.append(element.key, element.value) }
    return builder.document
  }

  /// Writes a document and its index entries; `replacing` is the stored version it replaces.
  ///
  /// Every check (key sizes, parallel arrays, duplicate `_id` and unique keys) runs before the
  /// first byte is written, so a document that fails leaves the transaction as it was and the
  /// transaction can go on (imports that skip invalid documents rely on this).
  func put(_ document: Document, id: BSON, info: inout CollectionInfo, replacing old: Document?) throws(StoreError) {
    let documentsDB = try transaction.documentsDatabase(info, create: true)!
    if old == nil && info.indexes.isEmpty {
      // A new document without index entries: the duplicate check is the write itself
      // (MDB_NOOVERWRITE writes nothing when the key exists), and the key is on the stack.
      let written = try KeyEncoding.withPrimaryKey(id) { (primaryKey) throws(StoreError) -> Bool in
        try checkPrimaryKeySize(primaryKey.count)
        return try lmdb.putDocument(documentsDB, primaryKey, document, unique: true)
      }
      if !written { throw duplicateID(id) }
      return
    }
    let primaryKey = KeyEncoding.encode([id])
    try checkPrimaryKeySize(primaryKey.count)
    // Checked before the index keys, so that a document with both a duplicate `_id` and a
    // duplicate unique key is reported for its `_id`.
    if old == nil, try lmdb.get(documentsDB, primaryKey) != nil { throw duplicateID(id) }
    var planned: [(database: MDB_dbi, keys: [[UInt8]])] = []
    for index in info.indexes {
      let indexDB = try transaction.database(info.indexName(index), create: true)!
      var keys: [[UInt8]] = []
      for (values, key) in try index.storedEntries(for: document, primaryKey: primaryKey) {
        if key.count > 511 { throw keyTooLarge(key.count, index: index.name) }
        if index.unique, let existing = try lmdb.get(indexDB, key), !existing.elementsEqual(primaryKey) {
          throw duplicateKey(values, index: index)
        }
        keys.append(key)
      }
      planned.append((indexDB, keys))
    }
    if let old { try removeIndexEntries(old, primaryKey: primaryKey, info: info) }
    let written = try withBytes(primaryKey) { (key) throws(StoreError) -> Bool in
      try lmdb.putDocument(documentsDB, key, document, unique: old == nil)
    }
    if !written { throw duplicateID(id) }
    for (indexDB, keys) in planned {
      for key in keys { try lmdb.put(indexDB, key, primaryKey) }
    }
  }

  func checkPrimaryKeySize(_ count: Int) throws(StoreError) {
    if count > 511 {
      throw StoreError(.invalidDocument, "the _id of a document in \(name) is too large to index (\(count) bytes)")
    }
  }

  @inline(never)
  func duplicateID(_ id: BSON) -> StoreError {
    StoreError(
      .duplicateKey, "E11000 duplicate key error collection: \(name) index: _id_ dup key: { _id: \(id.extendedJSON()) }"
    )
  }

  /// The error for a second document with the same key in a unique index.
  @inline(never)
  func duplicateKey(_ values: [BSON], index: IndexSpecification) -> StoreError {
    let shown = zip(index.keys, values).map { "\($0.path): \($1.extendedJSON())" }.joined(separator: ", ")
    return StoreError(
      .duplicateKey, "E11000 duplicate key error collection: \(name) index: \(index.name) dup key: { \(shown) }")
  }

  /// Adds a stored document's entries to an index being built; `primaryKey` is its key.
  func addEntries(_ document: Document, primaryKey: [UInt8], index: IndexSpecification, database: MDB_dbi)
    throws(StoreError)
  {
    for (values, key) in try index.storedEntries(for: document, primaryKey: primaryKey) {
      guard index.unique else {
        try lmdb.put(database, key, primaryKey)
        continue
      }
      if try !lmdb.put(database, key, primaryKey, unique: true) {
        if let existing = try lmdb.get(database, key), existing.elementsEqual(primaryKey) { continue }
        throw duplicateKey(values, index: index)
      }
    }
  }

  /// Removes the index entries of a stored document whose key is `primaryKey`.
  func removeIndexEntries(_ document: Document, primaryKey: [UInt8], info: CollectionInfo) throws(StoreError) {
    for index in info.indexes {
      guard let indexDB = try transaction.database(info.indexName(index), create: false) else { continue }
      for (_, key) in (try? index.storedEntries(for: document, primaryKey: primaryKey)) ?? [] {
        try lmdb.delete(indexDB, key)
      }
    }
  }
}

/// The state of one run of ``TransactionCollection/find(query:options:)``: what it found so far.
struct QueryRun {
  let collection: TransactionCollection
  let query: Query
  var matches: [Document] = []
  var explain = Explain(index: nil, keysExamined: 0, documentsExamined: 0, returned: 0)
  var arena = DocumentArena()
  /// The primary keys seen, when an index plan can list a document more than once.
  var seen = Set<[UInt8]>()
  /// The primary keys of `matches`, when they are to be put back in `_id` order.
  var matchKeys: [[UInt8]] = []
  /// A document read, not yet tested (with its primary key when results are re-sorted).
  var pending: (value: UnsafeRawBufferPointer, primaryKey: [UInt8]?)?

  /// Tests one stored value; true when it matched (and was copied into `matches`).
  @inline(__always)
  mutating func test(_ value: UnsafeRawBufferPointer) throws(StoreError) -> Bool {
    try test(bson: collection.storedBSON(value))
  }

  /// Tests one stored document's BSON, already checked (``DocumentScanCheck``, or its checksum).
  @inline(__always)
  mutating func test(bson: UnsafeRawBufferPointer) -> Bool {
    explain.documentsExamined += 1
    guard query.matches(trustedBytes: bson) else { return false }
    matches.append(arena.copy(trusted: bson))
    return true
  }

  /// Primary keys from an index, looked up a batch at a time (in a read transaction).
  var batch: DocumentBatch?
  /// Whether the index plan may still start batching (in a read transaction, at its second key).
  var mayBatch = false

  /// Looks up the batch's primary keys and tests their documents in the batch's order.
  mutating func testBatch(_ lmdb: LMDBTransaction, _ documents: MDB_dbi) throws(StoreError) {
    guard let count = batch?.count, count > 0, var tree = batch?.tree, let lookups = batch?.lookups else { return }
    reef_lookup_many(&tree, lookups, UInt32(count))
    for index in 0..<count {
      let lookup = lookups[index]
      let value: UnsafeRawBufferPointer
      switch lookup.status {
      case 1: value = UnsafeRawBufferPointer(start: lookup.data, count: lookup.data_size)
      case 0: continue
      default:
        // Anything the batched search did not expect: LMDB's own search decides (and reports damage).
        guard let found = try lmdb.get(documents, UnsafeRawBufferPointer(start: lookup.key, count: lookup.key_size))
        else { continue }
        value = found
      }
      if try test(value), let key = batch!.copiedKeys[index] { matchKeys.append(key) }
    }
    batch!.removeAll()
  }

  /// Tests the pending document, if any.
  @inline(__always)
  mutating func testPending() throws(StoreError) {
    guard let (value, primaryKey) = pending else { return }
    pending = nil
    if try test(value), let primaryKey { matchKeys.append(primaryKey) }
  }
}

/// Primary keys read from an index, waiting to be looked up together (`reef_lookup_many`). The
/// keys point into the map, where they stay valid until the read transaction ends.
struct DocumentBatch {
  let tree: reef_tree
  let lookups: UnsafeMutablePointer<reef_lookup>
  /// Each key's copy, when the results are to be put back in `_id` order.
  var copiedKeys: [[UInt8]?] = []
  private(set) var count = 0

  init(tree: reef_tree) {
    self.tree = tree
    lookups = .allocate(capacity: Int(reef_lookup_batch))
    copiedKeys.reserveCapacity(Int(reef_lookup_batch))
  }

  var isFull: Bool { count == Int(reef_lookup_batch) }

  mutating func append(_ primaryKey: UnsafeRawBufferPointer, copiedKey: [UInt8]?) {
    precondition(!isFull, "a full batch is looked up before another key is added")
    lookups[count] = reef_lookup(
      key: primaryKey.baseAddress, key_size: primaryKey.count, data: nil, data_size: 0, status: -1)
    copiedKeys.append(copiedKey)
    count += 1
  }

  mutating func removeAll() {
    count = 0
    copiedKeys.removeAll(keepingCapacity: true)
  }

  func deallocate() { lookups.deallocate() }
}
