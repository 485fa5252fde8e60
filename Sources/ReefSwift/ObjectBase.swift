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
  /// managed (which reads the store instead) until the object goes, without the objects it
  /// referenced (see ``becomeManaged(_:)``); nil for an object made managed.
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
    reefRequire(base >= 0, "ReefSwift: the @Persisted properties of \(objectClass) were not initialized in step")
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
    reefStop(
      "ReefSwift: this \(type(of: object)) was made by a property initializer while a managed object was constructed, and holds no property values"
    )
  }

  /// Makes this unmanaged object managed by `state`, and lets go of the objects its values
  /// referenced (links, embedded objects, mixed values): a managed object reads them from the
  /// store, and unmanaged objects that referenced each other (a cycle, as Realm's tests add)
  /// would otherwise keep each other alive for good. Its collections let go of their elements
  /// when attached.
  final func becomeManaged(_ state: ManagedObject) {
    _managed = state
    guard let storage = _storage, let layout = _layout else { return }
    for property in state.schema.referencingProperties {
      property.codec.releaseValue(at: storage + layout.offsets[property.ordinal])
    }
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

  /// The value of the property named `key`, as Realm's subscript: dynamic access through the
  /// schema (see ``value(forKey:)`` and ``setValue(_:forKey:)``, which it calls).
  ///
  /// A name that is not a property stops with Realm's message ("Invalid property name 'x' for
  /// class 'Dog'."), and so does a value that does not fit ("Invalid value … for 'int'
  /// property 'Dog.age'."). Setting a managed object's property needs a write transaction.
  public final subscript(key: String) -> Any? {
    get { value(forKey: key) }
    set { setValue(newValue, forKey: key) }
  }

  /// Whether `object` is this object: ``isSameObject(as:)``.
  public final func isEqual(to object: ObjectBase?) -> Bool { isSameObject(as: object) }

  /// The type's name and each property's value, in Realm's form: strings unquoted, booleans as
  /// `0` and `1`, nil as `(null)`, data as its first bytes in hexadecimal, linked and embedded
  /// objects and collections nested (five levels deep, then `<Maximum depth exceeded>`).
  open var description: String { description(depth: CollectionElements.descriptionDepth) }

  /// The description, `depth` levels deep (see ``description``).
  final func description(depth: Int) -> String {
    guard depth > 0 else { return "<Maximum depth exceeded>" }
    let schema = objectSchema
    if isInvalidated { return "[invalid object]" }
    var lines = ["\(schema.className) {"]
    for property in schema.allProperties where property.shape.isStored {
      let value = ObjectBase.describe(self[property.name], property, depth: depth - 1)
      lines.append("\t\(property.name) = \(value.replacingOccurrences(of: "\n", with: "\n\t"));")
    }
    lines.append("}")
    return lines.joined(separator: "\n")
  }

  /// A property's value as an object's description shows it (see ``description``).
  static func describe(_ value: Any?, _ property: Property, depth: Int) -> String {
    guard let value = DynamicValue.unwrap(value) else { return "(null)" }
    if let number = value as? NSNumber {
      switch property.type {
      case .bool: return number.boolValue ? "1" : "0"
      case .int: return "\(number.int64Value)"
      case .float: return "\(number.floatValue)"
      case .double: return "\(number.doubleValue)"
      default: break
      }
    }
    if let bool = value as? Bool { return bool ? "1" : "0" }
    return CollectionElements.describe(value, depth: depth)
  }

  // MARK: Counting properties

  nonisolated(unsafe) private static var counts: [ObjectIdentifier: Int] = [:]
  private static let countsLock = Lock()
  /// The classes an instance was made of, in the order first made: the types "used" that
  /// ``Reef/schema`` lists without ``Reef/Configuration/objectTypes`` (an instance does not
  /// discover its class's schema).
  nonisolated(unsafe) private static var made: [ObjectBase.Type] = []
  static var madeClasses: [ObjectBase.Type] { countsLock.withLock { made } }

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
    countsLock.withLock {
      if counts.updateValue(count, forKey: key) == nil { made.append(objectClass) }
    }
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

  /// Properties not to store, in the older API's style: with `@Persisted`, a property not
  /// marked `@Persisted` is not stored, which says the same. A `@Persisted` property named here
  /// is refused by the schema check (remove `@Persisted` to ignore it).
  open class func ignoredProperties() -> [String] { [] }

  /// Creates an unmanaged object from a dictionary of property values (by name; other keys
  /// are ignored, as in Realm), an array of values in property order, or another object whose
  /// properties are copied, each value converted as Realm converts it (an `Int` for an `Int8`,
  /// `NSNull` for nil, a dictionary or an array for a linked or embedded object).
  ///
  /// A value that does not fit its property stops with Realm's message ("Invalid value …
  /// for 'int' property 'Dog.age'."); ``init(validating:)`` throws instead.
  public convenience init(value: Any) {
    self.init()
    ObjectPopulation(copyingFor: nil).populate(self, from: value)
  }

  /// ``init(value:)`` that throws instead of stopping, for values from outside the program.
  /// - Throws: ``ReefError`` of kind ``ReefError/Kind/invalidValue`` with Realm's message.
  public convenience init(validating value: Any) throws(ReefError) {
    self.init()
    try ObjectPopulation(copyingFor: nil).populateChecked(self, from: value)
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
  /// Creates an unmanaged object from a dictionary of property values, an array in property
  /// order, or another object (see ``Object/init(value:)``).
  public convenience init(value: Any) {
    self.init()
    ObjectPopulation(copyingFor: nil).populate(self, from: value)
  }

  /// ``init(value:)`` that throws instead of stopping.
  /// - Throws: ``ReefError`` of kind ``ReefError/Kind/invalidValue`` with Realm's message.
  public convenience init(validating value: Any) throws(ReefError) {
    self.init()
    try ObjectPopulation(copyingFor: nil).populateChecked(self, from: value)
  }

  /// Creates an unmanaged object with each property's initial value.
  public required init() { super.init() }

  /// The object that embeds this one (its top-level parent's is an ``Object``); nil when
  /// unmanaged.
  public final var parent: ObjectBase? { _managed?.parent?.makeObject() }
}

extension ObjectBase: DepthDescribable {}
