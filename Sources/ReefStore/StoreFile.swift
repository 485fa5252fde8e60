import CLMDB

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// One of LMDB 0.9's two meta pages (the store file's header), from its first bytes: the page
/// header (`mp_pgno`, `mp_flags`), then `MDB_meta` (`Specs/store/layout.md`, "Checks at opening").
struct LMDBMeta: Equatable {
  /// Which meta page: 0 (at offset 0) or 1 (at offset `pageSize`).
  var page: Int
  var pageSize: Int
  var freeFlags: UInt16
  var freeDepth: UInt16
  var freeRoot: UInt64
  var mainFlags: UInt16
  var mainDepth: UInt16
  var mainEntries: UInt64
  var mainRoot: UInt64
  var lastPage: UInt64
  var transaction: UInt64

  /// Bytes of a meta page that hold its header and `MDB_meta`.
  static let size = 152
  static let magic: UInt32 = 0xBEEF_C0DE
  static let version: UInt32 = 1
  /// The page sizes LMDB uses (powers of 2 in this range).
  static let pageSizes = 512...65536
  /// The most levels a table's tree has (LMDB's `CURSOR_STACK`).
  static let maximumDepth: UInt16 = 32
  /// `P_INVALID`: the root of an empty table.
  static let noPage = UInt64.max

  /// The meta page `page` in `bytes` (its first ``size`` bytes at least); nil unless it carries
  /// LMDB's meta flag, magic and data version.
  init?(_ bytes: [UInt8], page: Int) {
    guard bytes.count >= LMDBMeta.size, bytes.littleEndian(UInt16.self, at: 10) & LMDBPage.meta != 0,
      bytes.littleEndian(UInt32.self, at: 16) == LMDBMeta.magic,
      bytes.littleEndian(UInt32.self, at: 20) == LMDBMeta.version
    else { return nil }
    self.page = page
    // `mm_psize` is the free table's `md_pad`.
    pageSize = Int(bytes.littleEndian(UInt32.self, at: 40))
    freeFlags = bytes.littleEndian(UInt16.self, at: 44)
    freeDepth = bytes.littleEndian(UInt16.self, at: 46)
    freeRoot = bytes.littleEndian(UInt64.self, at: 80)
    mainFlags = bytes.littleEndian(UInt16.self, at: 92)
    mainDepth = bytes.littleEndian(UInt16.self, at: 94)
    mainEntries = bytes.littleEndian(UInt64.self, at: 120)
    mainRoot = bytes.littleEndian(UInt64.self, at: 128)
    lastPage = bytes.littleEndian(UInt64.self, at: 136)
    transaction = bytes.littleEndian(UInt64.self, at: 144)
  }

  /// The bytes of the file the pages up to `lastPage` take.
  var requiredFileSize: Int {
    lastPage >= UInt64(Int.max / max(pageSize, 1)) ? Int.max : (Int(lastPage) + 1) * pageSize
  }
}

/// LMDB 0.9's page and node layout, as far as the checks at opening read it.
enum LMDBPage {
  static let headerSize = 16
  static let branch: UInt16 = 0x01
  static let leaf: UInt16 = 0x02
  static let overflow: UInt16 = 0x04
  static let meta: UInt16 = 0x08
  static let leaf2: UInt16 = 0x20
  /// A node whose value is a table's record (`F_SUBDATA`).
  static let subData: UInt16 = 0x02
  static let nodeHeaderSize = 8
  /// `MDB_INTEGERKEY`, the free table's flag; the main table has none.
  static let integerKey: UInt16 = 0x08
  /// The flags LMDB keeps in a table's record (`PERSISTENT_FLAGS`).
  static let persistentFlags: UInt16 = 0x7E
}

/// The store file's stamp: the key in LMDB's main table (the table of tables) under which every
/// write transaction that changes something stores its own transaction number (`mdb_txn_id`),
/// little-endian. A header (meta) page whose table root leads to a stamp other than its own
/// transaction number names an old or a foreign page: damage that LMDB cannot see.
/// The key starts with a zero byte, so it sorts before every table name (which cannot hold one).
enum TransactionStamp {
  static let key: [UInt8] = Array("\0reef.txn".utf8)
}

