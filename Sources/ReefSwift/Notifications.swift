import ReefBSON
import ReefStore

/// The registration of a notification block; notifications stop when it is invalidated or
/// released: keep it for as long as you want them. While it lasts, its block (and what the block
/// holds: the results or object observed, their `Reef`) stays alive.
public final class NotificationToken {
  private weak var reef: Reef?
  /// The `Reef` whose block this token registered, until it is invalidated.
  var owner: Reef? { reef }
  let id: Int
  /// For an observation delivered on a queue: stops it, from any thread (see
  /// `Notifications+Queue.swift`).
  private let stop: (@Sendable () -> Void)?

  init(reef: Reef?, id: Int) {
    self.reef = reef
    self.id = id
    stop = nil
  }

  init(stop: @escaping @Sendable () -> Void) {
    id = 0
    self.stop = stop
  }

  /// Stops the notifications (from the `Reef`'s thread; from any thread for a block delivered
  /// on a queue, whose calls then end: none begins after this returns).
  public func invalidate() {
    stop?()
    guard reef != nil else { return }
    reef?.removeObserver(id)
    reef = nil
  }

  deinit {
    stop?()
    reef?.removeObserver(id)
  }
}

/// A block called when a `Reef` shows new data (``Reef/observe(_:)``): Realm's `NotificationBlock`.
public typealias NotificationBlock = (_ notification: Reef.Notification, _ reef: Reef) -> Void

extension Reef {
  /// What a `Reef`-level notification block is told: Realm's `Realm.Notification`.
  public enum Notification: String, Sendable {
    /// The `Reef` shows new data: a write of its own, or another's it refreshed to.
    case didChange
    /// Other commits wait to be read by a `Reef` whose ``Reef/autorefresh`` is off: call
    /// ``Reef/refresh()`` to read them.
    case refreshRequired
  }

  /// A block called when the `Reef` shows new data.
  public typealias NotificationBlock = ReefSwift.NotificationBlock

  /// Calls `block` with ``Notification/didChange`` (on this thread) after each write
  /// transaction of this `Reef` commits, one that changed nothing included (as Realm's), and when
  /// ``refresh()`` shows commits of other `Reef`s, threads or processes (a thread-confined
  /// `Reef` also refreshes on its thread's run loop, when the thread runs it: see
  /// ``autorefresh``); with ``Notification/refreshRequired`` when a `Reef` whose ``autorefresh``
  /// is off is told of another's commit.
  /// - Parameter block: Called with the notification and this `Reef`.
  /// - Returns: A token: notifications last until it is invalidated or released.
  public func observe(_ block: @escaping NotificationBlock) -> NotificationToken {
    addObserver(refreshRequired: { block(.refreshRequired, $0) }) { reef, _, silent in
      if !silent { block(.didChange, reef) }
    }
  }

  /// ``write(_:)``, without calling the blocks of `tokens` for this write's changes (their
  /// results and objects take them in silently): Realm's `write(withoutNotifying:)`, which
  /// commits with ``commitWrite(withoutNotifying:)``.
  /// - Throws: what ``write(_:)`` throws.
  @discardableResult
  public func write<Result>(withoutNotifying tokens: [NotificationToken], _ block: () throws -> Result) throws
    -> Result
  {
    try tryBeginWrite()
    return try runInWrite(withoutNotifying: tokens, block)
  }

  /// The observers of `tokens`, which must be this `Reef`'s (or invalidated).
  func silencedIDs(_ tokens: [NotificationToken]) -> Set<Int> {
    var ids: Set<Int> = []
    for token in tokens {
      guard let owner = token.owner else { continue }
      if owner !== self {
        reefStop("Incorrect Reef: only notifications for the Reef being modified can be skipped.")
      }
      ids.insert(token.id)
    }
    return ids
  }

  // MARK: Observers

