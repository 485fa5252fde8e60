import CLMDB

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A checkpoint, as a log header slot holds it (`Specs/store/log.md`).
struct LogHeader: Equatable {
  var sequence: UInt64
  var checkpoint: UInt64
  var pageSize: UInt32
  var device: UInt64
  var inode: UInt64
  /// Random, new at each checkpoint: the records' checksums begin with it, so that no bytes
  /// written before the checkpoint (or inside a document) pass for one of its records.
  var salt: UInt64
  var boot: [UInt8]
  /// The first ``CommitLog/metaCopySize`` bytes of meta page 0, then of meta page 1.
  var metas: [UInt8]

  func encoded() -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: CommitLog.headerSize)
    func put<T: FixedWidthInteger>(_ value: T, _ offset: Int) {
      withUnsafeBytes(of: value.littleEndian) { for (index, byte) in $0.enumerated() { bytes[offset + index] = byte } }
    }
    put(CommitLog.headerMagic, 0)
    put(CommitLog.formatVersion, 8)
    put(pageSize, 12)
    put(sequence, 16)
    put(checkpoint, 24)
    put(device, 32)
    put(inode, 40)
    put(salt, 48)
    bytes.replaceSubrange(56..<96, with: boot)
    bytes.replaceSubrange(96..<608, with: metas)
    let checksum = bytes.withUnsafeBytes { reef_crc32c($0.baseAddress!, 608) }
    put(checksum, 608)
    return bytes
  }

  init(
    sequence: UInt64, checkpoint: UInt64, pageSize: UInt32, device: UInt64, inode: UInt64, salt: UInt64,
    boot: [UInt8], metas: [UInt8]
  ) {
    self.sequence = sequence
    self.checkpoint = checkpoint
    self.pageSize = pageSize
    self.device = device
    self.inode = inode
    self.salt = salt
    self.boot = boot
    self.metas = metas
  }

  /// The header in `bytes`, if its magic, version and checksum check out.
  init?(decoding bytes: [UInt8]) {
    guard bytes.count >= CommitLog.headerSize else { return nil }
    let checksum = bytes.withUnsafeBytes { reef_crc32c($0.baseAddress!, 608) }
    guard bytes.littleEndian(UInt64.self, at: 0) == CommitLog.headerMagic,
      bytes.littleEndian(UInt32.self, at: 8) == CommitLog.formatVersion,
      bytes.littleEndian(UInt32.self, at: 608) == checksum
    else { return nil }
    pageSize = bytes.littleEndian(UInt32.self, at: 12)
    guard pageSize >= 512, pageSize.nonzeroBitCount == 1 else { return nil }
    sequence = bytes.littleEndian(UInt64.self, at: 16)
    checkpoint = bytes.littleEndian(UInt64.self, at: 24)
    device = bytes.littleEndian(UInt64.self, at: 32)
    inode = bytes.littleEndian(UInt64.self, at: 40)
    salt = bytes.littleEndian(UInt64.self, at: 48)
    boot = Array(bytes[56..<96])
    metas = Array(bytes[96..<608])
  }
}

/// The store file, opened beside LMDB (before it opens the file, to recover) to read and
/// restore its meta pages.
struct DataFile {
  let descriptor: Int32
  let inode: UInt64

  init(path: String, readOnly: Bool) throws(StoreError) {
    descriptor = Glibc.open(path, (readOnly ? O_RDONLY : O_RDWR) | O_CLOEXEC)
    guard descriptor >= 0 else {
      throw StoreError.system(.open, "cannot open the store \(path)", code: errno)
    }
    var status = stat()
    guard fstat(descriptor, &status) == 0 else {
      let code = errno
      Glibc.close(descriptor)
      throw StoreError.system(.open, "cannot open the store \(path)", code: code)
    }
    inode = UInt64(status.st_ino)
  }

  func close() { Glibc.close(descriptor) }

  /// The first ``CommitLog/metaCopySize`` bytes of meta page 0, then of meta page 1 (at
  /// `pageSize`), of the store file open at `descriptor`; fewer where the file ends.
  static func metas(of descriptor: Int32, pageSize: Int) -> [UInt8] {
    preadAll(descriptor, count: CommitLog.metaCopySize, at: 0)
      + preadAll(descriptor, count: CommitLog.metaCopySize, at: pageSize)
  }

  /// Writes `header`'s meta pages back over the store file's and flushes them.
  func restore(_ header: LogHeader) throws(StoreError) {
    // LMDB's meta magic (0xBEEFC0DE) follows the 16-byte page header in both copies.
    for copy in 0..<2 {
      let bytes = Array(header.metas[copy * CommitLog.metaCopySize..<(copy + 1) * CommitLog.metaCopySize])
      guard bytes.littleEndian(UInt32.self, at: 16) == 0xBEEF_C0DE else {
        throw StoreError(
          .corrupt, "the commit log's checkpoint holds no LMDB meta page \(copy); the store cannot be recovered")
      }
      let offset = copy * Int(header.pageSize)
      guard bytes.withUnsafeBytes({ pwriteAll(descriptor, $0, at: offset) }) else {
        throw StoreError(
          .storage, "recovering the store: cannot write its meta page \(copy): \(FileSystem.errnoText())")
      }
    }
    guard fdatasync(descriptor) == 0 else {
      throw StoreError(
        .storage, "recovering the store: cannot flush its meta pages: \(FileSystem.errnoText())")
    }
  }
}

// MARK: File I/O

/// Up to `count` bytes at `offset` of the file open at `descriptor`, read again after an
/// interrupted or short read: fewer only where the file ends or a read fails.
func preadAll(_ descriptor: Int32, count: Int, at offset: Int) -> [UInt8] {
  var bytes = [UInt8](repeating: 0, count: count)
  var done = 0
  bytes.withUnsafeMutableBytes { raw in
    while done < count {
      // Safe: `done < count`, the buffer's size.
      let result = pread(descriptor, raw.baseAddress! + done, count - done, off_t(offset + done))
      if result < 0 && errno == EINTR { continue }
      guard result > 0 else { break }
      done += result
    }
  }
  return done == count ? bytes : Array(bytes[..<done])
}

/// Writes all of `bytes` at `offset` of the file open at `descriptor`, again after an
/// interrupted or short write; false (with `errno` set) if a write fails.
func pwriteAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int) -> Bool {
  var written = 0
  while written < bytes.count {
    // Safe: `written < bytes.count`, so the start is inside `bytes`.
    let result = pwrite(descriptor, bytes.baseAddress! + written, bytes.count - written, off_t(offset + written))
    if result < 0 && errno == EINTR { continue }
    guard result > 0 else { return false }
    written += result
  }
  return true
}

/// Writes zeros from byte `start` up to byte `end` of the file open at `descriptor`, 1 MiB at a
/// time; returns how far it got (`end`, or where a write failed, with `errno` set).
func writeZeros(_ descriptor: Int32, from start: Int, to end: Int) -> Int {
  let zeros = [UInt8](repeating: 0, count: min(1 << 20, max(0, end - start)))
  var reached = start
  while reached < end {
    let count = min(zeros.count, end - reached)
    guard zeros.withUnsafeBytes({ pwriteAll(descriptor, UnsafeRawBufferPointer(rebasing: $0[..<count]), at: reached) })
    else { break }
    reached += count
  }
  return reached
}

extension [UInt8] {
  /// The integer stored little-endian at `offset` (the log's and LMDB's byte order); the caller
  /// has checked that its bytes lie in the array.
  func littleEndian<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
    precondition(offset >= 0 && offset + MemoryLayout<T>.size <= count, "a field read past the end of its bytes")
    return withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
  }
}
