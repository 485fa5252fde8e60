import ReefBSON
import ReefStore

/// A collection accessor that starts unmanaged (holding its elements) and becomes managed when
/// its object is added.
protocol ManagedCollection: AnyObject {
  func attach(to owner: ManagedObject, property: Property)
}

/// An ordered list of values, embedded objects or links: Realm's `List`, stored as a BSON array
/// in its object's document (an array of subdocuments for embedded objects, of primary keys
/// for links).
///
/// ```swift
/// class Business: Object {
///     @Persisted var addresses: List<Address>   // embedded: an array of subdocuments
///     @Persisted var dogs: List<Dog>            // links: an array of Dog primary keys
///     @Persisted var tags: List<String>
/// }
/// ```
/// A managed list reads its object's current document; its element positions are computed once
/// per version of the `Reef`, so indexing is O(1).
public final class List<Element: _ReefCollectionElement>: RandomAccessCollection, MutableCollection, ManagedCollection,
  CustomStringConvertible
{
  private var storage: [Element] = []
  private var owner: ManagedObject?
  private var property: Property?
  private var cache: (version: Int, elements: [Document.Element])?

  /// An empty, unmanaged list.
  public init() {}

  func attach(to owner: ManagedObject, property: Property) {
    self.owner = owner
    self.property = property
    storage = []
  }

  /// The `Reef` managing the list, or nil when unmanaged.
  public var reef: Reef? { owner?.reef }
  /// Realm's name for ``reef``.
  public var realm: Reef? { reef }
  /// Whether the list's object has been deleted.
  public var isInvalidated: Bool { owner.map { $0.currentDocument() == nil } ?? false }

  /// The stored elements of a managed list, positions computed once per version.
  private func elements(_ owner: ManagedObject, _ property: Property) -> [Document.Element] {
    if let cache, cache.version == owner.reef.version { return cache.elements }
    let document = owner.liveDocument()
    var elements: [Document.Element] = []
    if let field = document.element(forKey: property.columnName) {
      if let array = field.document {
        elements = Array(array)
      } else if field.type != .null {
        preconditionFailure(owner.mismatch(property, field))
      }
    }
    cache = (owner.reef.version, elements)
    return elements
  }

  public var startIndex: Int { 0 }
  public var endIndex: Int { count }

  /// The number of elements.
  public var count: Int {
    guard let owner, let property else { return storage.count }
    return elements(owner, property).count
  }

  /// The element at `position`. Setting it needs a write transaction when the list is managed.
  public subscript(position: Int) -> Element {
    get {
      guard let owner, let property else { return storage[position] }
      let element = elements(owner, property)[position]
      let context = _ReadContext(owner: owner, field: property.columnName, index: position)
      guard let value = Element._reefDecode(element, context) else {
        preconditionFailure(owner.mismatch(property, element) + " (element \(position))")
      }
      return value
    }
    set {
      guard owner != nil else {
        storage[position] = newValue
        return
      }
      change { values, encode in
        values[position] = try encode(newValue, position)
        return property?.isEmbedded == true
      }
    }
  }

  /// Changes a managed list: `body` edits the stored values (with `encode` for new elements) and
  /// says whether positions of embedded objects moved or went (their accessors are invalidated).
  private func change(_ body: (inout [BSON], (Element, Int) throws(ReefError) -> BSON) throws -> Bool) {
    guard let owner, let property else { return }
    owner.reef.requireWriteTransaction()
    var values = elements(owner, property).map(\.value)
    let attachments = Attachments()
    let context = owner.reef.writeContext(
      path: [PathStep(field: property.columnName, index: nil)], attachments: attachments)
    do {
      let invalidates = try body(&values) { (element, index) throws(ReefError) in
        try element._reefEncode(context.at(index: index))
      }
      if invalidates && property.isEmbedded { owner.reef.bumpEpoch(owner.epochKey + "\u{0}" + property.columnName) }
    } catch let error as ReefError {
      owner.reef.record(error)
      return
    } catch {
      owner.reef.record(ReefError(.invalidValue, "\(error)", type: owner.schema.className, property: property.name))
      return
    }
    owner.setField(property.columnName, .array(BSONArray(values)))
    attachments.attach(to: owner)
  }

  /// Appends an element (an unmanaged object is added, an unmanaged embedded object embedded).
  public func append(_ element: Element) {
    guard owner != nil else {
      storage.append(element)
      return
    }
    change { values, encode in
      values.append(try encode(element, values.count))
      return false
    }
  }

  /// Appends the elements of a sequence.
  public func append<S: Sequence>(objectsIn elements: S) where S.Element == Element {
    guard owner != nil else {
      storage.append(contentsOf: elements)
      return
    }
    change { values, encode in
      for element in elements { values.append(try encode(element, values.count)) }
      return false
    }
  }

  /// Inserts an element at `index`.
  public func insert(_ element: Element, at index: Int) {
    guard owner != nil else {
      storage.insert(element, at: index)
      return
    }
    change { values, encode in
      precondition(index >= 0 && index <= values.count, "Index \(index) is out of bounds (count \(values.count))")
      values.insert(try encode(element, index), at: index)
      return true
    }
  }

  /// Removes the element at `index` (an embedded object is deleted; a linked object is not).
  public func remove(at index: Int) {
    guard owner != nil else {
      storage.remove(at: index)
      return
    }
    change { values, _ in
      precondition(index >= 0 && index < values.count, "Index \(index) is out of bounds (count \(values.count))")
      values.remove(at: index)
      return true
    }
  }

  /// Removes the last element.
  public func removeLast() { remove(at: count - 1) }

  /// Removes every element.
  public func removeAll() {
    guard owner != nil else {
      storage.removeAll()
      return
    }
    change { values, _ in
      values.removeAll()
      return true
    }
  }

  /// Moves the element at `from` to `to`.
  public func move(from: Int, to: Int) {
    guard owner != nil else {
      storage.insert(storage.remove(at: from), at: to)
      return
    }
    change { values, _ in
      values.insert(values.remove(at: from), at: to)
      return true
    }
  }

  /// Exchanges two elements.
  public func swapAt(_ index1: Int, _ index2: Int) {
    guard owner != nil else {
      storage.swapAt(index1, index2)
      return
    }
    change { values, _ in
      values.swapAt(index1, index2)
      return true
    }
  }

  /// Replaces the element at `index`.
  public func replace(index: Int, object: Element) { self[index] = object }

  /// Replaces `subrange` with `elements`.
  public func replaceSubrange<C: Swift.Collection>(_ subrange: Range<Int>, with elements: C)
  where C.Element == Element {
    guard owner != nil else {
      storage.replaceSubrange(subrange, with: elements)
      return
    }
    change { values, encode in
      var new: [BSON] = []
      for (offset, element) in elements.enumerated() { new.append(try encode(element, subrange.lowerBound + offset)) }
      values.replaceSubrange(subrange, with: new)
      return true
    }
  }

  public var description: String { "List<\(Element.self)> \(Array(self))" }
}