  /// Registers an observer: called with each batch of the change feed this `Reef` moves past,
  /// and whether its block is to stay silent.
  ///
  /// An observer with `refreshRequired` (a `Reef`-level block) is also called after this
  /// `Reef`'s commits that changed nothing, and told when other commits wait while
  /// ``autorefresh`` is off.
  func addObserver(
    refreshRequired: ((Reef) -> Void)? = nil, _ notify: @escaping (Reef, ChangeBatch, _ silent: Bool) -> Void
  ) -> NotificationToken {
    reefRequire(!isFrozen, "Frozen Reefs do not change and do not have change notifications.")
    checkThread()
    if feedSequence == nil { feedSequence = (try? transaction().changeSequence()) ?? 0 }
    nextObserverID += 1
    observers.append(ReefObserver(id: nextObserverID, notify: notify, refreshRequired: refreshRequired))
    // A thread-confined Reef refreshes on its thread's run loop while it has blocks to call.
    startRunLoopRefreshes()
    return NotificationToken(reef: self, id: nextObserverID)
  }

  /// Tells the `Reef`-level observers that commits wait to be read (``autorefresh`` is off).
  func notifyRefreshRequired() {
    guard !isDelivering else { return }
    isDelivering = true
    defer { endDelivery() }
    for observer in observers where !observer.isRemoved { observer.refreshRequired?(self) }
  }

  func removeObserver(_ id: Int) {
    for observer in observers where observer.id == id { observer.isRemoved = true }
    observers.removeAll { $0.id == id }
    if observers.isEmpty {
      feedSequence = nil
      stopRunLoopRefreshes()
    }
  }

  /// Ends a round of delivery: a refresh the run loop asked for meanwhile is asked for again.
  private func endDelivery() {
    isDelivering = false
    runLoop.scheduler?.resumeDeferred()
  }

  /// Tells the observers what the commits between the state they last saw and the `Reef`'s
  /// current one changed (after a commit of this `Reef`, or a refresh). After this `Reef`'s own
  /// commit that changed nothing, the `Reef`-level observers are called all the same.
  func deliverNotifications(afterOwnCommit: Bool = false) {
    guard !observers.isEmpty, !isInWriteTransaction, !isDelivering, let after = feedSequence else { return }
    isDelivering = true
    defer { endDelivery() }
    let batch: ChangeBatch
    do {
      batch = try transaction().changes(after: after)
    } catch {
      // The feed cannot be read: everything may have changed.
      batch = ChangeBatch(commits: [], isComplete: false, latest: after)
    }
    feedSequence = batch.latest
    runLoop.scheduler?.observersSaw(batch.latest)
    let unchanged = batch.commits.isEmpty && batch.isComplete
    if unchanged && !afterOwnCommit { return }
    let silenced = silencedObservers
    for observer in observers {
      // An observer removed by an earlier block is not called.
      guard !observer.isRemoved, !unchanged || observer.refreshRequired != nil else { continue }
      observer.notify(self, batch, silenced.contains(observer.id))
    }
  }
}

/// One registered notification block.
final class ReefObserver {
  let id: Int
  let notify: (Reef, ChangeBatch, _ silent: Bool) -> Void
  /// For a `Reef`-level block: tells it that commits wait to be read.
  let refreshRequired: ((Reef) -> Void)?
  /// Set when its token is invalidated, so that a round of delivery under way skips it.
  var isRemoved = false
  init(id: Int, notify: @escaping (Reef, ChangeBatch, _ silent: Bool) -> Void, refreshRequired: ((Reef) -> Void)?) {
    self.id = id
    self.notify = notify
    self.refreshRequired = refreshRequired
  }
}

// MARK: Collections

