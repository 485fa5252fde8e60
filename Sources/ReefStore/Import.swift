@_spi(ReefInternal) import ReefBSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// How ``Store/importDump(from:options:progress:)`` maps, selects and writes namespaces.
public struct ImportOptions: Sendable {
  /// The database to import into (mongorestore's `--db`): replaces the database of every
  /// namespace, and gives one to a single file's (whose namespace has none).
  public var database: String?
  /// The collection to import into (mongorestore's `--collection`): replaces the collection name
  /// of the one namespace selected; an error when the source selects several.
  public var collection: String?
  /// Namespace patterns to import (mongorestore's `--nsInclude`); none means all. Patterns match
  /// the source's namespaces, before ``database`` and ``collection`` rename them (see
  /// ``NamespaceFilter``).
  public var include: [String]
  /// Namespace patterns to leave out (mongorestore's `--nsExclude`).
  public var exclude: [String]
  /// Replace each target collection (its documents and indexes) instead of adding to it.
  public var drop: Bool
  /// Skip documents that cannot be read or stored (malformed, duplicate `_id` or unique key, too
  /// large, unindexable) and report them, instead of failing the import.
  public var skipInvalid: Bool
  /// The most documents written per write transaction.
  public var batchDocuments: Int
  /// The most document bytes written per write transaction (a larger document is a batch of its own).
  public var batchBytes: Int
  /// The most skipped documents listed in ``ImportReport/skipped`` (all are counted).
  public var maximumReportedSkips: Int
  /// For tests only: called after the last batch, before the transaction that swaps the
  /// imported collections in, on the importing thread. Tests pause an import here to make other
  /// writers overlap it. (The `reef` tool sets it from `REEF_TEST_PAUSE_BEFORE_SWAP`.)
  @_spi(ReefTesting) public var beforeSwap: (@Sendable () -> Void)?

  /// Creates options; by default everything is imported into `db.collection` collections, added
  /// to what they hold, and the first invalid document fails the import.
  public init(
    database: String? = nil, collection: String? = nil, include: [String] = [], exclude: [String] = [],
    drop: Bool = false, skipInvalid: Bool = false, batchDocuments: Int = 1000, batchBytes: Int = 4 << 20,
    maximumReportedSkips: Int = 1000
  ) {
    self.database = database
    self.collection = collection
    self.include = include
    self.exclude = exclude
    self.drop = drop
    self.skipInvalid = skipInvalid
    self.batchDocuments = batchDocuments
    self.batchBytes = batchBytes
    self.maximumReportedSkips = maximumReportedSkips
  }
}

/// How far an import has got, reported after each batch.
public struct ImportProgress: Sendable {
  /// Documents imported so far.
  public var documents: Int
  /// Documents skipped so far (with ``ImportOptions/skipInvalid``).
  public var skipped: Int
  /// Bytes of the source read so far (``DumpSource/bytesRead``).
  public var bytesRead: Int
  /// The source's size, when known (``DumpSource/totalBytes``).
  public var totalBytes: Int?
  /// The namespace being read.
  public var namespace: Namespace?
}

/// A document an import skipped, and why.
public struct SkippedDocument: Sendable, Hashable, CustomStringConvertible {
  /// The source namespace.
  public var namespace: Namespace
  /// The document's zero-based index in its namespace.
  public var index: Int
  /// Its byte offset in its (decompressed) file, when known.
  public var offset: Int?
  /// What was wrong with it.
  public var reason: String

  /// `ns document 3 (offset 120): reason`.
  public var description: String {
    "\(namespace) document \(index)\(offset.map { " (offset \($0))" } ?? ""): \(reason)"
  }
}

