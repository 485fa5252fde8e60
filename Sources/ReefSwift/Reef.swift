import ReefBSON
import ReefQuery
import ReefStore

/// A Reef file opened on one thread: Realm's `Realm`.
///
/// ```swift
/// let reef = try Reef()
/// try reef.write {
///     reef.add(Contact(name: "Nick Riviera", address: address))
/// }
/// let contacts = reef.objects(Contact.self).filter("address.city = %@", "Los Angeles")
/// ```
/// A `Reef` and its live objects belong to the thread that opened it; they are not `Sendable`.
/// Opening the same file again on that thread returns the same `Reef` while it lives, as
/// Realm's does (see ``init(configuration:queue:)``). It reads one snapshot of the file until it
/// writes or ``refresh()``es.
public final class Reef {
  /// The configuration it was opened with.
  public let configuration: Configuration
  /// The document store under this `Reef`: its objects' collections as raw BSON documents
  /// (each type's collection is named after it), for queries, imports and exports that go
  /// around the object layer. Open a file once per process: use this rather than a second
  /// `Store(path:)` of the same file.
  public let store: Store
  /// What this `Reef` is confined to: the thread that opened it, a queue or an actor (see
  /// `Confinement.swift`).
  let confinement: Confinement
  /// Moves on with every change this `Reef` makes or sees: managed objects read their
  /// document again when it has moved.
  private(set) var version = 0
  /// Moves on when this `Reef` starts reading another state of the file (a write transaction
  /// begins or ends, a refresh): everything read before may have changed.
  private(set) var snapshotVersion = 0
  /// Per collection, the writes this `Reef` made since ``snapshotVersion`` moved: inserts and
  /// deletes (which change which objects there are) and all writes (which may change which
  /// objects match a query, and their order).
  private var writeCounts: [String: (structural: Int, all: Int)] = [:]
  private var readTransaction: Transaction? {
    didSet { readPin = VersionPins.pin(readTransaction, of: store) }
  }
  /// Counts this live `Reef`'s snapshot among the file's pinned versions (see `VersionPins`).
  private var readPin: VersionPin?
  /// For a frozen `Reef`: its pinned snapshot and the lock its readers take (see
  /// `Reef+Freeze.swift`); nil for a live one.
  private(set) var frozenSnapshot: FrozenSnapshot?
  /// The frozen `Reef` last made of this live one's snapshot, reused while it lives.
  var frozenCopy: (snapshotVersion: Int, reef: WeakReef)?
  private var writeTransaction: Transaction? {
    didSet { holdWhileWriting() }
  }
  /// The first rule broken inside the current write transaction: `write` throws it.
  private var pendingError: ReefError?
  /// The epoch of each place of an embedded object that has been overwritten.
  private var epochs: [EpochKey: Int] = [:]
  /// The epochs as the current write transaction found them: a rollback restores them.
  private var epochsBeforeWrite: [EpochKey: Int] = [:]
  /// The last epoch given: epochs are never reused, so that an accessor made in a transaction
  /// that was rolled back stays invalid.
  private var lastEpoch = 0
  /// The lists of embedded objects whose elements have live accessors (see ``ListPlace``).
  var listPlaces: [EpochKey: WeakListPlace] = [:]
  /// The size of ``listPlaces`` at which the places that went are swept out.
  var listPlacesSweepAt = 64
  /// The last token given to a new list element (tokens of new elements count down from -1).
  var lastListToken = 0
  /// The list places the current write transaction changed, held until it ends.
  var changedListPlaces: [ListPlace] = []
  /// The types checked and set up in the file, by class.
  private var types = ClassTable<ObjectSchema>()
  /// Objects being added, by instance, with their identity (links to them in a cycle).
  /// The objects being added (a link's target is added while its origin is written): a short
  /// stack, searched from its top (a dictionary hashed each object added).
  private var adding: [(object: ObjectIdentifier, identity: BSON)] = []
  /// Attachments used and emptied, for the next object added.
  var spareAttachments: [Attachments] = []
  /// Types whose indexes and stored schema are still to be written (used before a write).
  private var pendingSetUp: [ObjectSchema] = []
  /// Types whose objects are to be deleted before their new schema is written (see
  /// `checkStoredSchemas(of:)`).
  var typesToClear: Set<String> = []
  /// The notification blocks registered, in order (see `Notifications.swift`).
  var observers: [ReefObserver] = []
  var nextObserverID = 0
  /// The change feed's sequence number the observers last saw (nil without observers).
  var feedSequence: UInt64?
  /// Whether observers are being told of changes (a block that writes or refreshes does not
  /// start another round).
  var isDelivering = false
  /// The observers `commitWrite(withoutNotifying:)` keeps silent.
  var silencedObservers: Set<Int> = []
  /// A thread-confined `Reef`'s run loop, where refreshes and async writes run (see
  /// `Reef+RunLoop.swift`).
  var runLoop = RunLoopDelivery()
  /// For an in-memory `Reef`: deletes the file when the last handle of its identifier goes.
  private let memoryFile: MemoryFile?
  /// How many times ``invalidate()`` was called: a managed object made before the last call is
  /// invalidated.
  private(set) var invalidations = 0
  private var refreshesItself = true

