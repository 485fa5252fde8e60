import ReefBSON

/// What `Object` and `EmbeddedObject` share: the property storage of unmanaged objects and the
/// accessor of managed ones.
///
/// Subclass ``Object`` or ``EmbeddedObject``, not this class.
open class ObjectBase: CustomStringConvertible {
  /// Where this object's `@Persisted` slots start on its thread's construction stack: a
  /// property's ordinal is its slot minus this.
  public final var _slotBase = 0
  /// Where this object's values started in its thread's byte stack: a property's value lies in
  /// ``_storage`` at its position there minus this.
  public final var _byteBase = 0
  /// The values of an unmanaged object's properties, moved here from the construction stack
  /// (one allocation per object; laid out as ``_layout`` says). Kept after the object becomes
  /// managed (which reads the store instead) until the object goes; nil for an object made
  /// managed.
  public final var _storage: UnsafeMutableRawPointer?
  /// The layout of ``_storage`` (one per class, never freed).
  final unowned(unsafe) var _layout: StorageLayout?
  /// The managed state, once the object is in a `Reef`.
  public final var _managed: ManagedObject?
  /// Set on the stand-ins that record a typed query's key paths.
  public final var _tracer: _PathTracer?

  /// Creates an unmanaged object with each property's initial value.
  public required init() {
    let thread = ThreadState.current
    let objectClass = type(of: self)
    let (count, layout) = ObjectBase.classEntry(objectClass, instance: self, thread: thread)
    let base = thread.slotCount &- count
    precondition(base >= 0, "ReefSwift: the @Persisted properties of \(objectClass) were not initialized in step")
    _slotBase = base
    if let constructing = thread.constructingManaged {
      // A managed object (or an object a managed object's property initializer made, which is
      // thrown away) reads nothing from its slots.
      if constructing == ObjectIdentifier(objectClass) { thread.constructingManaged = nil }
      thread.dropSlots(from: base)
    } else {
      (_storage, _byteBase, _layout) = thread.takeSlots(from: base, of: objectClass, known: layout)
    }
  }

  deinit {
    if let _storage {
      _layout.unsafelyUnwrapped.destroy(_storage)
      _storage.deallocate()
    }
  }

  /// Stops for a property of an object that holds no values: one made by a property initializer
  /// while the object layer constructed a managed object (such objects are thrown away).
  @usableFromInline static func _noValues(_ object: ObjectBase) -> Never {
    preconditionFailure(
      "ReefSwift: this \(type(of: object)) was made by a property initializer while a managed object was constructed, and holds no property values"
    )
  }

  /// Where the value of the property with this ordinal lies in an unmanaged object's storage.
  final func valuePointer(_ ordinal: Int) -> UnsafeMutableRawPointer {
    guard let storage = _storage, let layout = _layout else { ObjectBase._noValues(self) }
    return storage + layout.offsets[ordinal]
  }

  /// Realm's name for the type: the class name, which is also its collection's name.
  open class func className() -> String { String(describing: self) }

  /// Maps Swift property names to stored field names: `["id": "_id"]` stores the property `id`
  /// as MongoDB's `_id`. Queries and sorts take either name.
  open class func propertiesMapping() -> [String: String] { [:] }

  /// Whether the object has been deleted (or its parent deleted, or it was overwritten): its
  /// properties can no longer be read.
  public final var isInvalidated: Bool {
    guard let _managed else { return false }
    return _managed.currentDocument() == nil
  }

  /// The `Reef` that manages this object, or nil for an unmanaged object.
  public final var reef: Reef? { _managed?.reef }

  /// Realm's name for ``reef``.
  public final var realm: Reef? { reef }

  /// The object's schema (a ``DynamicObject``'s is its type's).
  public final var objectSchema: ObjectSchema {
    if let dynamic = self as? DynamicObject {
      if let schema = dynamic._managed?.schema ?? dynamic.migrationRecord?.modelSchema { return schema }
    }
    return ObjectSchema.of(type(of: self))
  }

  /// Whether the object is frozen: managed by a frozen `Reef` (``Reef/freeze()``), an immutable
  /// snapshot readable from any thread.
  public final var isFrozen: Bool { _managed?.reef.isFrozen ?? false }

  /// A property's value by its Swift name, for dynamic access; nil for an unknown name.
  ///
  /// Setting a managed object's property needs a write transaction. Setting a value of the wrong
  /// type, or an unknown property, is a precondition failure naming both.
  public final subscript(key: String) -> Any? {
    get {
      if let dynamic = self as? DynamicObject { return dynamic.dynamicValue(key) }
      let schema = objectSchema
      guard let property = schema.property(named: key) else { return nil }
      if let _managed { return property.codec.get(_managed, property) }
      return property.codec.value(at: valuePointer(property.ordinal))
    }
    set {
      if let dynamic = self as? DynamicObject, dynamic.setDynamicValue(newValue, forKey: key) { return }
      let schema = objectSchema
      guard let property = schema.property(named: key) else {
        preconditionFailure("\(schema.className) has no property named '\(key)'")
      }
      let value: Any = newValue ?? (nil as Any?) as Any
      let fits =
        if let _managed { property.codec.set(_managed, property, value) } else {
          property.codec.set(value, at: valuePointer(property.ordinal))
        }
      precondition(
        fits, "\(schema.className).\(key) cannot hold a \(type(of: value)): expected \(property.typeDescription)")
    }
  }

  /// Whether `object` is this object: the same instance, or the same managed object (same
  /// `Reef` file, type and primary key).
  public final func isEqual(to object: ObjectBase?) -> Bool {
    guard let object else { return false }
    if object === self { return true }
    guard let a = _managed, let b = object._managed, a.reef.store === b.reef.store,
      type(of: self) == type(of: object)
    else { return false }
    return a.identityPath == b.identityPath
  }

