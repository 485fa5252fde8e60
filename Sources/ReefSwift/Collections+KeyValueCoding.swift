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
  /// The value at `keyPath` of a collection: for a path that begins with a collection operator
  /// (`@count`, `@sum.age`...), what the operator computes (see ``CollectionOperator``);
  /// otherwise each element's value, as ``values(of:forKeyPath:)``.
  static func value<S: Sequence>(of elements: S, forKeyPath keyPath: String) -> Any? {
    if keyPath.hasPrefix("@") { return CollectionOperator.value(of: elements, forKeyPath: keyPath) }
    return values(of: elements, forKeyPath: keyPath)
  }

  /// The distinct values at `keyPath` of a set's elements, as a set, nil values left out (as
  /// `NSSet` gives them); a collection operator's value for a path that begins with one.
  static func setValue<S: Sequence>(of elements: S, forKeyPath keyPath: String) -> Any? {
    if keyPath.hasPrefix("@") { return CollectionOperator.value(of: elements, forKeyPath: keyPath) }
    var set = Set<AnyHashable>()
    for value in values(of: elements, forKeyPath: keyPath) {
      guard let value = DynamicValue.unwrap(value) else { continue }
      guard let hashable = value as? AnyHashable else {
        reefStop("Invalid key path '\(keyPath)' for a set: its values of type '\(type(of: value))' cannot be in a set")
      }
      set.insert(hashable)
    }
    return set
  }

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
  /// in list order; a path that begins with a collection operator (`@count`, `@sum.pages`,
  /// `@max.price`, `@unionOfObjects.title`...) gives what it computes, as Foundation's
  /// collection operators do (see ``ReefCollection/value(forKeyPath:)``).
  ///
  /// - Complexity: O(n) in the number of elements.
  public func value(forKeyPath keyPath: String) -> Any? {
    CollectionKeyValueCoding.value(of: self, forKeyPath: keyPath)
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
  /// The elements' distinct values for `key`, as a `Set<AnyHashable>` (nil values left out), as
  /// Realm's set gives an `NSSet`: `set.value(forKey: "name") as! Set<String>`.
  ///
  /// - Complexity: O(n) in the number of elements.
  public func value(forKey key: String) -> Any? { value(forKeyPath: key) }

  /// The elements' distinct values at a dotted path, as a `Set<AnyHashable>`; a path that begins
  /// with a collection operator (`@count`, `@sum.pages`...) gives what it computes (see
  /// ``ReefCollection/value(forKeyPath:)``).
  ///
  /// - Complexity: O(n) in the number of elements.
  public func value(forKeyPath keyPath: String) -> Any? {
    CollectionKeyValueCoding.setValue(of: self, forKeyPath: keyPath)
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

  /// Each linking object's value at a dotted path, as an array; a path that begins with a
  /// collection operator gives what it computes (see ``ReefCollection/value(forKeyPath:)``).
  ///
  /// - Complexity: O(n) in the number of linking objects.
  public func value(forKeyPath keyPath: String) -> Any? {
    CollectionKeyValueCoding.value(of: results, forKeyPath: keyPath)
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

  /// Each object's value at a dotted path, as an array in the results' order; a path that begins
  /// with a collection operator gives what it computes (see ``ReefCollection/value(forKeyPath:)``).
  ///
  /// - Complexity: O(n) in the number of objects.
  public func value(forKeyPath keyPath: String) -> Any? {
    CollectionKeyValueCoding.value(of: self, forKeyPath: keyPath)
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

  /// Each object's value at a dotted path, as an array in the collection's order; a path that
  /// begins with one of Foundation's collection operators gives what it computes, as Realm's
  /// collections do:
  ///
  /// ```swift
  /// people.value(forKeyPath: "@count") as! NSNumber        // the number of objects
  /// people.value(forKeyPath: "@avg.age") as! NSNumber      // also @sum, @min, @max
  /// people.value(forKeyPath: "@distinctUnionOfObjects.city") as! [String]
  /// ```
  /// `@sum` and `@avg` give an `NSNumber` (an integer sum when every value is an integer; a
  /// `Decimal128` for decimals), `@min` and `@max` the value itself, the unions an array
  /// (`@unionOfArrays` and `@distinctUnionOfArrays` flatten collections); nil values are left
  /// out. `@avg`, `@min` and `@max` of no values are nil, `@sum` is 0. Another operator stops
  /// with Realm's message ("Unsupported KVC collection operator found in key path '@x'").
  ///
  /// - Complexity: O(n) in the number of objects.
  public func value(forKeyPath keyPath: String) -> Any? {
    CollectionKeyValueCoding.value(of: self, forKeyPath: keyPath)
  }

  /// Sets `value` for `key` on every object of the collection (in a write transaction).
  ///
  /// - Complexity: O(n) in the number of objects.
  public func setValue(_ value: Any?, forKey key: String) {
    CollectionKeyValueCoding.setValue(value, forKey: key, on: self)
  }
}
