import Foundation
import ReefBSON
import ReefSwift
import Testing

// Models that break one schema rule each: a Reef must refuse them, naming type and property.

class KeyedEmbedded: EmbeddedObject {
  @Persisted(primaryKey: true) var code = 0
  @Persisted var text = ""
}

class KeyedEmbeddedHolder: Object {
  @Persisted var inner: KeyedEmbedded?
}

class DoubleKeyed: Object {
  @Persisted(primaryKey: true) var value = 0.0
}

class BoolKeyed: Object {
  @Persisted(primaryKey: true) var value = false
}

class DateKeyed: Object {
  @Persisted(primaryKey: true) var value = Date(timeIntervalSince1970: 0)
}

class TwoKeys: Object {
  @Persisted(primaryKey: true) var first = 0
  @Persisted(primaryKey: true) var second = ""
}

class MissingOrigin: Object {
  @Persisted var name = ""
  @Persisted(originProperty: "nonexistent") var fans: LinkingObjects<OriginSource>
}

class OriginSource: Object {
  @Persisted var name = ""
  @Persisted var count = 0
  @Persisted var other: OriginElsewhere?
}

class OriginElsewhere: Object {
  @Persisted var name = ""
}

/// The origin property exists but is an Int, not a link.
class OriginNotALink: Object {
  @Persisted var name = ""
  @Persisted(originProperty: "count") var fans: LinkingObjects<OriginSource>
}

/// The origin property links to another type than this one.
class OriginLinksElsewhere: Object {
  @Persisted var name = ""
  @Persisted(originProperty: "other") var fans: LinkingObjects<OriginSource>
}

class CycleLeft: EmbeddedObject {
  @Persisted var right: CycleRight?
}

class CycleRight: EmbeddedObject {
  @Persisted var left: CycleLeft?
}

class CycleHolder: Object {
  @Persisted var left: CycleLeft?
}

class SelfNested: EmbeddedObject {
  @Persisted var child: SelfNested?
}

class SelfNestedHolder: Object {
  @Persisted var root: SelfNested?
}

class Orphan: EmbeddedObject {
  @Persisted var text = ""
}

class OrphanNeighbour: Object {
  @Persisted var text = ""
}

class FakeID: Object {
  @Persisted var code = 0
  @Persisted var name = ""
  override class func propertiesMapping() -> [String: String] { ["code": "_id"] }
}

class NamedIDNotKey: Object {
  @Persisted var _id: ObjectId
  @Persisted var name = ""
}

@Suite struct SchemaRuleTests {
  /// Opens a fresh file with `types` as its object types and returns the error it throws.
  private func openError(_ types: [ObjectBase.Type]) -> ReefError? {
    do {
      _ = try openReef(types: types)
      return nil
    } catch let error as ReefError {
      return error
    } catch {
      Issue.record("unexpected error \(error)")
      return nil
    }
  }

  /// Adds `object` to a fresh file opened without object types (the type is first used in the
  /// write) and returns the error `write` throws.
  private func firstUseError(_ object: Object) throws -> ReefError? {
    let (reef, _) = try openReef()
    do {
      try reef.write { reef.add(object) }
      return nil
    } catch let error as ReefError {
      return error
    }
  }

  private func expectSchemaError(
    _ error: ReefError?, type: String, property: String?, mentioning words: [String] = [],
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    guard let error else {
      Issue.record("no error: the rule was not checked", sourceLocation: sourceLocation)
      return
    }
    #expect(error.kind == .schema, "\(error)", sourceLocation: sourceLocation)
    #expect(error.typeName == type, "\(error)", sourceLocation: sourceLocation)
    #expect(error.property == property, "\(error)", sourceLocation: sourceLocation)
    for word in words {
      #expect(error.description.contains(word), "\(error) does not mention \(word)", sourceLocation: sourceLocation)
    }
  }

