import CLMDB
import ReefBSON
import ReefQuery

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// How much a commit waits for the disk: what a power loss can take back.
///
/// A crash of the process never loses a committed transaction, whatever the level: commits
/// are in the operating system's page cache when they return. The levels differ only when the
/// machine stops (power loss, kernel panic) before the page cache reaches the disk.
///
/// Each write transaction's changes are appended to the store's commit log (`path-log`) before
/// LMDB commits them, and LMDB itself commits without flushing; a checkpoint now and then
/// flushes LMDB's file and starts the log over (`Specs/store/log.md`). After a restart of the
/// machine the first opener puts the store back at the last checkpoint and applies the log
/// again, so no level can damage the store.
///
/// | level | flushes per commit | after a power loss | like |
/// |---|---|---|---|
/// | ``full`` | 1 (the log) | every acknowledged commit is there | SQLite WAL `synchronous=FULL`, MongoDB `j: true` |
/// | ``normal`` | 0 | recent commits may be undone; the store is intact | SQLite WAL `synchronous=NORMAL` |
/// | ``none`` | 0 | the same as ``normal`` | |
public enum Durability: String, Sendable, Hashable, CaseIterable {
  /// Every commit is on disk when it returns (the default): its record is written to the
  /// commit log and the log flushed (one `fdatasync`) before LMDB commits it, so a reader
  /// never sees a commit that a power loss could take back.
  case full
  /// No flush at commit: the record is written to the log in the page cache. It reaches the
  /// disk with the next ``full`` commit, ``Store/sync()``, a checkpoint, or the operating
  /// system's write-back (about 30 s on Linux). A power loss may undo the commits made since,
  /// never damage the store: it opens at the last commit whose record reached the disk.
  case normal
  /// No flush at commit, as ``normal`` (they behave alike since the commit log: a record is
  /// written either way, and a power loss cannot damage the store). For bulk loads, end with
  /// ``Store/sync()`` or a ``full`` commit.
  case none
}

/// How a store is opened.
public struct StoreOptions: Sendable {
  /// The map size to start with; the map grows (doubling) as data grows, up to `maximumMapSize`.
  public var initialMapSize: Int = 64 << 20
  /// The largest the map may grow to. A write that needs more fails with ``StoreError/Kind/full``
  /// and commits nothing.
  public var maximumMapSize: Int = 1 << 40
  /// Open for reading only: writes fail with ``StoreError/Kind/readOnly``.
  public var readOnly = false
  /// How much each commit waits for the disk (``Durability/full`` by default: a commit that
  /// returns survives a power loss). ``Store/write(durability:_:)`` chooses another level for
  /// one transaction.
  public var durability = Durability.full
  /// The most read transactions that may be open at once, across all processes (LMDB's reader
  /// table). When it is 32 or more, each open store also keeps up to 4 of its finished read
  /// transactions for reuse, each holding a slot of the table (but no snapshot) meanwhile.
  public var maximumReaders = 126
  /// Called when a write waits: when beginning a write transaction has taken more than a second
  /// (another writer, in this process or another, holds the store's write lock:
  /// ``StoreWait/Kind/writer``), and when an import waits for another import into the same
  /// collection (``StoreWait/Kind/importLease``). Each wait is reported once. Writer waits are
  /// reported from a thread of the store's, the others from the waiting thread. `nil` (the
  /// default) watches nothing and costs nothing; otherwise each write transaction takes an
  /// uncontended mutex twice more.
  public var onWait: (@Sendable (StoreWait) -> Void)?
  /// Seconds a write transaction may take to begin before ``onWait`` reports it (tests shorten it).
  var writerWaitDelay = 1.0

  /// Whether commits flush to disk: `true` is ``Durability/full``, `false` ``Durability/none``.
  @available(*, deprecated, message: "use durability (.full, .normal or .none)")
  public var syncOnCommit: Bool {
    get { durability != .none }
    set { durability = newValue ? .full : .none }
  }

  /// Options; by default a writable store that grows from 64 MiB, fully durable.
  public init(
    initialMapSize: Int = 64 << 20, maximumMapSize: Int = 1 << 40, readOnly: Bool = false,
    durability: Durability = .full, maximumReaders: Int = 126, onWait: (@Sendable (StoreWait) -> Void)? = nil
  ) {
    self.initialMapSize = initialMapSize
    self.maximumMapSize = maximumMapSize
    self.readOnly = readOnly
    self.durability = durability
    self.maximumReaders = maximumReaders
    self.onWait = onWait
  }