/// What the checks at opening found wrong with the store file: what was expected and what
/// was found, and where.
struct StoreFileDamage: Error, Equatable {
  enum Kind: Equatable {
    /// The file holds no bytes.
    case empty
    /// The file ends before a page the header records as in use.
    case truncated
    /// A header (meta) page, or a table root it names, is not what LMDB and Reef write.
    case header
  }
  var kind: Kind
  /// What is wrong, with the page and the values expected and found.
  var detail: String
  /// The transaction of the newest header page that is whole, if any (what a recovery must reach).
  var newestIntact: UInt64?
}

/// The checks of the store file made at opening, before LMDB maps it (`Specs/store/layout.md`):
/// every read is a `pread`, so a file cut short is reported, never mapped past its end.
struct StoreFileCheck {
  let descriptor: Int32
  let fileSize: Int

  /// Reads the status of the file open at `descriptor`.
  init?(descriptor: Int32) {
    var status = stat()
    guard fstat(descriptor, &status) == 0 else { return nil }
    self.descriptor = descriptor
    fileSize = Int(status.st_size)
  }

  /// The two meta pages of the file, read as LMDB reads them: page 0 at offset 0, page 1 at the
  /// page size page 0 records. Throws when the file is empty, too short, or a page is no meta page.
  func metas() throws(StoreFileDamage) -> [LMDBMeta] {
    if fileSize == 0 { throw StoreFileDamage(kind: .empty, detail: "the file is empty (0 bytes)") }
    /// Header page `page`, at byte `offset`.
    func meta(_ page: Int, at offset: Int) throws(StoreFileDamage) -> LMDBMeta {
      let bytes = preadAll(descriptor, count: LMDBMeta.size, at: offset)
      if let meta = LMDBMeta(bytes, page: page) { return meta }
      if bytes.count < LMDBMeta.size {
        throw StoreFileDamage(
          kind: .truncated,
          detail: "expected at least \(offset + LMDBMeta.size) bytes for header page \(page), found \(fileSize) bytes")
      }
      throw StoreFileDamage(
        kind: .header,
        detail:
          "header page \(page) (at byte \(offset)) is not an LMDB meta page (flags, magic 0xBEEFC0DE, version 1)")
    }
    let zero = try meta(0, at: 0)
    let pageSize = zero.pageSize
    guard LMDBMeta.pageSizes.contains(pageSize), pageSize.nonzeroBitCount == 1 else {
      throw StoreFileDamage(
        kind: .header,
        detail: "header page 0 records a page size of \(pageSize) bytes, expected a power of 2 from 512 to 65536")
    }
    let one = try meta(1, at: pageSize)
    return [zero, one]
  }

