// Key-value coding as Realm's objects have it (`value(forKey:)`, `setValue(_:forKey:)`,
// `value(forKeyPath:)`), over the schema: no Objective-C runtime.

extension ObjectBase {
  /// The value of the property named `key`, in Realm's form: a number as an `NSNumber` (it
  /// casts to every numeric type that holds it: `object.value(forKey: "age") as! Int` for an
  /// `Int8` property), an enum as its raw value, a `CustomPersistable` as its persisted value, an
  /// `AnyReefValue` as what it holds, nil for nil, and the live `List`, `MutableSet`, `Map`
  /// or `LinkingObjects` of a collection property.
  ///
  /// A name that is not a property stops with Realm's message: "Invalid property name 'x' for
  /// class 'Dog'.".
  public final func value(forKey key: String) -> Any? {
    if let dynamic = self as? DynamicObject { return dynamic.dynamicValue(key) }
    let property = property(forKey: key)
    if let _managed { return property.codec.dynamicValue(_managed, property) }
    return property.codec.dynamicValue(at: valuePointer(property.ordinal))
  }

  /// Sets the property named `key`, converting `value` as Realm does: a number of another type
  /// that the property holds exactly, nil or `NSNull` for nil (or an empty collection), a raw
  /// value for an enum, an array or any sequence for a `List` or `MutableSet` (its elements
  /// are copied into the object's own collection), a dictionary for a `Map`, a dictionary or an
  /// array for a linked or embedded object.
  ///
  /// Setting a managed object's property needs a write transaction. A name that is not a
  /// property, a `LinkingObjects` property, or a value that does not fit stops with Realm's
  /// message ("Invalid value 'x' of type 'String' for 'int' property 'Dog.age'.").
  public final func setValue(_ value: Any?, forKey key: String) {
    if let dynamic = self as? DynamicObject, dynamic.setDynamicValue(value, forKey: key) { return }
    let schema = objectSchema
    let property = property(forKey: key)
    if property.type == .linkingObjects {
      reefStop("Cannot modify read-only property '\(schema.className).\(property.name)': LinkingObjects are computed")
    }
    let converted: Any?
    do {
      converted = try ObjectPopulation(copyingFor: nil).convert(property, value, className: schema.className)
    } catch {
      reefStop(error.message)
    }
    let fits =
      if let _managed { property.codec.set(_managed, property, converted as Any) } else {
        property.codec.set(converted as Any, at: valuePointer(property.ordinal))
      }
    if !fits { reefStop(property.invalidValueMessage(value, className: schema.className)) }
  }

  /// The value at a dotted path of properties (`"owner.address.city"`), each step read with
  /// ``value(forKey:)``: nil once a step is nil; through a `List`, `MutableSet`,
  /// `LinkingObjects` or `Results`, the values of its elements (see their
  /// `value(forKeyPath:)`).
  ///
  /// A step that is not a property, or a path that continues past a value that is not an
  /// object, stops with Realm's message.
  ///
  /// - Complexity: O(n) in the number of steps (times the elements of each collection).
  public final func value(forKeyPath keyPath: String) -> Any? {
    guard let dot = keyPath.firstIndex(of: ".") else { return value(forKey: keyPath) }
    let head = String(keyPath[..<dot])
    let rest = String(keyPath[keyPath.index(after: dot)...])
    return ObjectBase.value(forKeyPath: rest, of: value(forKey: head), after: head, in: objectSchema.className)
  }

  /// Sets the value at a dotted path of properties: the last step is set with
  /// ``setValue(_:forKey:)`` on the object the steps before lead to.
  ///
  /// The steps before the last must lead to an object: otherwise (or for a name that is not a
  /// property) the call stops with Realm's message.
  public final func setValue(_ value: Any?, forKeyPath keyPath: String) {
    guard let dot = keyPath.lastIndex(of: ".") else { return setValue(value, forKey: keyPath) }
    let head = String(keyPath[..<dot])
    let last = String(keyPath[keyPath.index(after: dot)...])
    guard let object = self.value(forKeyPath: head) as? ObjectBase else {
      reefStop("Invalid key path '\(keyPath)' for class '\(objectSchema.className)': '\(head)' is not an object")
    }
    object.setValue(value, forKey: last)
  }

  /// The property named `key`, or a stop with Realm's message.
  private func property(forKey key: String) -> Property {
    let schema = objectSchema
    guard let property = schema.property(named: key) else {
      reefStop("Invalid property name '\(key)' for class '\(schema.className)'.")
    }
    return property
  }

  /// The rest of a key path read from the value at its first step.
  static func value(forKeyPath rest: String, of value: Any?, after head: String, in className: String) -> Any? {
    guard let value else { return nil }
    if let object = value as? ObjectBase { return object.value(forKeyPath: rest) }
    if let collection = value as? KeyValueCodingCollection { return collection.value(forKeyPath: rest) }
    reefStop("Invalid key path '\(head).\(rest)' for class '\(className)': '\(head)' is not an object")
  }
}
