import ReefTestSupport

/// A store file's bytes, read as LMDB 0.9 lays them out (`Specs/store/layout.md`), apart from
/// the store's own reading: where its header (meta) pages keep their fields, and which pages
/// hold a table's entries, found by walking its tree from the root. The damage tests change
/// bytes at the offsets it finds.
struct StoreFileImage {
  var bytes: [UInt8]

  /// Reads the store file at `path`.
  ///
  /// - Throws: ``PowerLossError`` when it cannot be read.
  init(path: String) throws { bytes = try PowerLoss.contents(of: path) }

  /// The page size, as header page 0 records it (`mm_psize`, the free table's `md_pad`).
  var pageSize: Int { Int(bytes.littleEndian(at: 40, size: 4)) }

  /// The transaction that header page `page` records (`mm_txnid`).
  func transaction(ofHeader page: Int) -> UInt64 { bytes.littleEndian(at: page * pageSize + 144, size: 8) }

  /// The header page LMDB opens at: the one with the larger transaction.
  var newestHeader: Int { transaction(ofHeader: 1) > transaction(ofHeader: 0) ? 1 : 0 }

  /// Offsets of the fields of header page `page`: the main table's flags (2 bytes) and root page
  /// number (8), the last page (8), the transaction (8).
  func mainFlagsOffset(ofHeader page: Int) -> Int { page * pageSize + 92 }
  func mainRootOffset(ofHeader page: Int) -> Int { page * pageSize + 128 }
  func lastPageOffset(ofHeader page: Int) -> Int { page * pageSize + 136 }
  func transactionOffset(ofHeader page: Int) -> Int { page * pageSize + 144 }

  /// The main table's root page, as header page `page` records it.
  func mainRoot(ofHeader page: Int) -> UInt64 { bytes.littleEndian(at: mainRootOffset(ofHeader: page), size: 8) }

  /// The last page in use, as header page `page` records it.
  func lastPage(ofHeader page: Int) -> UInt64 { bytes.littleEndian(at: lastPageOffset(ofHeader: page), size: 8) }

  /// The bytes the pages in use take, as the newest header page records them.
  var usedSize: Int { (Int(lastPage(ofHeader: newestHeader)) + 1) * pageSize }

  /// The offset of the flags (`mp_flags`, 2 bytes) of page `page`.
  func flagsOffset(ofPage page: UInt64) -> Int { Int(page) * pageSize + 10 }

  /// The leaf pages of the named table `name` (such as `c:1`, a collection's documents), in key
  /// order, walking its tree from the root that the newest header page's main table records.
  ///
  /// - Throws: ``PowerLossError`` when the table is not found or a page is not as LMDB writes it.
  func leaves(ofTable name: String) throws -> [UInt64] {
    let header = newestHeader
    let mainDepth = Int(bytes.littleEndian(at: header * pageSize + 94, size: 2))
    var record: [UInt8]?
    for leaf in try leaves(root: mainRoot(ofHeader: header), depth: mainDepth) {
      for node in try nodes(of: leaf) where Array(key(of: node)) == Array(name.utf8) {
        let start = node + 8 + keySize(of: node)
        record = Array(bytes[start..<start + 48])
      }
    }
    guard let record else { throw PowerLossError("no table named \(name) in the main table") }
    return try leaves(root: record.littleEndian(at: 40, size: 8), depth: Int(record.littleEndian(at: 6, size: 2)))
  }

  /// The leaves under `root`, in order, for a tree of `depth` levels.
  private func leaves(root: UInt64, depth: Int) throws -> [UInt64] {
    var level = [root]
    for _ in 1..<max(depth, 1) {
      var below: [UInt64] = []
      for page in level {
        guard flags(of: page) & 0x01 != 0 else { throw PowerLossError("page \(page) is not a branch page") }
        for node in try nodes(of: page) {
          below.append(
            bytes.littleEndian(at: node, size: 4) | bytes.littleEndian(at: node + 4, size: 2) << 32)
        }
      }
      level = below
    }
    for page in level where flags(of: page) & 0x02 == 0 { throw PowerLossError("page \(page) is not a leaf page") }
    return level
  }

  private func flags(of page: UInt64) -> UInt64 { bytes.littleEndian(at: flagsOffset(ofPage: page), size: 2) }

  /// The offsets in the file of the nodes of page `page`.
  private func nodes(of page: UInt64) throws -> [Int] {
    let base = Int(page) * pageSize
    guard bytes.littleEndian(at: base, size: 8) == page else {
      throw PowerLossError("page \(page) does not hold its own number")
    }
    let lower = Int(bytes.littleEndian(at: base + 12, size: 2))
    return (0..<(lower - 16) / 2).map { base + Int(bytes.littleEndian(at: base + 16 + 2 * $0, size: 2)) }
  }

  private func keySize(of node: Int) -> Int { Int(bytes.littleEndian(at: node + 6, size: 2)) }
  private func key(of node: Int) -> ArraySlice<UInt8> { bytes[node + 8..<node + 8 + keySize(of: node)] }
}