/// What an import did.
public struct ImportReport: Sendable {
  /// One target collection.
  public struct Target: Sendable, Hashable {
    /// The collection written.
    public var collection: String
    /// The source namespaces imported into it (usually one).
    public var sources: [Namespace]
    /// Documents imported into it.
    public var documents: Int
    /// Its indexes at the end, the `_id` index included.
    public var indexes: Int
  }
  /// The target collections, in the order the source first named them.
  public var targets: [Target] = []
  /// Documents imported.
  public var documents = 0
  /// Documents skipped.
  public var skippedCount = 0
  /// The first ``ImportOptions/maximumReportedSkips`` skipped documents.
  public var skipped: [SkippedDocument] = []
  /// What the source holds that was not imported because it is not a dump file (see
  /// ``DumpSource/ignored``), to be reported to the user.
  public var ignored: [DumpSource.Ignored] = []
}

extension Store {
  /// Imports a dump (directory, `.bson` file, archive or Extended JSON) into collections, as
  /// mongorestore would, streaming in batched write transactions.
  ///
  /// Each source namespace `db.coll` goes into the collection named `db.coll` (a single file's
  /// namespace, which has no database, into the file's base name), after
  /// ``ImportOptions/database`` and ``ImportOptions/collection`` rename it. The indexes in its
  /// metadata are created (the `_id` index is implicit).
  ///
  /// All or nothing: documents go into a hidden temporary collection per target (a copy of the
  /// target's documents and indexes first, unless ``ImportOptions/drop``), and one last write
  /// transaction swaps every temporary collection in under its target's name. If anything fails
  /// (the source, a document, the disk), the temporary collections are dropped and every target
  /// is as it was; if the process dies, they are dropped by the next import. Readers see each
  /// target as before or as after, never in between. Adding to a large existing collection
  /// costs a copy of it; importing into a new or dropped one does not.
  ///
  /// No acknowledged write is lost to an import:
  /// - Imports into the same collection take turns, in this process or others: an import holds
  ///   a lease on each of its targets from its first transaction to its swap. An import that
  ///   finds a target leased by a live process waits for it (reporting
  ///   ``StoreWait/Kind/importLease`` once through ``StoreOptions/onWait``) and then reads the
  ///   target as the other import left it; the lease of a process that died is taken over. So
  ///   two imports that add to a collection both add to it, and with
  ///   ``ImportOptions/drop`` the later one replaces the earlier one.
  /// - Any other write to a target while the import runs (documents, indexes, a drop or a
  ///   rename; any process) makes the import fail with ``StoreError/Kind/conflict`` naming the
  ///   collection, and nothing is imported: each target's generation (a count of the write
  ///   transactions that changed it) must be the one it had when the import began, at every
  ///   batch that copies its documents and at the swap. This holds with
  ///   ``ImportOptions/drop`` too.
  ///
  /// The batches commit with at most ``Durability/normal`` durability (no flush: a power loss
  /// can only undo batches of an import that has not returned); the last commit has the
  /// store's ``StoreOptions/durability``. The store's pages mapped in along the way are released
  /// whenever they pass 64 MB (``Store/releaseMappedPages(ifMappedMemoryExceeds:)``), so resident
  /// memory stays flat whatever the size of the store.
  ///
  /// With ``ImportOptions/skipInvalid``, a document that cannot be stored (duplicate `_id` or
  /// unique key, over the size or depth limit, unindexable) or read (malformed BSON or JSON) is
  /// skipped and reported. After malformed BSON, reading resumes after the document when its
  /// length prefix is plausible, otherwise the rest of that file is skipped (reported as such);
  /// an archive cannot resume after a malformed document, and fails the import.
  /// - Parameters:
  ///   - source: the dump, not yet read.
  ///   - options: renames, selection, drop, skipping and batch sizes.
  ///   - progress: called after each batch, on this thread.
  /// - Returns: what was imported and skipped.
  /// - Throws: ``BSONError`` for a source that cannot be read or bad patterns,
  ///   ``StoreError`` for a document that cannot be stored (naming the namespace, the document's
  ///   index and offset, and the target), a target name that breaks the naming rules
  ///   (``StoreError/Kind/namespace``), a target another writer changed meanwhile
  ///   (``StoreError/Kind/conflict``) or a failing store; in every case nothing was imported.
  /// - Complexity: O(n log n) in the documents; memory is one batch.
  public func importDump(
    from source: DumpSource, options: ImportOptions = ImportOptions(), progress: ((ImportProgress) -> Void)? = nil
  ) throws -> ImportReport {
    var run = ImportRun(store: self, source: source, options: options, progress: progress)
    defer { run.forgetLeases() }
    do {
      return try run.run()
    } catch {
      run.discardTemporaryCollections()
      throw error
    }
  }
}

