import CLMDB
import ReefBSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Throws a StoreError for a non-zero LMDB return code.
@inline(__always)
func check(_ code: Int32, _ doing: @autoclosure () -> String) throws(StoreError) {
  if code != 0 { throw StoreError.lmdb(code, doing()) }
}

/// An LMDB value pointing at `bytes` for the duration of `body`.
@inline(__always)
func withValue<R>(_ bytes: [UInt8], _ body: (inout MDB_val) throws(StoreError) -> R) throws(StoreError) -> R {
  try withBytes(bytes) { (raw) throws(StoreError) -> R in
    var value = lmdbValue(raw)
    return try body(&value)
  }
}

/// Calls `body` with the bytes of `array` (`withUnsafeBytes`, with the closure's typed error).
@inline(__always)
func withBytes<R, E: Error>(_ array: [UInt8], _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
  try array.withUnsafeBytes { raw in Result { () throws(E) -> R in try body(raw) } }.get()
}

/// The bytes an LMDB value points at (valid until the transaction ends or the data is written).
@inline(__always)
func buffer(_ value: MDB_val) -> UnsafeRawBufferPointer {
  UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)
}

/// An LMDB value pointing at `bytes` (LMDB only reads a key or a value given to it): the inverse
/// of ``buffer(_:)``.
@inline(__always)
func lmdbValue(_ bytes: UnsafeRawBufferPointer) -> MDB_val {
  MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
}

/// The error for a key over LMDB's size limit (`MDB_BAD_VALSIZE` from a write), naming the index
/// whose entry it is when known.
@inline(never)
func keyTooLarge(_ count: Int, index: String? = nil) -> StoreError {
  StoreError(
    .index, "a key of \(count) bytes is over LMDB's limit of 511 bytes" + (index.map { " (index \($0))" } ?? ""))
}

/// An LMDB transaction: read-only or read-write, ended by commit or abort exactly once.
///
/// A read transaction can instead be reset (``reset()``) and begun again later with the same
/// handle (``renew()``), as LMDB recommends for frequent short reads: that saves allocating the
/// handle and, with `MDB_NOTLS`, taking the reader table's lock to claim a slot.
final class LMDBTransaction {
  let pointer: OpaquePointer
  let readOnly: Bool
  private(set) var finished = false
  /// Whether the handle is reset: ended, but still holding its memory and its reader slot until
  /// renewed or aborted.
  private(set) var isReset = false
  /// Whether a database was opened in this transaction: its handle lasts beyond the transaction
  /// only if the transaction commits (a reset or abort closes it), so such a read transaction
  /// is committed, never reset.
  private(set) var openedDatabase = false
  /// The commit log's record of this write transaction's changes, when the store has a log:
  /// every change made through this handle is added to it.
  var record: CommitRecord?
  /// Whether this write transaction changed something (a put, a delete, a drop, a database
  /// made): LMDB then commits it as a new transaction, and ``commit()`` stamps it first.
  private(set) var changed = false

  init(environment: OpaquePointer, readOnly: Bool) throws(StoreError) {
    var txn: OpaquePointer?
    var code = mdb_txn_begin(environment, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn)
    if code == MDB_MAP_RESIZED {
      // Another process grew the map past ours. LMDB adopts the new size only while this
      // process has no transaction open; the caller holds the begin lock and has checked.
      throw StoreError.mapResized
    }
    if code == 0 && txn == nil { code = EINVAL }
    try check(code, readOnly ? "read transaction" : "write transaction")
    pointer = txn!
    self.readOnly = readOnly
  }

  /// Commits the transaction. A write transaction that changed something first stores its
  /// transaction number under ``TransactionStamp/key`` in LMDB's main table (a page the commit
  /// rewrites anyway, to record the changed tables' roots), which the checks at opening compare
  /// with the header page that names the table (`StoreFileCheck`). If that fails, nothing is
  /// committed and the caller aborts.
  func commit() throws(StoreError) {
    guard !finished else { return }
    if changed && !readOnly { try stamp() }
    finished = true
    try check(mdb_txn_commit(pointer), "write transaction commit")
  }

