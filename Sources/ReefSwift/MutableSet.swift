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
/// Equality is BSON's: `1` and `1.0` are the same element; links compare by primary key.
public final class MutableSet<Element: _ReefCollectionElement>: _CollectionAccessor<Element>, Sequence,
  CustomStringConvertible
{
  /// An empty, unmanaged set.
  public override init() { super.init() }

  /// The elements, in stored order.
  private var elements: [Element] {
    guard let access else { return storage }
    return access.elements().enumerated().map { access.decode($1, at: $0, as: Element.self) }
  }

  /// The number of elements.
  public var count: Int { access?.elements().count ?? storage.count }
  /// Whether the set is empty.
  public var isEmpty: Bool { count == 0 }

  public func makeIterator() -> IndexingIterator<[Element]> { elements.makeIterator() }

  /// The stored form of an element, for comparisons (unmanaged links are compared by
  /// instance).
  private func key(_ element: Element) -> BSON? {
    try? element._reefEncode(_WriteContext(reef: nil, attachments: nil, path: [], policy: .error))
  }

  private func same(_ a: Element, _ b: Element) -> Bool {
    if let a = a as? ObjectBase, let b = b as? ObjectBase { return a.isEqual(to: b) }
    guard let x = key(a), let y = key(b) else { return false }
    return compareBSON(x, y) == 0
  }

  /// Whether the set holds `element`.
  public func contains(_ element: Element) -> Bool { elements.contains { same($0, element) } }

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
    for element in elements { insert(element) }
  }

  /// Removes `element` if the set holds it.
  public func remove(_ element: Element) {
    guard let access else {
      storage.removeAll { same($0, element) }
      return
    }
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
  public func intersects(_ other: MutableSet) -> Bool { elements.contains { other.contains($0) } }
  /// Whether every element is in `other`.
  public func isSubset(of other: MutableSet) -> Bool { elements.allSatisfy { other.contains($0) } }
  /// Adds the elements of `other`.
  public func formUnion(_ other: MutableSet) { insert(objectsIn: Array(other)) }
  /// Keeps only the elements also in `other`.
  public func formIntersection(_ other: MutableSet) {
    for element in elements where !other.contains(element) { remove(element) }
  }
  /// Removes the elements of `other`.
  public func subtract(_ other: MutableSet) {
    for element in Array(other) { remove(element) }
  }

  public var description: String { "MutableSet<\(Element.self)> \(elements)" }
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
