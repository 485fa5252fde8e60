import Foundation
import ReefBSON
import ReefSwift
import Testing

/// `reef.schema` as Realm's `Schema`, `ObjectSchema` and `Property`.
@Suite struct SchemaTypeTests {
  @Test func theSchemaListsTheTypesByClassName() throws {
    let (reef, _) = try openReef(types: [Probe.self, Tenant.self])
    let schema = reef.schema
    let names = schema.objectSchema.map(\.className)
    #expect(names == names.sorted())
    #expect(Set(names) == ["Probe", "ProbeSample", "Tenant", "Building", "Flat", "Doorbell", "Landlord", "Parrot"])
    #expect(schema["Probe"]?.className == "Probe")
    #expect(schema["NoSuchClass"] == nil)
    #expect(schema["Object"] == nil && schema["EmbeddedObject"] == nil)
    #expect(schema.description.hasPrefix("Schema {\n\tBuilding (embedded) {\n\t\tstreet {"), "\(schema.description)")
  }

  @Test func withoutObjectTypesTheSchemaHoldsTheTypesTheProcessKnows() throws {
    _ = Probe()
    let (reef, _) = try openReef()
    #expect(reef.schema["Probe"] != nil, "a type used before, anywhere in the process")
    #expect(reef.schema["BareObject"] == nil, "a type the schema check refuses is not listed")
    let (other, _) = try openReef("other")
    #expect(reef.schema["Probe"] == other.schema["Probe"])
  }

  @Test func anObjectSchemaHasTheStoredPropertiesAndTheLinkingObjectsApart() throws {
    let schema = Probe().objectSchema
    #expect(schema.className == "Probe" && !schema.isEmbedded)
    #expect(schema.properties.first?.name == "id" && schema.properties.count == 30)
    #expect(!schema.properties.contains { $0.name == "partners" || $0.name == "scratch" })
    #expect(schema.computedProperties.map(\.name) == ["partners"])
    let partners = try #require(schema["partners"])
    #expect(partners.type == .linkingObjects && partners.objectClassName == "Probe")
    #expect(partners.linkOriginPropertyName == "partner")
    #expect(schema.primaryKeyProperty?.name == "id")
    #expect(schema["nope"] == nil)
    #expect(ProbeSample().objectSchema.isEmbedded)
    #expect(Probe.sharedSchema() == schema && Object.sharedSchema() == nil)
    #expect(try openReef(types: [Probe.self]).0.schema["Probe"] == schema)
  }

  @Test func eachPropertySaysItsTypeAndFlags() throws {
    let schema = try #require(Probe.sharedSchema())
    func property(_ name: String) throws -> Property { try #require(schema[name]) }
    #expect(try property("id").type == .int && property("id").isPrimary && property("id").isIndexed)
    #expect(try property("small").type == .int && !property("small").isOptional && !property("small").isIndexed)
    #expect(try property("ratio").type == .float && property("reading").type == .double)
    #expect(try property("label").type == .string && property("bytes").type == .data)
    #expect(try property("seen").type == .date && property("amount").type == .decimal128)
    #expect(try property("token").type == .objectId && property("uuid").type == PropertyType.UUID)
    #expect(try property("level").type == .int, "an enum by its raw type")
    #expect(try property("optionalLabel").isOptional && property("optionalLevel").isOptional)
    #expect(try property("anything").type == .any)
    let partner = try property("partner")
    #expect(partner.type == .object && partner.objectClassName == "Probe" && partner.isOptional)
    #expect(try property("samples").isArray && property("samples").objectClassName == "ProbeSample")
    #expect(try property("tags").isSet && property("tags").type == .string && !property("tags").isArray)
    #expect(try property("limits").isMap && property("optionalLimits").isOptional)
    #expect(try property("smalls").isArray && !property("smalls").isOptional && property("optionalSmalls").isOptional)
    #expect(try property("legacy").isOptional && property("legacy").type == .int)
    #expect(try property("small") == property("small") && property("small") != property("medium"))
  }

  @Test func descriptionsAreInRealmsForm() throws {
    let schema = try #require(ProbeSample.sharedSchema())
    let expected = """
      ProbeSample (embedded) {
      \treading {
      \t\ttype = int;
      \t\tcolumnName = reading;
      \t\tindexed = NO;
      \t\tisPrimary = NO;
      \t\tarray = NO;
      \t\tset = NO;
      \t\tdictionary = NO;
      \t\toptional = NO;
      \t}
      \tnote {
      \t\ttype = string;
      \t\tcolumnName = note;
      \t\tindexed = NO;
      \t\tisPrimary = NO;
      \t\tarray = NO;
      \t\tset = NO;
      \t\tdictionary = NO;
      \t\toptional = YES;
      \t}
      }
      """
    #expect(schema.description == expected)
    let partner = try #require(Probe.sharedSchema()?["partners"])
    #expect(partner.description.hasPrefix("partners {\n\ttype = linking objects;\n\tobjectClassName = Probe;\n"))
    #expect(partner.description.contains("\tlinkOriginPropertyName = partner;\n"))
  }

  @Test func theJSONSchemaStaysReachableAsJSONSchema() throws {
    let (reef, _) = try openReef()
    try reef.write { reef.add(Probe(value: ["id": 1])) }
    let json = try #require(try reef.jsonSchema["Probe"])
    #expect(json["title"] == "Probe" && json["bsonType"] == "object")
  }

  @Test func aModelWhoseOnlyPropertiesAreLinkingObjectsIsStoredAndLinkedTo() throws {
    #expect(ProbeFan().objectSchema.properties.isEmpty)
    #expect(ProbeFan().objectSchema.computedProperties.map(\.name) == ["admirers"])
    let (reef, _) = try openReef(types: [ProbeFan.self, ProbeAdmirer.self])
    let fan = ProbeFan()
    try reef.write {
      reef.add(fan)
      reef.create(ProbeAdmirer.self, value: ["name": "a", "idol": fan])
      reef.create(ProbeAdmirer.self, value: ["name": "b", "idol": fan])
    }
    #expect(reef.objects(ProbeFan.self).count == 1)
    #expect(Set(fan.admirers.map(\.name)) == ["a", "b"])
    #expect(reef.schema["ProbeFan"] != nil)
  }

  @Test func ignoredPropertiesDefaultsToNoneAndNamesNoStoredProperty() throws {
    #expect(Object.ignoredProperties().isEmpty && Probe.ignoredProperties().isEmpty)
    #expect(LegacyIgnoringProbe.ignoredProperties() == ["runtimeOnly"])
    #expect(LegacyIgnoringProbe().objectSchema["runtimeOnly"] == nil)
    let (reef, _) = try openReef(types: [LegacyIgnoringProbe.self])
    try reef.write { reef.add(LegacyIgnoringProbe()) }
    #expect(reef.objects(LegacyIgnoringProbe.self).count == 1)
  }

  @Test func aPersistedPropertyNamedInIgnoredPropertiesIsRefused() {
    do {
      _ = try openReef(types: [IgnoringProbe.self])
      Issue.record("the schema check took a @Persisted property named in ignoredProperties()")
    } catch let error as ReefError {
      #expect(error.kind == .schema && error.property == "dropped", "\(error)")
      #expect(error.message.contains("remove @Persisted"))
    } catch {
      Issue.record("unexpected \(error)")
    }
  }
}
