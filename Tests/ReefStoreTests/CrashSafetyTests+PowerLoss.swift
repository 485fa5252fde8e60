import CLMDB
import ReefTestSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A crashed store's files copied, then damaged as a power loss may damage them: what the crash
/// test checks recovery from, since a SIGKILL leaves the page cache (and so every write) intact.
///
/// The copy holds the store file (`PATH`) and its commit log (`PATH-log`) as the page cache holds
/// them, read and written with plain reads and writes; not `PATH-lock` or `PATH-log-shared`,
/// which a restart does not keep either. In the copy (`Specs/store/log.md`):
/// - both of LMDB's meta pages (the first 256 bytes at offset 0 and at the page size) are
///   garbage: meta pages written since the checkpoint may have reached the disk or not, and
///   may name pages that never did;
/// - every page past the checkpoint's last page (`mm_last_pg` of its newer meta copy) is
///   garbage: LMDB wrote them after the checkpoint, without a flush;
/// - the log's checkpoint (its newest valid header slot) names the copy's file (device and
///   inode) and another boot of the machine, with its CRC-32C made again, so that opening the
///   copy recovers: writes the checkpoint's meta pages back and applies the log's records.
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

  /// The log's two header slots, and in a slot the checkpoint's copies of LMDB's meta pages
  /// (each the first 256 bytes of one) and the bytes its CRC-32C covers (`Specs/store/log.md`).
  fileprivate static let slots = [0, 4096]
  fileprivate static let metaCopies = [96, 352]
  fileprivate static let metaCopySize = 256
  fileprivate static let checksummed = 608

  /// Copies the store at `store` into `directory` (made if needed, emptied of an earlier copy)
  /// and damages the copy, with bytes from `garbage` (which also chooses the record lost when
  /// `losingRecords`). Nil when the store has no checkpoint yet (its first writer died before
  /// making one): a power loss then has nothing to keep.
  init?(of store: String, in directory: String, losingRecords: Bool = false, garbage: inout SplitMix64) throws {
    mkdir(directory, 0o755)
    path = directory + "/crash.reef"
    for suffix in ["", "-log", "-lock", "-log-shared"] { unlink(path + suffix) }
    guard var data = readFile(store), var log = readFile(store + "-log") else { return nil }
    // The checkpoint: the valid slot with the larger sequence.
    var newest: (slot: Int, sequence: UInt64)?
    for slot in PowerLossCopy.slots where log.count >= slot + PowerLossCopy.checksummed + 4 {
      let valid =
        Array(log[slot..<slot + 8]) == Array("REEFLOG1".utf8) && littleEndian(log, slot + 8, 4) == 1
        && littleEndian(log, slot + PowerLossCopy.checksummed, 4) == UInt64(checksum(log, from: slot))
      let sequence = littleEndian(log, slot + 16, 8)
      if valid && sequence > (newest?.sequence ?? 0) { newest = (slot, sequence) }
    }
    guard let slot = newest?.slot else { return nil }
    let pageSize = Int(littleEndian(log, slot + 12, 4))
    // The checkpoint's newer meta copy: `MDB_meta` follows the 16-byte page header, with
    // `mm_last_pg` at its offset 120 and `mm_txnid` at 128.
    let metas = PowerLossCopy.metaCopies.map { copy in
      (lastPage: littleEndian(log, slot + copy + 136, 8), transaction: littleEndian(log, slot + copy + 144, 8))
    }
    let meta = metas[0].transaction >= metas[1].transaction ? metas[0] : metas[1]
    checkpoint = meta.transaction
    lastPage = meta.lastPage

    for offset in [0, pageSize] where data.count >= offset + PowerLossCopy.metaCopySize {
      overwrite(&data, offset..<offset + PowerLossCopy.metaCopySize, &garbage)
    }
    let end = (Int(lastPage) + 1) * pageSize
    if data.count > end { overwrite(&data, end..<data.count, &garbage) }
    lostPages = max(0, data.count - end) / pageSize
    try writeCopy(data, to: path)

    // The checkpoint's records: magic "RFRC", the checkpoint's sequence and the next transaction
    // number, each padded to whole 4096-byte blocks (their checksums are recovery's to check).
    var extents: [Range<Int>] = []
    var start = 8192
    while start + 32 <= log.count, littleEndian(log, start, 4) == 0x4352_4652,
      littleEndian(log, start + 8, 8) == littleEndian(log, slot + 16, 8),
      littleEndian(log, start + 16, 8) == littleEndian(log, slot + 24, 8) + UInt64(extents.count) + 1
    {
      let size = (32 + Int(littleEndian(log, start + 24, 4)) + 4095) / 4096 * 4096
      guard start + size <= log.count else { break }
      extents.append(start..<start + size)
      start += size
    }
    records = extents.count
    let lost = losingRecords ? Int(garbage.next() % UInt64(extents.count + 1)) : extents.count
    lostRecord = lost < extents.count ? lost : nil
    if let lostRecord { overwrite(&log, extents[lostRecord], &garbage) }

    var status = stat()
    guard stat(path, &status) == 0 else { throw PowerLossError("cannot stat the copy \(path) (errno \(errno))") }
    put(UInt64(status.st_dev), into: &log, at: slot + 32)
    put(UInt64(status.st_ino), into: &log, at: slot + 40)
    // Another boot: this one's identifier with its first byte changed, still zero-padded.
    let boot = slot + 56
    log[boot] = log[boot] == UInt8(ascii: "~") ? UInt8(ascii: "!") : UInt8(ascii: "~")
    put(UInt64(checksum(log, from: slot)), into: &log, at: slot + PowerLossCopy.checksummed, size: 4)
    try writeCopy(log, to: path + "-log")
  }
}

/// The CRC-32C of the checksummed bytes of the log header slot at `slot`.
private func checksum(_ log: [UInt8], from slot: Int) -> UInt32 {
  log.withUnsafeBytes { reef_crc32c($0.baseAddress! + slot, PowerLossCopy.checksummed) }
}

/// A copy that could not be written.
struct PowerLossError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

/// Stores `value`'s low `size` bytes, little-endian, at `offset` of `bytes`.
private func put(_ value: UInt64, into bytes: inout [UInt8], at offset: Int, size: Int = 8) {
  for index in 0..<size { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
}

/// Overwrites `range` of `bytes` with bytes from `garbage`.
private func overwrite(_ bytes: inout [UInt8], _ range: Range<Int>, _ garbage: inout SplitMix64) {
  var word: UInt64 = 0
  for index in range {
    if (index - range.lowerBound) % 8 == 0 { word = garbage.next() }
    bytes[index] = UInt8(truncatingIfNeeded: word)
    word >>= 8
  }
}

/// Writes `bytes` to a new file at `path` with write(2).
private func writeCopy(_ bytes: [UInt8], to path: String) throws {
  let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
  guard descriptor >= 0 else { throw PowerLossError("cannot create \(path) (errno \(errno))") }
  defer { close(descriptor) }
  var written = 0
  while written < bytes.count {
    let result = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    if result < 0 && errno == EINTR { continue }
    guard result > 0 else { throw PowerLossError("cannot write \(path) (errno \(errno))") }
    written += result
  }
}