  /// Options with `syncOnCommit` (`true` is ``Durability/full``, `false` ``Durability/none``).
  @available(*, deprecated, message: "use init(durability:) (.full, .normal or .none)")
  public init(
    initialMapSize: Int = 64 << 20, maximumMapSize: Int = 1 << 40, readOnly: Bool = false,
    syncOnCommit: Bool, maximumReaders: Int = 126
  ) {
    self.init(
      initialMapSize: initialMapSize, maximumMapSize: maximumMapSize, readOnly: readOnly,
      durability: syncOnCommit ? .full : .none, maximumReaders: maximumReaders)
  }
}

/// A store: named collections of BSON documents with their indexes, in one LMDB file.
///
/// ```swift
/// let store = try Store(path: "app.reef")
/// let contacts = store.collection("contacts")
/// try contacts.insert(["name": "Ann", "address": ["city": "Los Angeles"]])
/// let inLA = try contacts.find(["address.city": "Los Angeles"])
/// ```
///
/// Read transactions see a snapshot and never block the writer; one write transaction runs at a
/// time (others wait), across threads and processes, and commits atomically or not at all.
/// The file is `path`; LMDB keeps its lock table in `path-lock`, and Reef its commit log in
/// `path-log` (with `path-log-shared`, the state the processes that have it open share).
public final class Store: @unchecked Sendable {
  let environment: OpaquePointer
  /// The path of the store file.
  public let path: String
  /// The options the store was opened with.
  public let options: StoreOptions
  private var mapSize: Int
  let lock = Mutex()
  /// The thread that reads the change feed for observers, once there is one.
  var changeWatcher: ChangeWatcher?
  private var handles: [String: MDB_dbi] = [:]
  /// This store's open transactions (LMDB can only grow the map when there are none).
  let openTransactions = AtomicCounter()
  /// Held while a read transaction begins and while the map grows, so that the two never overlap.
  let beginLock = Mutex()
  /// Held for the whole of a write transaction: this process's writers take turns here (LMDB's
  /// own lock orders them with other processes), and the map grows only while holding it.
  let writeLock = Mutex()
  /// Reports writes slow to begin, when ``StoreOptions/onWait`` is set.
  let writeWatch: WriteWaitWatch?

  /// Opens the store at `path`, creating it unless read-only.
  ///
  /// - Throws: ``StoreError/Kind/open`` when the file is open in this process already (by this
  ///   path or another): share that `Store` instead.
  public init(path: String, options: StoreOptions = StoreOptions()) throws(StoreError) {
    try OpenFiles.beginOpening(path)
    defer { OpenFiles.endOpening() }
    self.path = path
    self.options = options
    writeWatch = options.onWait.map { WriteWaitWatch(delay: options.writerWaitDelay, hook: $0) }
    // The log first: its first opener after a restart puts the store file back at the last
    // checkpoint before LMDB reads it.
    let hadLog = access(path + "-log", F_OK) == 0
    let log = try CommitLog.open(storePath: path, readOnly: options.readOnly)
    self.log = log
    // Before LMDB maps the file: a file cut short, or a damaged header page, is refused here.
    try Store.checkStoreFile(path: path, log: log, readOnly: options.readOnly, hadLog: hadLog)
    var environment: OpaquePointer?
    try check(mdb_env_create(&environment), "creating the environment")
    self.environment = environment!
    mapSize = options.initialMapSize
    // Every stored property is set: a throw from here on runs deinit, which closes the
    // environment (closing it before throwing as well would free it twice).
    try check(mdb_env_set_maxdbs(environment, 4096), "opening \(path)")
    try check(mdb_env_set_maxreaders(environment, UInt32(options.maximumReaders)), "opening \(path)")
    // Never shrink an existing store's map below its current size: LMDB keeps the larger.
    try check(mdb_env_set_mapsize(environment, options.initialMapSize), "opening \(path)")
    var flags = UInt32(MDB_NOSUBDIR | MDB_NOTLS)
    if options.readOnly { flags |= UInt32(MDB_RDONLY) }
    // Commits are made durable by the log (one flush), so LMDB never flushes on commit; a
    // checkpoint flushes its file.
    if !options.readOnly { flags |= UInt32(MDB_NOSYNC) }
    let code = mdb_env_open(environment, path, flags, 0o644)
    if code != 0 {
      var error = StoreError(.open, "cannot open the store \(path): \(String(cString: mdb_strerror(code)))")
      // LMDB returns a system call's errno as it is (its own codes are negative).
      if code > 0 { error.systemErrorNumber = code }
      throw error
    }
    environmentOpened = true
    openFile = OpenFiles.register(self, path: path)
    if let log {
      log.record.nameOf = { [unowned self] database in self.name(of: database) }
      try log.opened(environment: self.environment)
    }
    var info = MDB_envinfo()
    mdb_env_info(environment, &info)
    mapSize = info.me_mapsize
    do {
      if options.readOnly {
        try read { transaction in try transaction.checkFormat(path: path) }
      } else {
        try write { transaction in try transaction.checkFormat(path: path) }
      }
      try read { transaction in transaction.openNamedDatabases() }
    } catch let error as StoreError {
      throw error
    } catch {
      throw StoreError(.open, "cannot open the store \(path): \(error)")
    }
  }

