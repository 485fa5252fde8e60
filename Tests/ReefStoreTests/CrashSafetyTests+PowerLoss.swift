import ReefTestSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A crashed store's files copied, then damaged as a power loss may damage them: what the crash
/// test checks recovery from, since a SIGKILL leaves the page cache (and so every write) intact.
///
/// The copy (``PowerLoss/copyStore(_:into:withLog:)``) holds the store file and its commit log
/// as the page cache holds them. In the copy (`Specs/store/log.md`):
/// - both of LMDB's meta pages and every page past the checkpoint's last page are garbage
///   (``PowerLoss/damage(storeAt:since:seed:)``);
/// - the log's checkpoint (its newest valid header slot) names the copy's file (device and
///   inode) and another boot of the machine, with its CRC-32C made again
///   (``PowerLoss/rewriteHeader(_:slot:boot:ownFile:)``), so that opening the copy recovers:
///   writes the checkpoint's meta pages back and applies the log's records.
///
/// The log keeps every record written before the kill (the page cache's), as a power loss after
/// the log's last flush leaves it; unless the copy is `losingRecords` (for commits that do not
/// flush the log, which a power loss may undo): then one of its records, chosen at random, or
/// none, is garbage, and the records after it are whole but must not be applied.
struct PowerLossCopy {
  /// The copy's store file, next to its `-log`.
  let path: String
  /// The transaction the checkpoint made the store file durable at.
  let checkpoint: UInt64
  /// The checkpoint's last page: the pages past it are garbage in the copy.
  let lastPage: UInt64
  /// How many pages past ``lastPage`` the store file holds (garbage in the copy).
  let lostPages: Int
  /// How many records of the checkpoint the log holds (before one is lost).
  let records: Int
  /// The record made garbage (from 0), if any.
  let lostRecord: Int?

  /// Copies the store at `store` into `directory` (made if needed, emptied of an earlier copy)
  /// and damages the copy, with bytes from `garbage` (which also chooses the record lost when
  /// `losingRecords`). Nil when the store has no checkpoint yet (its first writer died before
  /// making one): a power loss then has nothing to keep.
  init?(of store: String, in directory: String, losingRecords: Bool = false, garbage: inout SplitMix64) throws {
    guard access(store, F_OK) == 0, access(store + "-log", F_OK) == 0 else { return nil }
    path = try PowerLoss.copyStore(store, into: directory)
    let log = try LogImage(path: path + "-log")
    guard let header = log.newest else { return nil }
    let meta = try header.checkpointMeta()
    checkpoint = meta.transaction
    lastPage = meta.lastPage
    lostPages = try PowerLoss.damage(storeAt: path, seed: garbage.next())

    let extents = log.records(of: header)
    records = extents.count
    let lost = losingRecords ? Int(garbage.next() % UInt64(records + 1)) : records
    lostRecord = lost < records ? lost : nil
    if let lostRecord {
      let record = extents[lostRecord]
      let size = min(record.size, log.bytes.count - record.offset)
      try PowerLoss.overwrite(path + "-log", at: record.offset, with: PowerLoss.garbage(size, &garbage))
    }
    try PowerLoss.rewriteHeader(path, slot: header.slot)
  }
}