  /// Whether this `Reef` moves to the latest state by itself when other threads or processes
  /// commit: Realm's `autorefresh` (true by default).
  ///
  /// A `Reef` confined to a queue or an actor refreshes itself there after each commit while
  /// this is true. A thread-confined `Reef` does as Realm's: while it has notification blocks,
  /// another's commit schedules a refresh on the run loop of the thread that opened it (once,
  /// however many commits come before it runs), which runs when the thread runs its run loop
  /// (`RunLoop.current.run(…)`, XCTest's waits; for the main thread, also the main queue:
  /// `dispatchMain()`, main-actor code that awaits) and calls the blocks with what changed. A
  /// thread that never runs its run loop (most Linux programs' threads), or a `Reef` without
  /// notification blocks, moves on when it begins a write or ``refresh()``es. Set to false, the
  /// `Reef` stays on its state and its `observe` blocks get ``Notification/refreshRequired``
  /// instead (on the queue, actor or run loop), until ``refresh()``.
  public var autorefresh: Bool {
    get {
      checkThread()
      return refreshesItself
    }
    set {
      checkThread()
      refreshesItself = newValue
    }
  }

  /// Opens a file for use within `confinement` (see ``init(configuration:queue:)``, which returns
  /// the `Reef` open there already, if any).
  init(configuration: Configuration, confinement: Confinement) throws {
    self.confinement = confinement
    self.configuration = configuration
    store = try StoreTable.store(for: configuration)
    memoryFile = configuration.inMemoryIdentifier == nil ? nil : MemoryFile.shared(path: configuration.path)
    if let objectTypes = configuration.objectTypes {
      try SchemaCheck.check(objectTypes.map(ObjectSchema.of), complete: true)
    }
    // The migration first: the types are then checked against the migrated file.
    try migrateIfNeeded()
    for objectClass in configuration.objectTypes ?? [] { try register(objectClass) }
  }

  /// A frozen `Reef` reading `snapshot`, with `template`'s configuration, store and types.
  init(frozen snapshot: FrozenSnapshot, like template: Reef) {
    // Never checked: a frozen Reef is read from any thread.
    confinement = template.confinement
    configuration = template.configuration
    store = template.store
    memoryFile = template.memoryFile
    let gate = template.enterSnapshot()
    types = template.types
    gate?.unlock()
    frozenSnapshot = snapshot
    readTransaction = snapshot.transaction
  }

  deinit {
    writeTransaction?.rollback()
    readTransaction?.end()
  }

  /// Keeps a thread-confined `Reef` alive while its write transaction is open, in its thread's
  /// state (gone with the thread, whose exit rolls the transaction back). Realm's autoreleased
  /// instance lives that long on Apple platforms, so that `try Reef().beginWrite()` followed by
  /// `try Reef().create(...)` and `try Reef().commitWrite()` work on one transaction; without
  /// this, the first `Reef` would close (and roll back) as its statement ends.
  private func holdWhileWriting() {
    guard case .thread = confinement, !isFrozen else { return }
    let state = MainThread.ownerState()
    if writeTransaction != nil {
      state.writingReefs[ObjectIdentifier(self)] = self
    } else {
      state.writingReefs[ObjectIdentifier(self)] = nil
    }
  }

