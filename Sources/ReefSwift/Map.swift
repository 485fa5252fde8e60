import ReefBSON

/// A dictionary from strings to values or links: Realm's `Map`, stored as a subdocument whose
/// fields are the keys, in insertion order.
///
/// ```swift
/// class Contact: Object {
///     @Persisted var phones: Map<String, String>
/// }
/// try reef.write { contact.phones["home"] = "555-0100" }
/// for (kind, number) in contact.phones.asKeyValueSequence() { print(kind, number) }
/// ```
/// Keys cannot be empty, start with `$` or contain `.` (MongoDB's field name rules) or NUL.
/// Iterating a map gives its entries (``SingleMapEntry``, with `key` and `value`), as Realm's.
///
/// A map of embedded objects (`Map<String, Address?>`) stores each as a subdocument at its key.
/// As in a `List`, an embedded object has one parent: setting or removing a key deletes the
/// object that was there and invalidates its accessors (and those of its own embedded objects).
public final class Map<Key: _ReefMapKey, Value: _ReefCollectionElement>: _CollectionAccessor<(String, Value)>,
  Sequence, CustomStringConvertible
{
  /// An empty, unmanaged map.
  public override init() { super.init() }

  private var pairs: [(key: String, value: Value)] {
    guard let access else { return storage.map { (key: $0.0, value: $0.1) } }
    return access.elements().enumerated().map { (key: $1.key, value: access.decode($1, at: $0, as: Value.self)) }
  }

  /// The number of entries.
  public var count: Int { access?.elements().count ?? storage.count }
  /// Whether the map is empty.
  public var isEmpty: Bool { count == 0 }
  /// The keys, in insertion order.
  public var keys: [Key] { pairs.map { Key(reefKey: $0.key) } }
  /// The values, in key insertion order.
  public var values: [Value] { pairs.map(\.value) }

  /// The entries in key insertion order.
  public func makeIterator() -> IndexingIterator<[SingleMapEntry<Key, Value>]> {
    pairs.map { SingleMapEntry(key: Key(reefKey: $0.key), value: $0.value) }.makeIterator()
  }

  /// The entries as `(key, value)` pairs, for `for (key, value) in map.asKeyValueSequence()`.
  public func asKeyValueSequence() -> KeyValueSequence { KeyValueSequence(map: self) }

  /// A map's entries as `(key: Key, value: Value)` pairs, in key insertion order.
  public struct KeyValueSequence: Sequence {
    let map: Map
    /// The pairs, read from the map when iteration begins.
    public func makeIterator() -> IndexingIterator<[(key: Key, value: Value)]> {
      map.pairs.map { (key: Key(reefKey: $0.key), value: $0.value) }.makeIterator()
    }
  }

  /// The value for `key` (nil when the map has no such key); setting nil removes the key.
  ///
  /// In a map of optionals (`Map<String, Dog?>`) a key may hold nil: reading it gives
  /// `.some(nil)`, and ``updateValue(_:forKey:)`` stores a nil.
  public subscript(key: Key) -> Value? {
    get { pairs.first { $0.key == key._reefKey }?.value }
    set {
      if let newValue { updateValue(newValue, forKey: key) } else { removeObject(for: key) }
    }
  }

  /// Sets the value for `key` (a new key goes last).
  ///
  /// A key MongoDB cannot store stops with the rule it breaks.
  public func updateValue(_ value: Value, forKey key: Key) {
    let key = key._reefKey
    if !Self.isValidKey(key) {
      reefStop("a Map key cannot be empty, start with $, or contain . or NUL: \"\(key)\"")
    }
    guard let access else {
      if let index = storage.firstIndex(where: { $0.0 == key }) {
        storage[index].1 = value
      } else {
        storage.append((key, value))
      }
      return
    }
    access.changeDocument(changedKeys: [key]) { pairs, context in
      let encoded = try value._reefEncode(context.at(key: key))
      if let index = pairs.firstIndex(where: { $0.0 == key }) {
        pairs[index].1 = encoded
      } else {
        pairs.append((key, encoded))
      }
    }
  }

  /// Adds the pairs of a sequence (a dictionary, another map's ``asKeyValueSequence()``); for
  /// a key already in the map, `combine` chooses the value from the current and the new one.
  /// - Complexity: O(*n* × *m*).
  public func merge<S: Sequence>(_ sequence: S, uniquingKeysWith combine: (Value, Value) throws -> Value) rethrows
  where S.Element == (key: Key, value: Value) {
    for (key, value) in Array(sequence) {
      if let existing = self[key] {
        updateValue(try combine(existing, value), forKey: key)
      } else {
        updateValue(value, forKey: key)
      }
    }
  }

  /// Adds the entries of another map; for a key already in this one, `combine` chooses the
  /// value from the current and the new one.
  /// - Complexity: O(*n* × *m*).
  public func merge(_ other: Map, uniquingKeysWith combine: (Value, Value) throws -> Value) rethrows {
    try merge(other.asKeyValueSequence(), uniquingKeysWith: combine)
  }

  /// Removes `key` and its value.
  public func removeObject(for key: Key) {
    let key = key._reefKey
    guard let access else {
      storage.removeAll { $0.0 == key }
      return
    }
    access.changeDocument(changedKeys: [key]) { pairs, _ in pairs.removeAll { $0.0 == key } }
  }

  /// Removes every entry.
  public func removeAll() {
    guard let access else {
      storage.removeAll()
      return
    }
    access.changeDocument(changedKeys: nil) { pairs, _ in pairs.removeAll() }
  }

  /// Whether an entry satisfies `predicate`, given its key and value.
  /// - Complexity: O(*n*).
  public func contains(where predicate: (_ key: Key, _ value: Value) throws -> Bool) rethrows -> Bool {
    for (key, value) in pairs where try predicate(Key(reefKey: key), value) { return true }
    return false
  }

  static func isValidKey(_ key: String) -> Bool {
    !key.isEmpty && !key.hasPrefix("$") && !key.contains(".") && !key.contains("\u{0}")
  }

  /// Realm's description: `Map<string, Dog> <0x…> (\n\t[home]: Dog {…}\n)`, the first 100
  /// entries.
  public var description: String { description(depth: CollectionElements.descriptionDepth) }

  func description(depth: Int) -> String {
    CollectionElements.describe(
      "Map", "string, \(CollectionElements.typeName(Value.self))", address: self, count: count, pairs, depth: depth,
      label: { _, pair in "[\(pair.key)]:" }, value: { $0.value })
  }
}

