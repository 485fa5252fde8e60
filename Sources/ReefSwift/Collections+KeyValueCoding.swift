// Key-value coding on collections, as Realm's: `value(forKey:)` gives each element's value (an
// array; a set's, a set), `setValue(_:forKey:)` sets it on every element; a `Map` reads and
// writes its keys.

import Foundation

/// A collection whose elements key-value coding reads (for paths through it).
protocol KeyValueCodingCollection {
  func value(forKeyPath keyPath: String) -> Any?
}

/// The element-wise reads and writes the collections share.
enum CollectionKeyValueCoding {
  /// Each element's value at `keyPath`, in order: `"self"` is the element itself (a number as an
  /// `NSNumber`, as ``ObjectBase/value(forKey:)`` returns it); any other path is read on each
  /// element, which must then be an object.
  static func values<S: Sequence>(of elements: S, forKeyPath keyPath: String) -> [Any?] {
    elements.map { element -> Any? in
      if keyPath == "self" {
        if let object = element as? ObjectBase { return object }
        return (element as? any _ReefValue).map { $0._reefDynamicValue } ?? element
      }
      return object(element, keyPath).value(forKeyPath: keyPath)
    }
  }

  /// `values` as a set, as Realm gives a set's values (an `NSSet`): nil as `NSNull`; the array
  /// itself when a value is not `Hashable` (a collection property's).
  static func set(of values: [Any?]) -> Any {
    var set = Set<AnyHashable>()
    for value in values {
      guard let value else {
        set.insert(NSNull())
        continue
      }
      guard let hashable = value as? AnyHashable else { return values }
      set.insert(hashable)
    }
    return set
  }

  /// Sets `value` at `key` on every element, which must be objects (see
  /// ``ObjectBase/setValue(_:forKey:)``).
  static func setValue<S: Sequence>(_ value: Any?, forKey key: String, on elements: S) {
    for element in Array(elements) { object(element, key).setValue(value, forKey: key) }
  }

  private static func object<Element>(_ element: Element, _ keyPath: String) -> ObjectBase {
    guard let object = element as? ObjectBase else {
      reefStop(
        "Invalid key path '\(keyPath)' for a collection of \(Element.self): only a collection of objects has properties (use \"self\" for its values)"
      )
    }
    return object
  }
}

extension List: KeyValueCodingCollection {
  /// Each element's value for `key`, as an array in list order (`"self"` gives the elements):
  /// `people.value(forKey: "name") as! [String]`.
  ///
  /// - Complexity: O(n) in the number of elements.
  public func value(forKey key: String) -> Any? { value(forKeyPath: key) }

  /// Each element's value at a dotted path (see ``ObjectBase/value(forKeyPath:)``), as an array
  /// in list order.
  ///
  /// - Complexity: O(n) in the number of elements.
  public func value(forKeyPath keyPath: String) -> Any? {
    CollectionKeyValueCoding.values(of: self, forKeyPath: keyPath)
  }

  /// Sets `value` for `key` on every object of the list (in a write transaction when managed).
  /// A list of values, or a name that is not a property, stops with a message.
  ///
  /// - Complexity: O(n) in the number of elements.
  public func setValue(_ value: Any?, forKey key: String) {
    CollectionKeyValueCoding.setValue(value, forKey: key, on: self)
  }
}

extension MutableSet: KeyValueCodingCollection {
  /// Each element's value for `key`, as a set (Realm's `NSSet`):
  /// `dogs.value(forKey: "name") as! Set<String>`; nil is `NSNull`.
  ///
  /// - Complexity: O(n) in the number of elements.
  public func value(forKey key: String) -> Any? { value(forKeyPath: key) }

  /// Each element's value at a dotted path, as a set (see ``value(forKey:)``).
  ///
  /// - Complexity: O(n) in the number of elements.
  public func value(forKeyPath keyPath: String) -> Any? {
    CollectionKeyValueCoding.set(of: CollectionKeyValueCoding.values(of: self, forKeyPath: keyPath))
  }

  /// Sets `value` for `key` on every object of the set.
  ///
  /// - Complexity: O(n) in the number of elements.
  public func setValue(_ value: Any?, forKey key: String) {
    CollectionKeyValueCoding.setValue(value, forKey: key, on: self)
  }
}