  // MARK: Threads and transactions

  /// Stops with a clear message when used outside what it is confined to (its thread, queue or
  /// actor).
  @inline(__always) func checkThread() {
    // A frozen Reef is read from any thread (its readers take its snapshot's lock).
    if isFrozen { return }
    confinement.check()
  }

  /// The transaction reads go through: the write transaction, or this `Reef`'s snapshot.
  func transaction() throws(StoreError) -> Transaction {
    if let writeTransaction { return writeTransaction }
    if let readTransaction { return readTransaction }
    let transaction = try store.beginRead()
    readTransaction = transaction
    return transaction
  }

  /// A read transaction on this live `Reef`'s snapshot, for a frozen copy of it: a new one when
  /// no commit came since the snapshot began (or, in a write transaction, the state it began
  /// from). LMDB cannot open a second reader on an older snapshot: a frozen copy then takes this
  /// `Reef`'s own reader, and this `Reef` moves to the latest state as ``refresh()`` does.
  func snapshotForFreezing(limit: UInt?) throws(ReefError) -> (Transaction, VersionPin) {
    let fresh = try storeCall { () throws(StoreError) in try store.beginRead() }
    if writeTransaction == nil, readTransaction == nil, let own = try? store.beginRead() {
      // This Reef's snapshot begins now, where the frozen copy's is (unless a commit came between).
      if own.snapshotID == fresh.snapshotID { readTransaction = own } else { own.end() }
    }
    guard writeTransaction == nil, let current = readTransaction, current.snapshotID != fresh.snapshotID else {
      do {
        return (fresh, try VersionPins.pin(fresh.snapshotID, of: store, limit: limit))
      } catch {
        fresh.end()
        throw error
      }
    }
    fresh.end()
    let pin = try VersionPins.pin(current.snapshotID, of: store, limit: limit)
    readTransaction = nil
    refresh()
    return (current, pin)
  }

  /// The snapshot this live `Reef` reads now (nil before its first read, and in a write).
  var readSnapshotID: Int? { writeTransaction == nil ? readTransaction?.snapshotID : nil }

  /// Whether a write transaction is open.
  public var isInWriteTransaction: Bool { writeTransaction != nil }

  /// Stops with Realm's message when a managed object is changed outside a write transaction.
  func requireWriteTransaction() {
    if isFrozen { reefStop("Attempting to modify a frozen object - call thaw on the Object instance first.") }
    checkThread()
    if writeTransaction == nil {
      reefStop(
        "Attempting to modify object outside of a write transaction - call beginWrite on a Reef instance first.")
    }
  }

  /// Begins a write transaction, as Realm's `beginWrite()`: it waits for the writers of other
  /// threads and processes, then sees the file's latest state. End it with ``commitWrite()`` or
  /// ``cancelWrite()``.
  ///
  /// What Realm raises as an exception stops the program with Realm's message: a write
  /// transaction already open on this `Reef` ("The Reef is already in a write transaction"), a
  /// frozen `Reef` ("Can't perform transactions on a frozen Reef"), a read-only one ("Can't
  /// perform transactions on read-only Reefs."), more versions pinned than
  /// ``Configuration/maximumNumberOfActiveVersions`` allows, and a store that cannot begin one
  /// (its error is named). ``tryBeginWrite()`` throws these instead.
  public func beginWrite() {
    do {
      try tryBeginWrite()
    } catch {
      reefStop(error.description)
    }
  }

  /// ``beginWrite()``, throwing what it stops with.
  /// - Throws: ``ReefError/Kind/transaction`` when a write transaction is already open or the
  ///   `Reef` is read-only; ``ReefError/Kind/frozen`` for a frozen `Reef`;
  ///   ``ReefError/Kind/tooManyActiveVersions`` past ``Configuration/maximumNumberOfActiveVersions``;
  ///   ``ReefError/Kind/store`` when the store cannot begin one.
  public func tryBeginWrite() throws(ReefError) {
    _ = try beginWrite(waiting: true)
  }