  @Test func aPrimaryKeyOnAnEmbeddedTypeIsRefusedWhenTheReefOpens() {
    expectSchemaError(
      openError([KeyedEmbeddedHolder.self, KeyedEmbedded.self]), type: "KeyedEmbedded", property: "code",
      mentioning: ["primary key"])
  }

  @Test func aPrimaryKeyOnAnEmbeddedTypeIsRefusedWhenTheTypeIsFirstUsed() throws {
    expectSchemaError(try firstUseError(KeyedEmbeddedHolder()), type: "KeyedEmbedded", property: "code")
  }

  @Test func aPrimaryKeyOfAWrongTypeIsRefused() throws {
    let cases: [(Object.Type, String)] = [
      (DoubleKeyed.self, "Double"), (BoolKeyed.self, "Bool"), (DateKeyed.self, "Date"),
    ]
    for (type, typeName) in cases {
      expectSchemaError(openError([type]), type: type.className(), property: "value", mentioning: [typeName])
      expectSchemaError(try firstUseError(type.init()), type: type.className(), property: "value")
    }
  }

  @Test func twoPrimaryKeysAreRefused() throws {
    expectSchemaError(openError([TwoKeys.self]), type: "TwoKeys", property: "second", mentioning: ["first"])
    expectSchemaError(try firstUseError(TwoKeys()), type: "TwoKeys", property: "second")
  }

  @Test func linkingObjectsWhoseOriginDoesNotExistAreRefused() throws {
    expectSchemaError(
      openError([MissingOrigin.self, OriginSource.self, OriginElsewhere.self]), type: "MissingOrigin",
      property: "fans", mentioning: ["nonexistent"])
    expectSchemaError(try firstUseError(MissingOrigin()), type: "MissingOrigin", property: "fans")
  }

  @Test func linkingObjectsWhoseOriginIsNotALinkAreRefused() throws {
    expectSchemaError(
      openError([OriginNotALink.self, OriginSource.self, OriginElsewhere.self]), type: "OriginNotALink",
      property: "fans", mentioning: ["count"])
    expectSchemaError(try firstUseError(OriginNotALink()), type: "OriginNotALink", property: "fans")
  }

  @Test func linkingObjectsWhoseOriginLinksToAnotherTypeAreRefused() throws {
    expectSchemaError(
      openError([OriginLinksElsewhere.self, OriginSource.self, OriginElsewhere.self]), type: "OriginLinksElsewhere",
      property: "fans", mentioning: ["other"])
    expectSchemaError(try firstUseError(OriginLinksElsewhere()), type: "OriginLinksElsewhere", property: "fans")
  }

  @Test func aCycleOfEmbeddedTypesIsRefused() throws {
    let error = openError([CycleHolder.self, CycleLeft.self, CycleRight.self])
    #expect(error?.kind == .schema)
    #expect(error?.typeName == "CycleLeft" || error?.typeName == "CycleRight")
    #expect(error?.property == "right" || error?.property == "left")
  }

  @Test func anEmbeddedTypeThatEmbedsItselfIsRefused() throws {
    let error = openError([SelfNestedHolder.self, SelfNested.self])
    #expect(error?.kind == .schema)
    #expect(error?.typeName == "SelfNested")
    #expect(error?.property == "child")
  }

  @Test func anEmbeddedTypeReachableFromNoTopLevelTypeIsRefused() {
    expectSchemaError(
      openError([OrphanNeighbour.self, Orphan.self]), type: "Orphan", property: nil, mentioning: ["reachable"])
  }

  @Test func anEmbeddedTypeReachableFromATopLevelTypeIsAccepted() throws {
    _ = try openReef(types: [Tenant.self, Building.self, Flat.self, Doorbell.self, Landlord.self, Parrot.self])
  }

  @Test func aPropertyMappedToIDThatIsNotThePrimaryKeyIsRefused() throws {
    expectSchemaError(openError([FakeID.self]), type: "FakeID", property: "code", mentioning: ["_id"])
    expectSchemaError(try firstUseError(FakeID()), type: "FakeID", property: "code")
  }

