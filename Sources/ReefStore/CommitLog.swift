import CLMDB
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The store's commit log (`path-log`): what makes a fully durable commit cost one flush.
///
/// Each write transaction's changes to LMDB (the puts, deletes, database creations and drops, as
/// bytes) are appended to the log as one record before LMDB commits, and a ``Durability/full``
/// commit flushes the log alone (one `fdatasync`). LMDB itself commits without flushing
/// (`MDB_NOSYNC`). Now and then (when the log reaches ``checkpointThreshold``, when a transaction
/// is too large to log, when the store closes) a *checkpoint* flushes LMDB's file and records,
/// in the log's header, the transaction it is durable at and that transaction's two meta pages;
/// the log then starts over.
///
/// After a power loss LMDB's file may hold meta pages that point at pages that never reached the
/// disk. The first opener after a restart therefore writes the checkpoint's meta pages back and
/// applies the log's records again, one LMDB transaction each. That is safe because every
/// writing process holds a read transaction (its *pin*) on a snapshot no newer than the
/// checkpoint: LMDB never reuses a page a reader may see, so the checkpoint's pages stay as they
/// were flushed until a newer checkpoint is durable.
///
/// The format and the protocol are in `Specs/store/log.md`.
final class CommitLog {
  // MARK: Layout

  static let blockSize = 4096
  /// The two header slots; a checkpoint writes the one its sequence number selects.
  static let headerOffsets = [0, 4096]
  /// Where the first record of each checkpoint's log starts.
  static let recordsStart = 8192
  /// "REEFLOG1", little-endian.
  static let headerMagic: UInt64 = 0x3147_4F4C_4645_4552
  static let formatVersion: UInt32 = 1
  /// Bytes kept of each meta page (LMDB's page header and `MDB_meta` take 152).
  static let metaCopySize = 256
  static let headerSize = 612
  /// "RFRC", little-endian.
  static let recordMagic: UInt32 = 0x4352_4652
  static let recordHeaderSize = 32
  /// A transaction whose record would grow past this commits without one: LMDB's commit, then a
  /// checkpoint (two flushes, as a bulk load would make anyway).
  static let largestRecord = 8 << 20
  /// The log's size at which the next commit checkpoints first, and the log starts over.
  static let checkpointThreshold = 8 << 20
  /// The log file grows by this much at a time, written with zeros and flushed once, so that a
  /// record's flush never has to update the file's size.
  static let growthStep = 1 << 20

  // MARK: State

  let logPath: String
  let readOnly: Bool
  /// The log, read and written through the page cache.
  let file: Int32
  /// The same file opened `O_DIRECT` (or -1): fully durable records are written through it,
  /// straight to the device, which saves the page cache's copy and makes the flush cheaper.
  private let directFile: Int32
  /// The log's state between checkpoints, shared by the processes that have the store open:
  /// the first block of `path-log-shared`, mapped; nil for a read-only store. Never read after
  /// a restart. (A file of its own: a block of the log would be written out with every flush
  /// of the log, and fault again on the next commit's change.)
  let shared: UnsafeMutableRawPointer?
  /// This boot of the machine (`/proc/sys/kernel/random/boot_id`).
  let boot: [UInt8]
  /// The record of the write transaction being built (one at a time: the write lock's holder).
  let record = CommitRecord()
  /// This process's read transaction on a snapshot no newer than the newest checkpoint, taken
  /// by its first logged commit (or its own checkpoint): LMDB keeps every page that snapshot
  /// and later ones use, so the checkpoint's pages stay as they were flushed.
  var pin: LMDBTransaction?
  /// The checkpoint sequence number ``pin`` was taken at while there is a pin, else 0. Written
  /// under the store's write lock; atomic for ``releaseStalePin(writeLock:)``'s unlocked first
  /// look from reading threads (relaxed: a stale value only delays or hastens a check that is
  /// then made under the lock).
  private let pinSequence = Atomic<UInt64>(0)
  /// LMDB's page size, known from the first checkpoint (0 before).
  private var storePageSize = 0
  /// Set between ``init(storePath:readOnly:)`` and ``opened(environment:)`` by the first opener
  /// after a restart whose log holds records to apply again.
  var replayFrom: LogHeader?
  /// Whether this opener is the first (no other open of the store): it recovers and checkpoints.
  var isFirst = false
  /// How many times the log was flushed for a commit, and how many checkpoints were made, by
  /// this opener (for tests).
  private(set) var commitFlushes = 0
  private(set) var checkpoints = 0
  /// How many times ``flush()`` flushed the log (``Store/sync()``), for tests.
  private(set) var syncFlushes = 0
  var replayed = 0

