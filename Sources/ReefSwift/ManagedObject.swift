import ReefBSON
import ReefStore

/// One step from an object to a value inside it: a field and, in an array, the position or, in
/// a map, the key.
struct PathStep: Hashable {
  var field: String
  var index: Int?
  var key: String? = nil
}

/// The state of a managed object: where its document lives and the copy last read of it.
///
/// A top-level object is its collection's document with its `_id`; an embedded object is a
/// subdocument of its parent's (at a field, or at a position of an array field). Reading a
/// property reads the document (once per version of the `Reef`) and the field's bytes; nothing
/// decodes the whole document.
public final class ManagedObject {
  let reef: Reef
  let schema: ObjectSchema
  /// The embedding object, for an embedded object.
  let parent: ManagedObject?
  /// The field of the parent that holds this embedded object ("" for a top-level object).
  let field: String
  /// For an element of a list of embedded objects: the list's place, where ``token`` names this
  /// element whatever its position.
  let place: ListPlace?
  let token: Int
  /// For the value of a map of embedded objects: its key.
  let mapKey: String?
  /// For the value of a map: the epoch of its entry (``placeKey``) when this state was made;
  /// setting or removing the key moves it on, which invalidates this state.
  let entryEpoch: Int
  /// The `_id` of a top-level object.
  let id: BSON
  /// The epoch of this embedded object's place when it was made: overwriting the place (or, for
  /// a list element, the whole list) moves the epoch on, which invalidates this state.
  let epoch: Int
  /// Names this object's place (see ``EpochKey``); made when first needed.
  var epochKey: EpochKey {
    let gate = reef.enterSnapshot()
    defer { gate?.unlock() }
    if let lazyEpochKey { return lazyEpochKey }
    let key = parent.map { $0.placeKey.child(field) } ?? EpochKey(type: schema.className, id: id, path: "")
    lazyEpochKey = key
    return key
  }
  private var lazyEpochKey: EpochKey?
  /// Names this object for the places of its own embedded objects: ``epochKey``, and for a list
  /// element its token too (so that its places move with it), for a map's value its key; made
  /// when first needed.
  var placeKey: EpochKey {
    let gate = reef.enterSnapshot()
    defer { gate?.unlock() }
    if let lazyPlaceKey { return lazyPlaceKey }
    let key =
      if let mapKey { epochKey.entry(mapKey) } else if place != nil { epochKey.element(token) } else { epochKey }
    lazyPlaceKey = key
    return key
  }
  private var lazyPlaceKey: EpochKey?
  private var document: Document?
  private var version = -1
  /// For a top-level object, the `Reef`'s ``Reef/invalidations`` when this state was made: a
  /// later ``Reef/invalidate()`` invalidates it for good.
  private let generation: Int
  /// Live collection accessors handed out, by property ordinal: held weakly, since each holds
  /// this state (a user keeping `person.dogs` keeps the same list).
  private var accessorTable: [Int: WeakAccessor] = [:]
  final class WeakAccessor {
    weak var value: AnyObject?
    init(_ value: AnyObject) { self.value = value }
  }

  /// The property of this object's schema at `ordinal` (for `@Persisted`'s inlined accessors).
  @usableFromInline func property(_ ordinal: Int) -> Property { schema.property(ordinal: ordinal) }

  /// The accessor handed out for a collection property, while someone holds it.
  func accessor(_ ordinal: Int) -> AnyObject? {
    let gate = reef.enterSnapshot()
    defer { gate?.unlock() }
    return accessorTable[ordinal]?.value
  }
  /// Remembers the accessor handed out for a collection property.
  func setAccessor(_ ordinal: Int, _ accessor: AnyObject) {
    let gate = reef.enterSnapshot()
    defer { gate?.unlock() }
    accessorTable[ordinal] = WeakAccessor(accessor)
  }

  init(reef: Reef, schema: ObjectSchema, id: BSON, document: Document?) {
    self.reef = reef
    self.schema = schema
    self.parent = nil
    field = ""
    place = nil
    token = 0
    mapKey = nil
    entryEpoch = 0
    self.id = id
    self.document = document
    self.version = document == nil ? -1 : reef.version
    epoch = 0
    generation = reef.invalidations
  }