  deinit {
    writeWatch?.stop()
    for reader in idleReaders { reader.abort() }
    idleReaders = []
    if environmentOpened { log?.close(environment: environment) }
    mdb_env_close(environment)
    if let openFile { OpenFiles.unregister(openFile) }
  }

  /// This store's file in the table of files open in this process.
  private var openFile: OpenFiles.FileID?

  /// The commit log (`path-log`); nil for a read-only store that has none.
  let log: CommitLog?
  /// Whether `mdb_env_open` succeeded (deinit checkpoints only then).
  private var environmentOpened = false

  /// The files of the store at `path`: the store file, LMDB's lock file, and the commit log
  /// with its shared state. Copy, move or remove them together, with the store closed.
  public static func files(at path: String) -> [String] {
    [path, path + "-lock", path + "-log", path + "-log-shared"]
  }

  /// Removes the files of the store at `path` (those that exist), as Realm's
  /// `Realm.deleteFiles(for:)` does; returns whether the store file was there. The store must
  /// not be open, in this process or another.
  @discardableResult
  public static func deleteFiles(at path: String) throws(StoreError) -> Bool {
    var existed = false
    for (index, file) in files(at: path).enumerated() {
      if unlink(file) == 0 {
        if index == 0 { existed = true }
      } else if errno != ENOENT {
        throw StoreError.system(.storage, "cannot remove \(file)", code: errno)
      }
    }
    return existed
  }

  /// Reset read transactions kept for the next reads (LMDB's `mdb_txn_reset`/`mdb_txn_renew`):
  /// a read then needs no allocation and no reader-table lock to begin. Guarded by `beginLock`.
  /// Each keeps its reader slot (one of ``StoreOptions/maximumReaders``) while idle, but no
  /// snapshot: idle readers do not hold old pages back from reuse.
  var idleReaders: [LMDBTransaction] = []
  /// How many idle readers are kept: a few, and none when reader slots are scarce.
  private var idleReaderLimit: Int { min(4, options.maximumReaders / 8) }

  /// Resets a read transaction that opened no database and keeps it for the next read, unless
  /// enough are kept already; returns whether it was kept (if not, the caller ends it).
  func keepIdleReader(_ transaction: LMDBTransaction) -> Bool {
    // A database opened in a read transaction stays open only if it commits (LMDB closes it on
    // a reset), so such a reader is not kept.
    guard !transaction.openedDatabase else { return false }
    return beginLock.withLock {
      guard idleReaders.count < idleReaderLimit else { return false }
      transaction.reset()
      idleReaders.append(transaction)
      return true
    }
  }

  /// Flushes committed transactions to disk: after commits with ``Durability/normal`` or
  /// ``Durability/none``, everything committed so far then survives a power loss. (With the
  /// commit log this flushes the log: one `fdatasync`.)
  public func sync() throws(StoreError) {
    if let log { try log.flush() } else { try check(mdb_env_sync(environment, 1), "sync") }
  }

  // MARK: Transactions

  /// Runs `body` in a read transaction: a consistent snapshot that writers do not disturb.
  ///
  /// Documents returned by the transaction's collections are copies, valid after it ends.
  public func read<R>(_ body: (Transaction) throws -> R) throws -> R {
    let transaction = try Transaction(store: self, readOnly: true)
    defer { transaction.finish(commit: true) }
    return try body(transaction)
  }

  /// Runs `body` in the write transaction: it waits for any other writer (in any process),
  /// and commits when `body` returns, or rolls back everything when it throws. The commit has
  /// the store's ``StoreOptions/durability``.
  public func write<R>(_ body: (Transaction) throws -> R) throws -> R {
    try write(durability: options.durability, body)
  }