  // MARK: Opening

  /// Opens (or, for a writable store, creates) the log of the store at `storePath` before LMDB
  /// opens the store, and takes the opener locks. The first opener after a restart whose
  /// checkpoint is not the store file's state writes the checkpoint's meta pages back into the
  /// store file here; ``opened(environment:)`` then applies the records. Returns nil for a
  /// read-only store without a log (written before there was one, or never written).
  static func open(storePath: String, readOnly: Bool) throws(StoreError) -> CommitLog? {
    let logPath = storePath + "-log"
    let file = Glibc.open(logPath, (readOnly ? O_RDONLY : O_RDWR | O_CREAT) | O_CLOEXEC, 0o644)
    if file < 0 {
      let code = errno
      if readOnly && code == ENOENT { return nil }
      throw StoreError.system(.open, "cannot open the store's commit log \(logPath)", code: code)
    }
    let log = CommitLog(logPath: logPath, file: file, readOnly: readOnly)
    if !readOnly && log.shared == nil {
      throw StoreError.system(.open, "cannot map the commit log's shared state \(logPath)-shared", code: errno)
    }
    try log.lockAndRecover(storePath: storePath)
    return log
  }

  private init(logPath: String, file: Int32, readOnly: Bool) {
    self.logPath = logPath
    self.file = file
    self.readOnly = readOnly
    boot = CommitLog.currentBoot()
    if readOnly {
      directFile = -1
      shared = nil
    } else {
      directFile = reef_o_direct == 0 ? -1 : Glibc.open(logPath, O_RDWR | reef_o_direct | O_CLOEXEC)
      shared = CommitLog.mapShared(logPath + "-shared")
    }
  }

  /// The first block of the file at `path` (created, and made one block long, if needed),
  /// mapped shared; nil if it cannot be.
  private static func mapShared(_ path: String) -> UnsafeMutableRawPointer? {
    let descriptor = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { return nil }
    defer { Glibc.close(descriptor) }
    var status = stat()
    guard fstat(descriptor, &status) == 0 else { return nil }
    if Int(status.st_size) < blockSize && ftruncate(descriptor, off_t(blockSize)) != 0 { return nil }
    let mapped = mmap(nil, blockSize, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0)
    return mapped == MAP_FAILED ? nil : mapped
  }

  deinit {
    pin?.abort()
    if let shared { munmap(shared, CommitLog.blockSize) }
    if directFile >= 0 { Glibc.close(directFile) }
    Glibc.close(file)  // also releases the opener locks
  }

  /// Why the first opener did not rebuild a damaged store file from the log, for the error
  /// that refuses it (nil when it did, or found nothing wrong).
  var damageNote: String?
  /// The transaction a rebuild must reach: the newest the damaged file's whole header pages name.
  var requiredTransaction: UInt64 = 0

  // MARK: Pins

  /// Whether this process holds a pin (for tests).
  var hasPin: Bool { pin != nil }

  /// Lets go of this process's pin if another process has checkpointed since it was taken and
  /// no write transaction of this process is under way (`writeLock` free): a process that only
  /// reads then holds back no pages from the writers. Its next write takes a pin again. Cheap
  /// when there is nothing to do (two loads), so every read transaction calls it.
  func releaseStalePin(writeLock: Mutex) {
    guard let shared else { return }
    let pinned = pinSequence.load(ordering: .relaxed)
    guard pinned != 0, sequence(shared) != pinned else { return }
    writeLock.withLockIfAvailable {
      guard pin != nil, sharedIsValid(shared), sequence(shared) > pinSequence.load(ordering: .relaxed) else { return }
      replacePin(with: nil, sequence: 0)
    }
  }

