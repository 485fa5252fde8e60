import ReefBSON

/// A managed collection property's field: its elements as of the `Reef`'s current version
/// (computed once per version), and changes written back into the owner's document.
final class FieldAccess {
  let owner: ManagedObject
  let property: Property
  private var cache: (version: Int, elements: [Document.Element])?
  /// The place of a list of embedded objects, looked up once (its elements' accessors share it).
  private var lazyPlace: ListPlace?

  init(owner: ManagedObject, property: Property) {
    self.owner = owner
    self.property = property
  }

  /// The elements of the array (or, for a map, the subdocument) stored in the field; none when
  /// the field is missing or null.
  func elements() -> [Document.Element] {
    let gate = owner.reef.enterSnapshot()
    defer { gate?.unlock() }
    if let cache, cache.version == owner.reef.version { return cache.elements }
    let document = owner.liveDocument()
    var elements: [Document.Element] = []
    if let field = document.element(forKey: property.columnName) {
      let expected: BSONType = property.isMap ? .document : .array
      if field.type == expected, let inner = field.document {
        elements = Array(inner)
        if property.isLink && !property.isMap, let target = property.objectClass.map(ObjectSchema.of) {
          // A key whose object is gone (deleted by a program that did not know this list, or
          // missing from imported data) is not an element. (A map keeps the key, whose value
          // then reads as nil, as in Realm.)
          let reef = owner.reef
          elements = elements.filter { element in
            do {
              return try reef.document(of: target, identity: element.value) != nil
            } catch {
              reefStop("reading \(owner.schema.className).\(property.name) failed: \(error)")
            }
          }
        }
      } else if field.type != .null {
        reefStop(owner.mismatch(property, field))
      }
    }
    cache = (owner.reef.version, elements)
    return elements
  }

  /// The element decoded as `Element`, failing with the mismatch message when it does not fit.
  func decode<Element: _ReefValue>(_ element: Document.Element, at position: Int, as type: Element.Type) -> Element {
    // An embedded element's accessor takes a token of its list's place, shared by the readers
    // of a frozen Reef.
    let gate = owner.reef.enterSnapshot()
    defer { gate?.unlock() }
    var context =
      property.isMap
      ? _ReadContext(owner: owner, field: property.columnName, index: nil, key: element.key)
      : _ReadContext(owner: owner, field: property.columnName, index: position)
    if property.isEmbedded && !property.isMap { context.place = place() }
    guard let value = Element._reefDecode(element, context) else {
      reefStop(owner.mismatch(property, element) + " (element \(position))")
    }
    return value
  }

  /// The place of this list of embedded objects (the same the `Reef` hands out for its key while
  /// anyone holds it).
  private func place() -> ListPlace {
    let gate = owner.reef.enterSnapshot()
    defer { gate?.unlock() }
    if let lazyPlace { return lazyPlace }
    let place = owner.reef.listPlace(owner.placeKey.child(property.columnName))
    lazyPlace = place
    return place
  }

  /// The context new elements are encoded in.
  private func writeContext(_ attachments: Attachments) -> _WriteContext {
    owner.reef.writeContext(path: [PathStep(field: property.columnName, index: nil)], attachments: attachments)
  }

  /// Changes the stored array: `body` edits the elements (encoding new ones with the context it
  /// is given). In a list of embedded objects the elements that stay keep their tokens, so their
  /// accessors follow them; a removed or replaced element's accessors are invalidated. A broken
  /// rule is recorded for the write transaction to throw.
  func changeArray(_ body: (inout [ListSlot], _WriteContext) throws -> Void) {
    let reef = owner.reef
    owner.requireWritable()
    let values = elements().map(\.value)
    let place = property.isEmbedded ? place() : nil
    let tokens = place?.tokens(count: values.count, fresh: reef.freshListToken)
    var slots = values.indices.map { ListSlot(token: tokens?[$0], value: values[$0]) }
    let attachments = Attachments()
    do {
      try body(&slots, writeContext(attachments))
    } catch {
      record(error)
      return
    }
    owner.setField(property.columnName, .array(BSONArray(slots.map(\.value))))
    if let place { reef.changeListPlace(place, to: slots.map { $0.token ?? reef.freshListToken() }) }
    attachments.attach(to: owner)
  }

  /// Changes the stored subdocument of a map: `body` edits the pairs in order (encoding a new
  /// value at its key's context: `context.at(key:)`). In a map of embedded objects, the values
  /// at `changedKeys` are deleted first: their accessors are invalidated (nil: every value's).
  func changeDocument(changedKeys: [String]?, _ body: (inout [(String, BSON)], _WriteContext) throws -> Void) {
    let reef = owner.reef
    owner.requireWritable()
    var pairs = elements().map { ($0.key, $0.value) }
    if property.isEmbedded {
      let place = owner.placeKey.child(property.columnName)
      if let changedKeys {
        for key in changedKeys { reef.bumpEpoch(place.entry(key)) }
      } else {
        reef.bumpEpoch(place)
      }
    }
    let attachments = Attachments()
    do {
      try body(&pairs, writeContext(attachments))
    } catch {
      record(error)
      return
    }
    owner.setField(property.columnName, .document(Document(pairs)))
    attachments.attach(to: owner)
  }

  private func record(_ error: any Error) {
    if let error = error as? ReefError {
      owner.reef.record(error)
    } else {
      owner.reef.record(ReefError(.invalidValue, "\(error)", type: owner.schema.className, property: property.name))
    }
  }
}

extension ManagedObject {
  /// The live accessor of a collection property: the one handed out while someone still holds
  /// it (so that `person.dogs` is one list), or a new one made by `make` and attached here.
  func collectionAccessor<C: ManagedCollection>(_ property: Property, make: () -> C) -> C {
    let gate = reef.enterSnapshot()
    defer { gate?.unlock() }
    if let existing = accessor(property.ordinal) as? C { return existing }
    let made = make()
    made.attach(to: self, property: property)
    setAccessor(property.ordinal, made)
    return made
  }
}

/// What `List`, `MutableSet` and `Map` share: the elements of an unmanaged collection, and the
/// field of a managed one. For ReefSwift's own collections.
public class _CollectionAccessor<Stored>: ManagedCollection {
  /// The elements while unmanaged.
  var storage: [Stored] = []
  /// The managed field, once the owning object is in a `Reef`.
  var access: FieldAccess?

  /// An empty, unmanaged collection.
  public init() {}

  func attach(to owner: ManagedObject, property: Property) {
    access = FieldAccess(owner: owner, property: property)
    storage = []
  }

  /// The `Reef` managing the collection, or nil when unmanaged.
  public var reef: Reef? { access?.owner.reef }
  /// Realm's name for ``reef``.
  public var realm: Reef? { reef }
  /// Whether the collection's object has been deleted.
  public var isInvalidated: Bool { access.map { $0.owner.currentDocument() == nil } ?? false }
}