  /// Runs `body` in the write transaction, as ``write(_:)``, committing with `durability`
  /// instead of the store's ``StoreOptions/durability``.
  ///
  /// ```swift
  /// try store.write(durability: .normal) { transaction in … }  // no flush
  /// ```
  ///
  /// A ``Durability/full`` commit also makes every earlier commit durable.
  public func write<R>(durability: Durability, _ body: (Transaction) throws -> R) throws -> R {
    guard !options.readOnly else { throw StoreError(.readOnly, "the store \(path) is open read-only") }
    // Waiting for the write lock (writers of this process) and for LMDB's (of other processes)
    // is watched, when asked, so that a wait longer than a second is reported.
    let ticket = writeWatch?.begin()
    writeLock.lock()
    defer { writeLock.unlock() }
    let transaction: Transaction
    do {
      defer { if let ticket { writeWatch?.end(ticket) } }
      try growMapIfNeeded()
      transaction = try Transaction(store: self, readOnly: false)
    }
    let result: R
    do {
      result = try body(transaction)
    } catch {
      transaction.finish(commit: false)
      throw error
    }
    try transaction.commitTransaction(durability: durability)
    return result
  }

  // MARK: Memory

  /// Lets go of the store's pages that this process has mapped in while reading: they stop
  /// counting in its resident memory, and the data stays in the operating system's page cache
  /// (a later read maps it again, without reading the disk).
  ///
  /// Reading walks the store's memory map, and each page read stays mapped (resident, counted as
  /// file-backed memory) until the store closes. Linux maps up to 64 KB of cached neighbours
  /// with each page read ("fault-around"), so reading pages in an order other than the file's
  /// (an import of scattered `_id`s, a scan of a store filled in such an order) maps several
  /// times what it reads, up to the store's size. The pages are clean and shared (writes go
  /// through the file, not the map), so dropping them loses nothing.
  /// ``Store/importDump(from:options:progress:)`` and ``Store/exportDump(to:collections:progress:)``
  /// call this as they go, with a limit of 64 MB. It is safe while transactions are open, in
  /// this thread or others: their documents read the same bytes again.
  ///
  /// On systems other than Linux it does nothing.
  /// - Parameter limit: release only when this process's file-backed resident memory (the
  ///   store's map, other mapped files and the program itself: `/proc/self/statm`) is over
  ///   `limit` bytes. Checking costs a read of `/proc/self/statm` (about 10 µs), so a loop can
  ///   call this every few hundred documents; releasing costs a walk of the mapped pages.
  /// - Complexity: O(*p*) in the pages mapped, when it releases.
  public func releaseMappedPages(ifMappedMemoryExceeds limit: Int = 0) {
    #if os(Linux)
      if limit > 0 {
        guard let resident = fileBackedResidentBytes(), resident > limit else { return }
      }
      beginLock.withLock {
        // The begin lock keeps the map where it is: it moves only when it grows, under this lock.
        var info = MDB_envinfo()
        mdb_env_info(environment, &info)
        for (start, count) in mappings(ofSize: info.me_mapsize) { _ = madvise(start, count, MADV_DONTNEED) }
      }
    #endif
  }

  /// The limit ``releaseMappedPages(ifMappedMemoryExceeds:)`` gets from imports and exports.
  static let mappedMemoryLimit = 64 << 20
  /// The limit a query's scan gives it: lower than an import's, which also holds its batch.
  static let scanMappedMemoryLimit = 40 << 20