  /// Ends the pin there is, if any, and keeps `newPin`, taken at checkpoint `sequence` (0 for none).
  func replacePin(with newPin: LMDBTransaction?, sequence: UInt64) {
    pin?.abort()
    pin = newPin
    pinSequence.store(sequence, ordering: .relaxed)
  }

  // MARK: Committing

  /// Called when a write transaction begins, before it writes anything (LMDB chooses the pages
  /// it reuses as it writes): makes sure this process holds a pin no newer than the newest
  /// checkpoint, checkpointing if it does not (its first write, a shared block no checkpoint of
  /// this boot set up, or a pin two checkpoints old, which holds back more pages than needed).
  func prepareWrite(environment: OpaquePointer) throws(StoreError) {
    guard let shared else { return }
    try ensurePin(environment: environment, shared: shared)
    // Only here, before the transaction has pages of its own (LMDB may write some early).
    growStoreFileIfNeeded(environment: environment, shared: shared)
  }

  private func ensurePin(environment: OpaquePointer, shared: UnsafeMutableRawPointer) throws(StoreError) {
    if pin == nil || !sharedIsValid(shared) || sequence(shared) >= pinSequence.load(ordering: .relaxed) + 2 {
      try checkpoint(environment: environment)
    }
  }

  /// Keeps the store file at least ``storeFileHeadroom`` past LMDB's last page, growing it with
  /// written zeros (in steps of an eighth of its size, from 1 to 16 MiB). LMDB writes each
  /// commit's pages past its last page while the pin keeps the freed ones from reuse; writing
  /// into blocks the file already has costs the file system less than growing the file at each
  /// commit (about 10 µs of a 100 µs commit on the machine of `Benchmarks/README.md`). The
  /// zeros reach the disk with the next checkpoint. Best effort: a failure leaves the growth to
  /// LMDB's own writes, which report a full disk.
  private func growStoreFileIfNeeded(environment: OpaquePointer, shared: UnsafeMutableRawPointer) {
    var info = MDB_envinfo()
    guard mdb_env_info(environment, &info) == 0, storePageSize > 0 else { return }
    let needed = (info.me_last_pgno + 1) * storePageSize + CommitLog.storeFileHeadroom
    if Int(SharedField.load(shared, SharedField.storeFileSize)) >= needed { return }
    var descriptor: Int32 = -1
    var status = stat()
    guard mdb_env_get_fd(environment, &descriptor) == 0, fstat(descriptor, &status) == 0 else { return }
    var size = Int(status.st_size)
    if size < needed {
      let step = min(16 << 20, max(1 << 20, size / 8))
      size = writeZeros(descriptor, from: size, to: (needed + step - 1) / step * step)
    }
    SharedField.store(shared, SharedField.storeFileSize, UInt64(size))
  }

  /// How far past LMDB's last page ``growStoreFileIfNeeded(environment:shared:)`` keeps the
  /// store file.
  static let storeFileHeadroom = 1 << 20