/// One entry of a ``Map``: its key and its value, as iterating a map gives them (Realm's
/// `SingleMapEntry`).
public struct SingleMapEntry<Key: _ReefMapKey, Value: _ReefCollectionElement> {
  /// The entry's key.
  public var key: Key
  /// The entry's value.
  public var value: Value
}

extension SingleMapEntry: Equatable where Value: Equatable {
  /// As Realm compares entries: by their values.
  public static func == (lhs: SingleMapEntry, rhs: SingleMapEntry) -> Bool { lhs.value == rhs.value }
}

extension SingleMapEntry: Hashable where Value: Hashable {
  /// As Realm hashes entries: by their keys.
  public func hash(into hasher: inout Hasher) { hasher.combine(key) }
}

extension Map where Value: _ReefObjectValue {
  /// The map's objects (nil values left out) that match a predicate, as live ``Results`` in key
  /// order.
  ///
  /// Stops with Realm's message for an unmanaged map, or an invalid predicate.
  public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Value.Target> {
    baseResults(Value.Target.self, kind: "RLMDictionary").filter(predicateFormat, args)
  }

  /// The map's objects (nil values left out) that match an `NSPredicate` (see
  /// ``Results/filter(_:)``), as live ``Results`` in key order.
  ///
  /// Stops with Realm's message for an unmanaged map, or an invalid predicate.
  public func filter(_ predicate: NSPredicate) -> Results<Value.Target> {
    baseResults(Value.Target.self, kind: "RLMDictionary").filter(predicate)
  }

  /// The map's objects sorted by a property, as live ``Results``.
  ///
  /// Stops with Realm's message for an unmanaged map.
  public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Value.Target> {
    baseResults(Value.Target.self, kind: "RLMDictionary").sorted(byKeyPath: keyPath, ascending: ascending)
  }

  /// The map's objects sorted by several properties, the first deciding first.
  ///
  /// Stops with Realm's message for an unmanaged map.
  public func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Value.Target>
  where S.Element == SortDescriptor {
    baseResults(Value.Target.self, kind: "RLMDictionary").sorted(by: sortDescriptors)
  }

  /// The map's objects with only the first of each distinct combination of the properties'
  /// values.
  ///
  /// Stops with Realm's message for an unmanaged map.
  public func distinct<S: Sequence>(by keyPaths: S) -> Results<Value.Target> where S.Element == String {
    baseResults(Value.Target.self, kind: "RLMDictionary").distinct(by: keyPaths)
  }

  /// The smallest value of a property among the map's objects, or nil when there is none.
  ///
  /// A name that is not a property stops with Realm's message.
  public func min<T: _ReefScalar>(ofProperty property: String) -> T? {
    guard access != nil else {
      return CollectionElements.minimum(
        CollectionElements.propertyValues(property, of: values, objectClass: Value.Target.self), as: T.self)
    }
    return baseResults(Value.Target.self, kind: "RLMDictionary").min(ofProperty: property)
  }

