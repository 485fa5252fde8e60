import ReefBSON

/// A dictionary from strings to values or links: Realm's `Map`, stored as a subdocument whose
/// fields are the keys, in insertion order.
///
/// ```swift
/// class Contact: Object {
///     @Persisted var phones: Map<String, String>
/// }
/// try reef.write { contact.phones["home"] = "555-0100" }
/// ```
/// Keys cannot be empty, start with `$` or contain `.` (MongoDB's field name rules) or NUL.
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
  public var keys: [String] { pairs.map(\.key) }
  /// The values, in key insertion order.
  public var values: [Value] { pairs.map(\.value) }

  public func makeIterator() -> IndexingIterator<[(key: String, value: Value)]> { pairs.makeIterator() }

  /// The value for `key`; setting nil removes the key.
  public subscript(key: Key) -> Value? {
    get { pairs.first { $0.key == key._reefKey }?.value }
    set {
      if let newValue { updateValue(newValue, forKey: key) } else { removeObject(for: key) }
    }
  }

  /// Sets the value for `key` (a new key goes last).
  public func updateValue(_ value: Value, forKey key: Key) {
    let key = key._reefKey
    precondition(Self.isValidKey(key), "a Map key cannot be empty, start with $, or contain . or NUL: \"\(key)\"")
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

  static func isValidKey(_ key: String) -> Bool {
    !key.isEmpty && !key.hasPrefix("$") && !key.contains(".") && !key.contains("\u{0}")
  }

  public var description: String { "Map<String, \(Value.self)> \(pairs)" }
}

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
}

extension String: _ReefMapKey {
  public var _reefKey: String { self }
}