extension LinkingObjects: KeyValueCodingCollection {
  /// Each linking object's value for `key`, as an array.
  ///
  /// - Complexity: O(n) in the number of linking objects.
  public func value(forKey key: String) -> Any? { value(forKeyPath: key) }

  /// Each linking object's value at a dotted path, as an array.
  ///
  /// - Complexity: O(n) in the number of linking objects.
  public func value(forKeyPath keyPath: String) -> Any? {
    CollectionKeyValueCoding.values(of: results, forKeyPath: keyPath)
  }

  /// Sets `value` for `key` on every linking object (in a write transaction).
  ///
  /// - Complexity: O(n) in the number of linking objects.
  public func setValue(_ value: Any?, forKey key: String) {
    CollectionKeyValueCoding.setValue(value, forKey: key, on: results)
  }
}

extension Results: KeyValueCodingCollection {
  /// Each object's value for `key`, as an array in the results' order:
  /// `reef.objects(Dog.self).value(forKey: "name") as! [String]`.
  ///
  /// - Complexity: O(n) in the number of objects.
  public func value(forKey key: String) -> Any? { value(forKeyPath: key) }

  /// Each object's value at a dotted path, as an array in the results' order.
  ///
  /// - Complexity: O(n) in the number of objects.
  public func value(forKeyPath keyPath: String) -> Any? {
    CollectionKeyValueCoding.values(of: self, forKeyPath: keyPath)
  }

  /// Sets `value` for `key` on every object of the results (in a write transaction); the
  /// objects are read first, so a change that takes them out of the results does not skip any.
  ///
  /// - Complexity: O(n) in the number of objects.
  public func setValue(_ value: Any?, forKey key: String) {
    CollectionKeyValueCoding.setValue(value, forKey: key, on: self)
  }
}

extension Map {
  /// The value for `key`, in the form ``ObjectBase/value(forKey:)`` returns values; nil when
  /// the map has no such key (or holds nil).
  ///
  /// - Complexity: O(n) in the number of entries.
  public func value(forKey key: String) -> Any? {
    guard let value = first(where: { $0.key._reefKey == key })?.value else { return nil }
    return value._reefDynamicValue
  }

  /// The value at a dotted path: the first step is a key, the rest is read on its value (an
  /// object).
  ///
  /// - Complexity: O(n) in the number of entries.
  public func value(forKeyPath keyPath: String) -> Any? {
    guard let dot = keyPath.firstIndex(of: ".") else { return value(forKey: keyPath) }
    let head = String(keyPath[..<dot])
    return ObjectBase.value(
      forKeyPath: String(keyPath[keyPath.index(after: dot)...]), of: value(forKey: head), after: head, in: "Map")
  }

  /// Sets the value for `key`, converted as ``ObjectBase/setValue(_:forKey:)`` converts values;
  /// nil (or `NSNull`) removes the key. A value that does not fit stops with Realm's message.
  ///
  /// - Complexity: O(n) in the number of entries.
  public func setValue(_ value: Any?, forKey key: String) {
    guard DynamicValue.unwrap(value) != nil else { return removeObject(for: Self.mapKey(key)) }
    guard let converted = DynamicValue.convert(value, to: Value.self) else {
      reefStop(
        "Invalid value '\(DynamicValue.describe(value))' of type '\(DynamicValue.typeName(value))' for expected type '\(Value.self)'."
      )
    }
    updateValue(converted, forKey: Self.mapKey(key))
  }

  private static func mapKey(_ key: String) -> Key { Key(reefKey: key) }
}

extension ReefCollection {
  /// Each object's value for `key`, as an array in the collection's order (`"self"` gives the
  /// objects), as Realm's `RealmCollection.value(forKey:)`: for ``AnyReefCollection`` and
  /// generic code over collections.
  ///
  /// - Complexity: O(n) in the number of objects.
  public func value(forKey key: String) -> Any? { value(forKeyPath: key) }

  /// Each object's value at a dotted path, as an array in the collection's order.
  ///
  /// - Complexity: O(n) in the number of objects.
  public func value(forKeyPath keyPath: String) -> Any? {
    CollectionKeyValueCoding.values(of: self, forKeyPath: keyPath)
  }

  /// Sets `value` for `key` on every object of the collection (in a write transaction).
  ///
  /// - Complexity: O(n) in the number of objects.
  public func setValue(_ value: Any?, forKey key: String) {
    CollectionKeyValueCoding.setValue(value, forKey: key, on: self)
  }
}
