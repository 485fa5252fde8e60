// A map of objects aggregated and sorted by Swift key paths of its objects (Realm's
// `RealmKeyedCollection` forms: `map.min(of: \.age)`), and maps compared as Realm compares them.

extension Map where Value: _ReefObjectValue {
  /// The smallest value of the property at `keyPath` among the map's objects (nil values left
  /// out), or nil when there is none.
  /// - Complexity: O(*n*) in the number of entries.
  public func min<T: _ReefScalar>(of keyPath: KeyPath<Value.Target, T>) -> T? {
    min(ofProperty: KeyPathNames.name(keyPath, in: Value.Target.self))
  }

  /// The largest value of the property at `keyPath` among the map's objects, or nil when there
  /// is none.
  /// - Complexity: O(*n*) in the number of entries.
  public func max<T: _ReefScalar>(of keyPath: KeyPath<Value.Target, T>) -> T? {
    max(ofProperty: KeyPathNames.name(keyPath, in: Value.Target.self))
  }

  /// The sum of the property at `keyPath` over the map's objects (zero when there are none).
  /// - Complexity: O(*n*) in the number of entries.
  public func sum<T: _ReefScalar & AdditiveArithmetic>(of keyPath: KeyPath<Value.Target, T>) -> T {
    sum(ofProperty: KeyPathNames.name(keyPath, in: Value.Target.self))
  }

  /// The average of the property at `keyPath` over the map's objects, as a floating-point
  /// number, or nil when there are none.
  /// - Complexity: O(*n*) in the number of entries.
  /// Disfavored: where the property's own type fits, Realm's `average(of:) -> T?` is chosen.
  @_disfavoredOverload
  public func average<T: _ReefScalar, R: BinaryFloatingPoint>(of keyPath: KeyPath<Value.Target, T>) -> R? {
    average(ofProperty: KeyPathNames.name(keyPath, in: Value.Target.self))
  }

  /// The average of the property at `keyPath` over the map's objects in the property's own type,
  /// as Realm's `average(of:)` returns it (an integer average is truncated toward zero), or nil
  /// when there are none.
  /// - Complexity: O(*n*) in the number of entries.
  public func average<T: _ReefScalar>(of keyPath: KeyPath<Value.Target, T>) -> T? {
    CollectionElements.mean(average(of: keyPath) as Double?, as: T.self)
  }

  /// The map's objects sorted by the property at `keyPath`, as live ``Results``.
  ///
  /// Stops with Realm's message for an unmanaged map.
  public func sorted<T>(by keyPath: KeyPath<Value.Target, T>, ascending: Bool = true) -> Results<Value.Target> {
    sorted(byKeyPath: KeyPathNames.name(keyPath, in: Value.Target.self), ascending: ascending)
  }
}

extension ReefCollection {
  /// The average of the property at `keyPath` over the objects in the property's own type, as
  /// Realm's `average(of:)` returns it (an integer average is truncated toward zero), or nil
  /// when there are none.
  /// - Complexity: O(*n*) in the number of objects.
  public func average<T: _ReefScalar>(of keyPath: KeyPath<Element, T>) -> T? {
    CollectionElements.mean(average(of: keyPath) as Double?, as: T.self)
  }
}

extension CollectionElements {
  /// An average in the type of the values averaged: itself for a floating-point or decimal type,
  /// truncated toward zero for an integer type (as Realm's `NSNumber` is read as an integer).
  static func mean<T: _ReefValue>(_ mean: Double?, as type: T.Type) -> T? {
    guard let mean else { return nil }
    if let value = T._reefConvert(mean) { return value }
    guard mean.isFinite, let whole = Int64(exactly: mean.rounded(.towardZero)) else { return nil }
    return T._reefConvert(whole)
  }
}

extension Map: Equatable {
  /// Whether two maps are the same: the same managed map (the same property of the same object
  /// of the same file), or two unmanaged maps with the same keys, each with the same value
  /// (objects compared by identity), as Realm compares them.
  public static func == (lhs: Map, rhs: Map) -> Bool { lhs.isEqual(rhs) }

  /// Realm's spelling of `==`, for any value.
  public func isEqual(_ object: Any?) -> Bool {
    guard let other = object as? Map else { return false }
    if other === self { return true }
    switch (access, other.access) {
    case (nil, nil):
      guard storage.count == other.storage.count else { return false }
      return storage.allSatisfy { key, value in
        other.storage.contains { $0.0 == key && CollectionElements.same(value, $0.1) }
      }
    case (let a?, let b?):
      return a.property === b.property && a.owner.reef.store === b.owner.reef.store
        && a.owner.identityPath == b.owner.identityPath
    default:
      return false
    }
  }
}
