import ReefBSON
import ReefQuery
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
/// per version of the `Reef`, so indexing is O(1). Changing a managed list needs a write
/// transaction. As in Realm, an index out of bounds stops the program with Realm's message
/// ("Index 5 is out of bounds (must be less than 2).").
public final class List<Element: _ReefCollectionElement>: _CollectionAccessor<Element>, RandomAccessCollection,
  MutableCollection, CustomStringConvertible
{
  public typealias SubSequence = Slice<List>

  /// An empty, unmanaged list.
  public override init() { super.init() }

  public var startIndex: Int { 0 }
  public var endIndex: Int { count }

  /// Iterates the list as it was when the loop began (Realm's enumeration of a snapshot): a
  /// loop that changes the list sees each element that was there once, and ends.
  public func makeIterator() -> ReefIterator<Element> { ReefIterator(access: access, unmanaged: storage) }

  /// The number of elements.
  public var count: Int { access?.elements().count ?? storage.count }

  /// The element at `position`. Setting it needs a write transaction when the list is managed.
  ///
  /// A position out of bounds stops with Realm's message.
  public subscript(position: Int) -> Element {
    get {
      guard let access else {
        CollectionElements.checkIndex(position, below: storage.count)
        return storage[position]
      }
      let elements = access.elements()
      CollectionElements.checkIndex(position, below: elements.count)
      return access.decode(elements[position], at: position, as: Element.self)
    }
    set {
      guard let access else {
        CollectionElements.checkIndex(position, below: storage.count)
        storage[position] = newValue
        return
      }
      access.changeArray { values, context in
        CollectionElements.checkIndex(position, below: values.count)
        values[position] = ListSlot(try newValue._reefEncode(context.at(index: position)))
      }
    }
  }

  /// The elements in `bounds` (a live view of the list), or, set, the list with `bounds`
  /// replaced by the elements given (which may be more or fewer).
  ///
  /// - Complexity: O(*n*) to set.
  public subscript(bounds: Range<Int>) -> Slice<List> {
    get {
      CollectionElements.checkNotNegative(bounds.lowerBound)
      if bounds.upperBound > count {
        reefStop("Index \(bounds.upperBound - 1) is out of bounds (must be less than \(count)).")
      }
      return Slice(base: self, bounds: bounds)
    }
    set { replaceSubrange(bounds, with: Array(newValue)) }
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

  /// Edits the elements, unmanaged or managed, as one change: `check` is given the count first
  /// (to stop on a bad index), then `unmanaged` or `managed` edits the elements; `managed`
  /// encodes new elements in the context it is given (`context.at(index:)`).
  private func edit(
    _ check: (Int) -> Void, unmanaged: (inout [Element]) -> Void,
    managed: (inout [ListSlot], _WriteContext) throws -> Void
  ) {
    guard let access else {
      check(storage.count)
      unmanaged(&storage)
      return
    }
    access.changeArray { values, context in
      check(values.count)
      try managed(&values, context)
    }
  }

  // MARK: Adding

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
    // Read first: the sequence may be read from this list.
    let elements = Array(elements)
    guard access != nil else {
      storage.append(contentsOf: elements)
      return
    }
    change { values, encode in
      for element in elements { values.append(try encode(element, values.count)) }
    }
  }

  /// Inserts an element at `index` (from 0 to ``count``).
  ///
  /// An index out of bounds stops with Realm's message.
  public func insert(_ element: Element, at index: Int) {
    insert(contentsOf: CollectionOfOne(element), at: index)
  }

  /// Inserts the elements of a collection at `index` (from 0 to ``count``), in order.
  ///
  /// An index out of bounds stops with Realm's message.
  /// - Complexity: O(*n* + *m*) for *m* new elements.
  public func insert<C: Swift.Collection>(contentsOf newElements: C, at index: Int) where C.Element == Element {
    let newElements = Array(newElements)
    edit {
      CollectionElements.checkIndex(index, below: $0 + 1)
    } unmanaged: {
      $0.insert(contentsOf: newElements, at: index)
    } managed: { values, context in
      var slots: [ListSlot] = []
      for (offset, element) in newElements.enumerated() {
        slots.append(ListSlot(try element._reefEncode(context.at(index: index + offset))))
      }
      values.insert(contentsOf: slots, at: index)
    }
  }

  // MARK: Removing

  /// Removes the element at `index` (an embedded object is deleted; a linked object is not).
  ///
  /// An index out of bounds stops with Realm's message.
  public func remove(at index: Int) {
    edit {
      CollectionElements.checkIndex(index, below: $0)
    } unmanaged: {
      $0.remove(at: index)
    } managed: { values, _ in
      values.remove(at: index)
    }
  }

  /// Removes the first `number` elements.
  ///
  /// Stops with Realm's message when the list has fewer.
  public func removeFirst(_ number: Int = 1) {
    edit {
      List.checkRemovable(number, count: $0)
    } unmanaged: {
      $0.removeFirst(number)
    } managed: { values, _ in
      values.removeFirst(number)
    }
  }

  /// Removes the last `number` elements.
  ///
  /// Stops with Realm's message when the list has fewer.
  public func removeLast(_ number: Int = 1) {
    edit {
      List.checkRemovable(number, count: $0)
    } unmanaged: {
      $0.removeLast(number)
    } managed: { values, _ in
      values.removeLast(number)
    }
  }

  private static func checkRemovable(_ number: Int, count: Int) {
    CollectionElements.checkNotNegative(number)
    if number > count {
      reefStop(
        "It is not possible to remove more objects (\(number)) from a list than it already contains (\(count)).")
    }
  }

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

  /// Removes the elements in a range (`1..<3`, `1...3`, `list.indices`).
  ///
  /// A range out of bounds stops with Realm's message.
  public func removeSubrange<R: RangeExpression>(_ bounds: R) where R.Bound == Int {
    replaceSubrange(bounds, with: [])
  }

  /// Removes the elements at `offsets` (SwiftUI's `onDelete`).
  public func remove(atOffsets offsets: IndexSet) {
    let count = count
    for offset in offsets { CollectionElements.checkIndex(offset, below: count) }
    edit { _ in
    } unmanaged: { elements in
      for offset in offsets.reversed() { elements.remove(at: offset) }
    } managed: { values, _ in
      for offset in offsets.reversed() { values.remove(at: offset) }
    }
  }

  // MARK: Reordering and replacing

  /// Moves the element at `from` to `to`.
  ///
  /// An index out of bounds stops with Realm's message.
  public func move(from: Int, to: Int) {
    edit { count in
      CollectionElements.checkIndex(from, below: count)
      CollectionElements.checkIndex(to, below: count)
    } unmanaged: {
      $0.insert($0.remove(at: from), at: to)
    } managed: { values, _ in
      values.insert(values.remove(at: from), at: to)
    }
  }

  /// Moves the elements at `offsets`, in ascending order, each in turn to `destination` (to the
  /// last position when `destination` is ``count``), as Realm's `move(fromOffsets:toOffset:)`
  /// does for SwiftUI's `onMove`.
  ///
  /// An offset or destination out of bounds stops with Realm's message.
  public func move(fromOffsets offsets: IndexSet, toOffset destination: Int) {
    for offset in offsets {
      move(from: offset, to: destination >= count ? destination - 1 : destination)
    }
  }

  /// Exchanges two elements.
  ///
  /// An index out of bounds stops with Realm's message.
  public func swapAt(_ index1: Int, _ index2: Int) {
    edit { count in
      CollectionElements.checkIndex(index1, below: count, "index1")
      CollectionElements.checkIndex(index2, below: count, "index2")
    } unmanaged: {
      $0.swapAt(index1, index2)
    } managed: { values, _ in
      values.swapAt(index1, index2)
    }
  }

  /// Replaces the element at `index`.
  ///
  /// An index out of bounds stops with Realm's message.
  public func replace(index: Int, object: Element) { self[index] = object }

  /// Replaces `subrange` (`1..<3`, `1...3`, `list.indices`) with `elements`, which may be more
  /// or fewer.
  ///
  /// A range out of bounds stops with Realm's message.
  /// - Complexity: O(*n* + *m*) for *m* new elements.
  public func replaceSubrange<C: Swift.Collection, R: RangeExpression>(_ subrange: R, with elements: C)
  where C.Element == Element, R.Bound == Int {
    let newElements = Array(elements)
    let count = count
    // The range as it is written, checked before `relative(to:)` clamps or traps.
    let range: Range<Int>
    switch subrange {
    case let closed as ClosedRange<Int>:
      CollectionElements.checkNotNegative(closed.lowerBound)
      CollectionElements.checkIndex(closed.upperBound, below: count)
      range = closed.lowerBound..<closed.upperBound + 1
    case let open as Range<Int>:
      CollectionElements.checkNotNegative(open.lowerBound)
      if open.upperBound > count {
        reefStop("Index \(open.upperBound - 1) is out of bounds (must be less than \(count)).")
      }
      range = open
    default:
      range = subrange.relative(to: self)
    }
    edit { _ in
    } unmanaged: {
      $0.replaceSubrange(range, with: newElements)
    } managed: { values, context in
      var slots: [ListSlot] = []
      for (offset, element) in newElements.enumerated() {
        slots.append(ListSlot(try element._reefEncode(context.at(index: range.lowerBound + offset))))
      }
      values.replaceSubrange(range, with: slots)
    }
  }

  // MARK: Finding

  /// The index of the first element that is `object` (for objects: the same object; for values:
  /// an equal value), or nil.
  /// - Complexity: O(*n*).
  public func index(of object: Element) -> Int? {
    let target = CollectionElements.key(object)
    if case .value(let value) = target, let access {
      return access.elements().firstIndex { compareBSON($0.value, value) == 0 }
    }
    return indices.first { CollectionElements.same(CollectionElements.key(self[$0]), target) }
  }

  /// The index of the first element matching a predicate in Realm's language (`"name == %@"`
  /// for objects, `"self > 5"` for values), or nil.
  ///
  /// An invalid predicate stops with the query's message.
  /// - Complexity: O(*n*).
  public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
    index(matching: .format(predicateFormat, args))
  }

  /// The index of the first element matching an `NSPredicate` (see ``Results/filter(_:)``), or
  /// nil.
  ///
  /// An invalid predicate stops with the query's message.
  /// - Complexity: O(*n*).
  public func index(matching predicate: NSPredicate) -> Int? { index(matching: FilterPredicate(predicate)) }

  private func index(matching predicate: FilterPredicate) -> Int? {
    let matches = CollectionElements.matcher(predicate, objectClass: Element.self as? ObjectBase.Type)
    return indices.first { matches(self[$0]) }
  }

  /// The elements at `indexes`, in order.
  ///
  /// An index out of bounds stops with Realm's message.
  public func objects(at indexes: IndexSet) -> [Element] {
    let count = count
    return indexes.map { index in
      if index >= count { reefStop("Indexes for collection are out of bounds.") }
      return self[index]
    }
  }

  /// Realm's description: `List<Dog> <0x…> (\n\t[0] Dog {…}\n)`, the first 100 elements.
  public var description: String { description(depth: CollectionElements.descriptionDepth) }

  func description(depth: Int) -> String {
    CollectionElements.describe(
      "List", CollectionElements.typeName(Element.self), address: self, count: count, Array(self), depth: depth)
  }
}