  /// Begins a write transaction; without `waiting`, only when no other writer of this process
  /// holds the store's write lock now: returns whether it began.
  func beginWrite(waiting: Bool) throws(ReefError) -> Bool {
    if isFrozen { throw ReefError.frozenWrite() }
    checkThread()
    if configuration.readOnly {
      throw ReefError(
        .transaction,
        "Can't perform transactions on read-only Reefs. (this Reef was opened with Configuration.readOnly)",
        storeError: StoreError(.readOnly, "read-only"))
    }
    guard writeTransaction == nil else {
      throw ReefError(.transaction, "The Reef is already in a write transaction")
    }
    try VersionPins.checkNewVersion(
      of: store, limit: configuration.maximumNumberOfActiveVersions, releasing: readTransaction?.snapshotID)
    let transaction: Transaction
    if waiting {
      readTransaction?.end()
      readTransaction = nil
      transaction = try beginStoreWrite { () throws(StoreError) in try store.beginWrite() }
    } else {
      guard let begun = try beginStoreWrite({ () throws(StoreError) in try store.beginWriteIfAvailable() }) else {
        return false
      }
      readTransaction?.end()
      readTransaction = nil
      transaction = begun
    }
    writeTransaction = transaction
    pendingError = nil
    epochsBeforeWrite = epochs
    newSnapshot()
    return true
  }

  /// Runs the store's call that begins a write transaction, naming its error.
  private func beginStoreWrite<T>(_ begin: () throws(StoreError) -> T) throws(ReefError) -> T {
    do {
      return try begin()
    } catch {
      throw ReefError(.store, "Can't begin a write transaction: \(error.message)", storeError: error)
    }
  }

  /// Commits the write transaction, then calls this `Reef`'s notification blocks with what it
  /// changed (on this thread, before it returns), except those of `tokens`: Realm's
  /// `commitWrite(withoutNotifying:)`. The blocks of `tokens` are not called for this
  /// transaction's changes (their results and objects take them in silently), as when the
  /// changes were already shown by the code that made them.
  /// - Parameter tokens: Tokens of blocks registered on this `Reef` (an invalidated token is
  ///   ignored). A token of another `Reef` stops with Realm's message ("Incorrect Reef: only
  ///   notifications for the Reef being modified can be skipped.").
  /// - Throws: the first rule an `add`, `create`, `delete` or property change broke in the
  ///   transaction (it is then rolled back: nothing of it is kept); the store's error.
  public func commitWrite(withoutNotifying tokens: [NotificationToken] = []) throws {
    try commitWrite(durability: nil, withoutNotifying: tokens)
  }

  /// ``commitWrite(withoutNotifying:)`` with `durability` for this commit (nil: the
  /// configuration's).
  func commitWrite(durability: Durability?, withoutNotifying tokens: [NotificationToken] = []) throws {
    checkThread()
    let silenced = silencedIDs(tokens)
    guard let transaction = writeTransaction else {
      throw ReefError(.transaction, "commitWrite without a write transaction (call beginWrite first)")
    }
    if let pendingError {
      cancelWrite()
      throw pendingError
    }
    do {
      try flushSetUp()
    } catch {
      cancelWrite()
      throw error
    }
    do {
      if let durability { try transaction.commit(durability: durability) } else { try transaction.commit() }
    } catch {
      writeTransaction = nil
      transaction.rollback()
      rollBackPlaces()
      newSnapshot()
      runLoop.scheduler?.resumeDeferred()
      throw ReefError(error)
    }
    writeTransaction = nil
    epochsBeforeWrite = [:]
    endListPlaceChanges(rollBack: false)
    newSnapshot()
    silencedObservers = silenced
    defer { silencedObservers = [] }
    deliverNotifications(afterOwnCommit: true)
  }

  /// Gives the places of embedded objects their state from before the write transaction: an
  /// accessor of an object the transaction overwrote, removed or moved in a list is valid again
  /// at its old place, and one made for an object the transaction put in place is invalid.
  private func rollBackPlaces() {
    epochs = epochsBeforeWrite
    epochsBeforeWrite = [:]
    endListPlaceChanges(rollBack: true)
  }

