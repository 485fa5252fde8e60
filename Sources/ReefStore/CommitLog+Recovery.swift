import CLMDB

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// Recovery: the first opener's checks and repairs before LMDB opens the store, the replay of the
// log's records once it has, and the checkpoint at closing.
extension CommitLog {
  // MARK: Recovery

  /// Byte 0 of the log: held exclusively by a writable opener while it opens (and recovers),
  /// shared by a read-only one. Byte 1: held shared by every open store, so that an opener that
  /// can take it exclusively knows it is the first.
  private static let gateByte: off_t = 0
  private static let presenceByte: off_t = 1

  func lockAndRecover(storePath: String) throws(StoreError) {
    guard reef_byte_lock(file, Int16(readOnly ? F_RDLCK : F_WRLCK), CommitLog.gateByte, 1) == 0 else {
      throw StoreError.system(.open, "cannot lock the store's commit log \(logPath)", code: errno)
    }
    if readOnly {
      isFirst = reef_byte_lock_free(file, Int16(F_WRLCK), CommitLog.presenceByte) == 1
    } else {
      isFirst = reef_byte_lock(file, Int16(F_WRLCK), CommitLog.presenceByte, 0) == 0
    }
    guard isFirst else { return }
    // The first opener: nobody else has the store open, so nobody writes meanwhile.
    guard let header = validHeader(), let data = try? DataFile(path: storePath, readOnly: true) else {
      return  // no checkpoint, or no store file yet: nothing to recover
    }
    defer { data.close() }
    // A log left by another store file at this path (removed and made again) is not this one's.
    // The inode decides, not the device: device numbers may change from one boot to the next
    // (btrfs subvolumes, device-mapper, NVMe), which would skip the recovery a restart needs.
    guard header.inode == data.inode else { return }
    if header.boot == boot {
      // No restart since the checkpoint: the store file (in the page cache) holds every
      // commit; records past it were never committed. The checkpoint at opening starts over,
      // unless the file is damaged and the checkpoint can rebuild it.
      try recoverDamage(header, data: data, storePath: storePath)
      return
    }
    let metas = DataFile.metas(of: data.descriptor, pageSize: Int(header.pageSize))
    let hasRecords =
      readRecord(at: CommitLog.recordsStart, sequence: header.sequence, salt: header.salt, lsn: header.checkpoint + 1)
      != nil
    guard metas != header.metas || hasRecords else { return }
    // A store file too short to hold both meta pages is not an LMDB file. One whose meta pages
    // are both whole and older than the checkpoint (a backup copied over it) is not the one the
    // log was written for. One that is not a whole meta page was being written when the power
    // went: LMDB cannot open the file, the checkpoint's can.
    guard metas.count == 2 * CommitLog.metaCopySize else { return }
    if let newest = CommitLog.newestTransaction(metas), newest < header.checkpoint { return }
    if readOnly {
      throw StoreError(
        .open,
        "the store \(storePath) needs recovery after a restart of the machine (its commit log \(logPath) holds "
          + "commits to apply again): open it once without readOnly")
    }
    // Write the checkpoint's meta pages back, so that LMDB opens at the checkpoint.
    let writable = try DataFile(path: storePath, readOnly: false)
    defer { writable.close() }
    try writable.restore(header)
    replayFrom = header
  }

  /// When the store file is damaged (cut short, or a header page that fails the checks of
  /// `StoreFileCheck`) and the log's checkpoint can stand in for its header pages, with records
  /// that reach every transaction a whole header page names: writes the checkpoint's header
  /// pages back, and ``opened(environment:)`` applies the records, as after a power loss.
  /// Otherwise leaves the file as it is (and says why in ``damageNote``): the store refuses it.
  private func recoverDamage(_ header: LogHeader, data: DataFile, storePath: String) throws(StoreError) {
    guard let check = StoreFileCheck(descriptor: data.descriptor) else { return }
    let damage: StoreFileDamage
    do throws(StoreFileDamage) {
      try check.check()
      return
    } catch {
      damage = error
    }
    let half = CommitLog.metaCopySize
    guard let zero = LMDBMeta(Array(header.metas[0..<half]), page: 0),
      let one = LMDBMeta(Array(header.metas[half...]), page: 1)
    else {
      damageNote = "the commit log's checkpoint holds no LMDB header pages"
      return
    }
    do throws(StoreFileDamage) {
      try check.check([zero, one])
    } catch {
      damageNote =
        "the commit log's checkpoint (transaction \(header.checkpoint)) cannot stand in for the header pages: "
        + error.detail
      return
    }
    var reached = header.checkpoint
    var offset = CommitLog.recordsStart
    while let payload = readRecord(at: offset, sequence: header.sequence, salt: header.salt, lsn: reached + 1) {
      offset += CommitRecord.paddedSize(CommitLog.recordHeaderSize + payload.count)
      reached += 1
    }
    let required = damage.newestIntact ?? 0
    guard reached >= required else {
      damageNote =
        "the commit log reaches transaction \(reached), the store file's header recorded \(required)"
      return
    }
    if readOnly {
      throw StoreError(
        .corrupt,
        "the store \(storePath) is damaged (\(damage.detail)); its commit log \(logPath) can rebuild it: "
          + "open it once without readOnly")
    }
    let writable = try DataFile(path: storePath, readOnly: false)
    defer { writable.close() }
    try writable.restore(header)
    replayFrom = header
    requiredTransaction = required
  }