/// What changed in a collection since its last notification: Realm's `RealmCollectionChange`.
public enum ReefCollectionChange<CollectionType> {
  /// The collection as it was when the block was registered.
  case initial(CollectionType)
  /// The collection changed: `deletions` are indices in the previous version, `insertions`
  /// indices in the new one, `modifications` indices in the previous version of objects that
  /// changed and stayed in place (as UIKit's batch updates take them). An object that moved
  /// (through a sort) is a deletion and an insertion. Each list is sorted ascending.
  case update(CollectionType, deletions: [Int], insertions: [Int], modifications: [Int])
  /// The collection could not be read again (its query failed, or a stored value no longer fits
  /// a `List`, `MutableSet` or `Map`); no further notification comes from a collection's own
  /// observation.
  case error(any Error)
}

/// A collection with keys, whose changes are told by key: Realm's `RealmKeyedCollection`, which
/// ``Map`` is (here, what ``ReefMapChange`` needs of it: its key type).
public protocol ReefKeyedCollection {
  /// The type of the keys.
  associatedtype Key: Hashable
}

extension Map: ReefKeyedCollection {}

/// What changed in a ``Map`` since its last notification, by key: Realm's `RealmMapChange`.
public enum ReefMapChange<Collection: ReefKeyedCollection> {
  /// The map as it was when the block was registered.
  case initial(Collection)
  /// The map changed: `deletions` are the keys removed, `insertions` the keys added and
  /// `modifications` the keys whose values changed, each in the map's key order.
  case update(
    Collection, deletions: [Collection.Key], insertions: [Collection.Key], modifications: [Collection.Key])
  /// The map could not be read again (a stored value no longer fits it); no further
  /// notification comes.
  case error(any Error)
}

extension Results {
  /// Calls `block` with `.initial` now, then with `.update` after each commit that changed
  /// the results (objects in or out, moved through the sort, or modified), when this `Reef`
  /// writes or ``Reef/refresh()``es (or refreshes on its thread's run loop: see
  /// ``Reef/autorefresh``). `keyPaths` (property names, or paths into embedded objects
  /// such as `address.city`) limit the modifications reported to changes of those values.
  ///
  /// Inserts, deletes and moves are exact; a modification is reported for an object whose own
  /// document changed (a change in a linked object is not). A commit that changed a few objects
  /// costs work in proportion to them (the results are not read again), unless the results
  /// depend on other objects (conditions or sorts through links, `distinct`).
  public func observe(
    keyPaths: [String]? = nil, _ block: @escaping (ReefCollectionChange<Results<Element>>) -> Void
  ) -> NotificationToken {
    reef.checkThread()
    reefRequire(!reef.isInWriteTransaction, "Cannot register notification blocks from within write transactions.")
    let results = self
    let tracker: ResultsTracker<Element>
    do {
      tracker = try ResultsTracker(self)
    } catch {
      block(.error(error))
      return NotificationToken(reef: nil, id: 0)
    }
    block(.initial(self))
    let collection = schema.className
    // Results of a collection (`list.filter(…)`) change with the collection's object too.
    let baseCollection = base?.ownerCollection
    let paths = keyPaths.map { $0.map { ChangePaths.stored($0, schema: schema) } }
    // Results through links depend on other collections: any commit reads them again.
    let linked = ResultsTracker<Element>.dependsOnOtherObjects(schema)
    return reef.addObserver { _, batch, silent in
      let touched =
        !batch.isComplete || linked
        || batch.commits.contains { $0.touches(collection) || baseCollection.map($0.touches) == true }
      guard touched else { return }
      let change: CollectionDiff?
      do {
        change = try tracker.update(
          batch: batch, modified: ChangePaths.modifiedIDs(in: collection, batch: batch, paths: paths))
      } catch {
        if !silent { block(.error(error)) }
        return
      }
      guard !silent, let change else { return }
      block(
        .update(
          results, deletions: change.deletions, insertions: change.insertions, modifications: change.modifications)
      )
    }
  }
}

/// Which documents of a collection a batch modified, as far as some paths go.
enum ChangePaths {
  /// The stored path for a key path of Swift names (`address.city`, mapped names too).
  static func stored(_ keyPath: String, schema: ObjectSchema) -> String {
    let parts = keyPath.split(separator: ".", maxSplits: 1).map(String.init)
    guard let property = schema.property(named: parts[0]) else { return keyPath }
    return parts.count == 1 ? property.columnName : property.columnName + "." + parts[1]
  }