  /// Rolls the write transaction back: nothing it wrote is kept, and objects it added are
  /// invalidated.
  public func cancelWrite() {
    checkThread()
    if let writeTransaction {
      writeTransaction.rollback()
      rollBackPlaces()
    }
    writeTransaction = nil
    pendingError = nil
    adding = []
    pendingSetUp = []
    newSnapshot()
    runLoop.scheduler?.resumeDeferred()
  }

  /// Runs `block` in a write transaction and commits it; returns what `block` returns.
  ///
  /// As in Realm, `add`, `create` and `delete` are called without `try` in the block: a rule
  /// they break (a duplicate primary key, a second parent for an embedded object…) is
  /// recorded, and `write` throws it at the end, rolling the whole transaction back.
  /// - Throws: what ``tryBeginWrite()`` throws (where ``beginWrite()`` stops: a `write` inside
  ///   another, a frozen or read-only `Reef`); what `block` throws, a recorded rule, or the
  ///   store's error, and nothing of the transaction is kept then.
  @discardableResult
  public func write<Result>(_ block: () throws -> Result) throws -> Result {
    try tryBeginWrite()
    return try runInWrite(block)
  }

  /// Runs `block` in the write transaction begun, then commits it (unless the block ended it)
  /// without calling the blocks of `tokens`; cancels it when `block` throws.
  func runInWrite<Result>(withoutNotifying tokens: [NotificationToken] = [], _ block: () throws -> Result) throws
    -> Result
  {
    let result: Result
    do {
      result = try block()
    } catch {
      if isInWriteTransaction { cancelWrite() }
      throw error
    }
    if isInWriteTransaction { try commitWrite(withoutNotifying: tokens) }
    return result
  }

  /// Reads the file's latest state: managed objects and results show it from now on. Returns
  /// whether it did anything (not inside a write transaction, where the state is the latest).
  @discardableResult
  public func refresh() -> Bool {
    checkThread()
    guard writeTransaction == nil, !isFrozen else { return false }
    readTransaction?.end()
    readTransaction = nil
    newSnapshot()
    deliverNotifications()
    return true
  }

  /// Lets go of the state of the file this `Reef` reads, so that the space later writes free
  /// can be reused: Realm's `invalidate()`. The objects read through this `Reef` until now are
  /// invalidated (``ObjectBase/isInvalidated``, reading one stops), and so are their lists and
  /// other collections; `Results` read the file again when next used. An open write transaction
  /// is rolled back, as Realm's is (Realm logs a warning). The `Reef` stays usable: its next
  /// read begins a new snapshot. A frozen `Reef` is left as it is.
  public func invalidate() {
    checkThread()
    guard !isFrozen else { return }
    if isInWriteTransaction { cancelWrite() }
    readTransaction?.end()
    readTransaction = nil
    invalidations += 1
    newSnapshot()
  }

  /// Whether the file holds no object of any type: Realm's `isEmpty`. Inside a write
  /// transaction, its changes count.
  /// - Complexity: O(*t*) for *t* collections in the file.
  public var isEmpty: Bool {
    checkThread()
    let gate = enterSnapshot()
    defer { gate?.unlock() }
    do throws(StoreError) {
      let transaction = try transaction()
      for name in try transaction.collectionNames() where try transaction.collection(name).count() > 0 {
        return false
      }
      return true
    } catch {
      reefStop("reading whether the file \(configuration.path) is empty failed: \(error)")
    }
  }

  /// Records a broken rule: the write transaction will throw it and roll back.
  func record(_ error: ReefError) {
    if pendingError == nil { pendingError = error }
  }

  /// Records an error thrown by the store inside a write.
  func record(_ error: StoreError, type typeName: String? = nil) {
    record(ReefError(error, type: typeName))
  }

  // MARK: Epochs of embedded places

  func epoch(_ key: EpochKey) -> Int { epochs.isEmpty ? 0 : epochs[key] ?? 0 }
  /// Whether any place has an epoch (while none has, every epoch is 0).
  var hasEpochs: Bool { !epochs.isEmpty }
  func bumpEpoch(_ key: EpochKey) {
    lastEpoch += 1
    epochs[key] = lastEpoch
    version += 1
  }