  /// Commits the write transaction `transaction` with `durability`: its record is appended to
  /// the log (and, for ``Durability/full``, flushed) before LMDB commits it. On a throw nothing
  /// of the transaction is committed.
  func commit(_ transaction: LMDBTransaction, durability: Durability, environment: OpaquePointer) throws(StoreError) {
    defer { record.reset() }
    if record.isEmpty && !record.isAbandoned {
      try transaction.commit()  // nothing changed: LMDB writes nothing
      return
    }
    guard !record.isAbandoned, let shared else {
      // Too large to log: LMDB commits it, and a checkpoint makes it durable. Readers may see
      // it in between (`Specs/store/log.md`).
      try transaction.commit()
      do {
        try checkpointAfterCommit(environment: environment)
      } catch {
        throw error.with(
          message:
            "the transaction was committed, but the checkpoint that makes it durable failed: \(error.message)")
      }
      return
    }
    let lsn = UInt64(mdb_txn_id(transaction.pointer))
    try ensurePin(environment: environment, shared: shared)  // done when the transaction began; checked again
    var last = SharedField.load(shared, SharedField.lastLSN)
    var start = Int(SharedField.load(shared, SharedField.tail))
    if last == lsn {
      // A writer that died after logging this transaction number, before LMDB committed it:
      // its record was never acknowledged, and this one takes its place.
      start = Int(SharedField.load(shared, SharedField.lastStart))
      last = lsn - 1
    }
    if last != lsn - 1 || start < CommitLog.recordsStart {
      // A commit the log does not hold (another program, or a bug): the checkpoint covers it.
      try checkpoint(environment: environment)
      start = CommitLog.recordsStart
    }
    let size = record.seal(sequence: sequence(shared), salt: salt(shared), lsn: lsn)
    if start + size > CommitLog.checkpointThreshold && start > CommitLog.recordsStart {
      try checkpoint(environment: environment)
      start = CommitLog.recordsStart
      record.reseal(sequence: sequence(shared), salt: salt(shared))
    }
    try ensureCapacity(start + size)
    let direct = durability == .full && directFile >= 0
    guard pwriteAll(direct ? directFile : file, UnsafeRawBufferPointer(start: record.bytes, count: size), at: start)
    else { throw writeFailed() }
    if durability == .full {
      guard fdatasync(file) == 0 else {
        let reason = FileSystem.errnoText()
        eraseRecord(at: start)
        throw StoreError(.storage, "flushing the commit log \(logPath): \(reason); nothing was committed")
      }
      commitFlushes += 1
    }
    let before = (
      SharedField.load(shared, SharedField.tail),
      SharedField.load(shared, SharedField.lastLSN),
      SharedField.load(shared, SharedField.lastStart)
    )
    // In this order, so that a writer that dies between two of them leaves the next writer
    // to write over its record (from `start`), which was never acknowledged. (Release stores:
    // each is visible only after the ones before it.)
    SharedField.store(shared, SharedField.lastStart, UInt64(start))
    SharedField.store(shared, SharedField.lastLSN, lsn)
    SharedField.store(shared, SharedField.tail, UInt64(start + size))
    do {
      try transaction.commit()
    } catch {
      // The reverse of the order above, so that dying between two of them again leaves the
      // next writer to write over this record.
      SharedField.store(shared, SharedField.tail, before.0)
      SharedField.store(shared, SharedField.lastLSN, before.1)
      SharedField.store(shared, SharedField.lastStart, before.2)
      eraseRecord(at: start)
      throw error
    }
  }

  /// Flushes the log: every commit so far survives a power loss.
  func flush() throws(StoreError) {
    guard !readOnly else { return }
    guard fdatasync(file) == 0 else {
      throw StoreError(.storage, "flushing the commit log \(logPath): \(FileSystem.errnoText())")
    }
    syncFlushes += 1
  }

  /// A checkpoint right after a commit the log does not hold: under LMDB's write lock again.
  private func checkpointAfterCommit(environment: OpaquePointer) throws(StoreError) {
    // (If another process grew the map meanwhile, this fails with MDB_MAP_RESIZED; the next
    // write transaction adopts the size and, finding a commit the log does not hold,
    // checkpoints.)
    let writer = try LMDBTransaction(environment: environment, readOnly: false)
    defer { writer.abort() }
    try checkpoint(environment: environment)
  }