  /// Whether a change of the stored path `changed` concerns `path`: one is the other or
  /// inside it, the positions of array elements in `changed` aside (`addresses.1.city` is a
  /// change of `addresses.city`).
  static func overlaps(_ changed: String, _ path: String) -> Bool {
    if changed == path || changed.hasPrefix(path + ".") || path.hasPrefix(changed + ".") { return true }
    let changedParts = changed.split(separator: ".", omittingEmptySubsequences: false)
    let pathParts = path.split(separator: ".", omittingEmptySubsequences: false)
    var (i, j) = (0, 0)
    while i < changedParts.count, j < pathParts.count {
      if changedParts[i] == pathParts[j] {
        j += 1
      } else if changedParts[i].isEmpty || !changedParts[i].allSatisfy(\.isASCII)
        || !changedParts[i].allSatisfy(\.isNumber)
      {
        return false
      }
      i += 1
    }
    return true
  }

  /// The `_id`s modified in `collection` (nil: unknown, every object may have changed).
  static func modifiedIDs(in collection: String, batch: ChangeBatch, paths: [String]?) -> Set<BSON>? {
    guard batch.isComplete, !batch.commits.contains(where: { $0.resetCollections.contains(collection) }) else {
      return nil
    }
    var ids: Set<BSON> = []
    for commit in batch.commits {
      // An object inserted or deleted in one commit of the batch that is in the results before
      // and after it was deleted and added again in two: another object now, as when both
      // happen in one commit (a modification whose fields are not known).
      for change in commit.changes where change.collection == collection {
        if let paths, change.kind == .modified, !change.fields.isEmpty,
          !change.fields.contains(where: { field in paths.contains { overlaps(field, $0) } })
        {
          continue
        }
        ids.insert(change.id)
      }
    }
    return ids
  }
}

/// The difference between two orders of `_id`s, as collection notifications report it.
struct CollectionDiff {
  var deletions: [Int] = []
  var insertions: [Int] = []
  var modifications: [Int] = []

  var isEmpty: Bool { deletions.isEmpty && insertions.isEmpty && modifications.isEmpty }

  init() {}

  /// `modified` holds the `_id`s whose documents changed (nil: all of them may have).
  init(old: [BSON], new: [BSON], modified: Set<BSON>?) {
    var oldIndex: [BSON: Int] = [:]
    for (index, id) in old.enumerated() where oldIndex[id] == nil { oldIndex[id] = index }
    var newIndex: [BSON: Int] = [:]
    for (index, id) in new.enumerated() where newIndex[id] == nil { newIndex[id] = index }
    for (index, id) in old.enumerated() where newIndex[id] == nil { deletions.append(index) }
    for (index, id) in new.enumerated() where oldIndex[id] == nil { insertions.append(index) }
    // The objects in both, in the new order, with their old positions: those on a longest
    // increasing run of old positions stayed; the others moved.
    let common = new.enumerated().compactMap { index, id in oldIndex[id].map { (new: index, old: $0, id: id) } }
    let stayed = CollectionDiff.longestIncreasing(common.map(\.old))
    for (position, item) in common.enumerated() {
      if stayed.contains(position) {
        if modified?.contains(item.id) ?? true { modifications.append(item.old) }
      } else {
        deletions.append(item.old)
        insertions.append(item.new)
      }
    }
    deletions.sort()
    insertions.sort()
    modifications.sort()
  }

