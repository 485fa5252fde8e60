// What equality means in the object layer, as in RealmSwift: an object is equal to itself and,
// once managed, if its type has a primary key or it is frozen, to every accessor of the same
// stored object read through the same `Reef` (Realm's `isEqual:`); a `Reef` to itself;
// `Results` to their copies.

extension ObjectBase: Hashable {
  /// Whether the two are equal, as Realm's `isEqual(_:)`: for a managed object of a type with a
  /// primary key, or a frozen object, whether they are the same stored object
  /// (``isSameObject(as:)``); otherwise whether they are the same instance, so that two
  /// accessors of one stored object without a primary key are not equal (compare them with
  /// ``isSameObject(as:)``).
  public static func == (lhs: ObjectBase, rhs: ObjectBase) -> Bool {
    if lhs === rhs { return true }
    guard lhs.comparesByStoredObject else { return false }
    return lhs.isSameObject(as: rhs)
  }

  /// Hashes what ``==`` compares: for a managed object of a type with a primary key, or a frozen
  /// object, its `Reef`, its top-level object's type and `_id` and the fields down to it (not a
  /// list position, which moves); otherwise the instance.
  public func hash(into hasher: inout Hasher) {
    guard comparesByStoredObject, let managed = _managed else {
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

  /// The object's hash value, as Realm's `hash` (`NSObject`'s): equal for objects that are
  /// ``==``.
  public var hash: Int { hashValue }

  /// Whether ``==`` compares the stored object rather than the instance: a managed object of a
  /// type with a primary key, or a frozen one (Realm's rule).
  private var comparesByStoredObject: Bool {
    guard let managed = _managed else { return false }
    return managed.schema.primaryKeyProperty != nil || managed.reef.isFrozen
  }

  /// Whether `object` is this object, as Realm's `isSameObject(as:)`: the same instance, or two
  /// accessors of the same stored object (same type and `_id`, and for an embedded object the
  /// same place in its parent) read through the same `Reef`, neither of them deleted. A frozen
  /// object and its live original are read through two `Reef`s: they are not the same object.
  /// In a migration, two ``MigrationObject``s of the same stored object are the same object.
  public final func isSameObject(as object: ObjectBase?) -> Bool {
    guard let object else { return false }
    if object === self { return true }
    if let a = (self as? DynamicObject)?.migrationRecord, let b = (object as? DynamicObject)?.migrationRecord {
      return a.isSame(as: b)
    }
    guard let a = _managed, let b = object._managed, a.reef === b.reef, a.schema.className == b.schema.className,
      a.identityPath == b.identityPath
    else { return false }
    return !isInvalidated && !object.isInvalidated
  }
}

extension MigrationRecord {
  /// Whether the two stand for the same stored object of one migration (both old or both new):
  /// the same top-level object, or embedded objects at the same place of the same one.
  func isSame(as other: MigrationRecord) -> Bool {
    if self === other { return true }
    guard migration === other.migration, isOld == other.isOld, typeName == other.typeName, !isDeleted,
      !other.isDeleted
    else { return false }
    switch (parent, other.parent) {
    case (nil, nil): return topID == other.topID
    case (let a?, let b?): return field == other.field && index == other.index && a.isSame(as: b)
    default: return false
    }
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
