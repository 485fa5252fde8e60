import ReefStore

/// The versions (snapshots) of each store file pinned in this process, for
/// ``Reef/Configuration/maximumNumberOfActiveVersions``: the snapshots live `Reef`s read and
/// those frozen `Reef`s hold, each version counted once however many hold it.
enum VersionPins {
  /// By store: how many holders pin each snapshot (by ``ReefStore/Transaction/snapshotID``).
  nonisolated(unsafe) private static var table: [ObjectIdentifier: [Int: Int]] = [:]
  private static let lock = Lock()

  /// How many versions of `store` are pinned now.
  static func count(of store: Store) -> Int {
    lock.withLock { table[ObjectIdentifier(store)]?.count ?? 0 }
  }

  /// Pins a live `Reef`'s snapshot, without a limit (a live `Reef` begins its snapshot where it
  /// cannot throw; the limit is checked when it writes and when it is frozen).
  static func pin(_ transaction: Transaction?, of store: Store) -> VersionPin? {
    guard let transaction else { return nil }
    return lock.withLock { add(transaction.snapshotID, store) }
  }

  /// Pins a snapshot for a frozen `Reef`.
  /// - Throws: ``ReefError/Kind/tooManyActiveVersions`` when the snapshot is not pinned yet and
  ///   `limit` versions are.
  static func pin(_ id: Int, of store: Store, limit: UInt?) throws(ReefError) -> VersionPin {
    let result = lock.withLock { () -> Result<VersionPin, ReefError> in
      let pinned = table[ObjectIdentifier(store)] ?? [:]
      let isNew = pinned[id] == nil
      // Live Reefs pin their snapshots unchecked: the count may be past the limit already.
      if let limit, pinned.count + (isNew ? 1 : 0) > Int(limit) {
        let doing = isNew ? "freezing would pin one more" : "freezing would hold one of them longer"
        return .failure(
          limitError(store, limit: limit, pinned: pinned.count, total: pinned.count + (isNew ? 1 : 0), doing: doing))
      }
      return .success(add(id, store))
    }
    return try result.get()
  }

  /// Checks that a write may make a new version: the versions pinned now (but for one pin of
  /// `releasing`, the writer's own snapshot, which it lets go of) and the new one must fit in
  /// `limit`.
  /// - Throws: ``ReefError/Kind/tooManyActiveVersions``.
  static func checkNewVersion(of store: Store, limit: UInt?, releasing: Int?) throws(ReefError) {
    guard let limit else { return }
    let pinned = lock.withLock {
      (table[ObjectIdentifier(store)] ?? [:]).filter { $0.key != releasing || $0.value > 1 }.count
    }
    if pinned + 1 > Int(limit) {
      throw limitError(store, limit: limit, pinned: pinned, total: pinned + 1, doing: "a write would make one more")
    }
  }

  private static func limitError(_ store: Store, limit: UInt, pinned: Int, total: Int, doing: String) -> ReefError {
    ReefError(
      .tooManyActiveVersions,
      "Number of active versions (\(total)) of \(store.path) exceeds Configuration.maximumNumberOfActiveVersions (\(limit)): \(pinned) are pinned in this process (by frozen Reefs, objects, results and collections, and live Reefs' snapshots) and \(doing). Release the frozen objects no longer needed (or refresh() live Reefs), or raise the limit."
    )
  }

  /// Adds a holder of `id` (under the lock).
  private static func add(_ id: Int, _ store: Store) -> VersionPin {
    table[ObjectIdentifier(store), default: [:]][id, default: 0] += 1
    return VersionPin(store: ObjectIdentifier(store), id: id)
  }

  fileprivate static func remove(_ pin: VersionPin) {
    lock.withLock {
      guard var pins = table[pin.store], let count = pins[pin.id] else { return }
      pins[pin.id] = count > 1 ? count - 1 : nil
      table[pin.store] = pins.isEmpty ? nil : pins
    }
  }
}

/// One holder's pin of a snapshot: released when it goes.
final class VersionPin: @unchecked Sendable {
  let store: ObjectIdentifier
  let id: Int
  fileprivate init(store: ObjectIdentifier, id: Int) {
    self.store = store
    self.id = id
  }
  deinit { VersionPins.remove(self) }
}