  /// The state of the embedded object at `step` of `parent`: at a field, the element now at a
  /// position of a list (which it then follows), or the value at a key of a map.
  ///
  /// `knownPlace` is the list's place when the caller has it already (see ``Attachments``).
  /// `document` is the subdocument as of the `Reef`'s current version, when the caller read it.
  init(
    reef: Reef, schema: ObjectSchema, parent: ManagedObject, step: PathStep, knownPlace: ListPlace? = nil,
    document: Document? = nil
  ) {
    self.reef = reef
    if let document {
      self.document = document
      version = reef.version
    }
    generation = reef.invalidations
    self.schema = schema
    self.parent = parent
    field = step.field
    self.id = parent.id
    // The key is made here only when something needs it now: while no place has been
    // overwritten, every epoch is 0 (most objects read never need their key).
    let needsKey = step.key != nil || (step.index != nil && knownPlace == nil) || reef.hasEpochs
    let epochKey = needsKey ? parent.placeKey.child(step.field) : nil
    lazyEpochKey = epochKey
    epoch = epochKey.map { reef.epoch($0) } ?? 0
    mapKey = step.key
    if let key = step.key, let epochKey {
      place = nil
      token = 0
      let placeKey = epochKey.entry(key)
      lazyPlaceKey = placeKey
      entryEpoch = reef.epoch(placeKey)
    } else if let index = step.index, let place = knownPlace ?? epochKey.map({ reef.listPlace($0) }) {
      token = place.token(at: index, fresh: reef.freshListToken)
      self.place = place
      entryEpoch = 0
    } else {
      place = nil
      token = 0
      entryEpoch = 0
    }
  }

  /// Where this embedded object is in its parent now: its field and, in a list, its current
  /// position; nil for a list element that left its list.
  var step: PathStep? {
    let gate = reef.enterSnapshot()
    defer { gate?.unlock() }
    guard let place else { return PathStep(field: field, index: nil, key: mapKey) }
    return place.position(of: token).map { PathStep(field: field, index: $0) }
  }

  /// The top-level object this state belongs to.
  var top: ManagedObject { parent?.top ?? self }

  /// A string that names this object in its file: type, `_id` and path.
  var identityPath: String {
    guard let parent else { return "\(schema.className)\u{0}\(id.extendedJSON(.canonical))" }
    // A list element by its position (the same in every `Reef` of the file); one that left its
    // list, by its token.
    let element =
      mapKey.map { "\u{2}\($0)" } ?? (place == nil ? "" : (step?.index.map { ".\($0)" } ?? "\u{1}\(token)"))
    return parent.identityPath + "\u{0}\(field)" + element
  }

  /// The document as of the `Reef`'s current version, or nil when the object is gone.
  func currentDocument() -> Document? {
    reef.checkThread()
    let gate = reef.enterSnapshot()
    defer { gate?.unlock() }
    if version == reef.version, let document { return document }
    if parent == nil && generation != reef.invalidations { return nil }
    let fresh: Document?
    if let parent {
      if (reef.hasEpochs ? reef.epoch(epochKey) : 0) != epoch || (mapKey != nil && reef.epoch(placeKey) != entryEpoch) {
        fresh = nil
      } else if let step, let parentDocument = parent.currentDocument(),
        let element = parentDocument.element(forKey: step.field)
      {
        if let index = step.index {
          // Walks to the element without decoding the others.
          if let array = element.document, let item = array.dropFirst(index).first(where: { _ in true }),
            let sub = item.document, item.type == .document
          {
            fresh = sub
          } else {
            fresh = nil
          }
        } else if let key = step.key {
          let value = element.type == .document ? element.document?.element(forKey: key) : nil
          fresh = value?.type == .document ? value?.document : nil
        } else {
          fresh = element.document
        }
      } else {
        fresh = nil
      }
    } else {
      fresh = try? reef.transaction().collection(schema.className).document(forID: id)
    }
    guard let fresh else {
      // Not sticky: a delete rolled back brings the object back.
      document = nil
      return nil
    }
    document = fresh
    version = reef.version
    return fresh
  }

  /// The document, or a stop in Realm's words when the object is gone.
  @usableFromInline func liveDocument() -> Document {
    guard let document = currentDocument() else {
      reefStop("Object has been deleted or invalidated (\(schema.className) with _id \(id))")
    }
    return document
  }

