import ReefBSON
import ReefQuery

/// An unordered collection of distinct values or links: Realm's `MutableSet`, stored as a BSON
/// array without duplicates (MongoDB's `$addToSet` form). It cannot hold embedded objects.
///
/// ```swift
/// class Person: Object {
///     @Persisted var tags: MutableSet<String>
/// }
/// try reef.write { person.tags.insert("vip") }
/// ```
/// Equality is BSON's: `1` and `1.0` are the same element; links compare by primary key. As in
/// Realm, the elements can be read by position (`set[0]`), in their stored order: insertion
/// order, which Realm does not promise.
public final class MutableSet<Element: _ReefCollectionElement>: _CollectionAccessor<Element>, RandomAccessCollection,
  CustomStringConvertible
{
  public typealias SubSequence = Slice<MutableSet>

  /// An empty, unmanaged set.
  public override init() { super.init() }

  /// The elements, in stored order.
  private var elements: [Element] {
    guard let access else { return storage }
    return access.elements().enumerated().map { access.decode($1, at: $0, as: Element.self) }
  }

  public var startIndex: Int { 0 }
  public var endIndex: Int { count }

  /// Iterates the set as it was when the loop began (Realm's enumeration of a snapshot): a
  /// loop that changes the set sees each element that was there once, and ends.
  public func makeIterator() -> ReefIterator<Element> { ReefIterator(access: access, unmanaged: storage) }

  /// The number of elements.
  public var count: Int { access?.elements().count ?? storage.count }
  /// Whether the set is empty.
  public var isEmpty: Bool { count == 0 }

  /// The element at `position` in the stored order (which Realm does not promise: do not rely
  /// on it).
  ///
  /// A position out of bounds stops with Realm's message.
  public subscript(position: Int) -> Element {
    guard let access else {
      CollectionElements.checkIndex(position, below: storage.count)
      return storage[position]
    }
    let elements = access.elements()
    CollectionElements.checkIndex(position, below: elements.count)
    return access.decode(elements[position], at: position, as: Element.self)
  }

  /// The key of an element, for comparisons (unmanaged links are compared by instance).
  private func key(_ element: Element) -> CollectionElements.Key { CollectionElements.key(element) }

  /// Whether the set holds `element`.
  /// - Complexity: O(*n*).
  public func contains(_ element: Element) -> Bool {
    let target = key(element)
    if case .value(let value) = target, let access {
      return access.elements().contains { compareBSON($0.value, value) == 0 }
    }
    return elements.contains { CollectionElements.same(key($0), target) }
  }

  /// Inserts `element` unless the set holds it.
  public func insert(_ element: Element) {
    guard let access else {
      if !contains(element) { storage.append(element) }
      return
    }
    access.changeArray { values, context in
      let value = try element._reefEncode(context.at(index: values.count))
      if !values.contains(where: { compareBSON($0.value, value) == 0 }) { values.append(ListSlot(value)) }
    }
  }

  /// Inserts each element of a sequence.
  public func insert<S: Sequence>(objectsIn elements: S) where S.Element == Element {
    for element in Array(elements) { insert(element) }
  }

  /// Removes `element` if the set holds it.
  public func remove(_ element: Element) {
    guard let access else {
      let target = key(element)
      storage.removeAll { CollectionElements.same(key($0), target) }
      return
    }
    // An object that is not in this set's file is not in it (encoding it would add it).
    if let object = element as? ObjectBase, object._managed?.reef.store !== access.owner.reef.store { return }
    access.changeArray { values, context in
      let value = try element._reefEncode(context)
      values.removeAll { compareBSON($0.value, value) == 0 }
    }
  }

  /// Removes every element.
  public func removeAll() {
    guard let access else {
      storage.removeAll()
      return
    }
    access.changeArray { values, _ in values.removeAll() }
  }

  /// Whether the two sets share an element.
  /// - Complexity: O(*n* × *m*).
  public func intersects(_ other: MutableSet) -> Bool { elements.contains { other.contains($0) } }
  /// Whether every element is in `other`.
  /// - Complexity: O(*n* × *m*).
  public func isSubset(of other: MutableSet) -> Bool { elements.allSatisfy { other.contains($0) } }
  /// Adds the elements of `other`.
  /// - Complexity: O(*n* × *m*).
  public func formUnion(_ other: MutableSet) { insert(objectsIn: Array(other)) }
  /// Keeps only the elements also in `other`.
  /// - Complexity: O(*n* × *m*).
  public func formIntersection(_ other: MutableSet) {
    for element in elements where !other.contains(element) { remove(element) }
  }
  /// Removes the elements of `other`.
  /// - Complexity: O(*n* × *m*).
  public func subtract(_ other: MutableSet) {
    for element in Array(other) { remove(element) }
  }

  /// Not available on a set: stops with Realm's message ("index(of:) is not available on
  /// MutableSet").
  public func index(of object: Element) -> Int? {
    reefStop("index(of:) is not available on MutableSet")
  }

  /// Not available on a set: stops with Realm's message.
  public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
    reefStop("index(matching:) is not available on MutableSet")
  }

  /// Not available on a set: stops with Realm's message.
  public func index(matching predicate: NSPredicate) -> Int? {
    reefStop("index(matching:) is not available on MutableSet")
  }

  /// The elements at `indexes` of the stored order.
  ///
  /// An index out of bounds stops with Realm's message.
  public func objects(at indexes: IndexSet) -> [Element] {
    let count = count
    return indexes.map { index in
      if index >= count { reefStop("Indexes for collection are out of bounds.") }
      return self[index]
    }
  }

  /// Realm's description: `MutableSet<Dog> <0x…> (\n\t[0] Dog {…}\n)`, the first 100 elements.
  public var description: String { description(depth: CollectionElements.descriptionDepth) }

  func description(depth: Int) -> String {
    CollectionElements.describe(
      "MutableSet", CollectionElements.typeName(Element.self), address: self, count: count, elements, depth: depth)
  }
}

