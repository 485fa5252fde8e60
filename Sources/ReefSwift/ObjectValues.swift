import ReefBSON
import ReefStore

// How objects are stored as values: a link as its target's primary key (or `_id`), an embedded
// object as a subdocument.

extension Object: _ReefOptionalWrappable, _ReefCollectionElement {
  public static var _reefKind: _ReefKind { _ReefKind(.object(Self.self)) }
  public static var _reefNilWhenUnreadable: Bool { true }

  /// The linked object the stored key names; nil for a link to an object that is gone.
  public static func _reefDecode(_ element: Document.Element?, _ context: _ReadContext) -> Self? {
    guard let element, element.type != .null, let owner = context.owner else { return nil }
    // A collection of another type read as dynamic objects (`dynamicList(_:)`).
    if Self.self == DynamicObject.self {
      return DynamicObject.decode(element, context).map { unsafeDowncast($0, to: Self.self) }
    }
    return owner.reef.linkedObject(Self.self, identity: element.value) as? Self
  }

  /// The primary key (or `_id`) of the linked object, which is added first when unmanaged.
  public func _reefEncode(_ context: _WriteContext) throws(ReefError) -> BSON {
    guard let reef = context.reef else {
      throw ReefError(.wrongReef, "a link can only be written by a Reef", type: Self.className())
    }
    if let managed = _managed {
      guard managed.reef.store === reef.store else {
        throw ReefError(.wrongReef, "the linked object belongs to another Reef file", type: Self.className())
      }
      guard let document = managed.currentDocument() else {
        throw ReefError(
          .invalidated, "the linked object has been deleted", type: Self.className(), primaryKey: managed.id)
      }
      return reef.identity(of: managed.schema, document: document)
    }
    if let identity = reef.identityBeingAdded(self) { return identity }
    return try reef.addObject(self, policy: context.policy)
  }
}

extension EmbeddedObject: _ReefOptionalWrappable, _ReefCollectionElement {
  public static var _reefKind: _ReefKind { _ReefKind(.object(Self.self)) }

  /// The embedded object at the element's place in its parent.
  public static func _reefDecode(_ element: Document.Element?, _ context: _ReadContext) -> Self? {
    guard let element, element.type == .document, let owner = context.owner else { return nil }
    let reef = owner.reef
    let schema: ObjectSchema
    do {
      schema = try reef.register(Self.self)
    } catch {
      return nil
    }
    let object = reef.construct(Self.self)
    // The subdocument was read from the owner's current document: the first property read
    // needs no walk from the parent.
    object._managed = ManagedObject(
      reef: reef, schema: schema, parent: owner,
      step: PathStep(field: context.field, index: context.index, key: context.key), knownPlace: context.place,
      document: element.document)
    return unsafeDowncast(object, to: Self.self)
  }

  /// The subdocument of an unmanaged embedded object, which becomes managed at its place once
  /// the change is stored.
  /// - Throws: ``ReefError/Kind/embeddedObjectHasParent`` for an object that already has a
  ///   parent.
  public func _reefEncode(_ context: _WriteContext) throws(ReefError) -> BSON {
    try encode(context) { (fields) throws(ReefError) in
      var builder = DocumentBuilder()
      try fields(&builder)
      return .document(builder.document)
    }
  }

  /// Writes the subdocument in place.
  public func _reefAppend(_ key: String, to builder: inout DocumentBuilder, _ context: _WriteContext)
    throws(ReefError)
  {
    try encode(context) { (fields) throws(ReefError) in try builder.appendDocument(key, fields) }
  }

  /// Writes the subdocument in place, as an array element.
  public func _reefAppend(to array: inout ArrayBuilder, _ context: _WriteContext) throws(ReefError) {
    try encode(context) { (fields) throws(ReefError) in try array.appendDocument(fields) }
  }

  /// Encodes the object with `write`, which calls the function it is given with the builder of
  /// the subdocument (a fresh one, or one writing in place): the object is checked to be
  /// unmanaged first, and is recorded to become managed at `context.path` once written.
  private func encode<Written>(
    _ context: _WriteContext,
    _ write: (_ fields: (inout DocumentBuilder) throws(ReefError) -> Void) throws(ReefError) -> Written
  ) throws(ReefError) -> Written {
    try requireUnmanaged()
    let schema = ObjectSchema.of(Self.self)
    let written = try write { (fields) throws(ReefError) in
      try ObjectEncoding.append(self, schema: schema, id: nil, to: &fields, context)
    }
    try context.attach(self)
    return written
  }

  /// Throws unless the object is unmanaged: an embedded object has one parent.
  private func requireUnmanaged() throws(ReefError) {
    guard let managed = _managed else { return }
    if managed.currentDocument() == nil {
      throw ReefError(.invalidated, "the embedded object has been deleted", type: Self.className())
    }
    throw ReefError(
      .embeddedObjectHasParent,
      "an embedded object has exactly one parent: this \(Self.className()) is already embedded in \(managed.top.schema.className) with _id \(managed.id) at \(managed.pathDescription); assign a new object, or a copy (\(Self.className())(value: object))",
      type: Self.className())
  }
}

extension _ReefValue {
  public static var _reefNilWhenUnreadable: Bool { false }
}

/// Encodes unmanaged objects as documents.
enum ObjectEncoding {
  /// The document of an unmanaged object: `_id` first when given, then each stored property in
  /// declaration order.
  static func document(of object: ObjectBase, schema: ObjectSchema, id: BSON?, _ context: _WriteContext)
    throws(ReefError)
    -> Document
  {
    var builder = DocumentBuilder()
    try append(object, schema: schema, id: id, to: &builder, context)
    return builder.document
  }

  /// Appends the fields of an unmanaged object to a document being built (its own, or the
  /// subdocument of an embedded object), each value written in place.
  static func append(
    _ object: ObjectBase, schema: ObjectSchema, id: BSON?, to builder: inout DocumentBuilder, _ context: _WriteContext
  ) throws(ReefError) {
    reefRequire(object._managed == nil, "only unmanaged objects are encoded")
    if let id { builder.append("_id", id) }
    // An object without properties has no storage.
    guard let storage = object._storage, let offsets = object._layout?.offsets else { return }
    for property in schema.storedProperties {
      if id != nil && property.columnName == "_id" { continue }
      // Only embedded objects need their path (they become managed there): other values are
      // encoded without making one (and without copying the context, which a conditional
      // expression would).
      let value = storage + offsets[property.ordinal]
      if property.isEmbedded {
        try property.codec.append(
          at: value, property.columnName, to: &builder, context.appending(property.columnName))
      } else {
        try property.codec.append(at: value, property.columnName, to: &builder, context)
      }
    }
  }
}
