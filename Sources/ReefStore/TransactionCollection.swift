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

  /// The documents that match `filter`, after sort, skip, limit and projection, read one at a
  /// time (see ``Cursor``).
  ///
  /// In a read transaction the cursor reads as it goes, and only while the transaction is open;
  /// in a write transaction the results are read now (the transaction's writes could otherwise
  /// move the cursor).
  /// - Parameters:
  ///   - filter: a MongoDB filter document; every document by default.
  ///   - options: sort, skip, limit, projection, and the memory of a sort.
  /// - Throws: ``StoreError/Kind/invalidQuery`` when the filter does not compile; what
  ///   ``Cursor/next()`` throws, for the results read now.
  /// - Complexity: O(1) until the first result is read in a read transaction (an index plan
  ///   whose results are put back in `_id` order reads its index keys first); O(*n*) in a write
  ///   transaction.
  public func find(_ filter: Document = Document(), options: FindOptions = FindOptions()) throws(StoreError)
    -> Cursor
  {
    try Cursor(self, query: compile(filter), options: options, ownsTransaction: false)
  }

  /// The documents that match a Realm-style predicate, with its SORT, DISTINCT and LIMIT, read
  /// one at a time (see ``find(_:options:)``).
  /// - Throws: ``StoreError/Kind/invalidQuery`` when the predicate does not compile.
  public func find(predicate: String, arguments: [BSON] = [], options: FindOptions = FindOptions()) throws(StoreError)
    -> Cursor
  {
    try Cursor(
      self, query: compile(predicate: predicate, arguments: arguments), options: options, ownsTransaction: false)
  }

  /// The documents that match a compiled query (a filter or a predicate), with its own SORT,
  /// DISTINCT and LIMIT and then the options, read one at a time (see ``find(_:options:)``).
  public func find(_ query: Query, options: FindOptions = FindOptions()) throws(StoreError) -> Cursor {
    try Cursor(self, query: query, options: options, ownsTransaction: false)
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
  /// - Complexity: O(*n*) in the documents read until the first match; with a sort, every match
  ///   is read (and only the first kept).
  public func findOne(_ filter: Document = Document(), sort: SortSpecification? = nil) throws(StoreError) -> Document? {
    let cursor = try find(filter, options: FindOptions(sort: sort, limit: 1))
    defer { cursor.close() }
    return try cursor.next()
  }

  /// How many documents match, counted without copying them (in constant memory).
  /// - Complexity: O(1) for every document (LMDB's count); O(*n*) in the documents read otherwise.
  public func count(_ filter: Document = Document()) throws(StoreError) -> Int {
    if filter.isEmpty {
      guard let info = try transaction.info(name, create: false),
        let documents = try transaction.documentsDatabase(info, create: false)
      else { return 0 }
      return try lmdb.count(documents)
    }
    return try find(filter).count()
  }

  /// The distinct values at `key` among the matching documents (array elements count one by
  /// one), in MongoDB's order.
  public func distinct(_ key: String, filter: Document = Document()) throws(StoreError) -> [BSON] {
    let spec = try IndexSpecification(keys: ["\(key)": 1] as Document, name: "distinct")
    // By encoded key: equal values share an encoding, and its byte order is MongoDB's order.
    var values: [[UInt8]: BSON] = [:]
    let cursor = try find(filter)
    while let document = try cursor.next() {
      for (entry, encoded) in try spec.entries(for: document) {
        let value = entry[0]
        if case .undefined = value { continue }
        if case .null = value, document[key] == nil { continue }
        if values[encoded] == nil { values[encoded] = value }  // the first of equal values
      }
    }
    return values.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map(\.value)
  }

  /// How the query would run, after running it (counting its results, without keeping them).
  public func explain(_ filter: Document = Document(), options: FindOptions = FindOptions()) throws(StoreError)
    -> Explain
  {
    let cursor = try find(filter, options: options)
    _ = try cursor.count()
    return cursor.explain
  }

  func compile(_ filter: Document) throws(StoreError) -> Query {
    do {
      return try Query(filter: filter)
    } catch {
      throw StoreError(.invalidQuery, error.description, queryError: error)
    }
  }

  func compile(predicate: String, arguments: [BSON]) throws(StoreError) -> Query {
    do {
      return try Query(predicate: predicate, arguments: arguments)
    } catch {
      throw StoreError(.invalidQuery, error.description, queryError: error)
    }
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
    try transaction.noteChange(&info)
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
    guard let old = try find(filter, options: FindOptions(limit: 1)).next() else {
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
    try transaction.noteChange(&info)
    return UpdateResult(matched: 1, modified: 1, upsertedID: nil)
  }

  /// Applies an update document (`$set`, `$inc`, `$push`, …) to the first matching document;
  /// with `upsert`, to a new document seeded from the filter's equalities when none matches.
  ///
  /// Paths may be positional (see ``Update``): `$` is the element of an array that `filter`
  /// matched, `$[]` every element, `$[identifier]` the elements that the array filter of
  /// `identifier` matches.
  /// - Parameters:
  ///   - filter: a MongoDB filter document.
  ///   - update: a document of update operators.
  ///   - upsert: whether to insert a document when none matches.
  ///   - arrayFilters: the filters of the update's `$[identifier]` segments, one per identifier
  ///     (`[["elem.grade": ["$gte": 85]]]`), as MongoDB's `arrayFilters` option.
  /// - Throws: ``StoreError/Kind/invalidQuery`` with the ``UpdateError`` when the update or an
  ///   array filter does not parse or cannot apply to a matched document; nothing is written then.
  @discardableResult
  public func updateOne(_ filter: Document, _ update: Document, upsert: Bool = false, arrayFilters: [Document] = [])
    throws(StoreError) -> UpdateResult
  {
    try self.update(filter, update, upsert: upsert, arrayFilters: arrayFilters, many: false)
  }

  /// Applies an update document to every matching document; see ``updateOne(_:_:upsert:arrayFilters:)``.
  @discardableResult
  public func updateMany(_ filter: Document, _ update: Document, upsert: Bool = false, arrayFilters: [Document] = [])
    throws(StoreError) -> UpdateResult
  {
    try self.update(filter, update, upsert: upsert, arrayFilters: arrayFilters, many: true)
  }

  func update(_ filter: Document, _ updateDocument: Document, upsert: Bool, arrayFilters: [Document], many: Bool)
    throws(StoreError) -> UpdateResult
  {
    try transaction.requireWritable()
    let update: Update
    do {
      update = try Update(updateDocument, arrayFilters: arrayFilters)
    } catch {
      throw StoreError(.invalidQuery, error.description, updateError: error)
    }
    // Compiled once: the finder of `$`'s position reads the same query.
    let query = try compile(filter)
    var finder: MatchedPositionFinder?
    if update.usesMatchedPosition {
      do {
        finder = try MatchedPositionFinder(query)
      } catch {
        throw StoreError(.invalidQuery, error.description, updateError: error)
      }
    }
    let targets = try find(query, options: FindOptions(limit: many ? nil : 1)).toArray()
    if targets.isEmpty {
      guard upsert else { return UpdateResult(matched: 0, modified: 0, upsertedID: nil) }
      let seed = Update.upsertSeed(from: filter)
      let inserted: Document
      do {
        inserted = try update.apply(to: seed, isInsert: true)
      } catch {
        throw StoreError(.invalidQuery, error.description, updateError: error)
      }
      return UpdateResult(matched: 0, modified: 0, upsertedID: try insert(inserted))
    }
    var info = try transaction.info(name, create: true)!
    var modified = 0
    for old in targets {
      let new: Document
      do {
        new = try update.apply(to: old, isInsert: false, finder: finder)
      } catch {
        throw StoreError(.invalidQuery, error.description, updateError: error)
      }
      guard new != old else { continue }
      let id = old["_id"]!
      guard let newID = new["_id"], compareBSON(newID, id) == 0 else {
        throw StoreError(
          .invalidQuery, "an update cannot change _id (\(id))",
          updateError: UpdateError(.immutableField, "an update cannot change _id (\(id))", keyPath: ["_id"]))
      }
      let (stored, _) = try prepare(new)
      try put(stored, id: id, info: &info, replacing: old)
      try transaction.noteChange(&info)
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
    guard var info = try transaction.info(name, create: false),
      let documentsDB = try transaction.documentsDatabase(info, create: false)
    else { return 0 }
    let targets = try find(filter, options: FindOptions(limit: limit)).toArray()
    for old in targets {
      let primaryKey = KeyEncoding.encode([old["_id"]!])
      try lmdb.delete(documentsDB, primaryKey)
      try removeIndexEntries(old, primaryKey: primaryKey, info: info)
      transaction.recordChange(name, id: old["_id"]!, old: old, new: nil)
    }
    if !targets.isEmpty { try transaction.noteChange(&info) }
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
    transaction.recordReset(name)
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
      var scan = try DocumentScan(self, documentsDB)
      defer { scan.close() }
      while let (primaryKey, bson) = try scan.next() {
        try addEntries(
          Document(trustedBytesNoCopy: bson, owner: nil), primaryKey: Array(primaryKey), index: index,
          database: indexDB)
      }
    }
    info.indexes.append(index)
    try transaction.saveChange(&info)
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
    transaction.forgetIndexDatabases(info)
    if let handle = try transaction.database(info.indexName(index), create: false) {
      try lmdb.drop(handle)
      transaction.store.forgetHandle(info.indexName(index), droppedIn: lmdb)
    }
    try transaction.saveChange(&info)
    return true
  }

  /// Renames the collection, as MongoDB's `renameCollection`: its documents, indexes and UUID
  /// go with it, in O(1) (the catalog entry moves; the data stays where it is).
  /// - Parameters:
  ///   - newName: the new name, which follows MongoDB's naming rules (see ``Store/collection(_:)``).
  ///   - dropTarget: drop a collection already named `newName` first, in the same transaction.
  /// - Throws: ``StoreError/Kind/namespace`` when this collection does not exist or `newName`
  ///   exists and `dropTarget` is false, or `newName` breaks the naming rules (see
  ///   ``Store/collection(_:)``);
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
        throw StoreError(.invalidDocument, "the document cannot be stored in \(name): \(error)", bsonError: error)
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
    try write(document, id: id, info: &info, replacing: old)
    // The `_id` stored, which `id` equals but may not have the type of.
    transaction.recordChange(name, id: document["_id"] ?? id, old: old, new: document)
  }

  /// ``put(_:id:info:replacing:)`` without the change feed's record.
  private func write(_ document: Document, id: BSON, info: inout CollectionInfo, replacing old: Document?)
    throws(StoreError)
  {
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
    // duplicate unique key is reported for its `_id`. Without a unique index, the write below
    // checks it (it writes nothing when the key exists, before any index entry is written).
    if old == nil, info.indexes.contains(where: \.unique), try lmdb.get(documentsDB, primaryKey) != nil {
      throw duplicateID(id)
    }
    var planned: [(database: MDB_dbi, keys: [[UInt8]])] = []
    for index in info.indexes {
      let indexDB = try transaction.indexDatabase(info, index, create: true)!
      var keys: [[UInt8]] = []
      for key in try index.storedKeys(for: document, primaryKey: primaryKey) {
        if key.count > 511 { throw keyTooLarge(key.count, index: index.name) }
        if index.unique, let existing = try lmdb.get(indexDB, key), !existing.elementsEqual(primaryKey) {
          throw duplicateKey(index.values(ofKey: key, in: document), index: index)
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
    for key in try index.storedKeys(for: document, primaryKey: primaryKey) {
      guard index.unique else {
        try lmdb.put(database, key, primaryKey)
        continue
      }
      if try !lmdb.put(database, key, primaryKey, unique: true) {
        if let existing = try lmdb.get(database, key), existing.elementsEqual(primaryKey) { continue }
        throw duplicateKey(index.values(ofKey: key, in: document), index: index)
      }
    }
  }

  /// Removes the index entries of a stored document whose key is `primaryKey`.
  func removeIndexEntries(_ document: Document, primaryKey: [UInt8], info: CollectionInfo) throws(StoreError) {
    for index in info.indexes {
      guard let indexDB = try transaction.indexDatabase(info, index, create: false) else { continue }
      for key in (try? index.storedKeys(for: document, primaryKey: primaryKey)) ?? [] {
        try lmdb.delete(indexDB, key)
      }
    }
  }
}
