import ReefBSON

// A managed object's collections of objects by property name, whatever their element type, as
// `DynamicObject`s: Realm's `dynamicList(_:)`, `dynamicMutableSet(_:)` and `dynamicMap(_:)`.

extension Object {
  /// The list of objects of the property named `propertyName`, its elements as
  /// ``DynamicObject``s: Realm's `dynamicList(_:)`, for code that knows the list only by name.
  ///
  /// The list is the object's own, live (it reads what the object holds now; changing it needs a
  /// write transaction) and frozen with a frozen object. In a migration it is the
  /// `List<MigrationObject>` the object gives out for the property.
  ///
  /// A name that is not a property of the object's type, a property that is not a list of
  /// objects, or an object that is not managed stops, with Realm's message for the name
  /// ("Invalid property name 'x' for class 'T'.").
  /// - Parameter propertyName: The list property's name.
  public func dynamicList(_ propertyName: String) -> List<DynamicObject> {
    if let record = (self as? DynamicObject)?.migrationRecord {
      guard let list = record.value(forKey: propertyName) as? List<DynamicObject> else {
        reefStop("Property '\(propertyName)' of '\(record.typeName)' is not a list of objects.")
      }
      return list
    }
    let (managed, property) = dynamicCollectionProperty(propertyName, "list") { $0.isArray }
    let list = List<DynamicObject>()
    list.attach(to: managed, property: property)
    return list
  }

  /// The set of objects of the property named `propertyName`, its elements as
  /// ``DynamicObject``s: Realm's `dynamicMutableSet(_:)`. Live, as ``dynamicList(_:)``.
  ///
  /// A name that is not a property of the object's type, a property that is not a set of
  /// objects, or an object that is not managed stops, with Realm's message for the name.
  /// - Parameter propertyName: The set property's name.
  public func dynamicMutableSet(_ propertyName: String) -> MutableSet<DynamicObject> {
    let (managed, property) = dynamicCollectionProperty(propertyName, "set") { $0.isSet }
    let set = MutableSet<DynamicObject>()
    set.attach(to: managed, property: property)
    return set
  }

  /// The map of objects of the property named `propertyName`, its values as optional
  /// ``DynamicObject``s: Realm's `dynamicMap(_:)`. Live, as ``dynamicList(_:)``.
  ///
  /// A name that is not a property of the object's type, a property that is not a map of
  /// objects, or an object that is not managed stops, with Realm's message for the name.
  /// - Parameter propertyName: The map property's name.
  public func dynamicMap<Key: _ReefMapKey>(_ propertyName: String) -> Map<Key, DynamicObject?> {
    let (managed, property) = dynamicCollectionProperty(propertyName, "map") { $0.isMap }
    let map = Map<Key, DynamicObject?>()
    map.attach(to: managed, property: property)
    return map
  }

  /// The managed state and the property of a collection of objects named `name`, or a stop.
  private func dynamicCollectionProperty(
    _ name: String, _ kind: String, _ isKind: (Property) -> Bool
  ) -> (ManagedObject, Property) {
    let schema = objectSchema
    guard let property = schema.property(named: name) else {
      reefStop("Invalid property name '\(name)' for class '\(schema.className)'.")
    }
    guard property.type == .object, isKind(property) else {
      reefStop("Property '\(name)' of '\(schema.className)' is not a \(kind) of objects.")
    }
    guard let managed = _managed else {
      reefStop("Cannot read '\(name)' of an unmanaged '\(schema.className)' as dynamic objects: add the object first.")
    }
    return (managed, property)
  }
}

extension DynamicObject {
  /// The element of a collection of objects as a dynamic object of the collection's element
  /// type (a linked object, or an embedded one at its place), or nil for a link to an object
  /// that is gone: how a `List<DynamicObject>` of a typed property reads its elements.
  static func decode(_ element: Document.Element, _ context: _ReadContext) -> DynamicObject? {
    guard let owner = context.owner else { return nil }
    let reef = owner.reef
    guard let property = owner.schema.properties.first(where: { $0.columnName == context.field }),
      let target = property.objectClass
    else {
      reefStop(
        "'\(owner.schema.className).\(context.field)' does not hold objects: it cannot be read as dynamic objects")
    }
    let schema = reef.registerOrStop(target)
    guard schema.isEmbedded else {
      guard let document = reef.storedDocument(of: schema, identity: element.value) else { return nil }
      return reef.object(DynamicObject.self, schema: schema, document: document)
    }
    guard element.type == .document else { return nil }
    let object = unsafeDowncast(reef.construct(DynamicObject.self), to: DynamicObject.self)
    object._managed = ManagedObject(
      reef: reef, schema: schema, parent: owner,
      step: PathStep(field: context.field, index: context.index, key: context.key), knownPlace: context.place,
      document: element.document)
    return object
  }
}
