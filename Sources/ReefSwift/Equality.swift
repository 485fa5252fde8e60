// What equality means in the object layer, as in RealmSwift: an object is equal to itself and,
// once managed, to every accessor of the same stored object read through the same `Reef`
// (Realm's `RLMObjectBaseAreEqual`); a `Reef` to itself; `Results` to their copies.

extension ObjectBase: Hashable {
  /// Whether the two are the same object: ``isSameObject(as:)``.
  public static func == (lhs: ObjectBase, rhs: ObjectBase) -> Bool { lhs.isSameObject(as: rhs) }

  /// Hashes the object's identity: the instance for an unmanaged object; for a managed one, its
  /// `Reef`, its top-level object's type and `_id` and the fields down to it (not a list
  /// position, which moves), so that every accessor of one stored object hashes alike.
  public func hash(into hasher: inout Hasher) {
    guard let managed = _managed else {
      hasher.combine(ObjectIdentifier(self))
      return
    }
    hasher.combine(ObjectIdentifier(managed.reef))
    var current = managed
    while let parent = current.parent {
      hasher.combine(current.field)
      hasher.combine(current.mapKey)
      current = parent
    }
    hasher.combine(current.schema.className)
    hasher.combine(current.id)
  }

  /// The object's hash, as the `hash` of Realm's objects (`NSObject`s): equal for equal
  /// objects (see ``hash(into:)``).
  public var hash: Int { hashValue }

  /// Whether `object` is this object, as Realm's `isSameObject(as:)`: the same instance, or two
  /// accessors of the same stored object (same type and `_id`, and for an embedded object the
  /// same place in its parent) read through the same `Reef`, neither of them deleted. A frozen
  /// object and its live original are read through two `Reef`s: they are not the same object.
  public final func isSameObject(as object: ObjectBase?) -> Bool {
    guard let object else { return false }
    if object === self { return true }
    guard let a = _managed, let b = object._managed, a.reef === b.reef, a.schema.className == b.schema.className,
      a.identityPath == b.identityPath
    else { return false }
    return !isInvalidated && !object.isInvalidated
  }
}

extension Reef: Equatable {
  /// Whether the two are the same `Reef`, as Realm's `==`: a `Reef` is equal to itself only
  /// (`try Reef()` on a thread returns the same one while it lives; a frozen `Reef` is another
  /// one, the same for each `freeze()` of one snapshot while it lives).
  public static func == (lhs: Reef, rhs: Reef) -> Bool { lhs === rhs }
}

extension Results: Equatable {
  /// Whether the two are the same results, as Realm's `==`: a `Results` value and its copies
  /// are; results made by another call (`objects(_:)`, `filter`, `sorted`, `freeze()`) are
  /// other results, even with the same query.
  public static func == (lhs: Results, rhs: Results) -> Bool { lhs.snapshot === rhs.snapshot }
}