  /// Stores this transaction's number under the stamp key of the main table (not recorded in the
  /// commit log: applying a record commits, and so stamps, again).
  private func stamp() throws(StoreError) {
    var main: MDB_dbi = 0
    try check(mdb_dbi_open(pointer, nil, 0, &main), "write transaction commit: opening the main table")
    // On the stack: no allocation per commit.
    var number = UInt64(mdb_txn_id(pointer)).littleEndian
    let code = withUnsafeMutableBytes(of: &number) { bytes in
      TransactionStamp.key.withUnsafeBytes { key in
        var keyValue = lmdbValue(key)
        var data = MDB_val(mv_size: bytes.count, mv_data: bytes.baseAddress)
        return mdb_put(pointer, main, &keyValue, &data, 0)
      }
    }
    try check(code, "write transaction commit: stamping it")
  }

  func abort() {
    guard !finished || isReset else { return }
    finished = true
    isReset = false
    mdb_txn_abort(pointer)
  }

  /// Ends a read transaction but keeps its handle for ``renew()``.
  func reset() {
    precondition(readOnly && !finished && !openedDatabase, "only a read transaction that opened no database is reset")
    finished = true
    isReset = true
    mdb_txn_reset(pointer)
  }

  /// Begins a reset read transaction again, on the newest snapshot. On failure the handle is
  /// aborted (freed, its reader slot released) and must not be used again.
  func renew() throws(StoreError) {
    precondition(isReset, "only a reset transaction is renewed")
    let code = mdb_txn_renew(pointer)
    guard code == 0 else {
      abort()
      if code == MDB_MAP_RESIZED { throw StoreError.mapResized }
      throw StoreError.lmdb(code, "read transaction")
    }
    finished = false
    isReset = false
  }

  deinit { abort() }

  /// Whether `handle` can be used in this transaction: LMDB refuses (EINVAL) a handle that
  /// another transaction of the process opened after this read transaction began.
  func canUse(_ handle: MDB_dbi) -> Bool {
    var flags: UInt32 = 0
    return mdb_dbi_flags(pointer, handle, &flags) == 0
  }

  /// Whether LMDB's main table names the database `name` in this transaction's snapshot.
  func namesDatabase(_ name: String) throws(StoreError) -> Bool {
    var main: MDB_dbi = 0
    try check(mdb_dbi_open(pointer, nil, 0, &main), "opening the main table")
    return try get(main, Array(name.utf8)) != nil
  }

  /// Opens (or creates, in a write transaction) a named database.
  func open(_ name: String, create: Bool) throws(StoreError) -> MDB_dbi? {
    var dbi: MDB_dbi = 0
    openedDatabase = true
    // A database that exists is opened without creating it, so that only a database made here
    // is recorded with the create flag (LMDB does not say whether MDB_CREATE made one). A record
    // naming one that existed (and nothing else) would change nothing in LMDB, which then gives
    // its transaction number again.
    var code = mdb_dbi_open(pointer, name, 0, &dbi)
    let created = code == MDB_NOTFOUND && create
    if created { code = mdb_dbi_open(pointer, name, UInt32(MDB_CREATE), &dbi) }
    if code == MDB_NOTFOUND { return nil }
    try check(code, "opening \(name)")
    // The same order as LMDB's default, compared without a memcmp call per node.
    try check(reef_set_compare(pointer, dbi), "opening \(name)")
    if created {
      changed = true
      record?.define(dbi, name: name, create: true)
    }
    return dbi
  }

  func get(_ dbi: MDB_dbi, _ key: [UInt8]) throws(StoreError) -> UnsafeRawBufferPointer? {
    try withBytes(key) { (raw) throws(StoreError) -> UnsafeRawBufferPointer? in try get(dbi, raw) }
  }