extension List: _Persistable {
  public static var _reefKind: _ReefKind { _ReefKind(.list(Element._reefKind.shape)) }
  public static func _reefDefault() -> List { List() }
  /// Whether the stored element is an array whose elements fit (validation).
  public static func _reefDecode(_ element: Document.Element?, _ context: _ReadContext) -> List? {
    guard let element else { return List() }
    if element.type == .null { return List() }
    guard let array = element.document, element.type == .array else { return nil }
    for (index, item) in array.enumerated()
    where Element._reefDecode(item, _ReadContext(owner: context.owner, field: context.field, index: index)) == nil {
      return nil
    }
    return List()
  }
  public func _reefEncode(_ context: _WriteContext) throws(ReefError) -> BSON {
    var values: [BSON] = []
    for (index, element) in enumerated() { values.append(try element._reefEncode(context.at(index: index))) }
    return .array(BSONArray(values))
  }
  public static func _reefGet(_ owner: ManagedObject, _ property: Property) -> List {
    if let list = owner.accessors[property.ordinal] as? List { return list }
    let list = List()
    list.attach(to: owner, property: property)
    owner.accessors[property.ordinal] = list
    return list
  }
  public static func _reefSet(_ owner: ManagedObject, _ property: Property, _ value: List) {
    if value === owner.accessors[property.ordinal] { return }
    owner.write(property, List(Array(value)))
  }

  convenience init(_ elements: [Element]) {
    self.init()
    storage = elements
  }
}

extension List where Element: Object {
  /// The list's objects that match a predicate, as ``Results`` (in the store's order unless sorted).
  public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
    objectResults().filter(predicateFormat, args)
  }
  /// The list's objects sorted by a property.
  public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
    objectResults().sorted(byKeyPath: keyPath, ascending: ascending)
  }
  private func objectResults() -> Results<Element> {
    guard let owner, let property else {
      preconditionFailure("filter and sorted need a managed list; an unmanaged List is a Swift collection")
    }
    let identities = elements(owner, property).map(\.value)
    let schema = ObjectSchema.of(Element.self)
    let field =
      schema.primaryKeyIsID || schema.primaryKeyProperty == nil ? "_id" : schema.primaryKeyProperty!.columnName
    return owner.reef.objects(Element.self).filter(document: [field: ["$in": .array(BSONArray(identities))]])
  }
}