  /// Reads a property, stopping with a message that names the document when the stored
  /// value does not fit the property.
  @inlinable
  func read<V: _ReefValue>(_ property: Property, as type: V.Type) -> V {
    let document = liveDocument()
    let element = document.element(forKey: property.columnName)
    guard let value = V._reefDecode(element, _ReadContext(owner: self, field: property.columnName, index: nil)) else {
      reefStop(mismatch(property, element))
    }
    return value
  }

  /// The message for a stored value that does not fit its property.
  @usableFromInline func mismatch(_ property: Property, _ element: Document.Element?) -> String {
    let found = element.map { "\($0.type.name) \($0.value)" } ?? "nothing (the field is missing)"
    let place = parent == nil ? "" : " at \(pathDescription)"
    return
      "\(top.schema.className) with _id \(id)\(place): field \(property.columnName) holds \(found), expected \(property.typeDescription) (\(schema.className).\(property.name))"
  }

  /// The dotted path of this object from its top-level document ("" for the top).
  var pathDescription: String {
    guard let parent else { return "" }
    let mine =
      field + (mapKey.map { ".\($0)" } ?? (place == nil ? "" : ".\(step?.index.map(String.init) ?? "(removed)")"))
    let above = parent.pathDescription
    return above.isEmpty ? mine : "\(above).\(mine)"
  }

  /// Stops, with Realm's message, unless this object can be changed: first when it is deleted or
  /// invalidated ("Object has been deleted or invalidated."), then outside a write transaction,
  /// in Realm's order.
  func requireWritable() {
    if !reef.isInWriteTransaction && !reef.isFrozen {
      reef.checkThread()
      if currentDocument() == nil {
        reefStop("Object has been deleted or invalidated (\(schema.className) with _id \(id))")
      }
    }
    reef.requireWriteTransaction()
  }

  /// Writes a property of this object, in the `Reef`'s write transaction.
  func write<V: _ReefValue>(_ property: Property, _ value: V) {
    requireWritable()
    var document = liveDocument()
    if property.isPrimary && parent == nil {
      let old = document.element(forKey: property.columnName)
      let new = try? value._reefEncode(reef.writeContext(path: []))
      if old.map({ new != nil && $0.equals(new!) }) != true {
        reef.record(
          ReefError(
            .primaryKeyChanged, "the primary key of a managed object cannot be changed", type: schema.className,
            property: property.name, primaryKey: id))
      }
      return
    }
    if property.isEmbedded { reef.bumpEpoch(placeKey.child(property.columnName)) }
    let attachments = Attachments()
    let context = reef.writeContext(path: [PathStep(field: property.columnName, index: nil)], attachments: attachments)
    let bson: BSON
    do {
      bson = try value._reefEncode(context)
    } catch {
      reef.record(error)
      return
    }
    if property.isEmbedded, case .null = bson, document.element(forKey: property.columnName) == nil { return }
    document.set(bson, forKey: property.columnName)
    store(document)
    attachments.attach(to: self)
  }

  /// Writes this object's new document: into its collection, or into its parent's.
  func store(_ newDocument: Document) {
    if let parent {
      // Every caller read the live document first, which stops for an element that left its list.
      guard let step else { return }
      parent.replaceChild(step, with: newDocument)
    } else {
      reef.replaceDocument(schema, id: id, with: newDocument)
    }
    document = newDocument
    version = reef.version
  }

  /// Replaces the subdocument at `step` of this object's document.
  func replaceChild(_ step: PathStep, with child: Document) {
    var document = liveDocument()
    if let index = step.index {
      guard let element = document.element(forKey: step.field), let array = element.document else { return }
      var values = Array(array).map(\.value)
      guard index < values.count else { return }
      values[index] = .document(child)
      document.set(.array(BSONArray(values)), forKey: step.field)
    } else if let key = step.key {
      guard let element = document.element(forKey: step.field), element.type == .document,
        var map = element.document
      else { return }
      map.set(.document(child), forKey: key)
      document.set(.document(map), forKey: step.field)
    } else {
      document.set(.document(child), forKey: step.field)
    }
    store(document)
  }