  /// The positions in `values` of a longest strictly increasing subsequence (patience sorting,
  /// O(n log n)).
  static func longestIncreasing(_ values: [Int]) -> Set<Int> {
    var tails: [Int] = []  // positions in `values`
    var previous = [Int](repeating: -1, count: values.count)
    for (position, value) in values.enumerated() {
      var low = 0
      var high = tails.count
      while low < high {
        let middle = (low + high) / 2
        if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
      }
      if low > 0 { previous[position] = tails[low - 1] }
      if low == tails.count { tails.append(position) } else { tails[low] = position }
    }
    var result: Set<Int> = []
    var position = tails.last ?? -1
    while position >= 0 {
      result.insert(position)
      position = previous[position]
    }
    return result
  }
}

// MARK: Objects

/// A property's change, in an object notification: Realm's `PropertyChange`.
public struct PropertyChange {
  /// The property's name.
  public let name: String
  /// Its value before the change, for a property of a scalar type (nil for lists, sets, maps,
  /// links and embedded objects, whose old state is not kept), in the form
  /// ``ObjectBase/value(forKey:)`` returns values (a number as an `NSNumber`, nil as nil).
  public let oldValue: Any?
  /// Its value now, in the same form.
  public let newValue: Any?
}

/// What happened to an observed object: Realm's `ObjectChange`.
public enum ObjectChange<T: ObjectBase> {
  /// The object could not be read: the store failed, or its document no longer fits its type
  /// (another program wrote it); no further notification comes.
  case error(any Error)
  /// Properties of the object changed (for an embedded object's property, the property of the
  /// object observed that holds it: `address` when `address.city` changed).
  case change(T, [PropertyChange])
  /// The object was deleted (or, for an embedded object, its parent, or it was replaced); no
  /// further notification comes.
  case deleted
}

/// Objects that can be observed (every `Object` and `EmbeddedObject`), so that the block's
/// object has the observed object's own type.
public protocol _ObjectObservable: AnyObject {}
extension ObjectBase: _ObjectObservable {}

extension _ObjectObservable where Self: ObjectBase {
  /// Calls `block` after each commit that changed this managed object (`.change` with the
  /// properties that changed) or deleted it (`.deleted`), when its `Reef` writes or
  /// ``Reef/refresh()``es (or refreshes on its thread's run loop: see ``Reef/autorefresh``).
  /// `keyPaths` (property names, or paths into embedded objects such as
  /// `address.city`, through lists of them: `addresses.city`) limit the notifications to changes
  /// of those values. A key path through a link (`favorite.name`, `dogs.age`: one level) also
  /// notifies when the linked objects change at that path, as a change of the link property;
  /// without key paths, only the object's own document counts. When its document can no longer
  /// be read, or no longer fits its type, `.error` comes, and nothing after it.
  ///
  /// A block whose type names a superclass (`{ (change: ObjectChange<Object>) in … }`) takes
  /// the generic form on ``ObjectBase``, Realm's `observe<T>(keyPaths:on:_:)`.
  ///
  /// Disfavored: an unannotated block that needs `ObjectChange<Object>` takes the generic form.
  @_disfavoredOverload
  public func observe(keyPaths: [String]? = nil, _ block: @escaping (ObjectChange<Self>) -> Void)
    -> NotificationToken
  {
    observeObject(keyPaths: keyPaths, block)
  }