  /// Makes LMDB's file durable at its newest committed transaction and records that in the
  /// log's header, which starts the log over. The caller holds LMDB's write lock (a write
  /// transaction), so nothing commits meanwhile.
  func checkpoint(environment: OpaquePointer) throws(StoreError) {
    // The new pin: the committed state, which is what the checkpoint makes durable.
    let newPin = try LMDBTransaction(environment: environment, readOnly: true)
    var done = false
    defer { if !done { newPin.abort() } }
    let state = UInt64(mdb_txn_id(newPin.pointer))
    try check(mdb_env_sync(environment, 1), "checkpoint: flushing the store file")
    var descriptor: Int32 = -1
    try check(mdb_env_get_fd(environment, &descriptor), "checkpoint")
    var status = stat()
    var stat = MDB_stat()
    guard fstat(descriptor, &status) == 0, mdb_env_stat(environment, &stat) == 0 else {
      throw StoreError(.storage, "checkpoint: cannot read the store file's status")
    }
    let pageSize = Int(stat.ms_psize)
    storePageSize = pageSize
    let metas = DataFile.metas(of: descriptor, pageSize: pageSize)
    guard metas.count == 2 * CommitLog.metaCopySize else {
      throw StoreError(.storage, "checkpoint: cannot read the store file's meta pages")
    }
    let previous = max(validHeader()?.sequence ?? 0, shared.flatMap { sharedIsValid($0) ? sequence($0) : nil } ?? 0)
    let header = LogHeader(
      sequence: previous + 1, checkpoint: state, pageSize: UInt32(pageSize), device: UInt64(status.st_dev),
      inode: UInt64(status.st_ino), salt: UInt64.random(in: 1...UInt64.max), boot: boot, metas: metas)
    // Until the shared block describes the new header, it describes none: a checkpointer that
    // dies in between leaves the next writer to checkpoint again. (Sequentially consistent: the
    // header's write below, and the release stores after it, come after it.)
    if let shared { reef_atomic_store_u64_seq_cst(shared + SharedField.magic, 0) }
    let bytes = header.encoded()
    let slot = CommitLog.headerOffsets[Int(header.sequence % 2)]
    guard bytes.withUnsafeBytes({ pwriteAll(file, $0, at: slot) }) else { throw writeFailed() }
    guard fdatasync(file) == 0 else {
      let reason = FileSystem.errnoText()
      // The header may not be on disk: it must not be read back as the newest, or the next
      // checkpoint would take the slot of the one that is (best effort).
      _ = writeZeros(file, from: slot, to: slot + bytes.count)
      throw StoreError(.storage, "checkpoint: flushing the commit log \(logPath): \(reason)")
    }
    if let shared {
      boot.withUnsafeBytes { shared.advanced(by: SharedField.boot).copyMemory(from: $0.baseAddress!, byteCount: 40) }
      SharedField.store(shared, SharedField.sequence, header.sequence)
      SharedField.store(shared, SharedField.salt, header.salt)
      SharedField.store(shared, SharedField.tail, UInt64(CommitLog.recordsStart))
      SharedField.store(shared, SharedField.lastLSN, state)
      SharedField.store(shared, SharedField.lastStart, UInt64(CommitLog.recordsStart))
      SharedField.store(shared, SharedField.storeFileSize, UInt64(status.st_size))
      // Last: whoever reads the magic (an acquire load) sees every field above, and the boot id.
      SharedField.store(shared, SharedField.magic, CommitLog.headerMagic)
    }
    checkpoints += 1
    replacePin(with: newPin, sequence: header.sequence)
    done = true
  }

  // MARK: Headers and the shared block

  /// The larger transaction number of the two meta page copies in `metas` (`mm_txnid`, the
  /// last field of `MDB_meta`: bytes 128–135 after the 16-byte page header); nil unless both
  /// copies are whole and hold LMDB's magic.
  static func newestTransaction(_ metas: [UInt8]) -> UInt64? {
    var newest: UInt64 = 0
    for copy in 0..<2 {
      let base = copy * metaCopySize
      guard metas.count >= base + 152 else { return nil }
      guard metas.littleEndian(UInt32.self, at: base + 16) == 0xBEEF_C0DE else { return nil }
      newest = max(newest, metas.littleEndian(UInt64.self, at: base + 144))
    }
    return newest
  }

  /// The valid header with the highest sequence number, if any.
  func validHeader() -> LogHeader? {
    var best: LogHeader?
    for offset in CommitLog.headerOffsets {
      guard let header = LogHeader(decoding: preadAll(file, count: CommitLog.headerSize, at: offset)) else { continue }
      if header.sequence > (best?.sequence ?? 0) { best = header }
    }
    return best
  }

  /// Offsets of the shared block's fields, and their loads and stores.
  ///
  /// Other processes read and write the block (under LMDB's write lock, except a first look
  /// without it), and any of them may die between two of its stores, so the 8-byte fields are
  /// read and written atomically (`log.h`), never with plain loads and stores that the compiler
  /// may reorder, merge or tear: stores are release stores (each is visible only after every
  /// access before it, so the orders `Specs/store/log.md` relies on hold however a writer stops)
  /// and loads acquire loads (what a store published is seen after its value is), except the
  /// invalidation at the start of a checkpoint, which is sequentially consistent. On x86-64 these
  /// are the plain `mov`s they were, and the invalidation an `xchg`. Every field is at a multiple
  /// of 8 of the page-aligned block: naturally aligned. The boot id (40 bytes) is written before
  /// the magic's release store and read after its acquire load.
  enum SharedField {
    static let magic = 0
    static let sequence = 8
    static let tail = 16
    static let lastLSN = 24
    static let lastStart = 32
    static let capacity = 40
    static let salt = 48
    static let boot = 56  // 40 bytes
    static let storeFileSize = 96

