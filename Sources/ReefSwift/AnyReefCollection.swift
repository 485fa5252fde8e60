import Dispatch
import ReefBSON

/// Any ``ReefCollection`` of objects of one type: Realm's `AnyRealmCollection`, which
/// ``Results``, a ``List``, a ``MutableSet`` or ``LinkingObjects`` can be stored as, so that
/// code that reads them needs no generic parameter.
///
/// ```swift
/// func names(_ dogs: AnyReefCollection<Dog>) -> [String] { dogs.map(\.name) }
/// names(AnyReefCollection(reef.objects(Dog.self)))
/// names(AnyReefCollection(person.dogs))
/// ```
/// Every call goes to the collection it wraps (its `description` too).
public struct AnyReefCollection<Element: Object>: ReefCollection {
  private let box: AnyCollectionBox<Element>

  /// The collection `base`, erased (an `AnyReefCollection` is not wrapped twice).
  public init<C: ReefCollection>(_ base: C) where C.Element == Element {
    if let erased = base as? AnyReefCollection { self = erased } else { box = CollectionBox(base) }
  }

  public var startIndex: Int { 0 }
  public var endIndex: Int { box.count }
  /// Iterates the wrapped collection with its own iterator: as it was when the loop began, as
  /// Realm's (a loop that deletes the objects it reads sees each once).
  public func makeIterator() -> AnyIterator<Element> { box.makeIterator() }
  /// The number of objects.
  public var count: Int { box.count }
  /// The object at `position`; a position out of bounds stops with Realm's message.
  public subscript(position: Int) -> Element { box[position] }
  /// The wrapped collection's description (`Results<Dog> <0x…> (…)`, `List<Dog> <0x…> (…)`).
  public var description: String { box.description }

  /// The `Reef` of the wrapped collection, or nil when it is unmanaged.
  public var realm: Reef? { box.realm }
  /// Whether the wrapped collection can no longer be read.
  public var isInvalidated: Bool { box.isInvalidated }
  /// Whether the wrapped collection is frozen.
  public var isFrozen: Bool { box.isFrozen }
  public var _threadSafeLocator: _ThreadSafeLocator { box.locator }

