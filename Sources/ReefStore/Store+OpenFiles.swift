#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The store files this process has open, by device and inode: LMDB must not open one file
/// twice in a process (a second environment corrupts the first one's reader table, and closing
/// either drops the other's locks), so a second `Store` of an open file is refused with an
/// error instead, whatever path names the file.
enum OpenFiles {
  struct FileID: Hashable {
    let device: UInt64
    let inode: UInt64

    /// The file at `path`, or nil when there is none.
    init?(path: String) {
      var status = stat()
      guard stat(path, &status) == 0 else { return nil }
      device = UInt64(status.st_dev)
      inode = UInt64(status.st_ino)
    }
  }

  final class Entry {
    weak var store: Store?
    init(_ store: Store) { self.store = store }
  }

  /// Held for the whole of a store's opening, so that two threads opening one file take turns.
  private static let openingLock = Mutex()
  private static let tableLock = Mutex()
  nonisolated(unsafe) private static var entries: [FileID: Entry] = [:]

  /// Begins opening the file at `path` (see ``endOpening()``) unless it is open in this process
  /// already; a store of it that is being closed (its last reference gone) is waited for.
  /// - Throws: ``StoreError/Kind/open`` when the file is open.
  static func beginOpening(_ path: String) throws(StoreError) {
    openingLock.lock()
    var waited = 0
    while let id = FileID(path: path), let entry = tableLock.withLock({ entries[id] }) {
      if entry.store != nil {
        openingLock.unlock()
        throw StoreError(
          .open,
          "the store \(path) is open in this process already; use that Store (or the Reef's store) rather than opening the file twice"
        )
      }
      // Its last reference went: its deinit is closing it.
      guard waited < 10_000 else {
        openingLock.unlock()
        throw StoreError(.open, "the store \(path) is still being closed in this process after 10 s")
      }
      openingLock.unlock()
      usleep(1000)
      waited += 1
      openingLock.lock()
    }
  }

  /// Ends an opening begun by ``beginOpening(_:)``, whether it succeeded or threw.
  static func endOpening() { openingLock.unlock() }

  /// Records an opened store's file.
  static func register(_ store: Store, path: String) -> FileID? {
    guard let id = FileID(path: path) else { return nil }
    tableLock.withLock { entries[id] = Entry(store) }
    return id
  }

  /// Forgets a closed store's file.
  static func unregister(_ id: FileID) {
    tableLock.withLock { _ = entries.removeValue(forKey: id) }
  }

  /// The open store of the file at `path` in this process, if any.
  static func store(at path: String) -> Store? {
    guard let id = FileID(path: path) else { return nil }
    return tableLock.withLock { entries[id]?.store }
  }
}

extension Store {
  /// The store this process has open on the file at `path` (by any path to it), if any.
  public static func openStore(at path: String) -> Store? { OpenFiles.store(at: path) }
}