  /// The value under a key given as bytes (such as an index entry's value, read from the map).
  func get(_ dbi: MDB_dbi, _ key: UnsafeRawBufferPointer) throws(StoreError) -> UnsafeRawBufferPointer? {
    var keyValue = lmdbValue(key)
    var data = MDB_val()
    let code = mdb_get(pointer, dbi, &keyValue, &data)
    if code == MDB_NOTFOUND { return nil }
    try check(code, "read")
    return buffer(data)
  }

  /// A database's tree for `reef_lookup_many`, which looks up many keys at once: only in a read
  /// transaction (whose pages are all in the map) and when the tree's record checks out; nil
  /// otherwise, and then ``get(_:_:)-(_,UnsafeRawBufferPointer)`` is the way.
  func lookupTree(_ dbi: MDB_dbi, name: String) -> reef_tree? {
    guard readOnly else { return nil }
    var tree = reef_tree()
    return reef_tree_open(pointer, dbi, name, &tree) == 0 ? tree : nil
  }

  /// Stores `value` under `key`; with `unique`, an existing key is left alone and false returned.
  @discardableResult
  func put(_ dbi: MDB_dbi, _ key: [UInt8], _ value: [UInt8], unique: Bool = false) throws(StoreError) -> Bool {
    try withValue(key) { (keyValue: inout MDB_val) throws(StoreError) -> Bool in
      try withValue(value) { (dataValue: inout MDB_val) throws(StoreError) -> Bool in
        let code = mdb_put(pointer, dbi, &keyValue, &dataValue, unique ? UInt32(MDB_NOOVERWRITE) : 0)
        if code == MDB_KEYEXIST { return false }
        if code == MDB_BAD_VALSIZE { throw keyTooLarge(key.count) }
        try check(code, "write")
        changed = true
        record?.put(dbi, key: buffer(keyValue), value: buffer(dataValue))
        return true
      }
    }
  }

  /// Stores a document's database value (checksum, then BSON) under `key`, written straight into
  /// the page LMDB reserves for it (`MDB_RESERVE`: no intermediate copy). With `unique`, an
  /// existing key is left alone and false returned (`MDB_NOOVERWRITE`: the duplicate check and
  /// the write are one search of the tree).
  func putDocument(_ dbi: MDB_dbi, _ key: UnsafeRawBufferPointer, _ document: Document, unique: Bool) throws(StoreError)
    -> Bool
  {
    var keyValue = lmdbValue(key)
    return try document.withUnsafeBytes { (bson) throws(StoreError) -> Bool in
      var data = MDB_val(mv_size: StoredDocument.headerSize + bson.count, mv_data: nil)
      let flags = UInt32(MDB_RESERVE) | (unique ? UInt32(MDB_NOOVERWRITE) : 0)
      let code = mdb_put(pointer, dbi, &keyValue, &data, flags)
      // On MDB_KEYEXIST `data` is the existing value: it must not be written.
      if code == MDB_KEYEXIST { return false }
      if code == MDB_BAD_VALSIZE { throw keyTooLarge(key.count) }
      try check(code, "write")
      changed = true
      // The reserved space must be filled before the next write in this transaction: it is, here.
      StoredDocument.write(bson, to: UnsafeMutableRawBufferPointer(start: data.mv_data, count: data.mv_size))
      record?.put(dbi, key: key, value: buffer(data))
      return true
    }
  }

  @discardableResult
  func delete(_ dbi: MDB_dbi, _ key: [UInt8]) throws(StoreError) -> Bool {
    try withValue(key) { (keyValue: inout MDB_val) throws(StoreError) -> Bool in
      let code = mdb_del(pointer, dbi, &keyValue, nil)
      if code == MDB_NOTFOUND { return false }
      try check(code, "delete")
      changed = true
      record?.delete(dbi, key: buffer(keyValue))
      return true
    }
  }

  /// Removes a database and its contents.
  func drop(_ dbi: MDB_dbi) throws(StoreError) {
    try check(mdb_drop(pointer, dbi, 1), "drop")
    changed = true
    record?.drop(dbi)
  }

  /// Number of entries in a database.
  func count(_ dbi: MDB_dbi) throws(StoreError) -> Int {
    var stat = MDB_stat()
    try check(mdb_stat(pointer, dbi, &stat), "stat")
    return stat.ms_entries
  }

