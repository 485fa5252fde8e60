import ReefBSON
import ReefStore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The snapshot a frozen `Reef` reads: a read transaction pinned until the frozen `Reef` (and
/// every frozen object, result and collection of it) goes, and the lock its readers take.
///
/// LMDB lets a read transaction of a store opened with `MDB_NOTLS` be used from any thread, but
/// not from two at once: every read of a frozen `Reef` (and the caches of its objects and
/// results) runs under this recursive lock, so readers on several threads take turns.
final class FrozenSnapshot: @unchecked Sendable {
  let transaction: Transaction
  private let pin: VersionPin
  private var mutex = pthread_mutex_t()

  init(transaction: Transaction, pin: VersionPin) {
    self.transaction = transaction
    self.pin = pin
    var attributes = pthread_mutexattr_t()
    pthread_mutexattr_init(&attributes)
    pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
    pthread_mutex_init(&mutex, &attributes)
    pthread_mutexattr_destroy(&attributes)
  }

  func lock() { pthread_mutex_lock(&mutex) }
  func unlock() { pthread_mutex_unlock(&mutex) }

  deinit {
    // Any thread may end it (MDB_NOTLS); the pin goes with this object.
    transaction.end()
    pthread_mutex_destroy(&mutex)
  }
}

extension ReefError.Kind {
  /// A write transaction was begun on a frozen `Reef` (or a frozen object was changed).
  public static let frozen = ReefError.Kind(rawValue: "frozen")
  /// More versions of the file would be pinned than
  /// ``Reef/Configuration/maximumNumberOfActiveVersions`` allows.
  public static let tooManyActiveVersions = ReefError.Kind(rawValue: "tooManyActiveVersions")
}

extension ReefError {
  /// The error for a write transaction begun on a frozen `Reef`.
  static func frozenWrite() -> ReefError {
    ReefError(
      .frozen,
      "Can't perform transactions on a frozen Reef: it is an immutable snapshot; thaw() it for a live Reef of this thread"
    )
  }
}

extension Reef {
  /// Whether this `Reef` is frozen: an immutable snapshot of the file, made by ``freeze()``,
  /// readable from any thread.
  public var isFrozen: Bool { frozenSnapshot != nil }

  /// For the reads of a frozen `Reef`: takes its snapshot's lock (release it with `unlock()`);
  /// nil, and nothing taken, for a live `Reef`.
  @inline(__always) func enterSnapshot() -> FrozenSnapshot? {
    guard let frozenSnapshot else { return nil }
    frozenSnapshot.lock()
    return frozenSnapshot
  }

  /// An immutable snapshot of this `Reef`: Realm's `freeze()`. It reads the state this `Reef`
  /// reads now, forever, from any thread (several at once: their reads take turns behind the
  /// snapshot's lock). Its objects, results and collections are frozen too; writing to it is
  /// refused, and it has no notifications. A frozen `Reef` returns itself.
  ///
  /// Inside a write transaction it is the state the transaction began from (its own changes are
  /// not in it). When other commits came since this `Reef`'s snapshot began, the frozen `Reef`
  /// takes over that snapshot's reader (LMDB cannot open a second one on an older state) and
  /// this `Reef` moves to the latest state, as ``refresh()`` does, notifications included.
  /// Freezing again before this `Reef` moves on returns the same frozen `Reef`, while it lives.
  ///
  /// **Cost.** A frozen `Reef` holds one of the store's reader slots and pins its snapshot until
  /// it and everything frozen from it is released: LMDB cannot reuse pages that later writes
  /// free while an older snapshot is pinned, so holding frozen objects for a long time makes the
  /// file grow. ``Configuration/maximumNumberOfActiveVersions`` bounds how many are pinned.
  ///
  /// It does not throw, as Realm's: past that limit, or when no reader slot is free, it stops
  /// the program with the error's message. ``tryFreeze()`` throws instead.
  public func freeze() -> Reef {
    do {
      return try tryFreeze()
    } catch {
      reefStop(error.description)
    }
  }

  /// ``freeze()``, throwing what it stops with.
  /// - Throws: ``ReefError/Kind/tooManyActiveVersions`` past
  ///   ``Configuration/maximumNumberOfActiveVersions``; ``ReefError/Kind/store`` when no reader
  ///   slot is free.
  public func tryFreeze() throws(ReefError) -> Reef {
    if isFrozen { return self }
    checkThread()
    if let copy = frozenCopy, copy.snapshotVersion == snapshotVersion, let reef = copy.reef.reef,
      isInWriteTransaction || readSnapshotID == reef.frozenSnapshot?.transaction.snapshotID
    {
      return reef
    }
    // Another Reef of the file (another thread's) froze this state already: the same frozen
    // Reef, as Realm's cache of frozen Realms by file and version gives.
    if !isInWriteTransaction, let snapshot = readSnapshotID, let shared = FrozenReefs.reef(store, snapshot: snapshot) {
      frozenCopy = (snapshotVersion, WeakReef(shared))
      return shared
    }
    let before = snapshotVersion
    let (transaction, pin) = try snapshotForFreezing(limit: configuration.maximumNumberOfActiveVersions)
    let frozen = Reef(frozen: FrozenSnapshot(transaction: transaction, pin: pin), like: self)
    if snapshotVersion == before { frozenCopy = (before, WeakReef(frozen)) }
    FrozenReefs.keep(frozen, store, snapshot: transaction.snapshotID)
    return frozen
  }

  /// A live `Reef` of the same configuration on the calling thread (the one open there, if
  /// any): Realm's `thaw()`. A live `Reef` returns itself.
  ///
  /// It does not throw, as Realm's: when the file cannot be opened it stops the program with
  /// the error's message. ``tryThaw()`` throws instead.
  public func thaw() -> Reef {
    do {
      return try tryThaw()
    } catch {
      reefStop(error.description)
    }
  }

  /// ``thaw()``, throwing what it stops with.
  /// - Throws: what ``init(configuration:)`` throws.
  public func tryThaw() throws(ReefError) -> Reef {
    guard isFrozen else { return self }
    do {
      return try Reef(configuration: configuration)
    } catch let error as ReefError {
      throw error
    } catch {
      throw ReefError(.store, "\(error)")
    }
  }

  /// A frozen snapshot of `object`: Realm's `freeze(_:)`, the same as `object.freeze()`.
  public func freeze<T: ObjectBase>(_ object: T) -> T { object.freeze() }

  /// The live counterpart of a frozen object (nil when it was deleted since): Realm's
  /// `thaw(_:)`, the same as `object.thaw()`.
  public func thaw<T: ObjectBase>(_ object: T) -> T? { object.thaw() }

  /// A frozen snapshot of `results`: Realm's `freeze(_:)`, the same as `results.freeze()`.
  public func freeze<Element>(_ results: Results<Element>) -> Results<Element> { results.freeze() }

  /// A frozen snapshot of a `List`, `MutableSet` or `Map`: Realm's `freeze(_:)`, the same as
  /// `collection.freeze()`.
  public func freeze<Collection: _CollectionAccessor<Stored>, Stored>(_ collection: Collection) -> Collection {
    collection.freeze()
  }

  /// A frozen snapshot of `linkingObjects`: Realm's `freeze(_:)`, the same as
  /// `linkingObjects.freeze()`.
  public func freeze<Element>(_ linkingObjects: LinkingObjects<Element>) -> LinkingObjects<Element> {
    linkingObjects.freeze()
  }
}

/// The frozen `Reef`s of the process, by store and snapshot, held weakly: freezing at a state
/// another `Reef` of the file froze gives the same frozen `Reef`, on any thread (Realm caches its
/// frozen Realms by file and version, not by thread).
enum FrozenReefs {
  private struct Key: Hashable {
    let store: ObjectIdentifier
    let snapshot: Int
  }
  private static let lock = Lock()
  nonisolated(unsafe) private static var table: [Key: WeakReef] = [:]

  /// The frozen `Reef` of `store` at `snapshot`, while it lives.
  static func reef(_ store: Store, snapshot: Int) -> Reef? {
    lock.withLock { table[Key(store: ObjectIdentifier(store), snapshot: snapshot)]?.reef }
  }

  /// Keeps a frozen `Reef` (weakly); drops the entries of those gone.
  static func keep(_ reef: Reef, _ store: Store, snapshot: Int) {
    lock.withLock {
      table = table.filter { $0.value.reef != nil }
      table[Key(store: ObjectIdentifier(store), snapshot: snapshot)] = WeakReef(reef)
    }
  }
}

/// Where a managed object is in its file: its top-level object's type and `_id` and the steps
/// into embedded objects, with no reference to a `Reef`; found again in another `Reef` of the
/// file (frozen or live, on any thread).
struct ObjectPath: @unchecked Sendable {
  let schema: ObjectSchema
  let id: BSON
  /// Each embedded object on the way: its schema and its step from its parent.
  let steps: [(schema: ObjectSchema, step: PathStep)]

  /// The path of `state` now; nil for an embedded list element that left its list.
  init?(_ state: ManagedObject) {
    var steps: [(schema: ObjectSchema, step: PathStep)] = []
    var current = state
    while let parent = current.parent {
      guard let step = current.step else { return nil }
      steps.append((current.schema, step))
      current = parent
    }
    schema = current.schema
    id = current.id
    self.steps = steps.reversed()
  }

  /// The object at this path in `reef`'s snapshot, or nil when it is not there.
  func state(in reef: Reef) -> ManagedObject? { state(in: reef, evenIfGone: false) }

  /// The object at this path in `reef`'s snapshot; when it is not there, `evenIfGone` gives a
  /// state that reads as deleted (its collections are invalidated) instead of nil.
  func state(in reef: Reef, evenIfGone: Bool) -> ManagedObject? {
    let gate = reef.enterSnapshot()
    defer { gate?.unlock() }
    _ = try? reef.register(schema.objectClass)
    let document = try? reef.transaction().collection(schema.className).document(forID: id)
    guard document != nil || evenIfGone else { return nil }
    var state = ManagedObject(reef: reef, schema: schema, id: id, document: document)
    for (schema, step) in steps {
      state = ManagedObject(reef: reef, schema: schema, parent: state, step: step)
      guard evenIfGone || state.currentDocument() != nil else { return nil }
    }
    return state
  }
}

extension _ObjectObservable where Self: ObjectBase {
  /// An immutable snapshot of this managed object (and, through it, of its embedded objects,
  /// lists and links), readable from any thread: Realm's `freeze()`. It lives in its `Reef`'s
  /// frozen copy (``Reef/freeze()``, whose cost it shares); a frozen object returns itself.
  ///
  /// It does not throw, as Realm's: it stops with Realm's message for an unmanaged object
  /// ("Unmanaged objects cannot be frozen."), a deleted one ("Object has been deleted or
  /// invalidated."), one added in the open write transaction ("Cannot freeze an object in the
  /// same write transaction as it was created in": the frozen state is the one the transaction
  /// began from), and with what ``Reef/freeze()`` stops with. ``tryFreeze()`` throws instead.
  public func freeze() -> Self {
    do {
      return try tryFreeze()
    } catch {
      reefStop(error.description)
    }
  }

  /// ``freeze()``, throwing what it stops with.
  /// - Throws: ``ReefError/Kind/wrongReef`` for an unmanaged object; ``ReefError/Kind/invalidated``
  ///   for a deleted one; ``ReefError/Kind/transaction`` for one added in the open write
  ///   transaction; what ``Reef/tryFreeze()`` throws.
  public func tryFreeze() throws(ReefError) -> Self {
    guard let managed = _managed else {
      throw ReefError(.wrongReef, "Unmanaged objects cannot be frozen.", type: objectSchema.className)
    }
    if managed.reef.isFrozen { return self }
    guard managed.currentDocument() != nil, let path = ObjectPath(managed) else {
      throw ReefError(.invalidated, "Object has been deleted or invalidated.", type: objectSchema.className)
    }
    let frozen = try managed.reef.tryFreeze()
    guard let state = path.state(in: frozen) else {
      throw ReefError(
        .transaction, "Cannot freeze an object in the same write transaction as it was created in",
        type: objectSchema.className)
    }
    return unsafeDowncast(state.makeObject(), to: Self.self)
  }

  /// The live counterpart of this frozen object, in a live `Reef` of the calling thread
  /// (``Reef/thaw()``), or nil when it was deleted since: Realm's `thaw()`. A live object
  /// returns itself.
  ///
  /// It does not throw, as Realm's: it stops with Realm's message for an unmanaged object
  /// ("Unmanaged objects cannot be thawed."), and with what ``Reef/thaw()`` stops with.
  /// ``tryThaw()`` throws instead.
  public func thaw() -> Self? {
    do {
      return try tryThaw()
    } catch {
      reefStop(error.description)
    }
  }

  /// ``thaw()``, throwing what it stops with.
  /// - Throws: ``ReefError/Kind/wrongReef`` for an unmanaged object; what ``Reef/tryThaw()``
  ///   throws.
  public func tryThaw() throws(ReefError) -> Self? {
    guard let managed = _managed else {
      throw ReefError(.wrongReef, "Unmanaged objects cannot be thawed.", type: objectSchema.className)
    }
    guard managed.reef.isFrozen else { return self }
    let gate = managed.reef.enterSnapshot()
    let path = ObjectPath(managed)
    gate?.unlock()
    guard let path else { return nil }
    return path.state(in: try managed.reef.tryThaw()).map { unsafeDowncast($0.makeObject(), to: Self.self) }
  }
}

extension Results {
  /// Whether these results are frozen (their `Reef` is).
  public var isFrozen: Bool { reef.isFrozen }

  /// These results over the `Reef`'s frozen copy (``Reef/freeze()``): they never change and can
  /// be read from any thread. Frozen results return themselves.
  ///
  /// It does not throw, as Realm's: it stops with what ``Reef/freeze()`` stops with;
  /// ``tryFreeze()`` throws instead.
  public func freeze() -> Results {
    do {
      return try tryFreeze()
    } catch {
      reefStop(error.description)
    }
  }

  /// ``freeze()``, throwing what it stops with.
  /// - Throws: what ``Reef/tryFreeze()`` throws.
  public func tryFreeze() throws(ReefError) -> Results {
    if isFrozen { return self }
    return Results(reef: try reef.tryFreeze(), definition: definition)
  }

  /// These results, live, over a live `Reef` of the calling thread: Realm's `thaw()` (never nil
  /// here; optional as Realm's). Live results return themselves.
  ///
  /// It does not throw, as Realm's: it stops with what ``Reef/thaw()`` stops with;
  /// ``tryThaw()`` throws instead.
  public func thaw() -> Results? {
    do {
      return try tryThaw()
    } catch {
      reefStop(error.description)
    }
  }

  /// ``thaw()``, throwing what it stops with.
  /// - Throws: what ``Reef/tryThaw()`` throws.
  public func tryThaw() throws(ReefError) -> Results {
    guard isFrozen else { return self }
    let live = try reef.tryThaw()
    try live.register(Element.self)
    return Results(reef: live, definition: definition)
  }
}

extension ReefError {
  /// The error for a collection (or object) whose object is deleted.
  static func deletedOwner(_ owner: ManagedObject) -> ReefError {
    ReefError(.invalidated, "Object has been deleted or invalidated", type: owner.schema.className)
  }
}

/// A managed collection property (`List`, `MutableSet`, `Map`, `LinkingObjects`): its object and
/// property, from which the same collection is found again in another `Reef` of the file.
protocol OwnedCollection: AnyObject {
  /// The object holding the collection; nil while unmanaged.
  var collectionOwner: ManagedObject? { get }
  /// The collection's property of its object; nil while unmanaged.
  var collectionProperty: Property? { get }
}

extension OwnedCollection {
  /// The accessor of `property` (a collection of this type) on `owner`.
  static func same(_ property: Property, in owner: ManagedObject) -> Self {
    guard let collection = property.codec.get(owner, property) as? Self else {
      reefStop("\(owner.schema.className).\(property.name) is not a \(Self.self)")
    }
    return collection
  }

  /// Whether the collection is frozen (its object is).
  var ownerIsFrozen: Bool { collectionOwner?.reef.isFrozen ?? false }

  /// The collection as its object's frozen snapshot has it (see `freeze()`).
  func frozenCollection() throws(ReefError) -> Self {
    guard let owner = collectionOwner else {
      throw ReefError(.wrongReef, "This method may only be called on collections of managed objects")
    }
    if owner.reef.isFrozen { return self }
    guard owner.currentDocument() != nil, let path = ObjectPath(owner), let property = collectionProperty else {
      throw ReefError.deletedOwner(owner)
    }
    guard let state = path.state(in: try owner.reef.tryFreeze()) else {
      throw ReefError(
        .transaction, "Cannot freeze an object in the same write transaction as it was created in",
        type: owner.schema.className)
    }
    return Self.same(property, in: state)
  }

  /// The live collection of a frozen one, in a live `Reef` of the calling thread (see `thaw()`).
  func thawedCollection() throws(ReefError) -> Self? {
    guard let owner = collectionOwner, let property = collectionProperty else {
      throw ReefError(.wrongReef, "This method may only be called on collections of managed objects")
    }
    guard owner.reef.isFrozen else { return self }
    let gate = owner.reef.enterSnapshot()
    let path = ObjectPath(owner)
    gate?.unlock()
    guard let path, let state = path.state(in: try owner.reef.tryThaw()) else { return nil }
    return Self.same(property, in: state)
  }
}

extension _CollectionAccessor: OwnedCollection {
  var collectionOwner: ManagedObject? { access?.owner }
  var collectionProperty: Property? { access?.property }

  /// Whether this collection is frozen (its object is).
  public var isFrozen: Bool { ownerIsFrozen }

  /// This managed collection (`List`, `MutableSet`, `Map`) as its object's frozen snapshot has
  /// it (``ObjectBase/freeze()``): readable from any thread. A frozen collection returns itself.
  ///
  /// It does not throw, as Realm's: it stops for an unmanaged collection ("This method may only
  /// be called on collections of managed objects"), one whose object was deleted, and with what
  /// freezing its object stops with. ``tryFreeze()`` throws instead.
  public func freeze() -> Self {
    do {
      return try frozenCollection()
    } catch {
      reefStop(error.description)
    }
  }

  /// ``freeze()``, throwing what it stops with.
  /// - Throws: ``ReefError/Kind/wrongReef`` for an unmanaged collection,
  ///   ``ReefError/Kind/invalidated`` when its object was deleted; what freezing its object
  ///   throws.
  public func tryFreeze() throws(ReefError) -> Self { try frozenCollection() }

  /// The live counterpart of this frozen collection, in a live `Reef` of the calling thread, or
  /// nil when its object was deleted since. A live collection returns itself.
  ///
  /// It does not throw, as Realm's: it stops for an unmanaged collection and with what
  /// ``Reef/thaw()`` stops with. ``tryThaw()`` throws instead.
  public func thaw() -> Self? {
    do {
      return try thawedCollection()
    } catch {
      reefStop(error.description)
    }
  }

  /// ``thaw()``, throwing what it stops with.
  /// - Throws: ``ReefError/Kind/wrongReef`` for an unmanaged collection; what
  ///   ``Reef/tryThaw()`` throws.
  public func tryThaw() throws(ReefError) -> Self? { try thawedCollection() }
}

extension LinkingObjects: OwnedCollection {
  var collectionOwner: ManagedObject? { owner }
  var collectionProperty: Property? { property }

  /// Whether these linking objects are frozen (their object is).
  public var isFrozen: Bool { ownerIsFrozen }

  /// These linking objects as their object's frozen snapshot has them (``ObjectBase/freeze()``):
  /// readable from any thread, and so are the objects they hold. Frozen linking objects return
  /// themselves.
  ///
  /// It does not throw, as Realm's: it stops for the linking objects of an unmanaged object,
  /// of a deleted one, and with what freezing their object stops with. ``tryFreeze()`` throws
  /// instead.
  public func freeze() -> LinkingObjects {
    do {
      return try frozenCollection()
    } catch {
      reefStop(error.description)
    }
  }

  /// ``freeze()``, throwing what it stops with.
  /// - Throws: ``ReefError/Kind/wrongReef`` for the linking objects of an unmanaged object; what
  ///   freezing their object throws.
  public func tryFreeze() throws(ReefError) -> LinkingObjects { try frozenCollection() }

  /// The live counterpart of these frozen linking objects, in a live `Reef` of the calling
  /// thread, or nil when their object was deleted since. Live linking objects return themselves.
  ///
  /// It does not throw, as Realm's: it stops for the linking objects of an unmanaged object and
  /// with what ``Reef/thaw()`` stops with. ``tryThaw()`` throws instead.
  public func thaw() -> LinkingObjects? {
    do {
      return try thawedCollection()
    } catch {
      reefStop(error.description)
    }
  }

  /// ``thaw()``, throwing what it stops with.
  /// - Throws: ``ReefError/Kind/wrongReef`` for the linking objects of an unmanaged object;
  ///   what ``Reef/tryThaw()`` throws.
  public func tryThaw() throws(ReefError) -> LinkingObjects? { try thawedCollection() }
}
