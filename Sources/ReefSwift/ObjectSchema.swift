import ReefBSON

/// One type's schema, as Realm's `ObjectSchema`: its properties in declaration order, its
/// primary key, whether it is embedded. Discovered once per class from a first instance (never
/// per object); `object.objectSchema`, `Dog.sharedSchema()` and `reef.schema["Dog"]` give it.
public final class ObjectSchema: CustomStringConvertible, Equatable, @unchecked Sendable {
  /// The type's name: its class name, and its collection's name.
  public let className: String
  /// The stored properties in declaration order, a superclass's before its subclass's own, as
  /// in Realm (an array of values given to `init(value:)` follows this order); as in Realm, the
  /// `LinkingObjects` are apart, in ``computedProperties``.
  public let properties: [Property]
  /// The `LinkingObjects` properties, which are computed from the links that point here.
  public let computedProperties: [Property]
  /// The primary key property, if the type has one.
  public let primaryKeyProperty: Property?
  /// Whether the type is an ``EmbeddedObject``.
  public let isEmbedded: Bool
  /// The class.
  public let objectClass: ObjectBase.Type

  /// Every property, `LinkingObjects` too, in declaration order.
  let allProperties: [Property]
  let byOrdinal: [Property]
  let byName: [String: Property]
  /// The properties stored in the document (all but `LinkingObjects`), in declaration order:
  /// ``properties``.
  var storedProperties: [Property] { properties }
  /// `@Persisted` properties that `ignoredProperties()` names: the schema check refuses them.
  let ignoredPersisted: [String]
  /// Collection properties declared without `@Persisted` (`let dogs = List<Dog>()`, the older
  /// API's form): they would store nothing, so the schema check refuses them.
  let undeclaredCollections: [String]
  /// The stored properties whose unmanaged values may hold objects: links, embedded objects and
  /// mixed values, not in a collection (a collection lets go of its elements itself when its
  /// object becomes managed). See ``ObjectBase/becomeManaged(_:)``.
  let referencingProperties: [Property]

  init(objectClass: ObjectBase.Type) {
    self.objectClass = objectClass
    className = objectClass.className()
    isEmbedded = objectClass is EmbeddedObject.Type
    let prototype = objectClass.init()
    let mapping = objectClass.propertiesMapping()
    let legacyPrimaryKey = (objectClass as? Object.Type)?.primaryKey()
    let legacyIndexed = Set((objectClass as? Object.Type)?.indexedProperties() ?? [])
    // Each class's properties in declaration order, a superclass's before its subclass's, as
    // Realm orders them (the mirror gives the subclass's first).
    var levels: [[Property]] = []
    var undeclared: [String] = []
    var mirror: Mirror? = Mirror(reflecting: prototype)
    while let current = mirror {
      var level: [Property] = []
      for child in current.children {
        guard let label = child.label, label.hasPrefix("_"), let persisted = child.value as? PersistedProperty else {
          if let label = child.label, child.value is ManagedCollection { undeclared.append(label) }
          continue
        }
        let name = String(label.dropFirst())
        let ordinal = persisted.slot - prototype._slotBase
        var flags = persisted.flags
        if legacyPrimaryKey == name { flags.insert(.primaryKey) }
        if legacyIndexed.contains(name) { flags.insert(.indexed) }
        let codec = type(of: persisted).makeCodec()
        let origin = codec.value(at: prototype.valuePointer(ordinal)) as? LinkingObjectsDescriptor
        level.append(
          Property(
            name: name, columnName: mapping[name] ?? name, kind: type(of: persisted).valueKind, flags: flags,
            ordinal: ordinal, codec: codec, origin: origin))
      }
      levels.append(level)
      mirror = current.superclassMirror
    }
    let found = levels.reversed().flatMap { $0 }
    allProperties = found
    properties = found.filter { $0.shape.isStored }
    computedProperties = found.filter { !$0.shape.isStored }
    referencingProperties = properties.filter { property in
      !property.isArray && !property.isSet && !property.isMap && (property.type == .object || property.type == .any)
    }
    undeclaredCollections = undeclared
    let ignored = Set((objectClass as? Object.Type)?.ignoredProperties() ?? [])
    ignoredPersisted = found.map(\.name).filter(ignored.contains)
    primaryKeyProperty = found.first { $0.isPrimary }
    var byOrdinal = found
    for property in found { byOrdinal[property.ordinal] = property }
    self.byOrdinal = byOrdinal
    var byName: [String: Property] = [:]
    for property in found {
      byName[property.name] = property
      if byName[property.columnName] == nil { byName[property.columnName] = property }
    }
    self.byName = byName
  }