extension List: DepthDescribable {}

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
  /// The list's objects that match a predicate, as live ``Results`` in the list's order.
  ///
  /// Stops with Realm's message for an unmanaged list, or an invalid predicate.
  public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
    baseResults(Element.self, kind: "RLMArray").filter(predicateFormat, args)
  }

  /// The list's objects that match an `NSPredicate` (see ``Results/filter(_:)``), as live
  /// ``Results`` in the list's order.
  ///
  /// Stops with Realm's message for an unmanaged list, or an invalid predicate.
  public func filter(_ predicate: NSPredicate) -> Results<Element> {
    baseResults(Element.self, kind: "RLMArray").filter(predicate)
  }

  /// The list's objects sorted by a property (a dotted path through embedded objects or a
  /// link), as live ``Results``.
  ///
  /// Stops with Realm's message for an unmanaged list.
  public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
    baseResults(Element.self, kind: "RLMArray").sorted(byKeyPath: keyPath, ascending: ascending)
  }

  /// The list's objects sorted by several properties, the first deciding first.
  ///
  /// Stops with Realm's message for an unmanaged list.
  public func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Element> where S.Element == SortDescriptor {
    baseResults(Element.self, kind: "RLMArray").sorted(by: sortDescriptors)
  }

  /// The list's objects with only the first of each distinct combination of the properties'
  /// values, in the list's order.
  ///
  /// Stops with Realm's message for an unmanaged list.
  public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
    baseResults(Element.self, kind: "RLMArray").distinct(by: keyPaths)
  }

  /// The smallest value of a property among the list's objects, or nil when there is none.
  ///
  /// A name that is not a property stops with Realm's message.
  public func min<T: _ReefScalar>(ofProperty property: String) -> T? {
    guard access != nil else {
      return CollectionElements.minimum(
        CollectionElements.propertyValues(property, of: storage, objectClass: Element.self), as: T.self)
    }
    return baseResults(Element.self, kind: "RLMArray").min(ofProperty: property)
  }

  /// The largest value of a property among the list's objects, or nil when there is none.
  ///
  /// A name that is not a property stops with Realm's message.
  public func max<T: _ReefScalar>(ofProperty property: String) -> T? {
    guard access != nil else {
      return CollectionElements.maximum(
        CollectionElements.propertyValues(property, of: storage, objectClass: Element.self), as: T.self)
    }
    return baseResults(Element.self, kind: "RLMArray").max(ofProperty: property)
  }

  /// The sum of a numeric property over the list's objects (each counted as often as the list
  /// holds it).
  ///
  /// A name that is not a property stops with Realm's message.
  public func sum<T: _ReefScalar & AdditiveArithmetic>(ofProperty property: String) -> T {
    guard access != nil else {
      return CollectionElements.sum(
        CollectionElements.propertyValues(property, of: storage, objectClass: Element.self), as: T.self)
    }
    return baseResults(Element.self, kind: "RLMArray").sum(ofProperty: property)
  }

  /// The average of a numeric property over the list's objects, or nil when there is none.
  ///
  /// A name that is not a property stops with Realm's message.
  public func average<T: BinaryFloatingPoint>(ofProperty property: String) -> T? {
    guard access != nil else {
      return CollectionElements.average(
        CollectionElements.propertyValues(property, of: storage, objectClass: Element.self), as: T.self)
    }
    return baseResults(Element.self, kind: "RLMArray").average(ofProperty: property)
  }
}

