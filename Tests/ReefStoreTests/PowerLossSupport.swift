import CLMDB
import ReefTestSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A crash, then a power loss, acted out on copies of a store's files (`Specs/store/log.md`).
///
/// While a store is open, its files read through the page cache are what a crash of the process
/// leaves. A power loss may also lose what the store file gained since the log's checkpoint
/// (``damage(storeAt:since:seed:)``), and the restart is another boot id in the copy's log
/// header (``rewriteHeader(_:slot:boot:ownFile:)``), with the copy's device and inode, as the
/// log of this very file would hold. The log is read and written by ``LogImage``, as the spec
/// lays it out, apart from `CommitLog`'s own reading.
enum PowerLoss {
  /// A boot id that is not this machine's: a restart of it (40 bytes, zero-padded).
  static let anotherBoot: [UInt8] = {
    let boot = Array("the machine, restarted".utf8)
    return boot + [UInt8](repeating: 0, count: LogImage.bootSize - boot.count)
  }()

  /// Copies the store at `path` into `directory` (made if needed, emptied of an earlier copy) as
  /// `store.reef`, with plain reads and writes, so that the copy holds what the page cache holds:
  /// the store file and, with `withLog`, its log; not its lock file nor the log's shared block,
  /// which a restart does not keep either. Returns the copy's path.
  ///
  /// - Throws: ``PowerLossError`` when a file cannot be read or written.
  static func copyStore(_ path: String, into directory: String, withLog: Bool = true) throws -> String {
    guard mkdir(directory, 0o755) == 0 || errno == EEXIST else {
      throw PowerLossError("cannot make \(directory) (errno \(errno))")
    }
    let copy = directory + "/store.reef"
    for suffix in ["", "-log", "-lock", "-log-shared"] { unlink(copy + suffix) }
    try replaceContents(of: copy, with: try contents(of: path))
    if withLog { try replaceContents(of: copy + "-log", with: try contents(of: path + "-log")) }
    return copy
  }

  /// Acts a restart of the machine out on the copied store at `path`: header slot `slot` of its
  /// log (by default the newest valid one) gets the boot id `boot` and, with `ownFile`, the
  /// copy's device and inode (the log of this very file); its checksum is computed again, and
  /// its other fields stay.
  ///
  /// - Throws: ``PowerLossError`` when the log cannot be read or written, has no valid header
  ///   (and no `slot` is given), or the copy cannot be `stat`ed.
  static func rewriteHeader(
    _ path: String, slot: Int? = nil, boot: [UInt8] = anotherBoot, ownFile: Bool = true
  ) throws {
    var image = try LogImage(path: path + "-log")
    guard let slot = slot ?? image.newest?.slot else { throw PowerLossError("no valid header in \(path)-log") }
    var file: (device: UInt64, inode: UInt64)?
    if ownFile {
      var status = stat()
      guard stat(path, &status) == 0 else { throw PowerLossError("cannot stat \(path) (errno \(errno))") }
      file = (UInt64(status.st_dev), UInt64(status.st_ino))
    }
    image.rewriteHeader(slot: slot, boot: boot, file: file)
    let header = LogImage.headerRange(slot: slot)
    try overwrite(path + "-log", at: header.lowerBound, with: Array(image.bytes[header]))
  }