  /// The type's name and each property's value.
  open var description: String {
    let schema = objectSchema
    if isInvalidated { return "[invalid object]" }
    var lines = ["\(schema.className) {"]
    for property in schema.properties where property.shape.isStored {
      let value = self[property.name]
      lines.append("\t\(property.name) = \(ObjectBase.describe(value));")
    }
    lines.append("}")
    return lines.joined(separator: "\n")
  }

  static func describe(_ value: Any?) -> String {
    guard let value else { return "nil" }
    if case Optional<Any>.none = value { return "nil" }
    if let object = value as? ObjectBase { return object.description.replacingOccurrences(of: "\n", with: "\n\t") }
    if let string = value as? String { return "\"\(string)\"" }
    return "\(value)"
  }

  // MARK: Counting properties

  nonisolated(unsafe) private static var counts: [ObjectIdentifier: Int] = [:]
  private static let countsLock = Lock()

  /// How many `@Persisted` properties instances of `objectClass` have (its superclasses' too),
  /// counted once per class from the first instance, and the class's storage layout when this
  /// thread knows it (see ``ThreadState/classes``).
  static func classEntry(_ objectClass: ObjectBase.Type, instance: ObjectBase, thread: ThreadState)
    -> (count: Int, layout: StorageLayout?)
  {
    let key = ObjectIdentifier(objectClass)
    if let entry = thread.classes[key] { return entry }
    if let count = countsLock.withLock({ counts[key] }) {
      thread.classes[key] = (count, nil)
      return (count, nil)
    }
    var count = 0
    var mirror: Mirror? = Mirror(reflecting: instance)
    while let current = mirror {
      for child in current.children where child.value is PersistedProperty { count += 1 }
      mirror = current.superclassMirror
    }
    countsLock.withLock { counts[key] = count }
    thread.classes[key] = (count, nil)
    return (count, nil)
  }
}

/// A top-level object: stored as one document in the collection named after its class.
///
/// ```swift
/// class Dog: Object {
///     @Persisted var name = ""
///     @Persisted var age = 0
///     @Persisted var breed: String?
///     @Persisted var owner: Person?
/// }
/// ```
/// An object is unmanaged until it is added to a `Reef` (`reef.add(dog)`); then it is live: it
/// reads its properties from the store and shows the latest state of its `Reef`.
open class Object: ObjectBase {
  /// The name of the primary key property, for models written in the style of Realm's older
  /// API (`override static func primaryKey() -> String? { "_id" }`); `@Persisted(primaryKey:
  /// true)` says the same.
  open class func primaryKey() -> String? { nil }

  /// Properties to index, in the older API's style; `@Persisted(indexed: true)` says the same.
  open class func indexedProperties() -> [String] { [] }

  /// Creates an object from a dictionary of property values (by name), an array of values in
  /// property order, or another object whose properties are copied.
  ///
  /// A value that does not fit its property is a precondition failure naming both.
  public convenience init(value: Any) {
    self.init()
    ObjectBase.populate(self, from: value)
  }

  /// Creates an unmanaged object with each property's initial value.
  public required init() { super.init() }
}

/// An object that lives inside its parent's document: a subdocument, or an element of an array
/// of subdocuments, exactly as MongoDB stores it.
///
/// It has exactly one parent, no primary key, and is deleted with its parent or when it is
/// overwritten, set to nil or removed from its list.
open class EmbeddedObject: ObjectBase {
  /// Creates an object from a dictionary of property values, an array in property order, or
  /// another object.
  public convenience init(value: Any) {
    self.init()
    ObjectBase.populate(self, from: value)
  }

  /// Creates an unmanaged object with each property's initial value.
  public required init() { super.init() }

  /// The object that embeds this one (its top-level parent's is an ``Object``); nil when
  /// unmanaged.
  public final var parent: ObjectBase? { _managed?.parent?.makeObject() }
}

extension ObjectBase {
  /// Sets the properties of an unmanaged object from a dictionary, an array or an object.
  static func populate(_ object: ObjectBase, from value: Any) {
    do {
      try populateChecked(object, from: value)
    } catch {
      preconditionFailure(error.description)
    }
  }

  /// ``populate(_:from:)`` that throws ``ReefError/Kind/invalidValue`` instead of stopping.
  static func populateChecked(_ object: ObjectBase, from value: Any) throws(ReefError) {
    let schema = object.objectSchema
    let stored = schema.properties.filter { $0.shape.isStored }
    func invalid(_ message: String, _ property: Property? = nil) -> ReefError {
      ReefError(.invalidValue, message, type: schema.className, property: property?.name)
    }
    func set(_ property: Property, _ value: Any) throws(ReefError) {
      let converted = property.convert(value)
      guard property.codec.set(converted, at: object.valuePointer(property.ordinal)) else {
        throw invalid(
          "\(schema.className).\(property.name) cannot hold \(value) (a \(type(of: value))): expected \(property.typeDescription)",
          property)
      }
    }
    if let dictionary = value as? [String: Any] {
      for (key, value) in dictionary {
        guard let property = schema.property(named: key) else {
          throw invalid("\(schema.className) has no property named '\(key)'")
        }
        try set(property, value)
      }
    } else if let array = value as? [Any] {
      guard array.count <= stored.count else {
        throw invalid("\(schema.className) has \(stored.count) properties; \(array.count) values given")
      }
      for (property, value) in zip(stored, array) { try set(property, value) }
    } else if let other = value as? ObjectBase {
      for property in stored {
        if let value = other[property.name] { try set(property, value) }
      }
    } else {
      throw invalid("\(schema.className)(value:) takes a dictionary, an array or an object, not a \(type(of: value))")
    }
  }

}