  /// Bytes the database's pages take.
  func size(_ dbi: MDB_dbi) throws(StoreError) -> Int {
    var stat = MDB_stat()
    try check(mdb_stat(pointer, dbi, &stat), "stat")
    return Int(stat.ms_psize) * (stat.ms_branch_pages + stat.ms_leaf_pages + stat.ms_overflow_pages)
  }

  /// Visits entries in key order from `start` (or the first), until `body` returns false.
  func scan(
    _ dbi: MDB_dbi, from start: [UInt8]? = nil,
    _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(StoreError) -> Bool
  ) throws(StoreError) {
    let cursor = try LMDBCursor(self, dbi)
    defer { cursor.close() }
    try cursor.seek(start)
    while let (key, value) = try cursor.next() {
      guard try body(key, value) else { return }
    }
  }
}

/// An LMDB cursor read forward, one entry at a time: the one primitive every scan of the store
/// reads through (``LMDBTransaction/scan(_:from:_:)``, ``DocumentScan``, index plans).
///
/// In a read transaction every pointer stays valid until it ends, so the next entry is found,
/// and its value prefetched, before the current one is returned: its cache misses overlap the
/// caller's work on the current one instead of following it. (In a write transaction the
/// caller may change the database between calls, so the cursor moves only when asked.)
///
/// A cursor of a read transaction may be closed after the transaction ends (LMDB allows it);
/// one of a write transaction must be closed before (LMDB frees it with the transaction).
final class LMDBCursor {
  private var pointer: OpaquePointer?
  private let readAhead: Bool
  /// The entry the next call returns, found ahead (in a read transaction), and LMDB's code for it.
  private var key = MDB_val()
  private var data = MDB_val()
  private var code: Int32 = MDB_NOTFOUND
  /// Whether the cursor is positioned and the entry in `key`/`data` (if `code` is 0) not yet returned.
  private var positioned = false
  private var page: UInt = 0

  init(_ transaction: LMDBTransaction, _ dbi: MDB_dbi) throws(StoreError) {
    var cursor: OpaquePointer?
    try check(mdb_cursor_open(transaction.pointer, dbi, &cursor), "cursor")
    pointer = cursor
    readAhead = transaction.readOnly
  }

  deinit { close() }

  /// Places the cursor at the first entry at or after `start` (the first entry when nil).
  func seek(_ start: [UInt8]?) throws(StoreError) {
    if let start {
      code = try withValue(start) { (startValue: inout MDB_val) throws(StoreError) -> Int32 in
        let result = mdb_cursor_get(pointer, &startValue, &data, MDB_SET_RANGE)
        key = startValue
        return result
      }
    } else {
      code = mdb_cursor_get(pointer, &key, &data, MDB_FIRST)
    }
    positioned = true
    if code == 0 && readAhead { reef_prefetch_entry(data.mv_data, data.mv_size, &page) }
  }

  /// The next entry (key and value, views of the map valid until the transaction ends or, in a
  /// write transaction, the database changes), or nil after the last.
  @inline(__always)
  func next() throws(StoreError) -> (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)? {
    if !positioned {
      guard pointer != nil else { return nil }
      code = mdb_cursor_get(pointer, &key, &data, MDB_NEXT)
    }
    guard code == 0 else {
      if code != MDB_NOTFOUND { try check(code, "cursor") }
      return nil
    }
    let current = (key: buffer(key), value: buffer(data))
    if readAhead {
      code = mdb_cursor_get(pointer, &key, &data, MDB_NEXT)
      if code == 0 { reef_prefetch_entry(data.mv_data, data.mv_size, &page) }
    } else {
      positioned = false
    }
    return current
  }

  /// Closes the cursor; ``next()`` then returns nil.
  func close() {
    guard let cursor = pointer else { return }
    pointer = nil
    code = MDB_NOTFOUND
    positioned = true
    mdb_cursor_close(cursor)
  }
}
