import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import ReefTestSupport
import Testing

class Profile: Object {
  @Persisted(primaryKey: true) var _id: ObjectId
  @Persisted var tags: MutableSet<String>
  @Persisted var phones: Map<String, String>
  @Persisted var friends: MutableSet<Dog>
  @Persisted var setting: AnyReefValue
  @Persisted var age: ReefProperty<Int?>
}

@Suite struct CollectionTests {
  @Test func aMutableSetKeepsOneOfEachValue() throws {
    let (reef, _) = try openReef()
    let profile = Profile()
    profile.tags.insert(objectsIn: ["a", "b", "a"])
    #expect(profile.tags.count == 2, "unmanaged sets keep one of each too")
    try reef.write { reef.add(profile) }
    try reef.write {
      profile.tags.insert("c")
      profile.tags.insert("a")
      profile.tags.remove("b")
    }
    #expect(Set(profile.tags) == ["a", "c"])
    #expect(profile.tags.contains("c") && !profile.tags.contains("b"))
    let stored = try #require(try reef.store.read { try $0.collection("Profile").findOne() })
    #expect(stored["tags"] == .array(["a", "c"]))
  }

  @Test func aMapIsASubdocumentInInsertionOrder() throws {
    let (reef, _) = try openReef()
    let profile = Profile()
    try reef.write {
      reef.add(profile)
      profile.phones["home"] = "555-0100"
      profile.phones["work"] = "555-0199"
      profile.phones["home"] = "555-0101"
    }
    #expect(profile.phones["home"] == "555-0101")
    #expect(profile.phones.keys == ["home", "work"])
    try reef.write { profile.phones["work"] = nil }
    let stored = try #require(try reef.store.read { try $0.collection("Profile").findOne() })
    #expect(stored["phones"] == .document(["home": "555-0101"]))
  }

  @Test func aSetOfLinksStoresPrimaryKeysOnce() throws {
    let (reef, _) = try openReef()
    let profile = Profile()
    let dog = Dog()
    dog.name = "Rex"
    try reef.write {
      reef.add(profile)
      profile.friends.insert(dog)
      profile.friends.insert(dog)
    }
    #expect(profile.friends.count == 1)
    #expect(profile.friends.first { _ in true }?.name == "Rex")
  }

  @Test func anyReefValueStoresAnyBSONValueNested() throws {
    let (reef, _) = try openReef()
    let profile = Profile()
    try reef.write { reef.add(profile) }
    #expect(profile.setting == .none)
    try reef.write { profile.setting = .list([.int(1), .dictionary(["on": .bool(true)]), .string("x")]) }
    #expect(profile.setting == .list([.int(1), .dictionary(["on": .bool(true)]), .string("x")]))
    let stored = try #require(try reef.store.read { try $0.collection("Profile").findOne() })
    #expect(stored["setting"] == .array([.int64(1), .document(["on": true]), "x"]))
    let dog = Dog()
    try reef.write { profile.setting = .object(dog) }
    #expect(profile.setting.object(Dog.self)?.isEqual(to: dog) == true)
  }

  @Test func reefPropertyHoldsAnOptional() throws {
    let (reef, _) = try openReef()
    let profile = Profile()
    profile.age.value = 3
    try reef.write { reef.add(profile) }
    #expect(profile.age.value == 3)
    try reef.write { profile.age.value = nil }
    #expect(profile.age.value == nil)
    let stored = try #require(try reef.store.read { try $0.collection("Profile").findOne() })
    #expect(stored["age"] == .null)
  }
}

@Suite struct ValidateTests {
  @Test func importedDocumentsThatDoNotFitAreListed() throws {
    let (reef, _) = try openReef()
    _ = reef.objects(Contact.self)  // registers the type
    let good = ObjectId()
    let bad = ObjectId()
    try reef.store.write { transaction in
      let contacts = transaction.collection("Contact")
      try contacts.insert(["_id": .objectId(good), "name": "Fits", "address": ["city": "LA"]])
      try contacts.insert(["_id": .objectId(bad), "name": 7, "address": ["city": ["not", "a", "string"]]])
    }
    reef.refresh()
    let violations = try reef.validate()
    #expect(violations.count == 2)
    #expect(violations.map(\.field) == ["name", "address.city"])
    #expect(violations.allSatisfy { $0.collection == "Contact" && $0.id == .objectId(bad) })
    #expect(violations.first?.expected == "string")
    #expect(violations.first?.found == "int 7")
    let fits = try #require(reef.object(ofType: Contact.self, forPrimaryKey: good))
    #expect(fits.address?.city == "LA", "a fitting imported document opens as an object")
    #expect(try reef.jsonSchema["Contact"]?["title"] == "Contact")
  }

  @Test func anEmbeddedIndexedPropertyIndexesItsPathInEveryEmbeddingType() throws {
    let (reef, _) = try openReef(types: [Venue.self, Depot.self, Spot.self])
    let indexes = try reef.store.read { transaction in
      (
        try transaction.collection("Venue").listIndexes().compactMap { $0["name"] },
        try transaction.collection("Depot").listIndexes().compactMap { $0["name"] }
      )
    }
    #expect(indexes.0.contains("spot.code_1"))
    #expect(indexes.1.contains("spots.code_1"))
    try reef.write {
      let venue = Venue()
      venue.spot = Spot()
      venue.spot?.code = "A1"
      reef.add(venue)
    }
    let explain = try reef.store.collection("Venue").explain(["spot.code": "A1"])
    #expect(explain.index == "spot.code_1")
  }
}