  /// Damages the copied store file at `path` as a power loss after its log's checkpoint (the
  /// newest valid header of `path-log`) may, with garbage from a generator seeded with `seed`:
  /// - both of LMDB's meta pages (their first 256 bytes, at offset 0 and at the page size): meta
  ///   pages written since the checkpoint may have reached the disk or not, and may name pages
  ///   that never did;
  /// - every page past the checkpoint's last page (`mm_last_pg` of its newer meta copy): LMDB
  ///   wrote them after the checkpoint, without a flush;
  /// - given `checkpointImage` (the store file as the checkpoint left it), every page that
  ///   differs from it: written since, in place of a page freed before the checkpoint.
  ///
  /// - Returns: How many pages other than the meta pages became garbage.
  /// - Throws: ``PowerLossError`` when the files cannot be read or written, the log has no valid
  ///   header, or the header's newer meta copy is not at the header's checkpoint.
  @discardableResult
  static func damage(storeAt path: String, since checkpointImage: [UInt8]? = nil, seed: UInt64 = 0xDA3A) throws -> Int {
    guard let header = try LogImage(path: path + "-log").newest else {
      throw PowerLossError("no valid header in \(path)-log")
    }
    let checkpoint = try header.checkpointMeta()
    let pageSize = header.pageSize
    guard pageSize > 0 else { throw PowerLossError("the header of \(path)-log has a page size of 0") }
    var file = try contents(of: path)
    var random = SplitMix64(seed: seed)
    for start in [0, pageSize] where file.count >= start + LogImage.metaCopySize {
      file.replaceSubrange(start..<start + LogImage.metaCopySize, with: garbage(LogImage.metaCopySize, &random))
    }
    var damaged = 0
    // Pages 0 and 1 are the meta pages; a last page cut short counts as a page.
    for page in stride(from: 2, to: (file.count + pageSize - 1) / pageSize, by: 1) {
      let range = page * pageSize..<min((page + 1) * pageSize, file.count)
      let written = checkpointImage.map { range.upperBound > $0.count || $0[range] != file[range] } ?? false
      guard UInt64(page) > checkpoint.lastPage || written else { continue }
      file.replaceSubrange(range, with: garbage(range.count, &random))
      damaged += 1
    }
    try replaceContents(of: path, with: file)
    return damaged
  }

  /// `count` bytes from `random`, eight from each of its numbers.
  static func garbage(_ count: Int, _ random: inout SplitMix64) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count)
    var word: UInt64 = 0
    for index in 0..<count {
      if index % 8 == 0 { word = random.next() }
      bytes.append(UInt8(truncatingIfNeeded: word))
      word >>= 8
    }
    return bytes
  }

  /// The whole file at `path`.
  ///
  /// - Throws: ``PowerLossError`` when it cannot be read.
  static func contents(of path: String) throws -> [UInt8] {
    guard let bytes = readFile(path) else { throw PowerLossError("cannot read \(path) (errno \(errno))") }
    return bytes
  }

  /// Makes the file at `path` (created if needed) hold `bytes`, written in place with write(2):
  /// an existing file keeps its inode.
  ///
  /// - Throws: ``PowerLossError`` when it cannot be opened or written.
  static func replaceContents(of path: String, with bytes: [UInt8]) throws {
    try write(bytes, to: path, at: 0, flags: O_CREAT | O_TRUNC)
  }

  /// Overwrites the bytes at `offset` of the file at `path` with `bytes`.
  ///
  /// - Throws: ``PowerLossError`` when it cannot be opened or written.
  static func overwrite(_ path: String, at offset: Int, with bytes: [UInt8]) throws {
    try write(bytes, to: path, at: offset, flags: 0)
  }

  private static func write(_ bytes: [UInt8], to path: String, at offset: Int, flags: Int32) throws {
    let descriptor = open(path, O_WRONLY | O_CLOEXEC | flags, 0o644)
    guard descriptor >= 0 else { throw PowerLossError("cannot open \(path) (errno \(errno))") }
    defer { close(descriptor) }
    var done = 0
    while done < bytes.count {
      let written = bytes[done...].withUnsafeBytes {
        pwrite(descriptor, $0.baseAddress, $0.count, off_t(offset + done))
      }
      if written < 0 && errno == EINTR { continue }
      guard written > 0 else { throw PowerLossError("cannot write \(path) (errno \(errno))") }
      done += written
    }
  }
}

/// A copy of a store that could not be made or damaged: what went wrong, with the path.
struct PowerLossError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

// MARK: The log, as the spec lays it out