  // MARK: Types

  /// Checks a type (and the types it reaches) and remembers it; its indexes and stored schema
  /// are written with the next write.
  @discardableResult
  func register(_ objectClass: ObjectBase.Type) throws(ReefError) -> ObjectSchema {
    let gate = enterSnapshot()
    defer { gate?.unlock() }
    let key = ObjectIdentifier(objectClass)
    if let schema = types[key] { return schema }
    let schema = ObjectSchema.of(objectClass)
    let reached = SchemaCheck.reachable(from: schema)
    try SchemaCheck.check(reached)
    let added = reached.filter { types[ObjectIdentifier($0.objectClass)] == nil }
    // Checked before any is taken: a refused type is refused again at its next use.
    if !isFrozen { try checkStoredSchemas(of: added.filter { !$0.isEmbedded }) }
    for other in added {
      types[ObjectIdentifier(other.objectClass)] = other
      if !other.isEmbedded { pendingSetUp.append(other) }
    }
    if writeTransaction != nil {
      try flushSetUp()
    } else if !configuration.readOnly, !isFrozen, !pendingSetUp.isEmpty,
      try storeCall({ () throws(StoreError) in try needsSetUp() })
    {
      try storeCall { () throws(StoreError) in
        let transaction = try store.beginWrite()
        do throws(StoreError) {
          try setUp(in: transaction)
          try transaction.commit()
        } catch {
          transaction.rollback()
          throw error
        }
      }
      refresh()
    }
    return schema
  }

  /// ``register(_:)`` for calls that cannot throw (`objects`, `object(ofType:forPrimaryKey:)`):
  /// a model that breaks a schema rule stops with the rule, type and property.
  func registerOrStop(_ objectClass: ObjectBase.Type) -> ObjectSchema {
    do {
      return try register(objectClass)
    } catch {
      reefStop("\(error)")
    }
  }

  /// The types this `Reef` has registered.
  var registeredSchemas: [ObjectSchema] { Array(types.values) }

  /// The schema of a registered type, by name.
  func schema(named name: String) -> ObjectSchema? { types.values.first { $0.className == name } }

  private func needsSetUp() throws(StoreError) -> Bool {
    let transaction = try transaction()
    if !typesToClear.isEmpty { return true }
    for schema in pendingSetUp {
      let storedSchema = try transaction.jsonSchema(forCollection: schema.className)
      let storedLinks = try transaction.metadata(forKey: LinkMap.metadataKey(schema.className))
      let storedVersion = try transaction.metadata(forKey: Reef.typeVersionKey(schema.className))
      if storedSchema != ObjectJSONSchema.document(for: schema) || storedLinks != LinkMap.document(for: schema)
        || storedVersion != typeVersionDocument
      {
        return true
      }
    }
    pendingSetUp = []
    return false
  }

  private func flushSetUp() throws(ReefError) {
    guard let writeTransaction, !pendingSetUp.isEmpty else { return }
    try storeCall { () throws(StoreError) in try setUp(in: writeTransaction) }
  }

  /// Writes the indexes and the stored schema of the types waiting for it.
  private func setUp(in transaction: Transaction) throws(StoreError) {
    let waiting = pendingSetUp
    pendingSetUp = []
    // Types whose stored schema no longer fits, with deleteReefIfMigrationNeeded: their objects go.
    for name in typesToClear.sorted() { try transaction.collection(name).deleteMany([:]) }
    typesToClear = []
    for schema in waiting {
      let collection = transaction.collection(schema.className)
      let existing = Set(
        try collection.listIndexes().compactMap {
          $0["name"].flatMap { if case .string(let s) = $0 { s } else { nil } }
        })
      for index in IndexPlan.indexes(of: schema) where !existing.contains(index.name) {
        try collection.createIndex(index.keys, name: index.name, unique: index.unique)
      }
      let stored = ObjectJSONSchema.document(for: schema)
      let before = try transaction.jsonSchema(forCollection: schema.className)
      if before != stored {
        if let before { try fillAddedProperties(of: schema, storedBefore: before, in: transaction) }
        try transaction.setJSONSchema(stored, forCollection: schema.className)
      }
      let links = LinkMap.document(for: schema)
      if try transaction.metadata(forKey: LinkMap.metadataKey(schema.className)) != links {
        try transaction.setMetadata(links, forKey: LinkMap.metadataKey(schema.className))
      }
      if try transaction.metadata(forKey: Reef.typeVersionKey(schema.className)) != typeVersionDocument {
        try transaction.setMetadata(typeVersionDocument, forKey: Reef.typeVersionKey(schema.className))
      }
    }
  }

