import ReefBSON
import ReefStore

/// An object whose properties are read and written by name, for code that knows its type only
/// by name: Realm's `DynamicObject`, which ``Reef/dynamicObjects(_:)`` returns and migrations
/// hand out (``MigrationObject`` is its other name).
///
/// ```swift
/// for person in reef.dynamicObjects("Person") {
///     print(person["name"] as! String)
/// }
/// ```
/// Read from a `Reef`, it is a managed object of the named type: `object["name"]` reads what
/// `person.name` would; a link reads as the linked type's object (`object["dog"] as? Dog`), and a
/// list or set of objects as the object's live `List<DynamicObject>` or
/// `MutableSet<DynamicObject>` (``Object/dynamicList(_:)``). In a migration it reads and writes the stored
/// document (see ``Migration``).
public final class DynamicObject: Object {
  /// In a migration: the stored object it stands for.
  var migrationRecord: MigrationRecord?

  /// An empty, unmanaged dynamic object (it has no properties).
  public required init() { super.init() }

  init(migrationRecord: MigrationRecord) {
    super.init()
    self.migrationRecord = migrationRecord
  }

  /// A property's value by name (see ``DynamicObject``), for ``ObjectBase/value(forKey:)``.
  func dynamicValue(_ key: String) -> Any? {
    if let migrationRecord { return migrationRecord.value(forKey: key) }
    guard let managed = _managed else { return nil }
    guard let property = managed.schema.property(named: key) else {
      reefStop("Invalid property name '\(key)' for class '\(managed.schema.className)'.")
    }
    if property.type == .object, property.isArray { return dynamicList(key) }
    if property.type == .object, property.isSet { return dynamicMutableSet(key) }
    // In Realm's form, as `value(forKey:)` gives it (a number as an `NSNumber`).
    return property.codec.dynamicValue(managed, property)
  }

  /// Sets a property by name (see ``DynamicObject``), for ``ObjectBase/setValue(_:forKey:)``;
  /// false when this is a managed object, which the typed path sets.
  func setDynamicValue(_ value: Any?, forKey key: String) -> Bool {
    guard let migrationRecord else { return false }
    migrationRecord.setValue(value, forKey: key)
    return true
  }
}

/// A stored object as a migration block sees it: Realm's `MigrationObject`.
public typealias MigrationObject = DynamicObject

extension Reef {
  /// The schema of a top-level type by name: one this `Reef` uses, or a model class of the
  /// program seen already (it is then taken, as by ``objects(_:)``); stops, with Realm's
  /// message, for a name no model has.
  func dynamicSchema(_ typeName: String) -> ObjectSchema {
    if let schema = schema(named: typeName) ?? ObjectSchema.named(typeName), !schema.isEmbedded {
      return registerOrStop(schema.objectClass)
    }
    reefStop("Object type '\(typeName)' is not managed by the Reef.")
  }

  /// Every object of a type named by a string, as ``DynamicObject``s: Realm's
  /// `dynamicObjects(_:)`. The type must be a model class of the program that has been used
  /// (Linux has no list of a program's classes to find it by name otherwise: see
  /// ``Configuration/objectTypes``); another name stops ("Object type 'X' is not managed by
  /// the Reef.").
  /// - Parameter typeName: The type's name (its class name, or its `className()`).
  /// - Returns: Live results of dynamic objects of that type.
  public func dynamicObjects(_ typeName: String) -> Results<DynamicObject> {
    checkThread()
    return Results(reef: self, schema: dynamicSchema(typeName))
  }

  /// The object of a type named by a string with a primary key, as a ``DynamicObject``, or nil:
  /// Realm's `dynamicObject(ofType:forPrimaryKey:)`.
  /// - Parameters:
  ///   - typeName: The type's name (see ``dynamicObjects(_:)``).
  ///   - key: The primary key's value.
  public func dynamicObject(ofType typeName: String, forPrimaryKey key: Any) -> DynamicObject? {
    checkThread()
    let schema = dynamicSchema(typeName)
    guard let keyProperty = schema.primaryKeyProperty else {
      reefStop("'\(typeName)' does not have a primary key")
    }
    guard let identity = BSONArgument.bson(key), identity != .null || keyProperty.isOptional else { return nil }
    let found: Document?
    do {
      found = try document(of: schema, identity: identity)
    } catch {
      reefStop("reading \(typeName) with primary key \(identity) failed: \(error)")
    }
    return found.map { object(DynamicObject.self, schema: schema, document: $0) }
  }

  /// Creates an object of a type named by a string, as ``create(_:value:update:)`` does, and
  /// returns it as a ``DynamicObject``: Realm's `dynamicCreate`.
  /// - Parameters:
  ///   - typeName: The type's name (see ``dynamicObjects(_:)``).
  ///   - value: A dictionary of property values, an array in property order, or an object.
  ///   - update: What to do when an object with the given primary key exists.
  /// - Returns: The object created (or updated).
  @discardableResult
  public func dynamicCreate(_ typeName: String, value: Any = [String: Any](), update: UpdatePolicy = .error)
    -> DynamicObject
  {
    requireWriteTransaction()
    if let named = schema(named: typeName) ?? ObjectSchema.named(typeName), named.isEmbedded {
      reefStop("Embedded objects cannot be created directly")
    }
    let schema = dynamicSchema(typeName)
    guard let objectClass = schema.objectClass as? Object.Type else {
      reefStop("Object type '\(typeName)' is not managed by the Reef.")
    }
    let created = create(objectClass, value: value, update: update)
    guard let managed = created._managed, let document = managed.currentDocument() else {
      // The create recorded an error (write throws it): an unmanaged stand-in.
      return DynamicObject()
    }
    return object(DynamicObject.self, schema: schema, document: document)
  }
}
