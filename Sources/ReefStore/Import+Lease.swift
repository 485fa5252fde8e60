#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// How imports take turns on a collection, and how one knows that no one else wrote to it.
///
/// The lease of a target is the entry `import:<target>` of the `__meta` database, whose value is
/// the name of the holder's temporary collection (`__import.<pid>.<random>`): the import that
/// holds it is the only one filling a copy of that target. It is taken in the import's first
/// transaction and released in its last (the swap) or when it fails. A lease whose process is
/// gone is abandoned: the next import takes it over (and removes it when it finds it).
extension ImportRun {
  /// The key of a target's lease in `__meta`.
  static func leaseKey(_ target: String) -> [UInt8] { Array("import:".utf8) + Array(target.utf8) }

  /// The temporary collections of the imports running in this process: a lease naming one of
  /// them is live although its process is this one; a lease with this process's id naming
  /// another was left by an import of an earlier process with the same id.
  static let running = RunningImports()

  /// The first transaction: removes what dead imports left, takes the leases of every target
  /// and makes their temporary collections. While another live import holds the lease of one of
  /// the targets, it waits (polling), reporting it once through ``StoreOptions/onWait``.
  mutating func prepare(_ prelude: [(namespace: Namespace, metadata: CollectionMetadata)]) throws {
    var names: [String] = []
    for (namespace, _) in prelude where !names.contains(target(for: namespace)) { names.append(target(for: namespace)) }
    var reported: Set<StoreWait> = []
    var pause: UInt32 = 5_000
    while true {
      // Like the batches: until the swap commits, a power loss may undo this and lose nothing.
      let busy = try store.write(durability: batchDurability) { transaction -> StoreWait? in
        try removeAbandonedCollections(transaction)
        for name in names {
          if let holder = try leaseHolder(of: name, in: transaction) {
            return StoreWait(kind: .importLease, collection: name, processID: holder)
          }
        }
        for (namespace, metadata) in prelude { try prepareTarget(namespace, metadata: metadata, in: transaction) }
        return nil
      }
      guard let busy else { return }
      if reported.insert(busy).inserted { store.options.onWait?(busy) }
      usleep(pause)
      pause = min(pause * 2, 200_000)
    }
  }

  /// The live process, other than this import, that holds the lease of `target`.
  func leaseHolder(of target: String, in transaction: Transaction) throws(StoreError) -> pid_t? {
    guard let metaDB = try transaction.database(Transaction.metaName, create: false),
      let value = try transaction.lmdb.get(metaDB, Self.leaseKey(target))
    else { return nil }
    let holder = String(decoding: value, as: UTF8.self)
    if targets[target]?.temporary == holder { return nil }
    guard let pid = Self.processID(ofTemporary: holder) else { return nil }
    return Self.isLive(holder: holder, pid: pid) ? pid : nil
  }

  /// Whether the import that made the temporary collection `holder` is running.
  static func isLive(holder: String, pid: pid_t) -> Bool {
    pid == getpid() ? running.contains(holder) : isAlive(pid)
  }

  /// Takes the lease of `target` for this import, whose temporary collection is `temporary`.
  func takeLease(of target: String, for temporary: String, in transaction: Transaction) throws(StoreError) {
    Self.running.insert(temporary)
    let metaDB = try transaction.database(Transaction.metaName, create: true)!
    try transaction.lmdb.put(metaDB, Self.leaseKey(target), Array(temporary.utf8))
  }

  /// Releases the lease of `target` if this import holds it.
  func releaseLease(of target: String, in transaction: Transaction) throws(StoreError) {
    guard let temporary = targets[target]?.temporary,
      let metaDB = try transaction.database(Transaction.metaName, create: false),
      let value = try transaction.lmdb.get(metaDB, Self.leaseKey(target)),
      value.elementsEqual(temporary.utf8)
    else { return }
    try transaction.lmdb.delete(metaDB, Self.leaseKey(target))
  }

  /// Forgets this import's temporary collections in ``running`` (when it ends).
  func forgetLeases() {
    for target in targets.values { Self.running.remove(target.temporary) }
  }

  /// Removes the leases whose import is gone.
  func removeAbandonedLeases(_ transaction: Transaction) throws(StoreError) {
    guard let metaDB = try transaction.database(Transaction.metaName, create: false) else { return }
    let prefix = Array("import:".utf8)
    var abandoned: [[UInt8]] = []
    try transaction.lmdb.scan(metaDB, from: prefix) { key, value throws(StoreError) in
      guard key.starts(with: prefix) else { return false }
      let holder = String(decoding: value, as: UTF8.self)
      if let pid = Self.processID(ofTemporary: holder), !Self.isLive(holder: holder, pid: pid) {
        abandoned.append(Array(key))
      }
      return true
    }
    for key in abandoned { try transaction.lmdb.delete(metaDB, key) }
  }

  /// Throws ``StoreError/Kind/conflict`` unless the target `name` has the version it had when the
  /// import began: no other writer touched it.
  func checkUnchanged(_ name: String, in transaction: Transaction) throws(StoreError) {
    let expected = targets[name]!.expected
    let current = try transaction.info(name, create: false)?.version
    guard current != expected else { return }
    let what: String
    switch (expected, current) {
    case (nil, _): what = "it was created"
    case (_, nil): what = "it was dropped or renamed"
    case (let before?, let now?) where before.id != now.id: what = "it was dropped and made again"
    default: what = "documents or indexes were written"
    }
    throw StoreError(
      .conflict,
      "collection \(name) was changed by another writer while the import ran (\(what)); nothing was imported")
  }
}

/// The temporary collections of the imports running in this process (``ImportRun/running``).
final class RunningImports: @unchecked Sendable {
  private let mutex = Mutex()
  private var names: Set<String> = []

  func insert(_ name: String) { mutex.withLock { _ = names.insert(name) } }
  func remove(_ name: String) { mutex.withLock { _ = names.remove(name) } }
  func contains(_ name: String) -> Bool { mutex.withLock { names.contains(name) } }
}