extension List where Element: _ReefScalar {
  /// The smallest element, or nil for an empty list.
  /// - Complexity: O(*n*).
  public func min() -> Element? { CollectionElements.minimum(storedValues, as: Element.self) }

  /// The largest element, or nil for an empty list.
  /// - Complexity: O(*n*).
  public func max() -> Element? { CollectionElements.maximum(storedValues, as: Element.self) }

  /// The average of the elements, or nil for an empty list.
  /// - Complexity: O(*n*).
  public func average<T: BinaryFloatingPoint>() -> T? { CollectionElements.average(storedValues, as: T.self) }

  /// The elements' stored values.
  private var storedValues: [BSON] {
    guard let access else { return CollectionElements.storedValues(storage) }
    return access.elements().map(\.value).filter { $0 != .null }
  }
}

extension List where Element: _ReefScalar & AdditiveArithmetic {
  /// The sum of the elements (zero for an empty list).
  /// - Complexity: O(*n*).
  public func sum() -> Element { reduce(.zero, +) }
}

extension List: Equatable {
  /// Whether two lists are the same: the same managed list (the same property of the same
  /// object of the same file), or two unmanaged lists with the same elements (objects compared
  /// by identity), as Realm compares them.
  public static func == (lhs: List, rhs: List) -> Bool { lhs.isEqual(rhs) }

  /// Realm's spelling of `==`, for any value.
  public func isEqual(_ object: Any?) -> Bool {
    guard let other = object as? List else { return false }
    if other === self { return true }
    switch (access, other.access) {
    case (nil, nil):
      return storage.count == other.storage.count
        && zip(storage, other.storage).allSatisfy { CollectionElements.same($0, $1) }
    case (let a?, let b?):
      return a.property === b.property && a.owner.reef.store === b.owner.reef.store
        && a.owner.identityPath == b.owner.identityPath
    default:
      return false
    }
  }
}