extension MutableSet: DepthDescribable {}

extension MutableSet where Element: Object {
  /// The set's objects that match a predicate, as live ``Results``.
  ///
  /// Stops with Realm's message for an unmanaged set, or an invalid predicate.
  public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
    baseResults(Element.self, kind: "RLMSet").filter(predicateFormat, args)
  }

  /// The set's objects that match an `NSPredicate` (see ``Results/filter(_:)``), as live
  /// ``Results``.
  ///
  /// Stops with Realm's message for an unmanaged set, or an invalid predicate.
  public func filter(_ predicate: NSPredicate) -> Results<Element> {
    baseResults(Element.self, kind: "RLMSet").filter(predicate)
  }

  /// The set's objects sorted by a property, as live ``Results``.
  ///
  /// Stops with Realm's message for an unmanaged set.
  public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
    baseResults(Element.self, kind: "RLMSet").sorted(byKeyPath: keyPath, ascending: ascending)
  }

  /// The set's objects sorted by several properties, the first deciding first.
  ///
  /// Stops with Realm's message for an unmanaged set.
  public func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Element> where S.Element == SortDescriptor {
    baseResults(Element.self, kind: "RLMSet").sorted(by: sortDescriptors)
  }

  /// The set's objects with only the first of each distinct combination of the properties'
  /// values.
  ///
  /// Stops with Realm's message for an unmanaged set.
  public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
    baseResults(Element.self, kind: "RLMSet").distinct(by: keyPaths)
  }

  /// The smallest value of a property among the set's objects, or nil when there is none.
  ///
  /// A name that is not a property stops with Realm's message.
  public func min<T: _ReefScalar>(ofProperty property: String) -> T? {
    guard access != nil else {
      return CollectionElements.minimum(
        CollectionElements.propertyValues(property, of: storage, objectClass: Element.self), as: T.self)
    }
    return baseResults(Element.self, kind: "RLMSet").min(ofProperty: property)
  }

  /// The largest value of a property among the set's objects, or nil when there is none.
  ///
  /// A name that is not a property stops with Realm's message.
  public func max<T: _ReefScalar>(ofProperty property: String) -> T? {
    guard access != nil else {
      return CollectionElements.maximum(
        CollectionElements.propertyValues(property, of: storage, objectClass: Element.self), as: T.self)
    }
    return baseResults(Element.self, kind: "RLMSet").max(ofProperty: property)
  }

  /// The sum of a numeric property over the set's objects.
  ///
  /// A name that is not a property stops with Realm's message.
  public func sum<T: _ReefScalar & AdditiveArithmetic>(ofProperty property: String) -> T {
    guard access != nil else {
      return CollectionElements.sum(
        CollectionElements.propertyValues(property, of: storage, objectClass: Element.self), as: T.self)
    }
    return baseResults(Element.self, kind: "RLMSet").sum(ofProperty: property)
  }

  /// The average of a numeric property over the set's objects, or nil when there is none.
  ///
  /// A name that is not a property stops with Realm's message.
  public func average<T: BinaryFloatingPoint>(ofProperty property: String) -> T? {
    guard access != nil else {
      return CollectionElements.average(
        CollectionElements.propertyValues(property, of: storage, objectClass: Element.self), as: T.self)
    }
    return baseResults(Element.self, kind: "RLMSet").average(ofProperty: property)
  }
}

