import ReefBSON

/// Fills unmanaged objects from the values given to `init(value:)`, `create` and dynamic
/// access, as Realm reads them: a dictionary of property values by name (other keys are
/// ignored), an array of values in property order, or another object whose properties are
/// read; a dictionary or an array given for a linked or embedded object becomes one, and each
/// value is converted for its property (see `DynamicValues.swift`).
final class ObjectPopulation {
  /// For `create`: the `Reef` the object is created in. Then every object given as a value that
  /// this `Reef` does not manage (an unmanaged one, one of another file, an embedded one) is
  /// copied, as Realm copies it, and the objects it manages are linked. nil for `init(value:)`
  /// and dynamic access, which take the objects given (a managed embedded object is copied:
  /// it has one parent).
  let reef: Reef?
  /// The copies made, by original (see ``CopyKey``): an object graph with a cycle is copied
  /// once. The originals are held, so that no key is reused while the copies are made.
  private var copies: [CopyKey: (original: ObjectBase, copy: ObjectBase)] = [:]

  /// Names an object given as a value: an unmanaged one by instance; a managed one by its file
  /// and its place there (each read of a link makes a new accessor of the same object).
  private enum CopyKey: Hashable {
    case instance(ObjectIdentifier)
    case stored(file: ObjectIdentifier, path: String)

    init(_ object: ObjectBase) {
      if let managed = object._managed {
        self = .stored(file: ObjectIdentifier(managed.reef.store), path: managed.identityPath)
      } else {
        self = .instance(ObjectIdentifier(object))
      }
    }
  }

  init(copyingFor reef: Reef?) { self.reef = reef }

  /// Sets the properties of an unmanaged object from `value`; a value that does not fit stops
  /// with Realm's message.
  func populate(_ object: ObjectBase, from value: Any) {
    do {
      try populateChecked(object, from: value)
    } catch {
      reefStop(error.message)
    }
  }

  /// ``populate(_:from:)`` that throws instead of stopping.
  /// - Throws: ``ReefError/Kind/invalidValue`` with Realm's message.
  func populateChecked(_ object: ObjectBase, from value: Any) throws(ReefError) {
    let schema = object.objectSchema
    // An object made from another is its copy: a cycle back to the original links here.
    if let source = value as? ObjectBase, copies[CopyKey(source)] == nil { copies[CopyKey(source)] = (source, object) }
    for (property, item) in try entries(of: value, for: schema) {
      try set(property, of: object, className: schema.className, to: item)
    }
  }

  /// The stored properties `value` gives values for, with their values, in property order: a
  /// dictionary's keys that name properties, an array's values by position, another object's
  /// properties of the same names.
  /// - Throws: ``ReefError/Kind/invalidValue`` for an array longer than the properties, or a
  ///   value that is none of these.
  func entries(of value: Any, for schema: ObjectSchema) throws(ReefError) -> [(Property, Any?)] {
    let properties = schema.storedProperties
    if let dictionary = value as? [String: Any] {
      return properties.compactMap { property in
        guard let item = dictionary[property.name] ?? dictionary[property.columnName] else { return nil }
        return (property, item)
      }
    }
    if let array = value as? [Any] {
      guard array.count <= properties.count else {
        throw invalid(
          "Invalid array input: more values (\(array.count)) than properties (\(properties.count)).", schema, nil)
      }
      return zip(properties, array).map { ($0, $1) }
    }
    if let other = value as? ObjectBase {
      let otherSchema = other.objectSchema
      return properties.compactMap { property in
        guard let source = otherSchema.property(named: property.name), source.shape.isStored else { return nil }
        return (property, other.rawValue(source))
      }
    }
    throw invalid(
      "Invalid value '\(value)' of type '\(type(of: value))' to initialize an object of type '\(schema.className)': expected a dictionary, an array or an object",
      schema, nil)
  }

  /// Sets one property of an unmanaged object.
  /// - Throws: ``ReefError/Kind/invalidValue`` with Realm's message when the value does not fit.
  func set(_ property: Property, of object: ObjectBase, className: String, to value: Any?) throws(ReefError) {
    let converted = try convert(property, value, className: className)
    guard property.codec.set(converted as Any, at: object.valuePointer(property.ordinal)) else {
      throw ReefError(
        .invalidValue, property.invalidValueMessage(value, className: className), type: className,
        property: property.name)
    }
  }

  /// A value for a property with its objects made: a dictionary or an array given for a linked
  /// or embedded object (or for each element of a list, set or map of them) becomes one, and an
  /// object that must be copied is. Other values are returned as they are, for the property's
  /// own conversion.
  func convert(_ property: Property, _ value: Any?, className: String) throws(ReefError) -> Any? {
    guard let objectClass = property.objectClass, property.type == .object else { return value }
    guard let value = DynamicValue.unwrap(value) else { return nil }
    if property.isMap {
      guard let entries = DynamicValue.entries(of: value) else { return value }
      var pairs: [(String, Any)] = []
      for (key, item) in entries { pairs.append((key, try object(objectClass, from: item) as Any)) }
      return pairs
    }
    if property.isArray || property.isSet {
      guard let items = DynamicValue.elements(of: value) else { return value }
      var objects: [Any] = []
      for item in items {
        guard let object = try object(objectClass, from: item) else {
          throw ReefError(
            .invalidValue, "Invalid nil value for \(property.isSet ? "set" : "array") of '\(objectClass.className())'.",
            type: className, property: property.name)
        }
        objects.append(object)
      }
      return objects
    }
    return try object(objectClass, from: value)
  }

  /// The object for a value given for `objectClass`: the object itself, a copy of it, or a new
  /// one made from a dictionary or an array; nil for nil; the value itself for anything else
  /// (which the property then refuses).
  private func object(_ objectClass: ObjectBase.Type, from value: Any?) throws(ReefError) -> Any? {
    guard let value = DynamicValue.unwrap(value) else { return nil }
    if let object = value as? ObjectBase {
      if type(of: object) == objectClass && !mustCopy(object) { return object }
      return try copy(object, as: objectClass)
    }
    guard value is [String: Any] || value is [Any] else { return value }
    let made = objectClass.init()
    try populateChecked(made, from: value)
    return made
  }

  /// Whether an object given as a value is copied rather than used.
  private func mustCopy(_ object: ObjectBase) -> Bool {
    if object is EmbeddedObject { return object._managed != nil || reef != nil }
    guard let reef else { return false }
    guard let managed = object._managed else { return true }
    return managed.reef.store !== reef.store
  }

  /// A new unmanaged `objectClass` with the properties of `object`, made once per original.
  private func copy(_ object: ObjectBase, as objectClass: ObjectBase.Type) throws(ReefError) -> ObjectBase {
    let key = CopyKey(object)
    if let made = copies[key] { return made.copy }
    let made = objectClass.init()
    copies[key] = (object, made)
    try populateChecked(made, from: object)
    return made
  }

  private func invalid(_ message: String, _ schema: ObjectSchema, _ property: Property?) -> ReefError {
    ReefError(.invalidValue, message, type: schema.className, property: property?.name)
  }
}

extension ObjectBase {
  /// A property's value as its Swift type, by name; nil for a name that is not a property.
  func rawValue(forKey key: String) -> Any? {
    guard let property = objectSchema.property(named: key) else { return nil }
    return rawValue(property)
  }

  /// A property's value as its Swift type (a managed object's read from the store).
  func rawValue(_ property: Property) -> Any {
    if let _managed { return property.codec.get(_managed, property) }
    return property.codec.value(at: valuePointer(property.ordinal))
  }
}