class Spot: EmbeddedObject {
  @Persisted(indexed: true) var code = ""
}

class Venue: Object {
  @Persisted var spot: Spot?
}

class Depot: Object {
  @Persisted var spots: List<Spot>
}

@Suite struct ReefFileTests {
  @Test func writeCopyMakesAFileThatOpensWithTheObjects() throws {
    let (reef, path) = try openReef()
    try reef.write { reef.add(Contact(name: "Copied", address: Address())) }
    let copy = URL(fileURLWithPath: path + ".copy")
    try reef.writeCopy(toFile: copy)
    #expect(throws: ReefError.self) { try reef.writeCopy(toFile: copy) }
    let other = try Reef(configuration: Reef.Configuration(fileURL: copy))
    #expect(other.objects(Contact.self).map(\.name) == ["Copied"])
  }

  @Test func inMemoryReefsShareByIdentifierAndReadOnlyRefusesWrites() throws {
    let identifier = "mem-\(UInt32.random(in: 0...UInt32.max))"
    let first = try Reef(configuration: Reef.Configuration(inMemoryIdentifier: identifier))
    try first.write { first.add(Contact(name: "M", address: Address())) }
    let second = try Reef(configuration: Reef.Configuration(inMemoryIdentifier: identifier))
    #expect(second.objects(Contact.self).count == 1)

    // Read-only once no Reef of this process has the file open read-write, as in Realm.
    let path = try {
      let (reef, path) = try openReef()
      try reef.write { reef.add(Contact(name: "R", address: Address())) }
      return path
    }()
    let readOnly = try Reef(configuration: Reef.Configuration(fileURL: URL(fileURLWithPath: path), readOnly: true))
    #expect(readOnly.objects(Contact.self).count == 1)
    #expect(throws: ReefError.self) { try readOnly.write {} }
  }
}

class Member: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var fullName = ""
}

@Suite struct MigrationTests {
  @Test func aMigrationBlockRunsOnceWhenTheVersionRises() throws {
    // Each version opens once the Reef of the one before is closed: a file open in the
    // process cannot be opened with another schema version (as in Realm).
    let path = try {
      let (reef, path) = try openReef()
      _ = try reef.store.write { transaction in
        try transaction.collection("Member").insert([
          "_id": .objectId(ObjectId()), "id": .int64(1), "firstName": "Ada", "lastName": "Lovelace",
        ])
      }
      return path
    }()
    let url = URL(fileURLWithPath: path)
    nonisolated(unsafe) var calls: [UInt64] = []
    var configuration = Reef.Configuration(fileURL: url, schemaVersion: 2)
    configuration.migrationBlock = { migration, oldSchemaVersion in
      calls.append(oldSchemaVersion)
      migration.enumerateObjects(ofType: "Member") { old, new in
        new!["fullName"] = "\(old!["firstName"] as! String) \(old!["lastName"] as! String)"
        new!["firstName"] = nil
      }
      migration.renameProperty(onType: "Member", from: "lastName", to: "familyName")
    }
    try {
      let migrated = try Reef(configuration: configuration)
      #expect(calls == [0])
      #expect(migrated.object(ofType: Member.self, forPrimaryKey: 1)?.fullName == "Ada Lovelace")
      let stored = try #require(try migrated.store.read { try $0.collection("Member").findOne() })
      #expect(stored["familyName"] == "Lovelace")
    }()
    _ = try Reef(configuration: configuration)
    #expect(calls == [0], "the same version does not migrate again")
    var older = configuration
    older.schemaVersion = 1
    #expect { try Reef(configuration: older) } throws: { ($0 as? ReefError)?.kind == .schemaMismatch }
  }
}

class OldStyleOwner: Object {
  @Persisted var name = ""
  let pets = List<Dog>()
}

class NothingStored: Object {
  var name = ""
}

@Suite struct OlderAPITests {
  @Test func collectionsWithoutPersistedAreRefusedNotSilentlyDropped() throws {
    let (reef, _) = try openReef()
    do {
      try reef.write { reef.add(OldStyleOwner()) }
      Issue.record("an undeclared List was accepted")
    } catch let error as ReefError {
      #expect(error.kind == .schema)
      #expect(error.property == "pets")
      #expect(error.message.contains("declare it @Persisted"))
    }
    #expect(throws: ReefError.self) {
      try Reef(configuration: Reef.Configuration(inMemoryIdentifier: "none", objectTypes: [NothingStored.self]))
    }
  }
}

@Suite struct DanglingLinkTests {
  @Test func aListKeyWithoutItsObjectIsNotAnElement() throws {
    let (reef, _) = try openReef()
    let person = Person()
    person.id = 1
    let rex = Dog()
    rex.name = "Rex"
    person.dogs.append(rex)
    try reef.write { reef.add(person) }
    // Imported data may name an object that is not there.
    let rexID = try #require(try reef.store.read { try $0.collection("Dog").findOne()?["_id"] })
    try reef.store.write { transaction in
      let result = try transaction.collection("Person").updateOne(
        ["id": .int64(1)], ["$set": ["dogs": .array([.objectId(ObjectId()), rexID])]])
      #expect(result.modified == 1)
    }
    reef.refresh()
    let stored = try reef.store.read { try $0.collection("Person").findOne() }
    #expect(stored?["dogs"].map { if case .array(let keys) = $0 { keys.count } else { 0 } } == 2)
    #expect(person.dogs.count == 1)
    #expect(person.dogs.map(\.name) == ["Rex"])
  }
}