/// A commit log's bytes, read and written as `Specs/store/log.md` lays them out (apart from
/// `CommitLog`'s own reading, so that what the code writes is checked against the spec).
struct LogImage {
  /// A header slot: a checkpoint.
  struct Header {
    var slot: Int
    var pageSize: Int
    var sequence: UInt64
    /// The LMDB transaction the store file is durable at.
    var checkpoint: UInt64
    var salt: UInt64
    var boot: [UInt8]
    /// The first 256 bytes of LMDB's meta pages 0 and 1 at the checkpoint, one after the other.
    var metas: [UInt8]

    /// The newer of the checkpoint's two meta copies, which must be at its ``checkpoint``.
    ///
    /// - Throws: ``PowerLossError`` when neither copy is an LMDB meta page, or the newer one is
    ///   at another transaction.
    func checkpointMeta() throws -> LMDBMetaPage {
      let copies = [0, LogImage.metaCopySize].compactMap { LMDBMetaPage(metas, at: $0) }
      guard let newer = copies.max(by: { $0.transaction < $1.transaction }) else {
        throw PowerLossError("the checkpoint in header slot \(slot) holds no LMDB meta page")
      }
      guard newer.transaction == checkpoint else {
        throw PowerLossError(
          "the checkpoint in header slot \(slot) is at transaction \(checkpoint), its newer meta page at "
            + "\(newer.transaction)")
      }
      return newer
    }
  }

  /// A whole record of a checkpoint.
  struct Record {
    var offset: Int
    var transaction: UInt64
    /// The length of its operations.
    var length: Int
    /// Its size in the log: whole blocks.
    var size: Int
  }

  static let slotSize = 4096
  /// The bytes of a header slot that hold its fields and checksum, and the bytes its checksum
  /// covers.
  static let headerSize = 612
  static let checksummed = 608
  static let bootSize = 40
  /// Bytes kept of each meta page.
  static let metaCopySize = 256
  static let recordsStart = 8192
  static let blockSize = 4096
  static let recordHeaderSize = 32

  private(set) var bytes: [UInt8]

  /// Reads the log at `path`.
  ///
  /// - Throws: ``PowerLossError`` when it cannot be read.
  init(path: String) throws { bytes = try PowerLoss.contents(of: path) }

  /// The bytes of header slot `slot` that hold its fields and checksum.
  static func headerRange(slot: Int) -> Range<Int> { slot * slotSize..<slot * slotSize + headerSize }

  /// The header in `slot` if its magic, version and checksum hold.
  func header(slot: Int) -> Header? {
    let base = slot * LogImage.slotSize
    guard bytes.count >= base + LogImage.headerSize, Array(bytes[base..<base + 8]) == Array("REEFLOG1".utf8),
      bytes.littleEndian(at: base + 8, size: 4) == 1,
      bytes.littleEndian(at: base + LogImage.checksummed, size: 4) == UInt64(checksum(slot: slot))
    else { return nil }
    return Header(
      slot: slot, pageSize: Int(bytes.littleEndian(at: base + 12, size: 4)),
      sequence: bytes.littleEndian(at: base + 16, size: 8), checkpoint: bytes.littleEndian(at: base + 24, size: 8),
      salt: bytes.littleEndian(at: base + 48, size: 8), boot: Array(bytes[base + 56..<base + 96]),
      metas: Array(bytes[base + 96..<base + LogImage.checksummed]))
  }

  /// The valid header with the larger sequence number: the checkpoint.
  var newest: Header? { [header(slot: 0), header(slot: 1)].compactMap { $0 }.max { $0.sequence < $1.sequence } }

