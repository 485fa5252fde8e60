import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import Testing

/// An embedded type with an indexed property, embedded by two top-level types.
class Locker: EmbeddedObject {
  @Persisted(indexed: true) var code = ""
  @Persisted var size = 0
}

class Gym: Object {
  @Persisted var name = ""
  @Persisted var locker: Locker?
}

class School: Object {
  @Persisted(primaryKey: true) var name = ""
  @Persisted(indexed: true) var district = 0
  @Persisted var lockers: List<Locker>
}

/// The model a migration renames a property of.
class Renamed: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var fullName = ""
}

@Suite struct StorageTests {
  @Test func fieldsAreStoredInDeclarationOrderWithIDFirst() throws {
    let (reef, _) = try openReef()
    try reef.write { reef.add(makeTenant(1, home: makeBuilding("Paris"))) }
    let stored = try #require(try storedTenant(reef, 1))
    #expect(
      stored.keys == [
        "_id", "id", "name", "age", "score", "nickname", "home", "buildings", "landlord", "pets", "partner",
      ])
    #expect(stored["_id"]?.type == .objectId, "a hidden ObjectId _id")
    #expect(stored["id"] == .int64(1))
    #expect(stored["score"] == .double(0))
    #expect(stored["nickname"] == .null)
    #expect(stored["landlord"] == .null)
    #expect(stored["pets"] == .array([]))
    guard case .document(let home)? = stored["home"] else {
      Issue.record("home is not a subdocument")
      return
    }
    #expect(home.keys == ["street", "city", "flat", "flats"], "embedded objects have no _id")
  }

  @Test func typesAreStoredAsMongoDBStoresThem() throws {
    let (reef, _) = try openReef()
    let gauge = Gauge()
    gauge.stamp = Date(timeIntervalSince1970: 1.5)
    gauge.decimal = Decimal128(3)
    gauge.blob = Data([9])
    try reef.write { reef.add(gauge) }
    let stored = try #require(try reef.store.read { try $0.collection("Gauge").findOne() })
    #expect(stored["_id"]?.type == .objectId, "a primary key named id is not _id")
    #expect(stored["id"] == .int64(0))
    #expect(stored["small"]?.type == .int64)
    #expect(stored["stamp"] == .datetime(BSONDateTime(millisecondsSinceEpoch: 1500)))
    #expect(stored["decimal"] == .decimal128(Decimal128(3)))
    #expect(stored["blob"] == .binary(Binary(subtype: .generic, data: [9])))
    #expect(stored["uuid"] == .binary(Binary(uuid: gauge.uuid.uuid)))
    #expect(stored["level"] == "low")
  }

  @Test func defaultValuesOfKeysAreNew() {
    #expect(Ticket()._id != Ticket()._id, "each new object gets a new ObjectId")
    #expect(Badge().uuid != Badge().uuid, "each new object gets a new UUID")
    let tenant = Tenant()
    #expect(tenant.id == 0 && tenant.name == "" && tenant.nickname == nil && tenant.home == nil)
    #expect(tenant.buildings.isEmpty)
  }

  @Test func anIndexedPropertyOfAnEmbeddedTypeIsIndexedInEveryTypeThatEmbedsIt() throws {
    let (reef, _) = try openReef(types: [Gym.self, School.self, Locker.self])
    let names = { (collection: String) throws -> Set<String> in
      Set(
        try reef.store.read { try $0.collection(collection).listIndexes() }.compactMap { index -> String? in
          if case .string(let name)? = index["name"] { return name }
          return nil
        })
    }
    try reef.write { reef.add(Gym()) }
    let gym = try names("Gym")
    let school = try names("School")
    #expect(gym.contains("locker.code_1"), "\(gym)")
    #expect(school.contains("lockers.code_1"), "\(school)")
    #expect(school.contains("district_1"))
    #expect(school.contains("name_1"), "a primary key not stored as _id gets a unique index")
  }

  @Test func theJSONSchemaHasRealmsForm() throws {
    let (reef, _) = try openReef(types: [School.self, Locker.self])
    let schema = try #require(try reef.jsonSchema["School"])
    #expect(schema["title"] == "School")
    #expect(schema["bsonType"] == "object")
    guard case .array(let required)? = schema["required"], case .document(let properties)? = schema["properties"] else {
      Issue.record("no required or properties in \(schema)")
      return
    }
    #expect(Array(required).contains("name") && Array(required).contains("_id"))
    #expect(properties["district"] == .document(["bsonType": "long"]))
    guard case .document(let lockers)? = properties["lockers"] else {
      Issue.record("no lockers in \(properties)")
      return
    }
    #expect(lockers["bsonType"] == "array")
    guard case .document(let items)? = lockers["items"] else {
      Issue.record("no items in \(lockers)")
      return
    }
    #expect(items["title"] == "Locker", "embedded objects are inline")
    #expect(try reef.jsonSchema["Locker"] == nil, "an embedded type has no collection of its own")
  }

  @Test func theSchemaIsStoredInTheFile() throws {
    let (reef, path) = try openReef(types: [School.self, Locker.self])
    try reef.write { reef.add(School(value: ["name": "PS 1"])) }
    let failure = onAnotherThread { () throws in
      let other = try Reef(fileURL: URL(fileURLWithPath: path))
      guard try other.jsonSchema["School"]?["title"] == "School" else { throw DeliberateFailure() }
    }
    #expect(failure == nil, "another Reef that never used School finds its schema in the file")
    let stored = try reef.store.read { try $0.metadata(forKey: "schema:School") }
    #expect(stored?["title"] == "School")
  }

  @Test func anInMemoryReefIsSharedByIdentifier() throws {
    let identifier = "mem-\(UUID().uuidString)"
    let reef = try Reef(configuration: Reef.Configuration(inMemoryIdentifier: identifier))
    #expect(reef.configuration.fileURL == nil)
    try reef.write { reef.add(makeTenant(1)) }
    let same = try Reef(configuration: Reef.Configuration(inMemoryIdentifier: identifier))
    #expect(same.objects(Tenant.self).count == 1)
    let other = try Reef(configuration: Reef.Configuration(inMemoryIdentifier: identifier + "-other"))
    #expect(other.objects(Tenant.self).isEmpty)
  }

  @Test func aMigrationRenamesAPropertyWhenTheVersionIsBumped() throws {
    let directory = makeTemporaryDirectoryForReef()
    let url = URL(fileURLWithPath: directory + "/migrate.reef")
    do {
      let reef = try Reef(fileURL: url)
      _ = try reef.store.write {
        try $0.collection("Renamed").insert(["_id": .objectId(ObjectId()), "id": .int64(1), "name": "Old Name"])
      }
    }
    var configuration = Reef.Configuration(fileURL: url, schemaVersion: 1)
    configuration.migrationBlock = { migration, oldVersion in
      if oldVersion < 1 { migration.renameProperty(onType: "Renamed", from: "name", to: "fullName") }
    }
    let reef = try Reef(configuration: configuration)
    #expect(reef.object(ofType: Renamed.self, forPrimaryKey: 1)?.fullName == "Old Name")
  }

  @Test func deleteFilesRemovesAClosedStore() throws {
    let directory = makeTemporaryDirectoryForReef()
    let configuration = Reef.Configuration(fileURL: URL(fileURLWithPath: directory + "/gone.reef"))
    do {
      let reef = try Reef(configuration: configuration)
      try reef.write { reef.add(Ticket()) }
    }
    #expect(try Reef.deleteFiles(for: configuration))
    let reopened = try Reef(configuration: configuration)
    #expect(reopened.objects(Ticket.self).isEmpty)
  }

  @Test func aReefIsReleasedWithItsObjects() throws {
    weak var released: Reef?
    do {
      let (reef, _) = try openReef()
      let tenant = makeTenant(1)
      try reef.write { reef.add(tenant) }
      _ = tenant.name
      released = reef
    }
    #expect(released == nil)
  }

  @Test func aLiveObjectReadsOnlyWhatItIsAsked() throws {
    let (reef, _) = try openReef()
    _ = try reef.store.write {
      try $0.collection("Landlord").insert(["_id": .objectId(ObjectId()), "name": "Roper", "rent": "not a number"])
    }
    let landlord = try #require(reef.object(ofType: Landlord.self, forPrimaryKey: "Roper"))
    #expect(landlord.name == "Roper", "a field that does not fit is not read until asked for")
  }
}