    /// The 8-byte field at `offset` of the block `shared` (an acquire load).
    @inline(__always)
    static func load(_ shared: UnsafeMutableRawPointer, _ offset: Int) -> UInt64 {
      reef_atomic_load_u64_acquire(shared + offset)
    }

    /// Stores `value` in the 8-byte field at `offset` of the block `shared` (a release store).
    @inline(__always)
    static func store(_ shared: UnsafeMutableRawPointer, _ offset: Int, _ value: UInt64) {
      reef_atomic_store_u64_release(shared + offset, value)
    }
  }

  /// Whether a checkpoint of this boot set the shared block up.
  func sharedIsValid(_ shared: UnsafeMutableRawPointer) -> Bool {
    guard SharedField.load(shared, SharedField.magic) == CommitLog.headerMagic else { return false }
    return boot.withUnsafeBytes { memcmp(shared.advanced(by: SharedField.boot), $0.baseAddress!, 40) == 0 }
  }

  private func sequence(_ shared: UnsafeMutableRawPointer) -> UInt64 {
    SharedField.load(shared, SharedField.sequence)
  }

  private func salt(_ shared: UnsafeMutableRawPointer) -> UInt64 {
    SharedField.load(shared, SharedField.salt)
  }

  // MARK: Files

  /// Makes the log at least `size` bytes long, growing it with written zeros (flushed), so that
  /// a record written below `size` changes no file metadata.
  private func ensureCapacity(_ size: Int) throws(StoreError) {
    if let shared, Int(SharedField.load(shared, SharedField.capacity)) >= size { return }
    var status = stat()
    guard fstat(file, &status) == 0 else {
      throw StoreError(.storage, "the commit log \(logPath): \(FileSystem.errnoText())")
    }
    var length = Int(status.st_size)
    if length < size {
      let target = (size + CommitLog.growthStep - 1) / CommitLog.growthStep * CommitLog.growthStep
      length = writeZeros(file, from: length, to: target)
      guard length == target else { throw writeFailed() }
      guard fdatasync(file) == 0 else {
        throw StoreError(.full, "growing the commit log \(logPath): \(FileSystem.errnoText())")
      }
    }
    if let shared { SharedField.store(shared, SharedField.capacity, UInt64(length)) }
  }

  /// Overwrites the header of the record at `offset` (best effort), after a commit failed.
  private func eraseRecord(at offset: Int) {
    _ = writeZeros(file, from: offset, to: offset + CommitLog.blockSize)
    _ = fdatasync(file)
  }

  /// The error for a write to the log that failed (with `errno`).
  private func writeFailed() -> StoreError {
    let code = errno
    if code == ENOSPC {
      return StoreError(.full, "writing the commit log \(logPath): the disk is full; nothing was committed")
    }
    return StoreError(
      .storage, "writing the commit log \(logPath): \(String(cString: strerror(code))); nothing was committed")
  }

  /// This boot's identifier: Linux's `/proc/sys/kernel/random/boot_id`, 40 bytes, zero-padded.
  /// Where there is none, one of this process alone: every first opener then treats the store
  /// as restarted and recovers from the checkpoint (safe, and slower), and processes sharing a
  /// store checkpoint more often.
  static func currentBoot() -> [UInt8] {
    var text: [UInt8] = []
    let descriptor = Glibc.open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC)
    if descriptor >= 0 {
      var buffer = [UInt8](repeating: 0, count: 64)
      let count = Glibc.read(descriptor, &buffer, buffer.count)
      Glibc.close(descriptor)
      if count > 0 { text = Array(buffer[..<count]).filter { $0 != UInt8(ascii: "\n") } }
    }
    if text.isEmpty { text = Array("unknown-\(getpid())-\(time(nil))".utf8) }
    var boot = Array(text.prefix(40))
    boot += [UInt8](repeating: 0, count: 40 - boot.count)
    return boot
  }
}
