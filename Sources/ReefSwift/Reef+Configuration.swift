import ReefStore

extension Reef {
  /// How to open a `Reef`: which file, read-only or not, which object types, which schema
  /// version and how to migrate to it.
  ///
  /// ```swift
  /// var configuration = Reef.Configuration()
  /// configuration.fileURL = URL(fileURLWithPath: "contacts.reef")
  /// configuration.objectTypes = [Contact.self, Address.self]
  /// let reef = try Reef(configuration: configuration)
  /// ```
  public struct Configuration: @unchecked Sendable {
    /// The store file: by default `default.reef` in the working directory.
    public var fileURL: URL? = URL(fileURLWithPath: "default.reef")
    /// A name for a store that lives only while some `Reef` with this identifier is open (in
    /// a temporary file that is deleted when the process ends or the last handle closes).
    /// Setting it clears ``fileURL``.
    public var inMemoryIdentifier: String? {
      didSet { if inMemoryIdentifier != nil { fileURL = nil } }
    }
    /// Opens the file read-only: every write fails.
    public var readOnly = false
    /// The object types this `Reef` holds; checked when it opens. Nil (the default) takes
    /// each type when it is first used (Linux has no runtime list of a program's classes,
    /// so types are not discovered ahead).
    public var objectTypes: [ObjectBase.Type]?
    /// The schema version; raise it when the models change.
    public var schemaVersion: UInt64 = 0
    /// Called when the file's schema version is lower than ``schemaVersion``.
    public var migrationBlock: MigrationBlock?
    /// Deletes the file (instead of migrating) when its schema differs from the models.
    public var deleteReefIfMigrationNeeded = false
    /// Realm's name for ``deleteReefIfMigrationNeeded``.
    public var deleteRealmIfMigrationNeeded: Bool {
      get { deleteReefIfMigrationNeeded }
      set { deleteReefIfMigrationNeeded = newValue }
    }
    /// How commits reach the disk (see ``ReefStore/Durability``).
    public var durability: Durability = .full
    /// The most versions (snapshots) of the file this process may pin at once: the snapshots
    /// of live `Reef`s and of frozen ones (``Reef/freeze()``), counted once per version. Nil
    /// (the default) sets no limit. Past it, ``Reef/freeze()`` and ``Reef/beginWrite()`` stop
    /// (``Reef/tryFreeze()``, ``Reef/tryBeginWrite()`` and ``Reef/write(_:)`` throw
    /// ``ReefError/Kind/tooManyActiveVersions``) instead of letting the file grow: LMDB cannot
    /// reuse the pages a later write frees while an older snapshot is pinned.
    public var maximumNumberOfActiveVersions: UInt?

    /// A configuration with the defaults, changed by the arguments given.
    public init(
      fileURL: URL? = URL(fileURLWithPath: "default.reef"), inMemoryIdentifier: String? = nil, readOnly: Bool = false,
      schemaVersion: UInt64 = 0, migrationBlock: MigrationBlock? = nil, deleteReefIfMigrationNeeded: Bool = false,
      objectTypes: [ObjectBase.Type]? = nil
    ) {
      self.fileURL = fileURL
      self.inMemoryIdentifier = inMemoryIdentifier
      if inMemoryIdentifier != nil { self.fileURL = nil }
      self.readOnly = readOnly
      self.schemaVersion = schemaVersion
      self.migrationBlock = migrationBlock
      self.deleteReefIfMigrationNeeded = deleteReefIfMigrationNeeded
      self.objectTypes = objectTypes
    }

    /// The configuration `Reef()` uses; change it to change every later `Reef()`.
    nonisolated(unsafe) public static var defaultConfiguration = Configuration()

    /// The store path this configuration opens.
    var path: String {
      if let fileURL { return fileURL.path }
      let identifier = (inMemoryIdentifier ?? "default").map { $0.isLetter || $0.isNumber ? $0 : "_" }
      return NSTemporaryDirectory() + "reef-memory-\(getpid())-\(String(identifier)).reef"
    }
  }

  /// A migration: called with the old schema version and a ``Migration`` to change the data.
  public typealias MigrationBlock = (_ migration: Migration, _ oldSchemaVersion: UInt64) -> Void
}

/// The stores open in this process, by path: every `Reef` of one file shares its `Store`
/// (LMDB must not open one file twice in a process).
enum StoreTable {
  nonisolated(unsafe) private static var stores: [String: WeakStore] = [:]
  private static let lock = Lock()
  final class WeakStore {
    weak var store: Store?
    init(_ store: Store) { self.store = store }
  }

  static func store(path: String, readOnly: Bool, durability: Durability) throws(ReefError) -> Store {
    do {
      return try lock.withLock {
        // By path, then by file: another path to an open file shares its store.
        if let store = stores[path]?.store ?? Store.openStore(at: path) { return store }
        var options = StoreOptions()
        // The map is address space, not disk: the file grows with what is written. A larger
        // first map lets one write transaction change much of a file (each changed page is
        // copied), where the store's default 64 MB could fill while readers keep it from growing.
        options.initialMapSize = 1 << 30
        options.readOnly = readOnly
        options.durability = durability
        let store = try Store(path: path, options: options)
        stores[path] = WeakStore(store)
        return store
      }
    } catch let error as StoreError {
      throw ReefError(error)
    } catch {
      throw ReefError(.store, "\(error)")
    }
  }
}

/// The temporary file of an in-memory `Reef`, deleted when the last handle of its identifier
/// goes (an open store keeps working on an unlinked file) or, at the latest, by the next
/// process with the same process id.
final class MemoryFile {
  let path: String
  nonisolated(unsafe) private static var files: [String: Weak] = [:]
  private static let lock = Lock()
  final class Weak {
    weak var file: MemoryFile?
    init(_ file: MemoryFile) { self.file = file }
  }

  private init(path: String) { self.path = path }

  static func shared(path: String) -> MemoryFile {
    lock.withLock {
      if let file = files[path]?.file { return file }
      let file = MemoryFile(path: path)
      files[path] = Weak(file)
      return file
    }
  }

  deinit { _ = try? Store.deleteFiles(at: path) }
}