  /// Stores a new value for a field of this object (a list's array after a change).
  func setField(_ field: String, _ value: BSON) {
    requireWritable()
    var document = liveDocument()
    document.set(value, forKey: field)
    store(document)
  }

  /// Makes a Swift object for this state: the parent of an embedded object.
  func makeObject() -> ObjectBase {
    let object = reef.construct(schema.objectClass)
    object._managed = self
    return object
  }

  /// Forgets the document read (its object was deleted through it).
  func invalidate() {
    document = nil
    version = -1
  }
}

/// Embedded objects written in one change, made managed once the change is stored.
final class Attachments {
  /// Each object with its path: the steps above its place (`base`, empty for an object directly
  /// in the root: no array is made for it) and its place's own step.
  var items: [(object: ObjectBase, base: [PathStep], last: PathStep)] = []
  /// The objects recorded, once there are many (a few are searched in ``items``).
  private var seen: Set<ObjectIdentifier> = []

  /// Records an embedded object written at the path `base` + `last`.
  /// - Throws: ``ReefError/Kind/embeddedObjectHasParent`` for an object written twice in the
  ///   change (it would have two parents, or two places in one).
  func add(_ object: ObjectBase, base: [PathStep], last: PathStep) throws(ReefError) {
    let isNew: Bool
    if items.count < 16 {
      isNew = !items.contains { $0.object === object }
    } else {
      if seen.isEmpty { seen = Set(items.lazy.map { ObjectIdentifier($0.object) }) }
      isNew = seen.insert(ObjectIdentifier(object)).inserted
    }
    guard isNew else {
      throw ReefError(
        .embeddedObjectHasParent,
        "an embedded object has exactly one parent: this \(object.objectSchema.className) is written twice in one change; write a copy (\(object.objectSchema.className)(value: object))",
        type: object.objectSchema.className)
    }
    items.append((object, base, last))
  }

  /// Forgets the objects recorded, keeping the room they took.
  func reset() {
    items.removeAll(keepingCapacity: true)
    seen.removeAll()
  }

  /// Gives each embedded object its managed state under `root`, parents before children.
  func attach(to root: ManagedObject) {
    if items.allSatisfy({ $0.base.isEmpty }) {
      // The usual case: embedded objects directly in the root (no table of parents to build).
      // Consecutive items are mostly of one class, and of one list: its schema and its place
      // are looked up once.
      var schema: (type: ObjectIdentifier, schema: ObjectSchema)?
      var list: (field: String, place: ListPlace)?
      for (object, _, step) in items {
        let type = ObjectIdentifier(Swift.type(of: object))
        if schema?.type != type { schema = (type, object.objectSchema) }
        var place: ListPlace?
        if step.index != nil {
          if list?.field != step.field { list = (step.field, root.reef.listPlace(root.placeKey.child(step.field))) }
          place = list?.place
        }
        object.becomeManaged(
          ManagedObject(reef: root.reef, schema: schema!.schema, parent: root, step: step, knownPlace: place))
      }
      return
    }
    var states: [[PathStep]: ManagedObject] = [[]: root]
    for (object, base, last) in items.sorted(by: { $0.base.count < $1.base.count }) {
      guard let parent = states[base] ?? (base.isEmpty ? root : nil) else { continue }
      let state = ManagedObject(reef: root.reef, schema: object.objectSchema, parent: parent, step: last)
      object.becomeManaged(state)
      states[base + [last]] = state
    }
  }
}

/// Names a place that holds embedded objects: a top-level object and a path of fields.
/// Overwriting the place moves its epoch on (``Reef/bumpEpoch(_:)``), which invalidates the
/// accessors made for what was there.
struct EpochKey: Hashable {
  let type: String
  let id: BSON
  let path: String
  func child(_ field: String) -> EpochKey { EpochKey(type: type, id: id, path: path + "\u{0}" + field) }
  /// The element with `token` of the list named by this key.
  func element(_ token: Int) -> EpochKey { EpochKey(type: type, id: id, path: path + "\u{1}\(token)") }
  /// The entry at `key` of the map named by this key.
  func entry(_ key: String) -> EpochKey { EpochKey(type: type, id: id, path: path + "\u{2}" + key) }
}
