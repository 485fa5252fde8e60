import ReefBSON
import ReefStore

/// What `add` and `create` do when an object with the same primary key exists.
public enum UpdatePolicy: Int, Sendable {
  /// Record ``ReefError/Kind/primaryKeyExists``: `write` throws it and rolls back.
  case error = 1
  /// Replace every property. Embedded objects are replaced: their old accessors are
  /// invalidated.
  case all = 2
  /// Write the properties that changed. Embedded objects are updated in place: their accessors
  /// stay valid.
  case modified = 3
}

extension Reef {
  /// Adds an unmanaged object, and the unmanaged objects it links to, in the write transaction.
  /// The object becomes managed: live, reading and writing the file.
  ///
  /// Called without `try`: a broken rule (a duplicate primary key with `.error`, an embedded
  /// object that already has a parent, a linked object of another file) is recorded and `write`
  /// throws it. Adding a managed object of this `Reef` does nothing.
  ///
  /// As Realm's, these stop the program at the call: adding an object managed by a `Reef` of
  /// another file ("Object is already managed by another Reef. Use create instead to copy it
  /// into this Reef."), a deleted or invalidated object, or an object whose type has no
  /// primary key with `.modified` or `.all`.
  /// - Parameters:
  ///   - object: The object; the unmanaged objects it links to are added with it.
  ///   - update: What to do when an object with its primary key exists.
  public func add(_ object: Object, update: UpdatePolicy = .error) {
    requireWriteTransaction()
    if let managed = object._managed {
      if managed.reef.store !== store {
        reefStop("Object is already managed by another Reef. Use create instead to copy it into this Reef.")
      }
      if managed.currentDocument() == nil {
        reefStop("Adding a deleted or invalidated object to a Reef is not permitted")
      }
    } else if update != .error {
      Reef.requirePrimaryKey(ObjectSchema.of(type(of: object)))
    }
    do {
      _ = try addObject(object, policy: update)
    } catch {
      record(error)
    }
  }

  /// Adds each object of a sequence (see ``add(_:update:)``).
  public func add<S: Sequence>(_ objects: S, update: UpdatePolicy = .error) where S.Element: Object {
    for object in objects { add(object, update: update) }
  }

  /// Adds an object and returns its identity (the primary key, or the `_id`).
  func addObject(_ object: ObjectBase, policy: UpdatePolicy) throws(ReefError) -> BSON {
    let objectClass = type(of: object)
    if let managed = object._managed {
      guard managed.reef.store === store else {
        throw ReefError(.wrongReef, "the object belongs to another Reef file", type: objectClass.className())
      }
      guard let document = managed.currentDocument() else {
        throw ReefError(
          .invalidated, "the object has been deleted", type: objectClass.className(), primaryKey: managed.id)
      }
      return identity(of: managed.schema, document: document)
    }
    if object is EmbeddedObject {
      throw ReefError(
        .embeddedObjectAdded,
        "an embedded object cannot be added to a Reef directly: assign it to a property of its parent",
        type: objectClass.className())
    }
    let schema = try register(objectClass)
    let transaction = try storeCall { () throws(StoreError) in try self.transaction() }
    // Reused: an add without embedded objects then allocates none (a link's target added
    // meanwhile takes another).
    let attachments = spareAttachments.popLast() ?? Attachments()
    defer {
      attachments.reset()
      spareAttachments.append(attachments)
    }
    let context = writeContext(path: [], attachments: attachments, policy: policy)
    // A new ObjectId only when the primary key is not the `_id` (making one reads the clock).
    var id: BSON
    let identity: BSON
    if let key = schema.primaryKeyProperty {
      identity = try key.codec.encode(at: object.valuePointer(key.ordinal), context)
      id = schema.primaryKeyIsID ? identity : .objectId(ObjectId())
    } else {
      id = .objectId(ObjectId())
      identity = id
    }
    var existing: Document?
    if policy != .error, schema.primaryKeyProperty != nil {
      existing = try storeCall(type: schema.className) { () throws(StoreError) in
        try self.document(of: schema, identity: identity)
      }
      if let existingID = existing?["_id"] { id = existingID }
    }
    beginAdding(object, identity: identity)
    defer { endAdding(object) }
    let document = try ObjectEncoding.document(of: object, schema: schema, id: id, context)
    let collection = transaction.collection(schema.className)
    do throws(StoreError) {
      if existing != nil {
        if policy == .all {
          for property in schema.allProperties where property.isEmbedded {
            bumpEpoch(EpochKey(type: schema.className, id: id, path: "").child(property.columnName))
          }
        }
        try collection.replaceDocument(forID: id, with: document)
      } else {
        try collection.insert(document)
      }
    } catch {
      if error.kind == .duplicateKey {
        throw ReefError(
          .primaryKeyExists,
          "an object of type \(schema.className) with primary key \(identity) exists already; add it with update: .modified or .all to change it",
          type: schema.className, property: schema.primaryKeyProperty?.name, primaryKey: identity, storeError: error)
      }
      throw ReefError(error, type: schema.className)
    }
    noteChange(schema.className, structural: existing == nil)
    let state = ManagedObject(reef: self, schema: schema, id: id, document: document)
    for property in schema.allProperties {
      if let collection = property.codec.collection(at: object.valuePointer(property.ordinal)) {
        collection.attach(to: state, property: property)
        state.setAccessor(property.ordinal, collection as AnyObject)
      }
    }
    object.becomeManaged(state)
    attachments.attach(to: state)
    return identity
  }

