import Foundation
import ReefBSON
import ReefSwift
import ReefTestSupport
import Testing

@Suite struct RealmSpellingTests {
  @Test func anObjectIdParsesFromItsHexadecimalString() throws {
    let id = try ObjectId(string: "64B7F1A2C3D4E5F601234567")
    #expect(id.stringValue == "64b7f1a2c3d4e5f601234567")
    #expect(try ObjectId(string: id.stringValue) == id)
    for bad in ["", "64b7f1a2c3d4e5f60123456", "64b7f1a2c3d4e5f60123456z"] {
      #expect {
        try ObjectId(string: bad)
      } throws: { error in
        (error as? ReefError)?.message == "Invalid Object ID string '\(bad)': must be 24 hex digits"
      }
    }
  }

  @Test func aMigrationBlockHasRealmsTypeName() throws {
    let directory = makeTemporaryDirectory("reef-swift", removedAtExit: true)
    let url = URL(fileURLWithPath: directory + "/migrated.reef")
    do {
      let first = try Reef(configuration: Reef.Configuration(fileURL: url, objectTypes: cellarTypes))
      try first.write {
        let bottle = first.create(Bottle.self, value: ["id": 1])
        first.create(Cellar.self, value: ["id": 1, "bottles": [bottle]])
      }
    }
    var calls: [UInt64] = []
    var linkedBack = false
    var listCounts: [Int] = []
    let block: MigrationBlock = { migration, old in
      calls.append(old)
      let cellar = migration.create("Cellar", value: ["id": 7, "name": "new"])
      let enumerate: MigrationObjectEnumerateBlock = { _, new in
        guard let new else { return }
        new["label"] = "migrated"
        new["cellar"] = cellar
        linkedBack = (new["cellar"] as? MigrationObject)?.isSameObject(as: cellar) ?? false
      }
      migration.enumerateObjects(ofType: "Bottle", enumerate)
      migration.enumerateObjects(ofType: "Cellar") { _, new in
        guard let new else { return }
        let list = new.dynamicList("bottles")
        listCounts.append(list.count)
        new["bottles"] = [MigrationObject]()
        listCounts.append(list.count)
        new["bottles"] = [migration.create("Bottle", value: ["id": 9]), migration.create("Bottle", value: ["id": 8])]
        listCounts.append(list.count)
      }
    }
    let configuration = Reef.Configuration(
      fileURL: url, schemaVersion: 1, migrationBlock: block, objectTypes: cellarTypes)
    let migrated = try Reef(configuration: configuration)
    #expect(calls == [0])
    #expect(linkedBack, "two migration objects of one stored object are the same object")
    #expect(listCounts == [1, 0, 2], "a list given out follows the property's assignments")
    #expect(migrated.object(ofType: Cellar.self, forPrimaryKey: 1)?.bottles.map(\.id) == [9, 8])
    #expect(
      migrated.objects(Bottle.self).sorted(byKeyPath: "id").map { $0.label } == ["migrated", "", ""],
      "objects created in the migration are not enumerated")
  }

  @Test func aListIsReadLiveByNameAsDynamicObjects() throws {
    let (reef, cellar) = try openCellar()
    let list = cellar.dynamicList("bottles")
    #expect(list.count == 3 && list[1]["label"] as? String == "Tokaji")
    try reef.write { cellar.bottles.remove(at: 0) }
    #expect(list.count == 2, "the object's own list, live")
    let dynamic = try #require(reef.dynamicObject(ofType: "Cellar", forPrimaryKey: 1))
    #expect(dynamic.dynamicList("bottles").map { $0["id"] as? Int } == [2, 3])
    #expect(dynamic.dynamicMutableSet("racks").count == 3)
  }

  @Test func aCopyIsWrittenForAConfigurationAndASeedFileIsCopiedOnFirstOpen() throws {
    let (reef, _) = try openCellar()
    let directory = makeTemporaryDirectory("reef-swift", removedAtExit: true)
    var copy = Reef.Configuration(fileURL: URL(fileURLWithPath: directory + "/copy.reef"))
    copy.objectTypes = cellarTypes
    try reef.writeCopy(configuration: copy)
    #expect(try Reef(configuration: copy).objects(Bottle.self).count == 3)
    var seeded = Reef.Configuration(fileURL: URL(fileURLWithPath: directory + "/seeded.reef"))
    seeded.objectTypes = cellarTypes
    seeded.seedFilePath = copy.fileURL
    let opened = try Reef(configuration: seeded)
    #expect(opened.objects(Bottle.self).count == 3)
    try opened.write { opened.deleteAll() }
    #expect(try Reef(configuration: seeded).objects(Bottle.self).isEmpty, "a file already there is kept")
  }
}

class KeyLocker: Object {
  @Persisted(primaryKey: true) var number: Int?
  @Persisted var owner = ""
}

class Cubby: Object {
  @Persisted(primaryKey: true) var code: String?
  @Persisted var owner = ""
}

@Suite struct OptionalPrimaryKeyTests {
  @Test func anOptionalIntPrimaryKeyFindsTheObjectWithNil() throws {
    let (reef, _) = try openReef("lockers", types: [KeyLocker.self, Cubby.self])
    try reef.write {
      reef.create(KeyLocker.self, value: [NSNull(), "a"])
      reef.create(KeyLocker.self, value: [2, "b"])
    }
    #expect(reef.object(ofType: KeyLocker.self, forPrimaryKey: NSNull())?.owner == "a")
    #expect(reef.object(ofType: KeyLocker.self, forPrimaryKey: nil as Int?)?.owner == "a")
    #expect(reef.object(ofType: KeyLocker.self, forPrimaryKey: 2)?.owner == "b")
    #expect(reef.object(ofType: KeyLocker.self, forPrimaryKey: 0) == nil)
  }

  @Test func anOptionalStringPrimaryKeyFindsTheObjectWithNil() throws {
    let (reef, _) = try openReef("cubbies", types: [KeyLocker.self, Cubby.self])
    try reef.write {
      reef.create(Cubby.self, value: [NSNull(), "a"])
      reef.create(Cubby.self, value: ["b", "b"])
    }
    #expect(reef.object(ofType: Cubby.self, forPrimaryKey: NSNull())?.owner == "a")
    #expect(reef.object(ofType: Cubby.self, forPrimaryKey: nil as String?)?.owner == "a")
    #expect(reef.object(ofType: Cubby.self, forPrimaryKey: "b")?.owner == "b")
    #expect(reef.object(ofType: Cubby.self, forPrimaryKey: "c") == nil)
  }
}