  /// The property with this Swift name (or stored name), if any.
  public func property(named name: String) -> Property? { byName[name] }

  /// Realm's spelling of ``property(named:)``.
  public subscript(name: String) -> Property? { byName[name] }

  @inline(__always) func property(ordinal: Int) -> Property { byOrdinal[ordinal] }

  /// The stored name of the document's identity: `_id`.
  var identityField: String { "_id" }

  /// Whether the primary key is stored as `_id` (then the identity is the primary key).
  var primaryKeyIsID: Bool { primaryKeyProperty?.columnName == "_id" }

  /// Realm's form: the class name, then each property's description (the stored ones, then the
  /// computed ones), indented by a tab.
  public var description: String {
    var text = "\(className) \(isEmbedded ? "(embedded) " : ""){\n"
    for property in properties + computedProperties {
      text += "\t" + property.description.replacingOccurrences(of: "\n", with: "\n\t") + "\n"
    }
    return text + "}"
  }

  /// Whether two schemas describe the same type: the same class name, properties and primary
  /// key.
  public static func == (a: ObjectSchema, b: ObjectSchema) -> Bool {
    a === b
      || (a.className == b.className && a.isEmbedded == b.isEmbedded && a.properties == b.properties
        && a.computedProperties == b.computedProperties && a.primaryKeyProperty == b.primaryKeyProperty)
  }

  // MARK: The process-wide table

  nonisolated(unsafe) private static var schemas: [ObjectIdentifier: ObjectSchema] = [:]
  private static let lock = Lock()

  /// The schema of a class, discovered on first use.
  /// The schema of a model class by its name, among the classes whose schema this process has
  /// discovered (Linux has no list of a program's classes to look a name up in).
  static func named(_ className: String) -> ObjectSchema? {
    lock.withLock { schemas.values.first { $0.className == className && !($0.objectClass is DynamicObject.Type) } }
  }

  static func of(_ objectClass: ObjectBase.Type) -> ObjectSchema {
    let key = ObjectIdentifier(objectClass)
    let thread = ThreadState.current
    if let schema = thread.schemas[key] { return schema }
    if let schema = lock.withLock({ schemas[key] }) {
      thread.schemas[key] = schema
      return schema
    }
    // Discovered outside the lock: constructing the prototype may discover other classes.
    let schema = ObjectSchema(objectClass: objectClass)
    return lock.withLock {
      if let existing = schemas[key] { return existing }
      schemas[key] = schema
      return schema
    }
  }

  /// Every schema discovered in the process so far.
  static var known: [ObjectSchema] { lock.withLock { Array(schemas.values) } }
}

/// The origin of a `LinkingObjects` property, read from its initial value at discovery.
protocol LinkingObjectsDescriptor {
  var originClass: ObjectBase.Type { get }
  var originProperty: String { get }
}

/// One property of an object type, as Realm's `Property`.
public final class Property: CustomStringConvertible, Equatable, @unchecked Sendable {
  /// The Swift name.
  public let name: String
  /// The stored field name (the Swift name unless `propertiesMapping()` maps it).
  public let columnName: String
  /// The type of the value, or of the elements of a collection.
  public let type: PropertyType
  /// Whether the value (or each element) may be nil.
  public let isOptional: Bool
  /// Whether the property is a `List`.
  public let isArray: Bool
  /// Whether the property is a `MutableSet`.
  public let isSet: Bool
  /// Whether the property is a `Map`.
  public let isMap: Bool
  /// Whether the property is the primary key.
  public let isPrimary: Bool
  /// Whether the property is indexed (primary keys are).
  public let isIndexed: Bool
  /// The linked or embedded type's name, for `.object` and `.linkingObjects` properties.
  public let objectClassName: String?
  /// For `LinkingObjects`: the property of ``objectClassName`` that links here.
  public let linkOriginPropertyName: String?

  let ordinal: Int
  let codec: PropertyCodec
  let shape: _ReefKind.Shape
  /// The linked, embedded or origin class.
  let objectClass: ObjectBase.Type?
  /// For an integer property: its width in bits.
  let bits: Int
  /// Whether the property links to top-level objects (a to-one link or a list or set of them).
  let isLink: Bool
  /// Whether the property holds embedded objects.
  let isEmbedded: Bool
  /// Whether the property's type is a `CustomPersistable`, stored as its persisted type.
  let isCustomMapped: Bool

