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
    /// Called when the file's schema version is lower than ``schemaVersion``, with a
    /// ``Migration`` and the file's version, in a write transaction committed with the new
    /// version.
    public var migrationBlock: MigrationBlock?
    /// Deletes the stored objects instead of migrating: every object when the file's schema
    /// version is older (the migration block is not called), a type's objects when its model
    /// changed at the same version (instead of refusing it with
    /// ``ReefError/Kind/schemaMismatch``).
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
    /// A store file copied to ``fileURL`` when a `Reef` of this configuration opens and no file
    /// is there yet: Realm's `seedFilePath`, to start from a bundled store. The copy is the seed's
    /// latest commit (the seed may be open, even written to); a file already at ``fileURL`` is
    /// opened as it is. Ignored for an in-memory configuration.
    public var seedFilePath: URL?

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
/// (LMDB must not open one file twice in a process). Each store keeps the settings it was
/// opened with, which every later `Reef` of the file must share while it is open (Realm's
/// coordinator checks the same ones).
enum StoreTable {
  nonisolated(unsafe) private static var stores: [String: Entry] = [:]
  private static let lock = Lock()
  final class Entry {
    weak var store: Store?
    let settings: Settings
    init(_ store: Store, _ settings: Settings) {
      self.store = store
      self.settings = settings
    }
  }
  /// What the `Reef`s of one open file must agree on.
  struct Settings: Equatable {
    var readOnly: Bool
    var inMemory: Bool
    var deleteIfMigrationNeeded: Bool
    var schemaVersion: UInt64

    init(_ configuration: Reef.Configuration) {
      readOnly = configuration.readOnly
      inMemory = configuration.inMemoryIdentifier != nil
      deleteIfMigrationNeeded = configuration.deleteReefIfMigrationNeeded
      schemaVersion = configuration.schemaVersion
    }

    /// The error for opening the file with `other` while it is open with these, or nil.
    func mismatch(_ other: Settings, path: String) -> ReefError? {
      let difference: String
      if readOnly != other.readOnly {
        difference = "different read permissions"
      } else if inMemory != other.inMemory {
        difference = "different inMemory settings"
      } else if deleteIfMigrationNeeded != other.deleteIfMigrationNeeded {
        difference = "a different schema mode (deleteReefIfMigrationNeeded)"
      } else if schemaVersion != other.schemaVersion {
        difference = "different schema version (\(schemaVersion), not \(other.schemaVersion))"
      } else {
        return nil
      }
      return ReefError(.mismatchedConfig, "Reef at path '\(path)' already opened with \(difference).")
    }
  }

  /// Calls `body` with the store of `path`: the one open, or one opened read-only for the call.
  /// - Throws: ``ReefError/Kind/store`` when there is no file or it cannot be opened; what
  ///   `body` throws, wrapped.
  static func reading<R>(path: String, _ body: (Store) throws -> R) throws(ReefError) -> R {
    do {
      return try lock.withLock { () throws -> R in
        if let store = stores[path]?.store ?? Store.openStore(at: path) { return try body(store) }
        guard FileManager.default.fileExists(atPath: path) else {
          throw ReefError(.store, "no Reef file at path '\(path)'")
        }
        return try body(try Store(path: path, options: StoreOptions(readOnly: true)))
      }
    } catch let error as ReefError {
      throw error
    } catch let error as StoreError {
      throw ReefError(error)
    } catch {
      throw ReefError(.store, "\(error)")
    }
  }

  /// Copies the store at `seed` to `path` when no file is there (a `Reef` opened at the same time
  /// may have copied it first: its copy is kept).
  /// - Throws: ``ReefError/Kind/store`` when the seed cannot be read or the copy written.
  private static func copySeed(_ seed: String, to path: String) throws(ReefError) {
    guard !FileManager.default.fileExists(atPath: path) else { return }
    do {
      try reading(path: seed) { store in try store.writeCopy(to: path) }
    } catch  where FileManager.default.fileExists(atPath: path) && error.code == .fileExists {
      return
    }
  }

  /// Whether a store of `path` is open in this process.
  static func isOpen(path: String) -> Bool {
    lock.withLock { stores[path]?.store != nil || Store.openStore(at: path) != nil }
  }

  /// The store of a configuration's file: the one open already (whose settings it must share),
  /// or a new one.
  /// - Throws: ``ReefError/Kind/mismatchedConfig`` when the open store's settings differ;
  ///   ``ReefError/Kind/store`` when the file cannot be opened.
  static func store(for configuration: Reef.Configuration) throws(ReefError) -> Store {
    let path = configuration.path
    let settings = Settings(configuration)
    if let seed = configuration.seedFilePath, configuration.inMemoryIdentifier == nil {
      try copySeed(seed.path, to: path)
    }
    do {
      return try lock.withLock {
        // By path, then by file: another path to an open file shares its store.
        if let store = stores[path]?.store ?? Store.openStore(at: path) {
          let entry =
            stores[path].flatMap { $0.store === store ? $0 : nil } ?? stores.values.first { $0.store === store }
          if let error = entry?.settings.mismatch(settings, path: path) { throw error }
          return store
        }
        var options = StoreOptions()
        // The map is address space, not disk: the file grows with what is written. A larger
        // first map lets one write transaction change much of a file (each changed page is
        // copied), where the store's default 64 MB could fill while readers keep it from growing.
        options.initialMapSize = 1 << 30
        options.readOnly = configuration.readOnly && !settings.inMemory
        options.durability = settings.inMemory ? .normal : configuration.durability
        let store = try Store(path: path, options: options)
        stores = stores.filter { $0.value.store != nil }
        stores[path] = Entry(store, settings)
        return store
      }
    } catch let error as ReefError {
      throw error
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