  /// The position of `object`, or nil when the collection does not hold it (stops for a
  /// ``MutableSet``, as Realm's).
  public func index(of object: Element) -> Int? { box.index(of: object) }
  /// The position of the first object that matches a predicate, or nil (stops for a
  /// ``MutableSet``, as Realm's).
  public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
    box.index(matching: .format(predicateFormat, args))
  }
  /// The position of the first object that matches an `NSPredicate` (see
  /// ``Results/filter(_:)``), or nil (stops for a ``MutableSet``, as Realm's).
  public func index(matching predicate: NSPredicate) -> Int? { box.index(matching: FilterPredicate(predicate)) }
  /// The objects at `indexes`, in order.
  public func objects(at indexes: IndexSet) -> [Element] { box.objects(at: indexes) }

  /// The objects that match a predicate in Realm's language, as live ``Results``.
  public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
    box.filter(.format(predicateFormat, args))
  }
  /// The objects that match an `NSPredicate` (see ``Results/filter(_:)``), as live ``Results``.
  public func filter(_ predicate: NSPredicate) -> Results<Element> { box.filter(FilterPredicate(predicate)) }
  /// The objects sorted by a property, as live ``Results``.
  public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
    box.sorted(by: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
  }
  /// The objects sorted by several properties, the first deciding first.
  public func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Element> where S.Element == SortDescriptor {
    box.sorted(by: Array(sortDescriptors))
  }
  /// The objects with only the first of each distinct combination of the properties' values.
  public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
    box.distinct(by: Array(keyPaths))
  }

  /// The smallest value of a property among the objects, or nil when there is none.
  public func min<T: _ReefScalar>(ofProperty property: String) -> T? { box.min(property) }
  /// The largest value of a property among the objects, or nil when there is none.
  public func max<T: _ReefScalar>(ofProperty property: String) -> T? { box.max(property) }
  /// The sum of a numeric property over the objects.
  public func sum<T: _ReefScalar & AdditiveArithmetic>(ofProperty property: String) -> T { box.sum(property) }
  /// The average of a numeric property over the objects, or nil when there is none.
  public func average<T: BinaryFloatingPoint>(ofProperty property: String) -> T? { box.average(property) }

  /// The wrapped collection's `value(forKey:)`: each object's value for `key` (a set's as a set).
  ///
  /// - Complexity: O(n) in the number of objects.
  public func value(forKey key: String) -> Any? { box.value(forKeyPath: key) }

  /// The wrapped collection's `value(forKeyPath:)`: each object's value at the path, or what a
  /// collection operator computes (see ``ReefCollection/value(forKeyPath:)``).
  ///
  /// - Complexity: O(n) in the number of objects.
  public func value(forKeyPath keyPath: String) -> Any? { box.value(forKeyPath: keyPath) }

  /// Calls `block` with the wrapped collection's changes, each carrying the collection erased
  /// (see the wrapped type's `observe`); on `queue` when one is given.
  public func observe(
    keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
    _ block: @escaping (ReefCollectionChange<AnyReefCollection>) -> Void
  ) -> NotificationToken {
    box.observe(keyPaths: keyPaths, on: queue, block)
  }

  /// The wrapped collection's frozen snapshot, erased: Realm's `freeze()`. It does not throw:
  /// it stops with what the wrapped collection's `freeze()` stops with (``tryFreeze()`` throws).
  public func freeze() -> AnyReefCollection {
    do {
      return try tryFreeze()
    } catch {
      reefStop(error.description)
    }
  }

  /// ``freeze()``, throwing what it stops with.
  /// - Throws: what the wrapped collection's `tryFreeze()` throws.
  public func tryFreeze() throws(ReefError) -> AnyReefCollection { try box.freeze() }

  /// The wrapped collection's live counterpart, erased; nil when its object was deleted:
  /// Realm's `thaw()`. It does not throw: it stops with what the wrapped collection's `thaw()`
  /// stops with (``tryThaw()`` throws).
  public func thaw() -> AnyReefCollection? {
    do {
      return try tryThaw()
    } catch {
      reefStop("\(error)")
    }
  }

  /// ``thaw()``, throwing what it stops with.
  /// - Throws: what the wrapped collection's `tryThaw()` throws.
  public func tryThaw() throws -> AnyReefCollection? { try box.thaw() }

  public func _reefFreeze() throws(ReefError) -> AnyReefCollection { try tryFreeze() }
  public func _reefThaw() throws -> AnyReefCollection? { try tryThaw() }
}

/// The calls of an ``AnyReefCollection``, made on the collection it wraps (``CollectionBox``).
class AnyCollectionBox<Element: Object> {
  var count: Int { fatalError("abstract") }
  subscript(position: Int) -> Element { fatalError("abstract") }
  func makeIterator() -> AnyIterator<Element> { fatalError("abstract") }
  var description: String { fatalError("abstract") }
  var realm: Reef? { fatalError("abstract") }
  var isInvalidated: Bool { fatalError("abstract") }
  var isFrozen: Bool { fatalError("abstract") }
  var locator: _ThreadSafeLocator { fatalError("abstract") }
  func index(of object: Element) -> Int? { fatalError("abstract") }
  func index(matching predicate: FilterPredicate) -> Int? { fatalError("abstract") }
  func objects(at indexes: IndexSet) -> [Element] { fatalError("abstract") }
  func filter(_ predicate: FilterPredicate) -> Results<Element> { fatalError("abstract") }
  func sorted(by descriptors: [SortDescriptor]) -> Results<Element> { fatalError("abstract") }
  func distinct(by keyPaths: [String]) -> Results<Element> { fatalError("abstract") }
  func min<T: _ReefScalar>(_ property: String) -> T? { fatalError("abstract") }
  func max<T: _ReefScalar>(_ property: String) -> T? { fatalError("abstract") }
  func sum<T: _ReefScalar & AdditiveArithmetic>(_ property: String) -> T { fatalError("abstract") }
  func average<T: BinaryFloatingPoint>(_ property: String) -> T? { fatalError("abstract") }
  func value(forKeyPath keyPath: String) -> Any? { fatalError("abstract") }
  func observe(
    keyPaths: [String]?, on queue: DispatchQueue?,
    _ block: @escaping (ReefCollectionChange<AnyReefCollection<Element>>) -> Void
  ) -> NotificationToken { fatalError("abstract") }
  func freeze() throws(ReefError) -> AnyReefCollection<Element> { fatalError("abstract") }
  func thaw() throws -> AnyReefCollection<Element>? { fatalError("abstract") }
}