  /// ``observe(keyPaths:_:)``, under a name no overload shares.
  func observeObject(keyPaths: [String]?, _ block: @escaping (ObjectChange<Self>) -> Void) -> NotificationToken {
    guard let managed = _managed else {
      reefStop("Only objects which are managed by a Reef support change notifications")
    }
    let reef = managed.reef
    reef.checkThread()
    reefRequire(!reef.isInWriteTransaction, "Cannot register notification blocks from within write transactions.")
    guard var old = managed.currentDocument() else {
      block(.deleted)
      return NotificationToken(reef: nil, id: 0)
    }
    let schema = managed.schema
    let top = managed.top
    let paths = keyPaths.map { $0.map { ChangePaths.stored($0, schema: schema) } }
    let watch = ObjectWatch(schema: schema, keyPaths: keyPaths)
    var ended = false
    return reef.addObserver { reef, batch, silent in
      guard !ended else { return }
      let touched =
        !batch.isComplete
        || batch.commits.contains { commit in
          commit.resetCollections.contains(top.schema.className)
            || commit.changes.contains { $0.collection == top.schema.className && $0.id == top.id }
        }
      guard touched || watch.touchesLinks(batch) else { return }
      let new: Document
      switch managed.notificationDocument() {
      case .success(let document?):
        if let error = watch.mismatch(document, object: managed) {
          ended = true
          if !silent { block(.error(error)) }
          return
        }
        new = document
      case .success(nil):
        ended = true
        if !silent { block(.deleted) }
        return
      case .failure(let error):
        ended = true
        if !silent { block(.error(error)) }
        return
      }
      var changes: [PropertyChange] = []
      for property in schema.allProperties where property.shape.isStored {
        let column = property.columnName
        let watched = paths.map { $0.filter { ChangePaths.overlaps(column, $0) } }
        if let watched, watched.isEmpty { continue }
        // The property's value (a link's, for a path through it), or only the watched paths
        // inside it (through arrays: `addresses.city`), or the linked objects' watched paths.
        let compared = watched?.map { $0.count > column.count && !property.isLink ? $0 : column } ?? [column]
        guard
          compared.contains(where: { KeyPathValues.differ(old, new, at: $0) })
            || watch.linkedChange(property, document: new, batch: batch, reef: reef)
        else { continue }
        let scalar = !property.isArray && !property.isSet && !property.isMap && property.objectClass == nil
        // Both values in dynamic access's form (Realm's: numbers as NSNumber, nil as nil).
        let oldValue: Any? =
          scalar
          ? property.codec.dynamicValue(
            ManagedObject(reef: reef, schema: schema, id: managed.id, document: old), property) : nil
        changes.append(PropertyChange(name: property.name, oldValue: oldValue, newValue: self[property.name]))
      }
      old = new
      guard !silent, !changes.isEmpty else { return }
      block(.change(self, changes))
    }
  }
}

extension ObjectChange {
  /// The same change, its object as `U` (which the caller checked it is).
  func cast<U: ObjectBase>(to type: U.Type) -> ObjectChange<U> {
    switch self {
    case .error(let error): .error(error)
    case .change(let object, let properties): .change(unsafeDowncast(object, to: U.self), properties)
    case .deleted: .deleted
    }
  }
}

extension ObjectBase {
  /// Stops unless this object is a `T`, for the observe forms whose block names its type.
  func requireObserved<T: ObjectBase>(as type: T.Type) {
    reefRequire(
      self is T,
      "observe's block takes ObjectChange<\(T.self)>, and the object observed is a \(Swift.type(of: self)), not a \(T.self)"
    )
  }

  /// `observe(keyPaths:_:)`, with the block's object typed as the block says: Realm's `observe<T>(keyPaths:on:_:)`, for blocks written
  /// `{ (change: ObjectChange<Dog>) in … }` or `{ (change: ObjectChange<Object>) in … }`. `T` is
  /// the object's class or one of its superclasses (another stops, naming both).
  public func observe<T: ObjectBase>(keyPaths: [String]? = nil, _ block: @escaping (ObjectChange<T>) -> Void)
    -> NotificationToken
  {
    requireObserved(as: T.self)
    return observeObject(keyPaths: keyPaths) { block($0.cast(to: T.self)) }
  }

  /// `observe(keyPaths:_:)` with Swift key paths
  /// (`[\Dog.name, \Dog.owner.name]`), as Realm's: each names the properties it reads.
  public func observe<T: ObjectBase>(keyPaths: [PartialKeyPath<T>], _ block: @escaping (ObjectChange<T>) -> Void)
    -> NotificationToken
  {
    requireObserved(as: T.self)
    return observeObject(keyPaths: keyPaths.map { KeyPathNames.name($0, in: T.self) }) { block($0.cast(to: T.self)) }
  }
}