  init(
    name: String, columnName: String, kind: _ReefKind, flags: PropertyFlags, ordinal: Int, codec: PropertyCodec,
    origin: LinkingObjectsDescriptor?
  ) {
    self.name = name
    self.columnName = columnName
    self.shape = kind.shape
    self.ordinal = ordinal
    self.codec = codec
    isPrimary = flags.contains(.primaryKey)
    isIndexed = flags.contains(.indexed) || isPrimary
    var element = kind.shape
    var arrays = (list: false, set: false, map: false)
    switch element {
    case .list(let inner): (arrays.list, element) = (true, inner)
    case .set(let inner): (arrays.set, element) = (true, inner)
    case .map(let inner): (arrays.map, element) = (true, inner)
    default: break
    }
    (isArray, isSet, isMap) = arrays
    var optional = false
    if case .optional(let inner) = element { (optional, element) = (true, inner) }
    if case .enumeration(let raw) = element { element = raw }
    var custom = false
    if case .custom(let persisted) = element { (custom, element) = (true, persisted) }
    isCustomMapped = custom
    isOptional = optional
    var bits = 0
    switch element {
    case .scalar(let type, let width):
      self.type = type
      bits = width
      objectClass = nil
    case .object(let objectClass):
      type = .object
      self.objectClass = objectClass
    case .linkingObjects(let objectClass):
      type = .linkingObjects
      self.objectClass = origin?.originClass ?? objectClass
    default:
      type = .any
      objectClass = nil
    }
    self.bits = bits
    isLink = type == .object && !(objectClass is EmbeddedObject.Type)
    isEmbedded = type == .object && objectClass is EmbeddedObject.Type
    objectClassName = objectClass?.className()
    linkOriginPropertyName = origin?.originProperty
  }

  /// The type as a model declares it: `String?`, `List<Dog>`, `LinkingObjects<User>`.
  public var typeDescription: String {
    let element: String
    switch type {
    case .object, .linkingObjects: element = objectClassName ?? "?"
    case .int: element = bits == 64 || bits == 0 ? "Int" : "Int\(bits)"
    case .objectId: element = "ObjectId"
    case .uuid: element = "UUID"
    case .decimal128: element = "Decimal128"
    case .any: element = "AnyReefValue"
    default: element = type.rawValue.prefix(1).uppercased() + type.rawValue.dropFirst()
    }
    let value = isOptional ? "\(element)?" : element
    if type == .linkingObjects { return "LinkingObjects<\(element)>" }
    if isArray { return "List<\(value)>" }
    if isSet { return "MutableSet<\(value)>" }
    if isMap { return "Map<String, \(value)>" }
    return value
  }

  /// Realm's form: the name, then the type, the linked class, the stored name and the flags,
  /// one per line.
  public var description: String {
    func flag(_ value: Bool) -> String { value ? "YES" : "NO" }
    var text = "\(name) {\n\ttype = \(type.realmName);\n"
    if type == .object || type == .linkingObjects {
      text += "\tobjectClassName = \(objectClassName ?? "(null)");\n"
      text += "\tlinkOriginPropertyName = \(linkOriginPropertyName ?? "(null)");\n"
    }
    text += "\tcolumnName = \(columnName);\n\tindexed = \(flag(isIndexed));\n\tisPrimary = \(flag(isPrimary));\n"
    text += "\tarray = \(flag(isArray));\n\tset = \(flag(isSet));\n\tdictionary = \(flag(isMap));\n"
    return text + "\toptional = \(flag(isOptional));\n}"
  }

  /// Whether two properties are declared alike: name, type, flags and linked class.
  public static func == (a: Property, b: Property) -> Bool {
    a === b
      || (a.name == b.name && a.columnName == b.columnName && a.type == b.type && a.isOptional == b.isOptional
        && a.isArray == b.isArray && a.isSet == b.isSet && a.isMap == b.isMap && a.isPrimary == b.isPrimary
        && a.isIndexed == b.isIndexed && a.objectClassName == b.objectClassName
        && a.linkOriginPropertyName == b.linkOriginPropertyName)
  }
}

extension _ReefKind.Shape {
  /// Whether the property is stored in the document (all but `LinkingObjects`).
  var isStored: Bool {
    if case .linkingObjects = self { return false }
    return true
  }
}