  /// Creates an object from a dictionary of property values (by name; other keys are ignored),
  /// an array in property order, or another object, adds it and returns it, as Realm's
  /// `create`: each value is converted as Realm converts it (an `Int` for an `Int8`, `NSNull`
  /// for nil, a dictionary or an array for a linked or embedded object), and the objects given
  /// as values are copied into this `Reef` (an object it manages already is linked, not
  /// copied; the objects given stay as they were).
  ///
  /// With `.modified` or `.all`, when an object with the given primary key exists, the
  /// properties in a dictionary are set on it (the others are left as they are), or every
  /// property for an array or an object, and it is returned.
  ///
  /// A value that does not fit its property stops with Realm's message ("Invalid value 'x' of
  /// type 'String' for 'int' property 'Dog.age'."), as Realm raises it at the call;
  /// ``create(_:validating:update:)`` throws instead. So does `.modified` or `.all` for a type
  /// without a primary key ("'Dog' does not have a primary key and can not be updated"). The
  /// rules `add` records (a duplicate primary key) make `write` throw.
  /// - Parameters:
  ///   - type: The object type.
  ///   - value: A dictionary of property values, an array in property order, or an object.
  ///   - update: What to do when an object with the given primary key exists.
  /// - Returns: The object created (or updated), managed.
  @discardableResult
  public func create<T: Object>(_ type: T.Type, value: Any = [String: Any](), update: UpdatePolicy = .error) -> T {
    do {
      return try create(type, validating: value, update: update)
    } catch {
      reefStop(error.message)
    }
  }

  /// ``create(_:value:update:)`` that throws when a value does not fit, for values from outside
  /// the program (JSON, say); nothing is created then.
  /// - Throws: ``ReefError`` of kind ``ReefError/Kind/invalidValue`` with Realm's message.
  @discardableResult
  public func create<T: Object>(_ type: T.Type, validating value: Any, update: UpdatePolicy = .error)
    throws(ReefError) -> T
  {
    requireWriteTransaction()
    let schema: ObjectSchema
    do {
      schema = try register(type)
    } catch {
      record(error)
      return T()
    }
    if update != .error { Reef.requirePrimaryKey(schema) }
    let population = ObjectPopulation(copyingFor: self)
    // Through the metatype given, which may be a subclass of T (dynamicCreate passes one).
    let object = type.init()
    try population.populateChecked(object, from: value)
    if update != .error, let key = schema.primaryKeyProperty, let dictionary = value as? [String: Any],
      let existing = self.object(ofType: type, forPrimaryKey: object.rawValue(key)), let managed = existing._managed
    {
      // Only the properties the dictionary names change.
      for (property, _) in try population.entries(of: dictionary, for: schema) where !property.isPrimary {
        if !property.codec.set(managed, property, object.rawValue(property)) {
          throw ReefError(
            .invalidValue, property.invalidValueMessage(object.rawValue(property), className: schema.className),
            type: schema.className, property: property.name)
        }
      }
      return existing
    }
    add(object, update: update)
    return object
  }

  /// Deletes a managed object. A top-level object's links from other objects are removed in
  /// the same transaction (to-one links and map values become nil, lists and sets lose it); its
  /// embedded objects go with it. An embedded object is removed from its parent.
  public func delete(_ object: ObjectBase) {
    delete(all: [object])
  }

  /// Deletes each object of a sequence (see ``delete(_:)``). The links to them are removed
  /// once for all of them.
  public func delete<S: Sequence>(_ objects: S) where S.Element: ObjectBase {
    delete(all: Array(objects))
  }

