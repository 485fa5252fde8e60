import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import Testing

class MigratedPet: Object {
  @Persisted var name = ""
  @Persisted var adopted = false
}

class MigratedOwner: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var name = ""
  @Persisted var ratio: Float = 0
  @Persisted var small: Int8 = 0
  @Persisted var born: Date?
  @Persisted var photo: Data?
  @Persisted var pet: MigratedPet?
  @Persisted var pets: List<MigratedPet>
  @Persisted var home: Address?
  @Persisted var homes: List<Address>
}

/// The same stored type in two versions of its model.
class VersionedBefore: Object {
  @Persisted var name = ""
  override class func className() -> String { "Versioned" }
}

class VersionedAfter: Object {
  @Persisted var name = ""
  @Persisted var age = 0
  override class func className() -> String { "Versioned" }
}

/// A file with one owner, their pets and homes, written at schema version 0.
private func ownersFile() throws -> URL {
  let url = URL(fileURLWithPath: makeTemporaryDirectoryForReef() + "/owners.reef")
  let reef = try Reef(fileURL: url)
  try reef.write {
    let owner = MigratedOwner()
    owner.id = 1
    owner.name = "Ann"
    owner.ratio = 1.5
    owner.small = 7
    owner.born = Date(timeIntervalSince1970: 1)
    owner.photo = Data([1, 2])
    owner.pet = MigratedPet(value: ["name": "Rex"])
    owner.pets.append(MigratedPet(value: ["name": "Fido"]))
    let home = Address()
    home.city = "Oslo"
    owner.home = home
    let other = Address()
    other.city = "Bergen"
    owner.homes.append(other)
    reef.add(owner)
  }
  return url
}

/// Migrations as Realm's tests use them: objects by name, links, lists, creating and deleting.
@Suite struct MigrationObjectTests {
  @Test func enumerationGivesTheOldAndNewObjectWithValuesAsTheirSwiftTypes() throws {
    let url = try ownersFile()
    nonisolated(unsafe) var seen: [String] = []
    try Reef.performMigration(
      for: Reef.Configuration(
        fileURL: url, schemaVersion: 1,
        migrationBlock: { migration, old in
          #expect(old == 0)
          migration.enumerateObjects(ofType: "MigratedOwner") { oldObject, newObject in
            let (oldObject, newObject) = (oldObject!, newObject!)
            #expect(oldObject.objectSchema.className == "MigratedOwner")
            #expect(newObject["name"] as? String == "Ann")
            #expect(newObject["ratio"] as? Float == 1.5)
            #expect(newObject["small"] as? Int == 7)
            #expect(newObject["born"] as? Date == Date(timeIntervalSince1970: 1))
            #expect(newObject["photo"] as? Data == Data([1, 2]))
            newObject["name"] = "Ann B"
            #expect(newObject["name"] as? String == "Ann B")
            #expect(oldObject["name"] as? String == "Ann", "the old object is as it was")
            seen.append("owner")
          }
        }))
    #expect(seen == ["owner"])
    let reef = try Reef(configuration: Reef.Configuration(fileURL: url, schemaVersion: 1))
    #expect(reef.object(ofType: MigratedOwner.self, forPrimaryKey: 1)?.name == "Ann B")
  }

  @Test func linksAreMigrationObjectsAndListsAreListsOfThem() throws {
    let url = try ownersFile()
    try Reef.performMigration(
      for: Reef.Configuration(
        fileURL: url, schemaVersion: 1,
        migrationBlock: { migration, _ in
          migration.enumerateObjects(ofType: "MigratedOwner") { _, newObject in
            let owner = newObject!
            let pet = owner["pet"] as! MigrationObject
            #expect(pet["name"] as? String == "Rex")
            pet["adopted"] = true
            let pets = owner["pets"] as! List<MigrationObject>
            #expect(pets.count == 1)
            #expect(pets[0]["name"] as? String == "Fido")
            pets[0]["name"] = "Fido B"
            pets.append(pet)
            pets.append(migration.create("MigratedPet", value: ["name": "Spot"]))
            let again = owner["pets"] as! List<MigrationObject>
            #expect(again.count == 3, "the list given out is the same list")
          }
        }))
    let reef = try Reef(configuration: Reef.Configuration(fileURL: url, schemaVersion: 1))
    let owner = try #require(reef.object(ofType: MigratedOwner.self, forPrimaryKey: 1))
    #expect(owner.pets.map(\.name) == ["Fido B", "Rex", "Spot"])
    #expect(owner.pet?.adopted == true)
    #expect(reef.objects(MigratedPet.self).count == 3)
  }