  // MARK: Reading objects

  /// Constructs a Swift object to be made managed: its property initializers run (as for any
  /// object), but their values are not kept.
  func construct(_ objectClass: ObjectBase.Type) -> ObjectBase {
    let thread = ThreadState.current
    let saved = thread.constructingManaged
    thread.constructingManaged = ObjectIdentifier(objectClass)
    defer { thread.constructingManaged = saved }
    return objectClass.init()
  }

  /// A managed object for a stored document of a top-level type.
  func object<T: ObjectBase>(_ type: T.Type, schema: ObjectSchema, document: Document) -> T {
    let object = construct(type)
    // By key, not by dotted path: `_id` is a top-level field (usually the first).
    let id = document.element(forKey: "_id")?.value ?? .null
    object._managed = ManagedObject(reef: self, schema: schema, id: id, document: document)
    return unsafeDowncast(object, to: T.self)
  }

  /// The identity links store for an object of `schema` whose document is `document`: its
  /// primary key, or its `_id`.
  func identity(of schema: ObjectSchema, document: Document) -> BSON {
    if let key = schema.primaryKeyProperty, !schema.primaryKeyIsID { return document[key.columnName] ?? .null }
    return document["_id"] ?? .null
  }

  /// The stored document of the object of `schema` a link value names, if it exists.
  func document(of schema: ObjectSchema, identity: BSON) throws(StoreError) -> Document? {
    let gate = enterSnapshot()
    defer { gate?.unlock() }
    let collection = try transaction().collection(schema.className)
    if let key = schema.primaryKeyProperty, !schema.primaryKeyIsID {
      return try collection.findOne([key.columnName: identity])
    }
    return try collection.document(forID: identity)
  }

  /// The managed object a link value names, or nil for a dangling link. A read that fails
  /// (a damaged file) stops, naming the link, rather than look like a dangling one.
  func linkedObject(_ objectClass: ObjectBase.Type, identity: BSON) -> ObjectBase? {
    let schema = registerOrStop(objectClass)
    guard let document = storedDocument(of: schema, identity: identity) else { return nil }
    return object(objectClass, schema: schema, document: document)
  }

  /// ``document(of:identity:)`` for the reads that cannot throw: a failed read stops with the
  /// store's error.
  func storedDocument(of schema: ObjectSchema, identity: BSON) -> Document? {
    do {
      return try document(of: schema, identity: identity)
    } catch {
      reefStop("reading the \(schema.className) with key \(identity) failed: \(error)")
    }
  }

  /// All objects of a type: a live, lazy ``Results``.
  public func objects<Element: Object>(_ type: Element.Type) -> Results<Element> {
    checkThread()
    let schema = registerOrStop(type)
    return Results(reef: self, schema: schema)
  }

  /// The object of a type with a primary key, or nil.
  ///
  /// `key` is the primary key's value (`Int`, `String`, `ObjectId`, `UUID`, or an optional).
  public func object<Element: Object, KeyType>(ofType type: Element.Type, forPrimaryKey key: KeyType) -> Element? {
    checkThread()
    let schema = registerOrStop(type)
    if schema.primaryKeyProperty == nil { reefStop("'\(schema.className)' does not have a primary key") }
    guard let identity = BSONArgument.bson(typed: key), identity != .null || schema.primaryKeyProperty!.isOptional,
      let document = storedDocument(of: schema, identity: identity)
    else { return nil }
    return object(type, schema: schema, document: document)
  }

  // MARK: Writing documents

  /// The context values are encoded in for a change.
  func writeContext(
    path: [PathStep], attachments: Attachments? = nil, policy: UpdatePolicy = .error
  ) -> _WriteContext {
    _WriteContext(reef: self, attachments: attachments, path: path, policy: policy)
  }