  /// The largest value of a property among the map's objects, or nil when there is none.
  ///
  /// A name that is not a property stops with Realm's message.
  public func max<T: _ReefScalar>(ofProperty property: String) -> T? {
    guard access != nil else {
      return CollectionElements.maximum(
        CollectionElements.propertyValues(property, of: values, objectClass: Value.Target.self), as: T.self)
    }
    return baseResults(Value.Target.self, kind: "RLMDictionary").max(ofProperty: property)
  }

  /// The sum of a numeric property over the map's objects.
  ///
  /// A name that is not a property stops with Realm's message.
  public func sum<T: _ReefScalar & AdditiveArithmetic>(ofProperty property: String) -> T {
    guard access != nil else {
      return CollectionElements.sum(
        CollectionElements.propertyValues(property, of: values, objectClass: Value.Target.self), as: T.self)
    }
    return baseResults(Value.Target.self, kind: "RLMDictionary").sum(ofProperty: property)
  }

  /// The average of a numeric property over the map's objects, or nil when there is none.
  ///
  /// A name that is not a property stops with Realm's message.
  public func average<T: BinaryFloatingPoint>(ofProperty property: String) -> T? {
    guard access != nil else {
      return CollectionElements.average(
        CollectionElements.propertyValues(property, of: values, objectClass: Value.Target.self), as: T.self)
    }
    return baseResults(Value.Target.self, kind: "RLMDictionary").average(ofProperty: property)
  }
}

extension Map where Value: _ReefScalar {
  /// The smallest value, or nil for an empty map.
  /// - Complexity: O(*n*).
  public func min() -> Value? { CollectionElements.minimum(storedValues, as: Value.self) }

  /// The largest value, or nil for an empty map.
  /// - Complexity: O(*n*).
  public func max() -> Value? { CollectionElements.maximum(storedValues, as: Value.self) }

  /// The average of the values, or nil for an empty map.
  /// - Complexity: O(*n*).
  public func average<T: BinaryFloatingPoint>() -> T? { CollectionElements.average(storedValues, as: T.self) }

  /// The values as stored.
  private var storedValues: [BSON] {
    guard let access else { return CollectionElements.storedValues(values) }
    return access.elements().map(\.value).filter { $0 != .null }
  }
}

extension Map where Value: _ReefScalar & AdditiveArithmetic {
  /// The sum of the values (zero for an empty map).
  /// - Complexity: O(*n*).
  public func sum() -> Value { values.reduce(.zero, +) }
}

/// The value types of a `Map` whose values are top-level objects (`Dog?`): what ``Map``'s
/// queries and aggregates over its objects need. For ReefSwift's own conformances.
public protocol _ReefObjectValue: _ReefCollectionElement {
  /// The object type.
  associatedtype Target: Object
}

extension Optional: _ReefObjectValue where Wrapped: Object {
  public typealias Target = Wrapped
}

extension Map: DepthDescribable {}

extension Map: _Persistable {
  public static var _reefKind: _ReefKind { _ReefKind(.map(Value._reefKind.shape)) }
  public static func _reefDefault() -> Map { Map() }
  public static func _reefDecode(_ element: Document.Element?, _ context: _ReadContext) -> Map? {
    guard let element, element.type != .null else { return Map() }
    guard element.type == .document, let document = element.document else { return nil }
    for item in document
    where Value._reefDecode(item, _ReadContext(owner: context.owner, field: context.field, index: nil, key: item.key))
      == nil
    {
      return nil
    }
    return Map()
  }
  public func _reefEncode(_ context: _WriteContext) throws(ReefError) -> BSON {
    var encoded: [(String, BSON)] = []
    for (key, value) in pairs { encoded.append((key, try value._reefEncode(context.at(key: key)))) }
    return .document(Document(encoded))
  }
  public static func _reefGet(_ owner: ManagedObject, _ property: Property) -> Map {
    owner.collectionAccessor(property) { Map() }
  }
  public static func _reefSet(_ owner: ManagedObject, _ property: Property, _ value: Map) {
    if value === owner.accessor(property.ordinal) { return }
    let copy = Map()
    copy.storage = value.pairs.map { ($0.key, $0.value) }
    owner.write(property, copy)
  }
}

/// A map's entries with their values as `Any` (whatever its value type).
protocol MapPairs {
  var anyPairs: [(String, Any)] { get }
}

extension Map: MapPairs {
  var anyPairs: [(String, Any)] { pairs.map { ($0.key, $0.value as Any) } }
}

/// The key types of a ``Map``: `String`, stored as a field name.
public protocol _ReefMapKey: Hashable {
  /// The field name.
  var _reefKey: String { get }
  /// The key a field name stores.
  init(reefKey: String)
}

extension String: _ReefMapKey {
  public var _reefKey: String { self }
  public init(reefKey: String) { self = reefKey }
}
