import ReefBSON
import ReefStore

/// What an object observer reads and compares besides its own document: the objects its key
/// paths reach through links, and whether its document still fits its type.
struct ObjectWatch {
  /// A key path through a link (`owner.name`, `dogs.age`): the link property, the linked
  /// type, and the stored path in it.
  struct LinkPath {
    let property: Property
    let target: ObjectSchema
    let path: String
  }

  let schema: ObjectSchema
  let linkPaths: [LinkPath]

  init(schema: ObjectSchema, keyPaths: [String]?) {
    self.schema = schema
    var linkPaths: [LinkPath] = []
    for keyPath in keyPaths ?? [] {
      let parts = keyPath.split(separator: ".", maxSplits: 1).map(String.init)
      guard parts.count == 2, let property = schema.property(named: parts[0]), property.isLink,
        let objectClass = property.objectClass
      else { continue }
      let target = ObjectSchema.of(objectClass)
      linkPaths.append(LinkPath(property: property, target: target, path: ChangePaths.stored(parts[1], schema: target)))
    }
    self.linkPaths = linkPaths
  }

  /// Whether the batch changed a collection the key paths reach through links.
  func touchesLinks(_ batch: ChangeBatch) -> Bool {
    linkPaths.contains { ChangePaths.touches($0.target.className, batch: batch) }
  }

  /// Whether the objects `document` links to through `property` changed, in `batch`, at the
  /// key paths that go through it.
  func linkedChange(_ property: Property, document: Document, batch: ChangeBatch, reef: Reef) -> Bool {
    for link in linkPaths where link.property === property {
      guard ChangePaths.touches(link.target.className, batch: batch) else { continue }
      let identities = ChangePaths.linkValues(document[property.columnName])
      guard !identities.isEmpty else { continue }
      guard let modified = ChangePaths.modifiedIDs(in: link.target.className, batch: batch, paths: [link.path]) else {
        return true
      }
      if identities.contains(where: { identity in
        ChangePaths.linkedID(identity, schema: link.target, reef: reef).map(modified.contains) ?? false
      }) {
        return true
      }
    }
    return false
  }

  /// The first property of `document` whose value does not fit its type (reading it would
  /// stop), as an error about `object`.
  func mismatch(_ document: Document, object: ManagedObject) -> ReefError? {
    for property in schema.allProperties where property.shape.isStored {
      guard !ObjectWatch.fits(property, object, in: document) else { continue }
      return ReefError(
        .documentMismatch, object.mismatch(property, document.element(forKey: property.columnName)),
        type: schema.className, property: property.name, primaryKey: object.id)
    }
    return nil
  }
}

extension ObjectWatch {
  /// Whether the stored value of `property` reads without stopping: a collection's field is an
  /// array (a map's, a document) or missing, and its elements fit (a link to an object that is
  /// gone is no element: it is skipped); another property's value decodes.
  static func fits(_ property: Property, _ owner: ManagedObject, in document: Document) -> Bool {
    guard property.isArray || property.isSet || property.isMap else {
      return property.codec.fits(owner, property, in: document)
    }
    guard let field = document.element(forKey: property.columnName), field.type != .null else { return true }
    guard field.type == (property.isMap ? .document : .array) else { return false }
    return property.isLink || property.codec.fits(owner, property, in: document)
  }
}

extension ManagedObject {
  /// The document for a notification: nil when the object is gone; an error when the store
  /// cannot read it.
  func notificationDocument() -> Result<Document?, ReefError> {
    if let document = currentDocument() { return .success(document) }
    guard parent == nil else { return .success(nil) }
    // Gone, or not read: the store says which.
    do {
      return .success(try reef.transaction().collection(schema.className).document(forID: id))
    } catch {
      return .failure(ReefError(error, type: schema.className))
    }
  }
}