  /// Replaces a stored document (a managed object's change).
  func replaceDocument(_ schema: ObjectSchema, id: BSON, with document: Document) {
    guard let writeTransaction else { return }
    do {
      try writeTransaction.collection(schema.className).replaceDocument(forID: id, with: document)
    } catch {
      if error.kind == .duplicateKey {
        record(ReefError(.primaryKeyExists, error.message, type: schema.className, primaryKey: id, storeError: error))
      } else {
        record(error, type: schema.className)
      }
    }
    noteChange(schema.className, structural: false)
  }

  /// Notes that this `Reef` changed a collection (managed objects read again; results of the
  /// collection run again); nil for changes to several collections.
  func noteChange(_ collection: String?, structural: Bool) {
    version += 1
    guard let collection else {
      newSnapshot()
      return
    }
    // One lookup, changed in place.
    writeCounts[collection, default: (0, 0)].all += 1
    if structural { writeCounts[collection, default: (0, 0)].structural += 1 }
  }

  /// Notes that every state read before may be stale.
  private func newSnapshot() {
    version += 1
    snapshotVersion += 1
    writeCounts = [:]
  }

  /// What results over a collection depend on: the snapshot and this `Reef`'s writes to the
  /// collection (only inserts and deletes for results without a condition or sort).
  func resultsVersion(_ collection: String, structuralOnly: Bool) -> [Int] {
    let counts = writeCounts[collection] ?? (0, 0)
    return [snapshotVersion, structuralOnly ? counts.structural : counts.all]
  }

  /// Objects being added in the current change, with their identities.
  func identityBeingAdded(_ object: ObjectBase) -> BSON? {
    let key = ObjectIdentifier(object)
    return adding.last { $0.object == key }?.identity
  }
  func beginAdding(_ object: ObjectBase, identity: BSON) { adding.append((ObjectIdentifier(object), identity)) }
  func endAdding(_ object: ObjectBase) {
    let key = ObjectIdentifier(object)
    if let index = adding.lastIndex(where: { $0.object == key }) { adding.remove(at: index) }
  }

  /// Writes a copy of the file, as of this `Reef`'s latest commit, to `fileURL` (which must not
  /// exist); open it with a configuration of its own.
  /// - Throws: ``ReefError/Kind/store`` when the file exists (code ``ReefError/Code/fileExists``),
  ///   its directory does not (``ReefError/Code/fileNotFound``) or it cannot be written.
  public func writeCopy(toFile fileURL: URL) throws {
    checkThread()
    try storeCall { () throws(StoreError) in try store.writeCopy(to: fileURL.path) }
  }

  /// Writes a copy of the file, as of this `Reef`'s latest commit, to the file of
  /// `configuration` (which must not exist): Realm's `writeCopy(configuration:)`. Open it with
  /// that configuration.
  /// - Parameter configuration: The configuration whose file is written (its
  ///   ``Configuration/fileURL``, or an in-memory one's temporary file).
  /// - Throws: as ``writeCopy(toFile:)``.
  public func writeCopy(configuration: Configuration) throws {
    try writeCopy(toFile: URL(fileURLWithPath: configuration.path))
  }

  /// Deletes every file of a configuration's store, as Realm's `deleteFiles(for:)`.
  /// - Returns: whether the store file existed.
  /// - Throws: ``ReefError/Kind/alreadyOpen`` (code ``ReefError/Code/alreadyOpen``) when this
  ///   process has the store open (a `Reef`, or an object or result of one, still lives);
  ///   ``ReefError/Kind/store`` when a file cannot be removed (its code says why). The store
  ///   must not be open in another process either, which is not checked.
  @discardableResult
  public static func deleteFiles(for configuration: Configuration) throws -> Bool {
    let path = configuration.path
    if Store.openStore(at: path) != nil {
      throw ReefError(
        .alreadyOpen,
        "Cannot delete the files of \(path): it is open in this process (release its Reefs, and the objects and results read from them, first)"
      )
    }
    return try storeCall { () throws(StoreError) in try Store.deleteFiles(at: path) }
  }
}