/// The state of one import.
struct ImportRun {
  let store: Store
  let source: DumpSource
  let options: ImportOptions
  let progress: ((ImportProgress) -> Void)?

  /// One target: its temporary collection and counts.
  struct Target {
    var temporary: String
    var report: ImportReport.Target
    /// The target's version when the import began (nil when it did not exist): it must still
    /// have it at the swap.
    var expected: CollectionVersion?
    /// The JSON Schema of the source's validator (`options.validator.$jsonSchema`), stored for
    /// the target at the swap: a type exported by the object layer comes back as one.
    var schema: Document?
  }
  var targets: [String: Target] = [:]
  var order: [String] = []
  var report = ImportReport()
  /// Documents read per source namespace: the index of the next one.
  var counts: [Namespace: Int] = [:]

  struct Pending {
    var target: String
    var namespace: Namespace
    var index: Int
    var offset: Int?
    var document: Document
  }
  var batch: [Pending] = []
  var batchBytes = 0

  init(store: Store, source: DumpSource, options: ImportOptions, progress: ((ImportProgress) -> Void)?) {
    self.store = store
    self.source = source
    self.options = options
    self.progress = progress
  }

  static let temporaryPrefix = "__import."

  /// The durability of the commits that prepare and fill the temporary collections: no flush.
  /// A power loss can only undo some of them, which leaves the targets as they were and
  /// the import unacknowledged; the last commit, which swaps the collections in, has the
  /// store's durability and flushes them all.
  var batchDurability: Durability { store.options.durability == .full ? .normal : store.options.durability }

  mutating func run() throws -> ImportReport {
    let filter = try NamespaceFilter(include: options.include, exclude: options.exclude)
    let prelude = try source.prelude().filter { filter.matches($0.namespace) }
    if options.collection != nil, prelude.count > 1 {
      let shown = prelude.map(\.namespace.dotted).prefix(5).joined(separator: ", ")
      throw StoreError(
        .namespace,
        "a collection name renames one namespace, but the source has \(prelude.count) (\(shown)\(prelude.count > 5 ? ", …" : "")); select one with an include pattern"
      )
    }
    try prepare(prelude)
    for name in order where !options.drop { try copyExisting(name) }
    reading: while true {
      let next = Result { () throws(BSONError) in try source.nextArchiveDocument() }
      let namespace: Namespace
      let document: Document
      switch next {
      case .success(nil): break reading
      case .success(let (nextNamespace, nextDocument)?):
        namespace = nextNamespace
        document = nextDocument
      case .failure(let error):
        try skipUnreadable(error)
        continue
      }
      let index = counts[namespace, default: 0]
      counts[namespace] = index + 1
      guard filter.matches(namespace) else { continue }
      let target = self.target(for: namespace)
      if targets[target] == nil {
        // Not in the prelude (sources list every namespace there; this is for safety).
        try flush()
        try store.write(durability: batchDurability) { transaction in
          let name = self.target(for: namespace)
          if let holder = try leaseHolder(of: name, in: transaction) {
            throw StoreError(
              .conflict, "collection \(name) is being imported by process \(holder); nothing was imported")
          }
          try prepareTarget(namespace, metadata: CollectionMetadata(), in: transaction)
        }
      }
      batch.append(
        Pending(
          target: target, namespace: namespace, index: index, offset: source.lastDocumentOffset, document: document))
      batchBytes += document.byteCount
      if batch.count >= options.batchDocuments || batchBytes >= options.batchBytes { try flush() }
    }
    try flush()
    options.beforeSwap?()
    try store.write { transaction in
      for name in order {
        try checkUnchanged(name, in: transaction)
        let temporary = targets[name]!.temporary
        try transaction.renameCollection(temporary, to: name, dropTarget: true, reserved: false)
        if let schema = targets[name]!.schema { try transaction.setJSONSchema(schema, forCollection: name) }
        try releaseLease(of: name, in: transaction)
        targets[name]!.report.indexes = try transaction.collection(name).listIndexes().count
      }
    }
    report.targets = order.map { targets[$0]!.report }
    report.ignored = source.ignored
    reportProgress()
    return report
  }