  /// Checks the store file's header pages against each other, against the file's size, and
  /// against the table roots they name; returns the newest (the one LMDB opens at).
  ///
  /// - Parameter given: the two meta pages to check (the file's own by default; a checkpoint's
  ///   copies to learn whether they could stand in for them).
  /// - Throws: ``StoreFileDamage`` for the first thing found wrong.
  @discardableResult
  func check(_ given: [LMDBMeta]? = nil) throws(StoreFileDamage) -> LMDBMeta {
    let metas: [LMDBMeta]
    if let given { metas = given } else { metas = try self.metas() }
    let newest = metas[0].transaction < metas[1].transaction ? metas[1] : metas[0]
    let older = metas[1 - newest.page]
    // The newest page that is whole on its own, for the recovery to reach.
    var intact: UInt64?
    for meta in [newest, older] {
      do throws(StoreFileDamage) {
        try checkPage(meta)
        intact = max(intact ?? 0, meta.transaction)
      } catch  where error.kind == .truncated {
        intact = max(intact ?? 0, meta.transaction)  // whole, but its pages are cut off
      } catch {}
    }
    func damage(_ kind: StoreFileDamage.Kind, _ detail: String) -> StoreFileDamage {
      StoreFileDamage(kind: kind, detail: detail, newestIntact: intact)
    }
    for meta in metas where !LMDBMeta.pageSizes.contains(meta.pageSize) || meta.pageSize.nonzeroBitCount != 1 {
      throw StoreFileDamage(
        kind: .header,
        detail: "header page \(meta.page) records a page size of \(meta.pageSize) bytes, expected a power of 2 "
          + "from 512 to 65536")
    }
    guard metas[0].pageSize == metas[1].pageSize else {
      throw damage(
        .header, "header page 0 records a page size of \(metas[0].pageSize) bytes, header page 1 \(metas[1].pageSize)")
    }
    // LMDB writes header page `transaction % 2` at each commit, so the two pages hold
    // consecutive transactions (both 0 in a new file), each on its own page.
    for meta in metas where meta.transaction != 0 && Int(meta.transaction % 2) != meta.page {
      throw damage(
        .header,
        "header page \(meta.page) records transaction \(meta.transaction), expected an \(meta.page == 0 ? "even" : "odd") "
          + "number (LMDB writes page 0 at even transactions, page 1 at odd ones)")
    }
    let apart = newest.transaction - older.transaction
    guard apart == 1 || (newest.transaction == 0 && older.transaction == 0) else {
      throw damage(
        .header,
        "header page \(newest.page) records transaction \(newest.transaction), header page \(older.page) "
          + "\(older.transaction): expected consecutive transactions")
    }
    guard newest.lastPage >= older.lastPage else {
      throw damage(
        .header,
        "header page \(newest.page) (transaction \(newest.transaction)) records last page \(newest.lastPage), "
          + "below the \(older.lastPage) of the older header page \(older.page): expected it never to shrink")
    }
    guard newest.requiredFileSize <= fileSize else {
      throw damage(
        .truncated,
        "expected \(newest.requiredFileSize) bytes for last page \(newest.lastPage) (header page \(newest.page), "
          + "transaction \(newest.transaction), pages of \(newest.pageSize) bytes), found \(fileSize) bytes")
    }
    for meta in [newest, older] {
      do throws(StoreFileDamage) {
        try checkPage(meta)
      } catch {
        throw damage(error.kind, error.detail)
      }
    }
    return newest
  }