  /// Called once LMDB has opened the store: applies the records kept for a restart, makes the
  /// first checkpoint of a first writable opener, and lets other openers in.
  func opened(environment: OpaquePointer) throws(StoreError) {
    defer {
      _ = reef_byte_lock(file, Int16(F_RDLCK), CommitLog.presenceByte, 1)
      _ = reef_byte_lock(file, Int16(F_UNLCK), CommitLog.gateByte, 0)
    }
    guard !readOnly, isFirst else { return }
    var hold: LMDBTransaction?
    defer { hold?.abort() }
    if let header = replayFrom {
      // Applying the records must not reuse the checkpoint's pages: a power loss meanwhile
      // would have the next opener start from the checkpoint again.
      hold = try LMDBTransaction(environment: environment, readOnly: true)
      replayed = try replay(header, environment: environment)
      replayFrom = nil
      let reached = header.checkpoint + UInt64(replayed)
      guard reached >= requiredTransaction else {
        throw StoreError(
          .corrupt,
          "rebuilding the store from \(logPath): its records reach transaction \(reached), the damaged store "
            + "file's header recorded \(requiredTransaction); restore the store from a backup or a dump")
      }
    }
    let writer = try LMDBTransaction(environment: environment, readOnly: false)
    defer { writer.abort() }
    let header = validHeader()
    try checkpoint(environment: environment)
    if header == nil {
      // The log's first header (a new store, or a log made afresh): its directory entry, and
      // the store file's, reach the disk too, so that a power loss cannot lose the files.
      flushDirectory()
    }
  }

  /// Flushes the directory that holds the log (best effort).
  private func flushDirectory() {
    let descriptor = Glibc.open(FileSystem.directoryName(logPath), O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    _ = fsync(descriptor)
    Glibc.close(descriptor)
  }

  /// Checkpoints if the log holds records (a writable store closing), so that the store file
  /// holds every commit and the log is empty; then lets the pin go.
  func close(environment: OpaquePointer) {
    defer { replacePin(with: nil, sequence: 0) }
    /// Whether the current checkpoint's log holds records.
    func holdsRecords(_ shared: UnsafeMutableRawPointer) -> Bool {
      sharedIsValid(shared)
        && SharedField.load(shared, SharedField.tail) > UInt64(CommitLog.recordsStart)
    }
    guard !readOnly, pin != nil, let shared, holdsRecords(shared) else { return }
    guard let writer = try? LMDBTransaction(environment: environment, readOnly: false) else { return }
    defer { writer.abort() }
    // Another opener may have checkpointed meanwhile (read again under LMDB's write lock).
    guard holdsRecords(shared) else { return }
    try? checkpoint(environment: environment)
  }

  // MARK: Replay

  /// Applies the records of `header`'s log, in order, one LMDB transaction each; returns how
  /// many. The first record that is missing, torn or of another checkpoint ends the log.
  private func replay(_ header: LogHeader, environment: OpaquePointer) throws(StoreError) -> Int {
    var offset = CommitLog.recordsStart
    var lsn = header.checkpoint + 1
    var count = 0
    while let payload = readRecord(at: offset, sequence: header.sequence, salt: header.salt, lsn: lsn) {
      let transaction = try LMDBTransaction(environment: environment, readOnly: false)
      guard UInt64(mdb_txn_id(transaction.pointer)) == lsn else {
        transaction.abort()
        throw StoreError(
          .corrupt,
          "recovering from \(logPath): the store file is at transaction \(mdb_txn_id(transaction.pointer) - 1), "
            + "the log's record at byte \(offset) is transaction \(lsn)")
      }
      do {
        try CommitRecord.apply(payload, to: transaction, where: "the record at byte \(offset) of \(logPath)")
        try transaction.commit()
      } catch {
        transaction.abort()
        throw error
      }
      offset += CommitRecord.paddedSize(CommitLog.recordHeaderSize + payload.count)
      lsn += 1
      count += 1
    }
    return count
  }

  /// The payload of the record at `offset` if it is whole (magic, length, checksum) and is
  /// record `lsn` of checkpoint `sequence`; nil otherwise.
  private func readRecord(at offset: Int, sequence: UInt64, salt: UInt64, lsn: UInt64) -> [UInt8]? {
    let head = preadAll(file, count: CommitLog.recordHeaderSize, at: offset)
    guard head.count == CommitLog.recordHeaderSize else { return nil }
    guard head.littleEndian(UInt32.self, at: 0) == CommitLog.recordMagic,
      head.littleEndian(UInt64.self, at: 8) == sequence, head.littleEndian(UInt64.self, at: 16) == lsn
    else { return nil }
    let length = Int(head.littleEndian(UInt32.self, at: 24))
    guard length <= CommitLog.largestRecord + (1 << 20) else { return nil }
    let whole = preadAll(file, count: CommitLog.recordHeaderSize + length, at: offset)
    guard whole.count == CommitLog.recordHeaderSize + length else { return nil }
    let checksum = whole.withUnsafeBytes { reef_crc32c_salted(salt, $0.baseAddress! + 8, $0.count - 8) }
    guard checksum == head.littleEndian(UInt32.self, at: 4) else { return nil }
    return Array(whole[CommitLog.recordHeaderSize...])
  }
}