extension MutableSet where Element: _ReefScalar {
  /// The smallest element, or nil for an empty set.
  /// - Complexity: O(*n*).
  public func min() -> Element? { CollectionElements.minimum(storedValues, as: Element.self) }

  /// The largest element, or nil for an empty set.
  /// - Complexity: O(*n*).
  public func max() -> Element? { CollectionElements.maximum(storedValues, as: Element.self) }

  /// The average of the elements, or nil for an empty set.
  /// - Complexity: O(*n*).
  public func average<T: BinaryFloatingPoint>() -> T? { CollectionElements.average(storedValues, as: T.self) }

  /// The elements' stored values.
  private var storedValues: [BSON] {
    guard let access else { return CollectionElements.storedValues(storage) }
    return access.elements().map(\.value).filter { $0 != .null }
  }
}

extension MutableSet where Element: _ReefScalar & AdditiveArithmetic {
  /// The sum of the elements (zero for an empty set).
  /// - Complexity: O(*n*).
  public func sum() -> Element { reduce(.zero, +) }
}

extension MutableSet: Equatable {
  /// Whether two sets are the same: the same managed set, or two unmanaged sets with the same
  /// elements in any order (objects compared by identity), as Realm compares them.
  public static func == (lhs: MutableSet, rhs: MutableSet) -> Bool { lhs.isEqual(rhs) }

  /// Realm's spelling of `==`, for any value.
  public func isEqual(_ object: Any?) -> Bool {
    guard let other = object as? MutableSet else { return false }
    if other === self { return true }
    switch (access, other.access) {
    case (nil, nil):
      return storage.count == other.storage.count && storage.allSatisfy { other.contains($0) }
    case (let a?, let b?):
      return a.property === b.property && a.owner.reef.store === b.owner.reef.store
        && a.owner.identityPath == b.owner.identityPath
    default:
      return false
    }
  }
}

extension MutableSet: _Persistable {
  public static var _reefKind: _ReefKind { _ReefKind(.set(Element._reefKind.shape)) }
  public static func _reefDefault() -> MutableSet { MutableSet() }
  public static func _reefDecode(_ element: Document.Element?, _ context: _ReadContext) -> MutableSet? {
    List<Element>._reefDecode(element, context) == nil ? nil : MutableSet()
  }
  public func _reefEncode(_ context: _WriteContext) throws(ReefError) -> BSON {
    var values: [BSON] = []
    for (index, element) in elements.enumerated() {
      let value = try element._reefEncode(context.at(index: index))
      if !values.contains(where: { compareBSON($0, value) == 0 }) { values.append(value) }
    }
    return .array(BSONArray(values))
  }
  public static func _reefGet(_ owner: ManagedObject, _ property: Property) -> MutableSet {
    owner.collectionAccessor(property) { MutableSet() }
  }
  public static func _reefSet(_ owner: ManagedObject, _ property: Property, _ value: MutableSet) {
    if value === owner.accessor(property.ordinal) { return }
    let copy = MutableSet()
    copy.storage = Array(value)
    owner.write(property, copy)
  }
}