  /// Checks one header page: its tables' flags and roots, and the stamp its main table holds.
  private func checkPage(_ meta: LMDBMeta) throws(StoreFileDamage) {
    let page = "header page \(meta.page) (transaction \(meta.transaction))"
    guard meta.requiredFileSize <= fileSize else {
      throw StoreFileDamage(
        kind: .truncated,
        detail:
          "expected \(meta.requiredFileSize) bytes for last page \(meta.lastPage) of \(page), found \(fileSize) bytes")
    }
    guard meta.mainFlags == 0 else {
      throw StoreFileDamage(
        kind: .header, detail: "\(page) records main table flags 0x\(String(meta.mainFlags, radix: 16)), expected 0")
    }
    guard meta.freeFlags & LMDBPage.persistentFlags == LMDBPage.integerKey else {
      throw StoreFileDamage(
        kind: .header,
        detail: "\(page) records free table flags 0x\(String(meta.freeFlags, radix: 16)), expected MDB_INTEGERKEY (0x8)"
      )
    }
    if meta.freeRoot != LMDBMeta.noPage {
      _ = try leftmostLeaf(root: meta.freeRoot, depth: meta.freeDepth, of: meta, table: "free table")
    }
    guard meta.mainRoot != LMDBMeta.noPage else {
      // An empty main table: a file LMDB has just made, before its first commit.
      guard meta.transaction == 0, meta.mainDepth == 0, meta.mainEntries == 0 else {
        throw StoreFileDamage(
          kind: .header,
          detail: "\(page) records an empty main table (no root page) with depth \(meta.mainDepth) and "
            + "\(meta.mainEntries) entries, expected a root page")
      }
      return
    }
    let (leaf, number) = try leftmostLeaf(root: meta.mainRoot, depth: meta.mainDepth, of: meta, table: "main table")
    // The first node of the main table's first leaf: the stamp, or (in a store written before
    // there were stamps) a table's record.
    let where_ = "the main table's first entry (page \(number), named by \(page))"
    guard let node = node(0, of: leaf) else {
      throw StoreFileDamage(kind: .header, detail: "\(where_) lies outside its page")
    }
    let flags = leaf.littleEndian(UInt16.self, at: node + 4)
    let keySize = Int(leaf.littleEndian(UInt16.self, at: node + 6))
    let dataSize =
      Int(leaf.littleEndian(UInt16.self, at: node)) | Int(leaf.littleEndian(UInt16.self, at: node + 2)) << 16
    let keyStart = node + LMDBPage.nodeHeaderSize
    guard keyStart + keySize <= leaf.count else {
      throw StoreFileDamage(kind: .header, detail: "\(where_) has a key of \(keySize) bytes past its page's end")
    }
    if leaf[keyStart..<keyStart + keySize].elementsEqual(TransactionStamp.key) {
      guard flags == 0, dataSize == 8, keyStart + keySize + 8 <= leaf.count else {
        throw StoreFileDamage(
          kind: .header, detail: "\(where_) is the stamp with flags \(flags) and \(dataSize) bytes, expected 0 and 8")
      }
      let stamp = leaf.littleEndian(UInt64.self, at: keyStart + keySize)
      guard stamp == meta.transaction else {
        throw StoreFileDamage(
          kind: .header,
          detail: "\(page) names main table root page \(meta.mainRoot), whose stamp is transaction \(stamp): "
            + "expected \(meta.transaction) (the root page number, or the transaction number, is damaged)")
      }
      return
    }
    // No stamp: a store last written before stamps, whose main table holds table records only.
    guard flags & LMDBPage.subData != 0, dataSize == 48 else {
      throw StoreFileDamage(
        kind: .header,
        detail: "\(page) names main table root page \(meta.mainRoot), whose first entry is not a table record "
          + "(node flags 0x\(String(flags, radix: 16)), \(dataSize) bytes): expected the stamp or a table record")
    }
  }

  /// Reads a table's pages from `root` down its first child to its first leaf, checking that
  /// each page is in use (at most the header's last page), carries its own number and is a branch
  /// page above the leaf level and a leaf at depth `depth`. Returns the leaf and its number.
  private func leftmostLeaf(root: UInt64, depth: UInt16, of meta: LMDBMeta, table: String) throws(StoreFileDamage)
    -> ([UInt8], UInt64)
  {
    let page = "header page \(meta.page) (transaction \(meta.transaction))"
    guard depth >= 1, depth <= LMDBMeta.maximumDepth else {
      throw StoreFileDamage(
        kind: .header,
        detail: "\(page) records a \(table) of depth \(depth), expected 1 to \(LMDBMeta.maximumDepth) for a root page")
    }
    var number = root
    var level: UInt16 = 1
    while true {
      guard number <= meta.lastPage else {
        throw StoreFileDamage(
          kind: .header,
          detail: "\(page) names \(table) page \(number) at level \(level), past its last page \(meta.lastPage)")
      }
      let bytes = preadAll(descriptor, count: meta.pageSize, at: Int(number) * meta.pageSize)
      guard bytes.count == meta.pageSize else {
        throw StoreFileDamage(
          kind: .truncated,
          detail:
            "expected \((Int(number) + 1) * meta.pageSize) bytes for \(table) page \(number), found \(fileSize) bytes")
      }
      let own = bytes.littleEndian(UInt64.self, at: 0)
      let flags = bytes.littleEndian(UInt16.self, at: 10)
      let kind = flags & (LMDBPage.branch | LMDBPage.leaf | LMDBPage.leaf2 | LMDBPage.overflow | LMDBPage.meta)
      let expected = level < depth ? LMDBPage.branch : LMDBPage.leaf
      guard own == number, kind == expected, level <= depth else {
        throw StoreFileDamage(
          kind: .header,
          detail: "\(page) names \(table) page \(number) (level \(level) of \(depth)), which holds page number \(own) "
            + "and flags 0x\(String(flags, radix: 16)): expected page number \(number) and a \(level < depth ? "branch" : "leaf") page"
        )
      }
      if kind == LMDBPage.leaf { return (bytes, number) }
      guard let node = node(0, of: bytes) else {
        throw StoreFileDamage(kind: .header, detail: "\(table) page \(number) has no first node inside it")
      }
      number =
        UInt64(bytes.littleEndian(UInt16.self, at: node)) | UInt64(bytes.littleEndian(UInt16.self, at: node + 2)) << 16
        | UInt64(bytes.littleEndian(UInt16.self, at: node + 4)) << 32
      level += 1
    }
  }