  @Test func aPropertyNamedIDThatIsNotThePrimaryKeyIsRefused() throws {
    expectSchemaError(openError([NamedIDNotKey.self]), type: "NamedIDNotKey", property: "_id")
  }

  @Test func everyBrokenRuleIsListedInTheMessage() {
    let error = openError([DoubleKeyed.self, TwoKeys.self])
    #expect(error?.description.contains("DoubleKeyed") == true)
    #expect(error?.description.contains("TwoKeys") == true)
  }

  @Test func theSchemaOfAGoodModelListsItsProperties() throws {
    let (reef, _) = try openReef(types: [
      Tenant.self, Building.self, Flat.self, Doorbell.self, Landlord.self, Parrot.self,
    ])
    let tenant = Tenant()
    let schema = tenant.objectSchema
    #expect(schema.className == "Tenant")
    #expect(schema.primaryKeyProperty?.name == "id")
    #expect(!schema.isEmbedded)
    #expect(
      schema.properties.map(\.name) == [
        "id", "name", "age", "score", "nickname", "home", "buildings", "landlord", "pets", "partner",
      ])
    #expect(schema["home"]?.type == .object)
    #expect(schema["home"]?.objectClassName == "Building")
    #expect(schema["buildings"]?.isArray == true)
    #expect(schema["nickname"]?.isOptional == true)
    #expect(Building().objectSchema.isEmbedded)
    try reef.write { reef.add(tenant) }
    #expect(tenant.objectSchema.className == "Tenant", "a managed object has the same schema")
  }
}

class IndexedLink: Object {
  @Persisted(indexed: true) var home: Building?
}

class LegacyKey: Object {
  @Persisted var name = ""
  override class func primaryKey() -> String? { "missing" }
}

class TwoColumns: Object {
  @Persisted var first = ""
  @Persisted var second = ""
  override class func propertiesMapping() -> [String: String] { ["second": "first"] }
}

@Suite struct MoreSchemaRuleTests {
  private func openError(_ types: [ObjectBase.Type]) -> ReefError? {
    do {
      _ = try openReef(types: types)
      return nil
    } catch {
      return error as? ReefError
    }
  }

  @Test func anIndexOnAnEmbeddedObjectPropertyIsRefused() {
    let error = openError([IndexedLink.self, Building.self, Flat.self, Doorbell.self])
    #expect(error?.kind == .schema)
    #expect(error?.typeName == "IndexedLink" && error?.property == "home", "\(String(describing: error))")
  }

  @Test func aLegacyPrimaryKeyThatIsNoPropertyIsRefused() {
    let error = openError([LegacyKey.self])
    #expect(error?.kind == .schema)
    #expect(error?.typeName == "LegacyKey" && error?.description.contains("missing") == true)
  }

  @Test func twoPropertiesStoredUnderOneNameAreRefused() {
    let error = openError([TwoColumns.self])
    #expect(error?.kind == .schema)
    #expect(error?.typeName == "TwoColumns" && error?.property == "second", "\(String(describing: error))")
  }
}

class EmbeddedInSet: Object {
  @Persisted var places: MutableSet<Doorbell>
}

@Suite struct CollectionSchemaRuleTests {
  @Test func anEmbeddedTypeInAMutableSetIsRefused() throws {
    do {
      _ = try openReef(types: [EmbeddedInSet.self, Doorbell.self])
      Issue.record("the Reef opened")
    } catch let error as ReefError {
      #expect(error.kind == .schema)
      #expect(error.typeName == "EmbeddedInSet" && error.property == "places", "\(error)")
    }
    let (reef, _) = try openReef()
    #expect(throws: ReefError.self) { try reef.write { reef.add(EmbeddedInSet()) } }
  }

  // An embedded object cannot be an AnyReefValue: its `.object` case takes an `Object`, and an
  // `EmbeddedObject` is not one, so the rule holds by the types.
}