  /// Deletes every object of a ``Results``.
  public func delete<Element: Object>(_ results: Results<Element>) {
    delete(all: Array(results))
  }

  /// Stops, with Realm's message, for an update policy other than `.error` on a type without a
  /// primary key.
  static func requirePrimaryKey(_ schema: ObjectSchema) {
    if schema.primaryKeyProperty == nil && !schema.isEmbedded {
      reefStop("'\(schema.className)' does not have a primary key and can not be updated")
    }
  }

  /// Deletes objects in order, then removes the links to the top-level ones, type by type.
  ///
  /// As Realm's, an object that is not managed by this file's `Reef` stops the program ("Can
  /// only delete an object from the Reef it belongs to."), and so does one deleted already
  /// ("Object has been deleted or invalidated.").
  private func delete(all objects: [ObjectBase]) {
    requireWriteTransaction()
    var deleted: [(type: String, identities: [BSON])] = []
    for object in objects {
      guard let (type, identity) = deleteOne(object) else { continue }
      if let position = deleted.firstIndex(where: { $0.type == type }) {
        deleted[position].identities.append(identity)
      } else {
        deleted.append((type, [identity]))
      }
    }
    for (type, identities) in deleted {
      do throws(StoreError) {
        try LinkMap.removeLinks(
          to: type, identities: Identities(identities), in: try self.transaction(), registered: registeredSchemas)
      } catch {
        record(error, type: type)
      }
    }
  }

  /// Deletes one object; for a top-level object, returns its type and identity, whose links
  /// are still to be removed.
  private func deleteOne(_ object: ObjectBase) -> (type: String, identity: BSON)? {
    guard let managed = object._managed, managed.reef.store === store else {
      reefStop(
        "Can only delete an object from the Reef it belongs to. (\(type(of: object).className()) is \(object._managed == nil ? "unmanaged" : "managed by a Reef of another file"))"
      )
    }
    guard let document = managed.currentDocument() else {
      reefStop("Object has been deleted or invalidated. (\(managed.schema.className) with _id \(managed.id))")
    }
    if let parent = managed.parent {
      // Its document was found, so it has a place.
      guard let step = managed.step else { return nil }
      // A list element's token leaves its list; a map value's entry moves on, and any other
      // embedded object's place.
      if managed.mapKey != nil {
        bumpEpoch(managed.placeKey)
      } else if managed.place == nil {
        bumpEpoch(managed.epochKey)
      }
      parent.removeChild(step)
      return nil
    }
    var deleted: (type: String, identity: BSON)?
    do throws(StoreError) {
      try self.transaction().collection(managed.schema.className).deleteDocument(forID: managed.id)
      deleted = (managed.schema.className, identity(of: managed.schema, document: document))
    } catch {
      record(error, type: managed.schema.className)
    }
    managed.invalidate()
    noteChange(nil, structural: true)
    return deleted
  }

  /// Deletes every object of every type this file holds.
  public func deleteAll() {
    requireWriteTransaction()
    do throws(StoreError) {
      let transaction = try self.transaction()
      var names = Set(registeredSchemas.filter { !$0.isEmbedded }.map(\.className))
      for (name, _) in try transaction.jsonSchemas() { names.insert(name) }
      for name in names.sorted() { try transaction.collection(name).deleteMany([:]) }
    } catch {
      record(error)
    }
    noteChange(nil, structural: true)
  }

}

extension ManagedObject {
  /// Removes the embedded object at `step`: sets the field (or the map's value, whose key stays,
  /// as Realm does) to null, or removes the element (whose accessors are then invalidated; the
  /// others of its list follow their objects).
  func removeChild(_ step: PathStep) {
    var document = liveDocument()
    if let index = step.index {
      guard let element = document.element(forKey: step.field), let array = element.document else { return }
      var values = Array(array).map(\.value)
      guard index < values.count else { return }
      let place = reef.listPlace(placeKey.child(step.field))
      var tokens = place.tokens(count: values.count, fresh: reef.freshListToken)
      values.remove(at: index)
      tokens.remove(at: index)
      document.set(.array(BSONArray(values)), forKey: step.field)
      store(document)
      reef.changeListPlace(place, to: tokens)
    } else if let key = step.key {
      guard let element = document.element(forKey: step.field), element.type == .document,
        var map = element.document
      else { return }
      map.set(.null, forKey: key)
      document.set(.document(map), forKey: step.field)
      store(document)
    } else {
      document.set(.null, forKey: step.field)
      store(document)
    }
  }
}