/// An ``AnyCollectionBox`` over a collection of a known type.
final class CollectionBox<Base: ReefCollection>: AnyCollectionBox<Base.Element> {
  let base: Base
  init(_ base: Base) { self.base = base }

  override var count: Int { base.count }
  override subscript(position: Int) -> Base.Element { base[position] }
  override func makeIterator() -> AnyIterator<Base.Element> { AnyIterator(base.makeIterator()) }
  override var description: String { base.description }
  override var realm: Reef? { base.realm }
  override var isInvalidated: Bool { base.isInvalidated }
  override var isFrozen: Bool { base.isFrozen }
  override var locator: _ThreadSafeLocator {
    let inner = base._threadSafeLocator
    return _ThreadSafeLocator(store: inner.store) { reef in
      (inner.find(reef) as? Base).map { AnyReefCollection($0) }
    }
  }
  override func index(of object: Base.Element) -> Int? { base.index(of: object) }
  override func index(matching predicate: FilterPredicate) -> Int? {
    // A variadic requirement takes its arguments one by one: match them here instead.
    if base is MutableSet<Base.Element> { reefStop("index(matching:) is not available on MutableSet") }
    let matches = CollectionElements.matcher(predicate, objectClass: Base.Element.self)
    return base.indices.first { matches(base[$0]) }
  }
  override func objects(at indexes: IndexSet) -> [Base.Element] { base.objects(at: indexes) }
  override func filter(_ predicate: FilterPredicate) -> Results<Base.Element> {
    base.sorted(by: []).filter(predicate)
  }
  override func sorted(by descriptors: [SortDescriptor]) -> Results<Base.Element> { base.sorted(by: descriptors) }
  override func distinct(by keyPaths: [String]) -> Results<Base.Element> { base.distinct(by: keyPaths) }
  override func min<T: _ReefScalar>(_ property: String) -> T? { base.min(ofProperty: property) }
  override func max<T: _ReefScalar>(_ property: String) -> T? { base.max(ofProperty: property) }
  override func sum<T: _ReefScalar & AdditiveArithmetic>(_ property: String) -> T { base.sum(ofProperty: property) }
  override func average<T: BinaryFloatingPoint>(_ property: String) -> T? { base.average(ofProperty: property) }
  override func value(forKeyPath keyPath: String) -> Any? {
    if let collection = base as? KeyValueCodingCollection { return collection.value(forKeyPath: keyPath) }
    return CollectionKeyValueCoding.value(of: base, forKeyPath: keyPath)
  }
  override func observe(
    keyPaths: [String]?, on queue: DispatchQueue?,
    _ block: @escaping (ReefCollectionChange<AnyReefCollection<Base.Element>>) -> Void
  ) -> NotificationToken {
    base.observe(keyPaths: keyPaths, on: queue) { change in
      switch change {
      case .initial(let collection): block(.initial(AnyReefCollection(collection)))
      case .update(let collection, let deletions, let insertions, let modifications):
        block(
          .update(
            AnyReefCollection(collection), deletions: deletions, insertions: insertions, modifications: modifications))
      case .error(let error): block(.error(error))
      }
    }
  }
  override func freeze() throws(ReefError) -> AnyReefCollection<Base.Element> {
    AnyReefCollection(try base._reefFreeze())
  }
  override func thaw() throws -> AnyReefCollection<Base.Element>? {
    try base._reefThaw().map { AnyReefCollection($0) }
  }
}

// MARK: The collections

extension Results: ReefCollection {
  public func _reefFreeze() throws(ReefError) -> Results { try tryFreeze() }
  public func _reefThaw() throws -> Results? { try tryThaw() }
}

extension List: ReefCollection where Element: Object {
  public func _reefFreeze() throws(ReefError) -> List { try tryFreeze() }
  public func _reefThaw() throws -> List? { try tryThaw() }
}

extension MutableSet: ReefCollection where Element: Object {
  public func _reefFreeze() throws(ReefError) -> MutableSet { try tryFreeze() }
  public func _reefThaw() throws -> MutableSet? { try tryThaw() }
}

extension LinkingObjects: ReefCollection where Element: Object {
  public func _reefFreeze() throws(ReefError) -> LinkingObjects { try tryFreeze() }
  public func _reefThaw() throws -> LinkingObjects? { try tryThaw() }
}