  #if os(Linux)
    /// This process's resident file-backed and shared memory (`/proc/self/statm`'s third
    /// field, in pages), in bytes.
    func fileBackedResidentBytes() -> Int? {
      let statm = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
      guard statm >= 0 else { return nil }
      defer { close(statm) }
      var text = [UInt8](repeating: 0, count: 128)
      let count = Glibc.read(statm, &text, text.count)
      guard count > 0 else { return nil }
      let fields = text[..<count].split(separator: UInt8(ascii: " "))
      guard fields.count >= 3, let pages = Int(String(decoding: fields[2], as: UTF8.self)) else { return nil }
      return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
  #endif

  #if os(Linux)
    /// This process's shared mappings of the store file that are `size` bytes long (the map),
    /// from `/proc/self/maps`. LMDB does not say where its map is (`mdb_env_info` gives an
    /// address only for a fixed map), so it is found by the file's device and inode.
    func mappings(ofSize size: Int) -> [(UnsafeMutableRawPointer, Int)] {
      var file = stat()
      var descriptor: Int32 = -1
      guard mdb_env_get_fd(environment, &descriptor) == 0, fstat(descriptor, &file) == 0 else { return [] }
      let maps = open("/proc/self/maps", O_RDONLY | O_CLOEXEC)
      guard maps >= 0 else { return [] }
      defer { close(maps) }
      var text: [UInt8] = []
      var chunk = [UInt8](repeating: 0, count: 65_536)
      while true {
        let count = Glibc.read(maps, &chunk, chunk.count)
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        text += chunk[..<count]
      }
      // Each line: start-end perms offset major:minor inode path (numbers in hex but the inode).
      // glibc's major() and minor() (macros, not imported).
      let dev = UInt64(file.st_dev)
      let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & ~0xfff)
      let minor = (dev & 0xff) | ((dev >> 12) & ~0xff)
      var found: [(UnsafeMutableRawPointer, Int)] = []
      for line in text.split(separator: UInt8(ascii: "\n")) {
        let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 5, omittingEmptySubsequences: true)
        guard fields.count >= 5, fields[1].last == UInt8(ascii: "s"),
          UInt64(String(decoding: fields[4], as: UTF8.self)) == UInt64(file.st_ino),
          UInt64(String(decoding: fields[2], as: UTF8.self), radix: 16) == 0
        else { continue }
        let numbers = String(decoding: fields[3], as: UTF8.self).split(separator: ":")
        guard numbers.compactMap({ UInt64($0, radix: 16) }) == [major, minor] else { continue }
        let range = fields[0].split(separator: UInt8(ascii: "-"))
        guard range.count == 2, let start = UInt(String(decoding: range[0], as: UTF8.self), radix: 16),
          let end = UInt(String(decoding: range[1], as: UTF8.self), radix: 16), end > start,
          Int(end - start) == size, let pointer = UnsafeMutableRawPointer(bitPattern: start)
        else { continue }
        found.append((pointer, size))
      }
      return found
    }
  #endif

  /// LMDB's environment flags now.
  var environmentFlags: UInt32 {
    var flags: UInt32 = 0
    mdb_env_get_flags(environment, &flags)
    return flags
  }

  /// Doubles the map when it is more than three quarters used (and no transaction of this
  /// process is open, as LMDB requires).
  func growMapIfNeeded() throws(StoreError) {
    var info = MDB_envinfo()
    var stat = MDB_stat()
    mdb_env_info(environment, &info)
    mdb_env_stat(environment, &stat)
    let used = (info.me_last_pgno + 1) * Int(stat.ms_psize)
    mapSize = max(mapSize, info.me_mapsize)
    guard used * 4 > mapSize * 3, mapSize < options.maximumMapSize else { return }
    let newSize = min(options.maximumMapSize, mapSize * 2)
    beginLock.withLock {
      guard openTransactions.load() == 0 else { return }
      if mdb_env_set_mapsize(environment, newSize) == 0 { mapSize = newSize }
    }
  }

  // MARK: Database handles

  /// The handle of a named database, opened once and cached.
  ///
  /// A read transaction cannot use a handle opened after it began (LMDB answers EINVAL): for
  /// it, a database made since (the catalog, by a collection's first write on another thread)
  /// is missing, as it is from its snapshot. A database that was in its snapshot but whose
  /// handle is newer than it cannot be read in it, and says so.
  func handle(_ name: String, in transaction: LMDBTransaction, create: Bool) throws(StoreError) -> MDB_dbi? {
    try lock.withLock { () throws(StoreError) -> MDB_dbi? in
      if let handle = handles[name] {
        guard transaction.readOnly, !transaction.canUse(handle) else { return handle }
        guard try transaction.namesDatabase(name) else { return nil }
        throw StoreError(
          .storage,
          "the database \(name) was first opened after this read transaction began: read it in a newer transaction")
      }
      guard let handle = try transaction.open(name, create: create && !transaction.readOnly) else { return nil }
      names[handle] = name
      if transaction.readOnly {
        handles[name] = handle
      } else {
        pendingHandles[ObjectIdentifier(transaction), default: [:]][name] = handle
      }
      return handle
    }
  }

  private var pendingHandles: [ObjectIdentifier: [String: MDB_dbi]] = [:]
  /// The name each database handle was opened with (for the commit log's records).
  private var names: [MDB_dbi: String] = [:]

  /// The name of the open database `handle`.
  func name(of handle: MDB_dbi) -> String? { lock.withLock { names[handle] } }

  /// After a commit, handles opened by the transaction become the store's; after an abort they
  /// are gone.
  func settleHandles(of transaction: LMDBTransaction, committed: Bool) {
    lock.withLock {
      if let pending = pendingHandles.removeValue(forKey: ObjectIdentifier(transaction)), committed {
        handles.merge(pending) { _, new in new }
      }
    }
  }

  /// Parsed catalog entries by collection name, with the bytes they were parsed from: a
  /// transaction that reads the same bytes reuses the entry (the bytes decide, so changes made
  /// by other processes are seen).
  private var catalogCache: [String: (bytes: [UInt8], info: CollectionInfo)] = [:]

  func cachedCatalogEntry(_ name: String, _ bytes: UnsafeRawBufferPointer) -> CollectionInfo? {
    lock.withLock {
      guard let entry = catalogCache[name], entry.bytes.count == bytes.count,
        bytes.isEmpty || entry.bytes.withUnsafeBytes({ memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) }) == 0
      else { return nil }
      return entry.info
    }
  }

  func cacheCatalogEntry(_ name: String, _ bytes: [UInt8], _ info: CollectionInfo) {
    lock.withLock { catalogCache[name] = (bytes, info) }
  }

  /// Forgets the handle of a database `transaction` dropped (LMDB has closed it, and may give
  /// its number to the next database opened): in the store's table, and among the handles the
  /// transaction opened, which would otherwise join the table when it commits.
  func forgetHandle(_ name: String, droppedIn transaction: LMDBTransaction) {
    lock.withLock {
      _ = handles.removeValue(forKey: name)
      _ = pendingHandles[ObjectIdentifier(transaction)]?.removeValue(forKey: name)
    }
  }

  // MARK: Collections

  /// The collection named `name`; it exists once something is written to it. A collection that
  /// does not exist reads as empty.
  ///
  /// Names follow MongoDB's rules, so that every collection exports to a dump and imports again
  /// under the same name; the first write to a collection whose name breaks them throws
  /// ``StoreError/Kind/namespace``, saying which rule and where. A name with a dot is
  /// `database.collection` (split at the first dot), one without a dot a collection alone
  /// (`contacts`).
  /// - The name is not empty, holds no NUL, is at most 255 bytes and does not start with `__`
  ///   (reserved for the store's own collections).
  /// - The database part is shorter than 64 bytes and holds none of `/ \ . space " $`.
  /// - The collection part holds no `$` and no `.system.`, and starts with `system.` only for the
  ///   system collections clients may write (`system.js`, `system.views`, `system.users`,
  ///   `system.profile`, `system.buckets.<name>`; in `admin` also `system.roles`,
  ///   `system.version`, …).
  public func collection(_ name: String) -> DocumentCollection { DocumentCollection(store: self, name: name) }

  /// A typed collection of Codable values, encoded with `BSONEncoder` and decoded with `BSONDecoder`.
  public func collection<T: Codable>(_ name: String, as type: T.Type) -> TypedCollection<T> {
    TypedCollection(collection: collection(name))
  }

  /// The names of the collections, sorted.
  public func collectionNames() throws -> [String] {
    try read { transaction in try transaction.collectionNames() }
  }
}

/// A mutex (pthread), for the store's small shared tables.
final class Mutex: @unchecked Sendable {
  private var mutex = pthread_mutex_t()
  init() { pthread_mutex_init(&mutex, nil) }
  deinit { pthread_mutex_destroy(&mutex) }
  func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
    pthread_mutex_lock(&mutex)
    defer { pthread_mutex_unlock(&mutex) }
    return try body()
  }
  func lock() { pthread_mutex_lock(&mutex) }
  func unlock() { pthread_mutex_unlock(&mutex) }
  /// Takes the lock if no one holds it; returns whether it did.
  func tryLock() -> Bool { pthread_mutex_trylock(&mutex) == 0 }
  /// Runs `body` holding the lock if no one holds it; does nothing otherwise.
  func withLockIfAvailable(_ body: () -> Void) {
    guard pthread_mutex_trylock(&mutex) == 0 else { return }
    defer { pthread_mutex_unlock(&mutex) }
    body()
  }
}

/// A counter shared between threads.
final class AtomicCounter: @unchecked Sendable {
  private let mutex = Mutex()
  private var value = 0
  func add(_ delta: Int) { mutex.withLock { value += delta } }
  func load() -> Int { mutex.withLock { value } }
}