  @Test func settingALinkOrAListToModelObjectsAndMigrationObjectsStoresThem() throws {
    let url = try ownersFile()
    try Reef.performMigration(
      for: Reef.Configuration(
        fileURL: url, schemaVersion: 1,
        migrationBlock: { migration, _ in
          migration.enumerateObjects(ofType: "MigratedOwner") { _, newObject in
            let owner = newObject!
            let created = migration.create("MigratedPet", value: ["Max", true])
            owner["pet"] = MigratedPet(value: ["name": "New"])
            owner["pets"] = [created, MigratedPet(value: ["name": "Other"])]
            owner["photo"] = nil
          }
        }))
    let reef = try Reef(configuration: Reef.Configuration(fileURL: url, schemaVersion: 1))
    let owner = try #require(reef.object(ofType: MigratedOwner.self, forPrimaryKey: 1))
    #expect(owner.pet?.name == "New")
    #expect(owner.pets.map(\.name) == ["Max", "Other"])
    #expect(owner.pets.first?.adopted == true)
    #expect(owner.photo == nil)
  }

  @Test func embeddedObjectsAreMigrationObjectsWrittenIntoTheirParent() throws {
    let url = try ownersFile()
    try Reef.performMigration(
      for: Reef.Configuration(
        fileURL: url, schemaVersion: 1,
        migrationBlock: { migration, _ in
          migration.enumerateObjects(ofType: "MigratedOwner") { _, newObject in
            let home = newObject!["home"] as! MigrationObject
            #expect(home["city"] as? String == "Oslo")
            home["city"] = "Trondheim"
            let homes = newObject!["homes"] as! List<MigrationObject>
            #expect(homes.map { $0["city"] as? String } == ["Bergen"])
            homes[0]["country"] = "Norway"
          }
        }))
    let reef = try Reef(configuration: Reef.Configuration(fileURL: url, schemaVersion: 1))
    let owner = try #require(reef.object(ofType: MigratedOwner.self, forPrimaryKey: 1))
    #expect(owner.home?.city == "Trondheim")
    #expect(owner.homes.map(\.country) == ["Norway"])
  }

  @Test func createdObjectsAreNotEnumeratedAndDeletedOnesAreSkipped() throws {
    let url = URL(fileURLWithPath: makeTemporaryDirectoryForReef() + "/pets.reef")
    try {
      let reef = try Reef(fileURL: url)
      try reef.write { for name in ["A", "B", "C"] { reef.add(MigratedPet(value: ["name": name])) } }
    }()
    nonisolated(unsafe) var first: [String] = []
    nonisolated(unsafe) var second: [String] = []
    try Reef.performMigration(
      for: Reef.Configuration(
        fileURL: url, schemaVersion: 1,
        migrationBlock: { migration, _ in
          migration.enumerateObjects(ofType: "MigratedPet") { oldObject, newObject in
            let name = oldObject!["name"] as! String
            first.append(name)
            if name == "B" {
              migration.delete(newObject!)
              migration.create("MigratedPet", value: ["name": "D"])
            }
          }
          migration.enumerateObjects(ofType: "MigratedPet") { oldObject, _ in
            second.append(oldObject!["name"] as! String)
          }
          migration.enumerateObjects(ofType: "NoSuchType") { _, _ in second.append("none") }
        }))
    #expect(first == ["A", "B", "C"])
    #expect(second == ["A", "C"], "the created object is not enumerated, the deleted one is gone")
    let reef = try Reef(configuration: Reef.Configuration(fileURL: url, schemaVersion: 1))
    #expect(reef.objects(MigratedPet.self).map(\.name).sorted() == ["A", "C", "D"])
  }

  @Test func deleteDataAndRenamePropertyChangeTheStoredData() throws {
    let url = URL(fileURLWithPath: makeTemporaryDirectoryForReef() + "/rename.reef")
    try {
      let reef = try Reef(fileURL: url)
      try reef.write { reef.add(MigratedPet(value: ["name": "A"])) }
      _ = try reef.store.write { try $0.collection("Gone").insert(["_id": .objectId(ObjectId()), "x": 1]) }
    }()
    nonisolated(unsafe) var log: [String] = []
    try Reef.performMigration(
      for: Reef.Configuration(
        fileURL: url, schemaVersion: 1,
        migrationBlock: { migration, _ in
          log.append("deleted \(migration.deleteData(forType: "Gone"))")
          log.append("deleted \(migration.deleteData(forType: "NoSuchType"))")
          migration.renameProperty(onType: "MigratedPet", from: "name", to: "nickname")
          migration.enumerateObjects(ofType: "MigratedPet") { oldObject, newObject in
            log.append("old \(oldObject!["name"] as? String ?? "-") new \(newObject!["nickname"] as? String ?? "-")")
          }
        }))
    #expect(log == ["deleted true", "deleted false", "old A new A"])
    let stored = try Store(path: url.path, options: StoreOptions(readOnly: true)).read {
      try ($0.collection("Gone").count(), $0.collection("MigratedPet").findOne()?["nickname"])
    }
    #expect(stored.0 == 0)
    #expect(stored.1 == "A")
  }

  @Test func aNameTheObjectDoesNotHaveStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let url = try ownersFile()
        try Reef.performMigration(
          for: Reef.Configuration(
            fileURL: url, schemaVersion: 1,
            migrationBlock: { migration, _ in
              migration.enumerateObjects(ofType: "MigratedOwner") { _, newObject in _ = newObject!["noSuchCol"] }
            }))
      }
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(stderr.contains("Invalid property name 'noSuchCol' for class 'MigratedOwner'."), "\(stderr)")
  }

  @Test func aModelChangedWithoutANewSchemaVersionIsRefused() throws {
    let url = URL(fileURLWithPath: makeTemporaryDirectoryForReef() + "/versioned.reef")
    try {
      let reef = try Reef(configuration: Reef.Configuration(fileURL: url, objectTypes: [VersionedBefore.self]))
      try reef.write { reef.add(VersionedBefore(value: ["name": "kept"])) }
    }()
    #expect {
      try Reef(configuration: Reef.Configuration(fileURL: url, objectTypes: [VersionedAfter.self]))
    } throws: { error in
      let error = error as? ReefError
      return error?.kind == .schemaMismatch
        && error?.message.contains("Migration is required due to the following errors:") == true
        && error?.message.contains("- Property 'Versioned.age' has been added.") == true
    }
    // With a new version the same model opens, and its objects read the new property's default.
    let migrated = try Reef(
      configuration: Reef.Configuration(fileURL: url, schemaVersion: 1, objectTypes: [VersionedAfter.self]))
    #expect(migrated.objects(VersionedAfter.self).map(\.name) == ["kept"])
    #expect(migrated.objects(VersionedAfter.self).map(\.age) == [0], "the added property has its default")
  }

  @Test func aModelChangedWithoutANewSchemaVersionStopsAtItsFirstUse() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let url = URL(fileURLWithPath: makeTemporaryDirectoryForReef() + "/lazy.reef")
        try {
          let reef = try Reef(fileURL: url)
          try reef.write { reef.add(VersionedAfter(value: ["name": "kept"])) }
        }()
        _ = try Reef(fileURL: url).objects(VersionedBefore.self).count
      }
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(stderr.contains("- Property 'Versioned.age' has been removed."), "\(stderr)")
  }

  @Test func deleteReefIfMigrationNeededDeletesInsteadOfMigratingOrRefusing() throws {
    let url = URL(fileURLWithPath: makeTemporaryDirectoryForReef() + "/deleting.reef")
    try {
      let reef = try Reef(configuration: Reef.Configuration(fileURL: url, objectTypes: [VersionedBefore.self]))
      try reef.write { reef.add(VersionedBefore(value: ["name": "gone"])) }
    }()
    // A changed model at the same version: its objects are deleted, not refused.
    try {
      let reef = try Reef(
        configuration: Reef.Configuration(
          fileURL: url, deleteReefIfMigrationNeeded: true, objectTypes: [VersionedAfter.self]))
      #expect(reef.objects(VersionedAfter.self).isEmpty)
      try reef.write { reef.add(VersionedAfter(value: ["name": "new"])) }
    }()
    // A new version: everything is deleted and the block is not called.
    nonisolated(unsafe) var called = false
    let reef = try Reef(
      configuration: Reef.Configuration(
        fileURL: url, schemaVersion: 1, migrationBlock: { _, _ in called = true }, deleteReefIfMigrationNeeded: true))
    #expect(!called)
    #expect(reef.objects(VersionedAfter.self).isEmpty)
  }
}

/// Objects read by their type's name (Realm's dynamic API).
@Suite struct DynamicObjectTests {
  @Test func dynamicObjectsReadPropertiesLinksAndListsByName() throws {
    let url = try ownersFile()
    let reef = try Reef(fileURL: url)
    _ = reef.objects(MigratedOwner.self).count
    let owners = reef.dynamicObjects("MigratedOwner")
    #expect(owners.count == 1)
    let owner = try #require(owners.first)
    #expect(owner.objectSchema.className == "MigratedOwner")
    #expect(owner["name"] as? String == "Ann")
    #expect((owner["pet"] as? MigratedPet)?.name == "Rex", "a link is the linked type's object")
    let pets = owner["pets"] as! List<DynamicObject>
    #expect(pets.map { $0["name"] as? String } == ["Fido"])
    let homes = owner["homes"] as! List<DynamicObject>
    #expect(homes.first?["city"] as? String == "Bergen")
    try reef.write { owner["name"] = "Ann B" }
    #expect(reef.object(ofType: MigratedOwner.self, forPrimaryKey: 1)?.name == "Ann B")
    #expect(reef.dynamicObject(ofType: "MigratedOwner", forPrimaryKey: 1)?["name"] as? String == "Ann B")
    #expect(reef.dynamicObject(ofType: "MigratedOwner", forPrimaryKey: 2) == nil)
    let created = try reef.write { reef.dynamicCreate("MigratedPet", value: ["name": "Spot"]) }
    #expect(created["name"] as? String == "Spot")
    #expect(reef.objects(MigratedPet.self).count == 3)
  }

  @Test func anUnknownTypeNameStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        _ = reef.dynamicObjects("NoSuchType").count
      }
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(stderr.contains("Object type 'NoSuchType' is not managed by the Reef."), "\(stderr)")
  }
}