  /// The records of `header` (the newest by default): from byte 8192, while each is whole (its
  /// magic, sequence, transaction number and salted checksum hold).
  func records(of header: Header? = nil) -> [Record] {
    guard let header = header ?? newest else { return [] }
    var found: [Record] = []
    var offset = LogImage.recordsStart
    var transaction = header.checkpoint + 1
    while offset + LogImage.recordHeaderSize <= bytes.count, Array(bytes[offset..<offset + 4]) == Array("RFRC".utf8),
      bytes.littleEndian(at: offset + 8, size: 8) == header.sequence,
      bytes.littleEndian(at: offset + 16, size: 8) == transaction
    {
      let length = Int(bytes.littleEndian(at: offset + 24, size: 4))
      guard offset + LogImage.recordHeaderSize + length <= bytes.count else { break }
      let checksum = bytes.withUnsafeBytes {
        // Safe: the record's bytes 8 to the end of its operations lie inside `bytes` (checked above).
        reef_crc32c_salted(header.salt, $0.baseAddress! + offset + 8, LogImage.recordHeaderSize - 8 + length)
      }
      guard UInt64(checksum) == bytes.littleEndian(at: offset + 4, size: 4) else { break }
      let size = (LogImage.recordHeaderSize + length + LogImage.blockSize - 1) / LogImage.blockSize * LogImage.blockSize
      found.append(Record(offset: offset, transaction: transaction, length: length, size: size))
      offset += size
      transaction += 1
    }
    return found
  }

  /// Gives header slot `slot` the boot id `boot` (40 bytes) and, if given, the store file's
  /// device and inode, and computes its checksum again; its other fields stay.
  mutating func rewriteHeader(slot: Int, boot: [UInt8], file: (device: UInt64, inode: UInt64)?) {
    precondition(boot.count == LogImage.bootSize, "a boot id is \(LogImage.bootSize) bytes, not \(boot.count)")
    let base = slot * LogImage.slotSize
    precondition(bytes.count >= base + LogImage.headerSize, "the log is too short for header slot \(slot)")
    bytes.replaceSubrange(base + 56..<base + 96, with: boot)
    if let file {
      bytes.setLittleEndian(file.device, at: base + 32, size: 8)
      bytes.setLittleEndian(file.inode, at: base + 40, size: 8)
    }
    bytes.setLittleEndian(UInt64(checksum(slot: slot)), at: base + LogImage.checksummed, size: 4)
  }

  /// The CRC-32C of the bytes of header slot `slot` that its checksum covers.
  private func checksum(slot: Int) -> UInt32 {
    let base = slot * LogImage.slotSize
    precondition(bytes.count >= base + LogImage.checksummed, "the log is too short for header slot \(slot)")
    // Safe: the slot's checksummed bytes lie inside `bytes` (checked above).
    return bytes.withUnsafeBytes { reef_crc32c($0.baseAddress! + base, LogImage.checksummed) }
  }
}

/// An LMDB meta page, from its first bytes (a store file's, or a checkpoint's copy): after the
/// 16-byte page header, `MDB_meta` has LMDB's magic at 0, the last page at 120 and the
/// transaction at 128.
struct LMDBMetaPage {
  var lastPage: UInt64
  var transaction: UInt64

  /// The meta page at `base` of `bytes`; nil if `bytes` ends before it or it lacks LMDB's magic.
  init?(_ bytes: [UInt8], at base: Int) {
    guard bytes.count >= base + 152, bytes.littleEndian(at: base + 16, size: 4) == 0xBEEF_C0DE else { return nil }
    lastPage = bytes.littleEndian(at: base + 136, size: 8)
    transaction = bytes.littleEndian(at: base + 144, size: 8)
  }
}

// MARK: Little-endian integers

extension [UInt8] {
  /// The `size` bytes (at most 8) of `value`'s low end, little-endian.
  init(littleEndian value: UInt64, size: Int) {
    self = (0..<size).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
  }

  /// The unsigned integer stored little-endian in the `size` bytes (at most 8) at `offset`.
  func littleEndian(at offset: Int, size: Int) -> UInt64 {
    (0..<size).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64(self[offset + $1]) }
  }

  /// Stores the `size` bytes (at most 8) of `value`'s low end, little-endian, at `offset`.
  mutating func setLittleEndian(_ value: UInt64, at offset: Int, size: Int) {
    replaceSubrange(offset..<offset + size, with: [UInt8](littleEndian: value, size: size))
  }
}
