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
public final class List<Element: _ReefCollectionElement>: _CollectionAccessor<Element>, RandomAccessCollection,
  MutableCollection, CustomStringConvertible
{
  /// An empty, unmanaged list.
  public override init() { super.init() }

  public var startIndex: Int { 0 }
  public var endIndex: Int { count }

  /// The number of elements.
  public var count: Int { access?.elements().count ?? storage.count }

  /// The element at `position`. Setting it needs a write transaction when the list is managed.
  public subscript(position: Int) -> Element {
    get {
      guard let access else { return storage[position] }
      let elements = access.elements()
      List.checkIndex(position, count: elements.count)
      return access.decode(elements[position], at: position, as: Element.self)
    }
    set {
      guard let access else {
        storage[position] = newValue
        return
      }
      access.changeArray { values, context in
        List.checkIndex(position, count: values.count)
        values[position] = ListSlot(try newValue._reefEncode(context.at(index: position)))
      }
    }
  }

  /// Changes a managed list (see ``FieldAccess/changeArray(_:)``): `body` edits the elements,
  /// and makes a new one of an element to be stored at a position.
  private func change(_ body: (inout [ListSlot], (Element, Int) throws(ReefError) -> ListSlot) throws -> Void) {
    access?.changeArray { values, context in
      try body(&values) { (element, index) throws(ReefError) in
        ListSlot(try element._reefEncode(context.at(index: index)))
      }
    }
  }

  /// Appends an element (an unmanaged object is added, an unmanaged embedded object embedded).
  public func append(_ element: Element) {
    guard access != nil else {
      storage.append(element)
      return
    }
    change { values, encode in
      values.append(try encode(element, values.count))
    }
  }

  /// Appends the elements of a sequence.
  public func append<S: Sequence>(objectsIn elements: S) where S.Element == Element {
    guard access != nil else {
      storage.append(contentsOf: elements)
      return
    }
    change { values, encode in
      for element in elements { values.append(try encode(element, values.count)) }
    }
  }

  /// Inserts an element at `index`.
  public func insert(_ element: Element, at index: Int) {
    guard access != nil else {
      storage.insert(element, at: index)
      return
    }
    change { values, encode in
      precondition(index >= 0 && index <= values.count, "Index \(index) is out of bounds (count \(values.count))")
      values.insert(try encode(element, index), at: index)
    }
  }

  /// Removes the element at `index` (an embedded object is deleted; a linked object is not).
  public func remove(at index: Int) {
    guard access != nil else {
      storage.remove(at: index)
      return
    }
    change { values, _ in
      precondition(index >= 0 && index < values.count, "Index \(index) is out of bounds (count \(values.count))")
      values.remove(at: index)
    }
  }

  /// Removes the last element.
  public func removeLast() { remove(at: count - 1) }

  /// Removes every element.
  public func removeAll() {
    guard access != nil else {
      storage.removeAll()
      return
    }
    change { values, _ in
      values.removeAll()
    }
  }

  /// Moves the element at `from` to `to`.
  public func move(from: Int, to: Int) {
    guard access != nil else {
      storage.insert(storage.remove(at: from), at: to)
      return
    }
    change { values, _ in
      List.checkIndex(from, count: values.count)
      List.checkIndex(to, count: values.count)
      values.insert(values.remove(at: from), at: to)
    }
  }

  /// Exchanges two elements.
  public func swapAt(_ index1: Int, _ index2: Int) {
    guard access != nil else {
      storage.swapAt(index1, index2)
      return
    }
    change { values, _ in
      List.checkIndex(index1, count: values.count)
      List.checkIndex(index2, count: values.count)
      values.swapAt(index1, index2)
    }
  }

  /// Stops with the index and the count when `index` is not a position of the list.
  private static func checkIndex(_ index: Int, count: Int) {
    precondition(index >= 0 && index < count, "Index \(index) is out of bounds (count \(count))")
  }

  /// Replaces the element at `index`.
  public func replace(index: Int, object: Element) { self[index] = object }

  /// Replaces `subrange` with `elements`.
  public func replaceSubrange<C: Swift.Collection>(_ subrange: Range<Int>, with elements: C)
  where C.Element == Element {
    guard access != nil else {
      storage.replaceSubrange(subrange, with: elements)
      return
    }
    change { values, encode in
      precondition(
        subrange.lowerBound >= 0 && subrange.upperBound <= values.count,
        "Range \(subrange) is out of bounds (count \(values.count))")
      var new: [ListSlot] = []
      for (offset, element) in elements.enumerated() { new.append(try encode(element, subrange.lowerBound + offset)) }
      values.replaceSubrange(subrange, with: new)
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
  /// Writes the array in place.
  public func _reefAppend(_ key: String, to builder: inout DocumentBuilder, _ context: _WriteContext)
    throws(ReefError)
  {
    try builder.appendArray(key) { (array) throws(ReefError) in
      // The elements of an unmanaged list, or a managed list's (read once).
      let elements = access == nil ? storage : Array(self)
      for index in elements.indices { try elements[index]._reefAppend(to: &array, context.at(index: index)) }
    }
  }
  public static func _reefGet(_ owner: ManagedObject, _ property: Property) -> List {
    owner.collectionAccessor(property) { List() }
  }
  public static func _reefSet(_ owner: ManagedObject, _ property: Property, _ value: List) {
    if value === owner.accessor(property.ordinal) { return }
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
    guard let access else {
      preconditionFailure("filter and sorted need a managed list; an unmanaged List is a Swift collection")
    }
    let owner = access.owner
    let identities = access.elements().map(\.value)
    let schema = ObjectSchema.of(Element.self)
    let field =
      schema.primaryKeyIsID || schema.primaryKeyProperty == nil ? "_id" : schema.primaryKeyProperty!.columnName
    return owner.reef.objects(Element.self).filter(document: [field: ["$in": .array(BSONArray(identities))]])
  }
}
