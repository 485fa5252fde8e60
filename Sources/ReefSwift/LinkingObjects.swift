import ReefBSON

/// The objects that link to this one through a property: Realm's inverse relationship,
/// computed through an index on the origin property, never stored.
///
/// ```swift
/// class Task: Object {
///     @Persisted(originProperty: "tasks") var assignee: LinkingObjects<User>
/// }
/// ```
public final class LinkingObjects<Element: Object>: RandomAccessCollection, LinkingObjectsDescriptor, ManagedCollection,
  CustomStringConvertible
{
  /// The property of `Element` that links here.
  public let propertyName: String
  private(set) var owner: ManagedObject?
  /// This property of `owner` (set with it).
  private(set) var property: Property?

  var originClass: ObjectBase.Type { Element.self }
  var originProperty: String { propertyName }

  /// Linking objects of `type` through its property `property` (the older API's spelling;
  /// `@Persisted(originProperty:)` says the same).
  public init(fromType type: Element.Type, property: String) {
    propertyName = property
  }

  func attach(to owner: ManagedObject, property: Property) {
    self.owner = owner
    self.property = property
  }

  /// Whether the object these link to has been deleted (or its `Reef` invalidated): then they
  /// are empty. False for an unmanaged object's.
  public var isInvalidated: Bool { owner.map { $0.currentDocument() == nil } ?? false }

  /// The linking objects as ``Results`` (empty for an unmanaged object).
  public var results: [Element] {
    guard let owner, let document = owner.currentDocument() else { return [] }
    let reef = owner.reef
    let origin = ObjectSchema.of(Element.self)
    guard let property = origin.property(named: propertyName) else { return [] }
    if owner.parent != nil {
      // An embedded object's parent is its only backlink.
      guard let parent = owner.parent, parent.schema.objectClass == Element.self,
        owner.field == property.columnName,
        let object = parent.makeObject() as? Element
      else { return [] }
      return [object]
    }
    let identity = reef.identity(of: owner.schema, document: document)
    return Array(reef.objects(Element.self).filter(document: [property.columnName: identity]))
  }

  public var startIndex: Int { 0 }
  public var endIndex: Int { results.count }
  /// The linking object at `position`.
  public subscript(position: Int) -> Element { results[position] }
  public var description: String { "LinkingObjects<\(Element.self)> \(results.count) objects" }
}

extension LinkingObjects: _Persistable {
  public static var _reefKind: _ReefKind { _ReefKind(.linkingObjects(Element.self)) }
  public static func _reefDefault() -> LinkingObjects { LinkingObjects(fromType: Element.self, property: "") }
  public static func _reefDecode(_ element: Document.Element?, _ context: _ReadContext) -> LinkingObjects? {
    LinkingObjects(fromType: Element.self, property: "")
  }
  public func _reefEncode(_ context: _WriteContext) -> BSON { .null }
  public static func _reefGet(_ owner: ManagedObject, _ property: Property) -> LinkingObjects {
    owner.collectionAccessor(property) {
      LinkingObjects(fromType: Element.self, property: property.linkOriginPropertyName ?? "")
    }
  }
  public static func _reefSet(_ owner: ManagedObject, _ property: Property, _ value: LinkingObjects) {
    preconditionFailure("LinkingObjects are computed from the links that point here; they cannot be set")
  }
}

extension Persisted {
  /// The inverse of `originProperty` of `O`: the `O` objects whose `originProperty` links here.
  public init<O: Object>(originProperty: String) where Value == LinkingObjects<O> {
    self.init(value: LinkingObjects(fromType: O.self, property: originProperty), flags: [])
  }
}