  /// The collection a source namespace goes into.
  func target(for namespace: Namespace) -> String {
    Namespace(
      database: options.database ?? namespace.database, collection: options.collection ?? namespace.collection
    ).dotted
  }

  /// Makes the temporary collection of a target, with the indexes of its metadata (and of the
  /// target, when adding to it).
  mutating func prepareTarget(_ namespace: Namespace, metadata: CollectionMetadata, in transaction: Transaction) throws
  {
    let name = target(for: namespace)
    if targets[name] == nil {
      try Transaction.checkName(name, reserved: false)
      let temporary = "\(Self.temporaryPrefix)\(getpid()).\(String(UInt64.random(in: 0...UInt64.max), radix: 16))"
      _ = try transaction.info(temporary, create: true, reserved: true)
      try takeLease(of: name, for: temporary, in: transaction)
      let existing = try transaction.info(name, create: false)
      targets[name] = Target(
        temporary: temporary, report: ImportReport.Target(collection: name, sources: [], documents: 0, indexes: 0),
        expected: existing?.version)
      order.append(name)
      if !options.drop, let existing {
        for index in existing.indexes { try transaction.collection(temporary).createIndex(index) }
      }
    }
    guard var target = targets[name], !target.report.sources.contains(namespace) else { return }
    target.report.sources.append(namespace)
    if case .document(let schema)? = metadata.options["validator.$jsonSchema"] { target.schema = schema }
    targets[name] = target
    for document in metadata.indexes {
      if case .string("_id_")? = document["name"] { continue }
      let index: IndexSpecification
      do {
        index = try IndexSpecification(document)
      } catch {
        throw error.with(message: "the metadata of \(namespace) has an index that cannot be created: \(error.message)")
      }
      do {
        try transaction.collection(target.temporary).createIndex(index)
      } catch {
        throw error.with(message: "creating index \(index.name) of \(namespace) in \(name): \(error.message)")
      }
    }
  }

  /// Copies the documents of an existing target into its temporary collection, in batches,
  /// each checking that the target is still the one the import began with.
  func copyExisting(_ name: String) throws {
    let temporary = targets[name]!.temporary
    var after: [UInt8]?
    var done = false
    while !done {
      try store.write(durability: batchDurability) { transaction in
        try checkUnchanged(name, in: transaction)
        guard let info = try transaction.info(name, create: false),
          let documentsDB = try transaction.documentsDatabase(info, create: false)
        else {
          done = true
          return
        }
        // The keys' order and each `_id` are checked as in every scan (from this batch's first key).
        let check = DocumentScanCheck(collection: name)
        var copy: [Document] = []
        var bytes = 0
        var last: [UInt8]?
        try transaction.lmdb.scan(documentsDB, from: after) { key, value throws(StoreError) in
          if let after, key.elementsEqual(after) { return true }
          guard copy.count < options.batchDocuments, bytes < options.batchBytes else { return false }
          // Validated when it was stored: not validated again when copied.
          copy.append(Document(storedCopying: try check.document(key: key, value: value)))
          bytes += value.count
          last = Array(key)
          return true
        }
        let collection = transaction.collection(temporary)
        for (position, document) in copy.enumerated() {
          if position % 32 == 31 { store.releaseMappedPages(ifMappedMemoryExceeds: Store.mappedMemoryLimit) }
          try collection.insert(document)
        }
        if let last { after = last } else { done = true }
      }
      store.releaseMappedPages(ifMappedMemoryExceeds: Store.mappedMemoryLimit)
    }
  }

