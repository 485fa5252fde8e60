import Dispatch
import ReefBSON

/// The types a ``List``, ``MutableSet`` or ``Map`` can hold: Realm's `RealmCollectionValue`.
///
/// `Bool`, the integer types, `Float`, `Double`, `String`, `Data`, `Date`, `Decimal128`,
/// `ObjectId`, `UUID`, ``AnyReefValue``, ``PersistableEnum`` enums, objects and embedded
/// objects, and the optionals of these. Write it in generic code over collections
/// (`func total<T: ReefCollectionValue>(_ list: List<T>)`); declaring another type as one does
/// not make it storable.
public typealias ReefCollectionValue = _ReefCollectionElement

/// A collection of objects read from a ``Reef``: Realm's `RealmCollection`, which
/// ``Results``, ``List``, ``MutableSet`` and ``LinkingObjects`` of objects are, and
/// ``AnyReefCollection`` erases.
///
/// ```swift
/// func adults<C: ReefCollection>(_ people: C) -> Results<C.Element> where C.Element == Person {
///     people.filter("age >= 18").sorted(byKeyPath: "name", ascending: true)
/// }
/// ```
/// Unlike Realm's, it is for collections of objects only (`Results` hold objects in Reef): a
/// `List<Int>` has the same methods (`index(of:)`, `min()`, `sum()`...) without being one.
public protocol ReefCollection: RandomAccessCollection, CustomStringConvertible, ThreadConfined
where Element: Object, Index == Int {
  /// The number of objects.
  var count: Int { get }

  /// The position of `object`, or nil when the collection does not hold it.
  func index(of object: Element) -> Int?

  /// The position of the first object that matches a predicate in Realm's language, or nil.
  func index(matching predicateFormat: String, _ args: Any...) -> Int?

  /// The position of the first object that matches an `NSPredicate`, or nil.
  func index(matching predicate: NSPredicate) -> Int?

  /// The objects at `indexes`, in order.
  func objects(at indexes: IndexSet) -> [Element]

  /// The objects that match a predicate in Realm's language, as live ``Results``.
  func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element>

  /// The objects that match an `NSPredicate` (see ``Results/filter(_:)``), as live ``Results``.
  func filter(_ predicate: NSPredicate) -> Results<Element>

  /// The objects sorted by a property, as live ``Results``.
  func sorted(byKeyPath keyPath: String, ascending: Bool) -> Results<Element>

  /// The objects sorted by several properties, the first deciding first.
  func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Element> where S.Element == SortDescriptor

  /// The objects with only the first of each distinct combination of the properties' values.
  func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String

  /// The smallest value of a property among the objects, or nil when there is none.
  func min<T: _ReefScalar>(ofProperty property: String) -> T?

  /// The largest value of a property among the objects, or nil when there is none.
  func max<T: _ReefScalar>(ofProperty property: String) -> T?

  /// The sum of a numeric property over the objects.
  func sum<T: _ReefScalar & AdditiveArithmetic>(ofProperty property: String) -> T

  /// The average of a numeric property over the objects, or nil when there is none.
  func average<T: BinaryFloatingPoint>(ofProperty property: String) -> T?

  /// Calls `block` with the collection's changes (see each type's `observe`), on `queue` when
  /// one is given.
  func observe(
    keyPaths: [String]?, on queue: DispatchQueue?, _ block: @escaping (ReefCollectionChange<Self>) -> Void
  ) -> NotificationToken

  /// The collection's frozen snapshot (its `freeze()`). For ``AnyReefCollection``.
  func _reefFreeze() throws(ReefError) -> Self

  /// The collection's live counterpart (its `thaw()`), nil when gone. For ``AnyReefCollection``.
  func _reefThaw() throws -> Self?
}

// MARK: Swift key paths

extension ReefCollection {
  /// The smallest value of the property at `keyPath` among the objects, or nil when there is
  /// none.
  public func min<T: _ReefScalar>(of keyPath: KeyPath<Element, T>) -> T? {
    min(ofProperty: KeyPathNames.name(keyPath, in: Element.self))
  }

  /// The largest value of the property at `keyPath` among the objects, or nil when there is
  /// none.
  public func max<T: _ReefScalar>(of keyPath: KeyPath<Element, T>) -> T? {
    max(ofProperty: KeyPathNames.name(keyPath, in: Element.self))
  }

  /// The sum of the property at `keyPath` over the objects.
  public func sum<T: _ReefScalar & AdditiveArithmetic>(of keyPath: KeyPath<Element, T>) -> T {
    sum(ofProperty: KeyPathNames.name(keyPath, in: Element.self))
  }

  /// The average of the property at `keyPath` over the objects, or nil when there is none.
  /// Disfavored: where the property's own type fits, Realm's `average(of:) -> T?` is chosen.
  @_disfavoredOverload
  public func average<T: _ReefScalar, R: BinaryFloatingPoint>(of keyPath: KeyPath<Element, T>) -> R? {
    average(ofProperty: KeyPathNames.name(keyPath, in: Element.self))
  }

  /// The objects sorted by the property at `keyPath` (through links and embedded objects:
  /// `\.owner?.name`), as live ``Results``.
  public func sorted<T>(by keyPath: KeyPath<Element, T>, ascending: Bool = true) -> Results<Element> {
    sorted(byKeyPath: KeyPathNames.name(keyPath, in: Element.self), ascending: ascending)
  }

  /// The objects with only the first of each distinct combination of the values at `keyPaths`.
  public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == PartialKeyPath<Element> {
    distinct(by: keyPaths.map { KeyPathNames.name($0, in: Element.self) })
  }
}

/// The stored property names a Swift key path of a model reads (`\Person.address?.city` is
/// `address.city`), found by reading it on a stand-in object that records the names.
enum KeyPathNames {
  /// The dotted property names `keyPath` reads, from an object of `type`.
  ///
  /// A key path that reads no `@Persisted` property stops, naming the type.
  static func name<Root: ObjectBase>(_ keyPath: PartialKeyPath<Root>, in type: Root.Type) -> String {
    let tracer = _PathTracer()
    let object = tracer.instance(Root.self)
    _ = object[keyPath: keyPath]
    guard !tracer.names.isEmpty else {
      reefStop("a key path of \(Root.self) must name a @Persisted property")
    }
    return tracer.names.joined(separator: ".")
  }
}