  /// The offset of node `index` of a page, if the page's node offsets and that node's header
  /// lie inside it.
  private func node(_ index: Int, of page: [UInt8]) -> Int? {
    let lower = Int(page.littleEndian(UInt16.self, at: 12))
    let upper = Int(page.littleEndian(UInt16.self, at: 14))
    let entries = (lower - LMDBPage.headerSize) / 2
    guard lower >= LMDBPage.headerSize, lower <= upper, upper <= page.count, index < entries else { return nil }
    let offset = Int(page.littleEndian(UInt16.self, at: LMDBPage.headerSize + 2 * index))
    guard offset >= upper, offset + LMDBPage.nodeHeaderSize <= page.count else { return nil }
    return offset
  }
}

extension Store {
  /// Checks the store file at `path` before LMDB maps it (`StoreFileCheck`): a file cut short
  /// or a damaged header page is refused with an error saying what was expected, what was
  /// found, where, and how to recover, never mapped (a read past the end of a mapped file is
  /// `SIGBUS`). An empty file is a new store only when nothing says it held one: no checkpoint
  /// in its commit log, and no lock file left without a log.
  ///
  /// - Parameters:
  ///   - log: the store's commit log, opened (and its recovery done) already.
  ///   - hadLog: whether the log file existed before this open.
  static func checkStoreFile(path: String, log: CommitLog?, readOnly: Bool, hadLog: Bool) throws(StoreError) {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return }  // missing: LMDB makes it, or reports it (read-only)
    defer { close(descriptor) }
    var found: StoreFileDamage?
    // Read again after a failure: a writer of another process may have been committing.
    for _ in 0..<3 {
      guard let check = StoreFileCheck(descriptor: descriptor) else { return }
      do throws(StoreFileDamage) {
        try check.check()
        return
      } catch {
        found = error
      }
    }
    guard let damage = found else { return }
    let restore = "restore the store's files from a backup, or import a dump of it into a new store"
    switch damage.kind {
    case .empty:
      let checkpoint = log?.validHeader()
      let lockLeft = !hadLog && access(path + "-lock", F_OK) == 0
      if !readOnly && checkpoint == nil && !lockLeft { return }  // a new store
      let why: String
      if let checkpoint {
        why =
          "its commit log \(path)-log records a checkpoint at transaction \(checkpoint.checkpoint), so it held a "
          + "store: it was truncated or replaced, and the log cannot rebuild it (the checkpoint's pages are gone)"
      } else if lockLeft {
        why = "its lock file \(path)-lock is there without a commit log, so it held a store: it was truncated"
      } else {
        why = "a new store is made by opening it for writing"
      }
      throw StoreError(
        .corrupt,
        "the store file \(path) is empty (0 bytes), expected LMDB's header pages: \(why). To recover, \(restore)"
          + (checkpoint != nil || lockLeft
            ? "; to start a new empty store there, remove \(path)-log, "
              + "\(path)-log-shared and \(path)-lock first" : ""))
    case .truncated, .header:
      let what = damage.kind == .truncated ? "is truncated" : "has a damaged header"
      let note = log?.damageNote.map { " The commit log cannot rebuild it: \($0)." } ?? ""
      throw StoreError(
        .corrupt, "the store file \(path) \(what): \(damage.detail).\(note) To recover, \(restore)")
    }
  }
}