  /// Writes the pending documents in one write transaction.
  mutating func flush() throws {
    guard !batch.isEmpty else { return }
    defer {
      batch.removeAll(keepingCapacity: true)
      batchBytes = 0
    }
    let pending = batch
    let skipInvalid = options.skipInvalid
    var written: [String: Int] = [:]
    var skips: [SkippedDocument] = []
    let targets = self.targets
    let store = self.store
    try store.write(durability: batchDurability) { transaction in
      for (position, item) in pending.enumerated() {
        if position % 32 == 31 { store.releaseMappedPages(ifMappedMemoryExceeds: Store.mappedMemoryLimit) }
        guard let target = targets[item.target] else { continue }
        do {
          try transaction.collection(target.temporary).insert(item.document)
          written[item.target, default: 0] += 1
        } catch let error as StoreError {
          let message = error.message.replacing(target.temporary, with: item.target)
          let skippable: Set<StoreError.Kind> = [.duplicateKey, .invalidDocument, .index]
          guard skipInvalid, skippable.contains(error.kind) else {
            throw error.with(
              message:
                "importing \(item.namespace) document \(item.index)\(item.offset.map { " (offset \($0))" } ?? "") into \(item.target): \(message); nothing was imported"
            )
          }
          skips.append(
            SkippedDocument(namespace: item.namespace, index: item.index, offset: item.offset, reason: message))
        }
      }
    }
    store.releaseMappedPages(ifMappedMemoryExceeds: Store.mappedMemoryLimit)
    for (name, count) in written {
      self.targets[name]!.report.documents += count
      report.documents += count
    }
    for skip in skips { record(skip) }
    reportProgress()
  }

  /// Skips what made the source fail, when allowed and possible; otherwise throws.
  mutating func skipUnreadable(_ error: BSONError) throws {
    guard options.skipInvalid, let namespace = source.namespace, let skip = source.skipDamagedDocument() else {
      var error = error
      error.message += "; nothing was imported"
      throw error
    }
    let index = error.documentIndex ?? counts[namespace, default: 0]
    var reason = error.message
    if case .restOfFile = skip {
      reason += "; the rest of this file is skipped"
    } else {
      counts[namespace] = index + 1
    }
    record(SkippedDocument(namespace: namespace, index: index, offset: error.offset, reason: reason))
  }

  mutating func record(_ skip: SkippedDocument) {
    report.skippedCount += 1
    if report.skipped.count < options.maximumReportedSkips { report.skipped.append(skip) }
  }

  func reportProgress() {
    progress?(
      ImportProgress(
        documents: report.documents, skipped: report.skippedCount, bytesRead: source.bytesRead,
        totalBytes: source.totalBytes, namespace: source.namespace))
  }

  /// Drops this import's temporary collections and releases its leases (after a failure).
  func discardTemporaryCollections() {
    guard !targets.isEmpty else { return }
    _ = try? store.write { transaction in
      for (name, target) in targets {
        try transaction.collection(target.temporary).drop()
        try releaseLease(of: name, in: transaction)
      }
    }
  }

  /// Drops temporary collections, and releases leases, left by imports whose process is gone.
  func removeAbandonedCollections(_ transaction: Transaction) throws {
    for name in try transaction.catalogNames() where name.hasPrefix(Self.temporaryPrefix) {
      guard let pid = Self.processID(ofTemporary: name), pid != getpid() else { continue }
      if !Self.isAlive(pid) { try transaction.collection(name).drop() }
    }
    try removeAbandonedLeases(transaction)
  }

  /// The process that made a temporary collection (`__import.<pid>.<random>`).
  static func processID(ofTemporary name: some StringProtocol) -> pid_t? {
    guard name.hasPrefix(temporaryPrefix) else { return nil }
    let rest = name.dropFirst(temporaryPrefix.count)
    guard let dot = rest.firstIndex(of: ".") else { return nil }
    return pid_t(rest[..<dot])
  }

  /// Whether the process `pid` is running (one of another user's included).
  static func isAlive(_ pid: pid_t) -> Bool { !(kill(pid, 0) == -1 && errno == ESRCH) }
}
