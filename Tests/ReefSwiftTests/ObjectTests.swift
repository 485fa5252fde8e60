import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import ReefTestSupport
import Testing

/// A fresh file in a temporary directory.
func openReef(_ name: String = "test", types: [ObjectBase.Type]? = nil) throws -> (Reef, String) {
  let directory = makeTemporaryDirectory("reef-swift", removedAtExit: true)
  var configuration = Reef.Configuration(fileURL: URL(fileURLWithPath: directory + "/\(name).reef"))
  configuration.objectTypes = types
  return (try Reef(configuration: configuration), directory + "/\(name).reef")
}

@Suite struct ObjectTests {
  @Test func anAddedContactIsStoredAsOneDocumentWithItsAddressInline() throws {
    let (reef, _) = try openReef()
    let address = Address()
    address.street = "123 Fake St."
    address.city = "Springfield"
    address.country = "USA"
    address.postalCode = "90710"
    let contact = Contact(name: "Nick Riviera", address: address)
    try reef.write { reef.add(contact) }
    #expect(contact.reef != nil)
    #expect(address.reef != nil, "the embedded object became managed with its parent")
    #expect(contact.address?.city == "Springfield")

    let store = reef.store
    let documents = try store.read { try $0.collection("Contact").find().toArray() }
    #expect(documents.count == 1)
    let document = try #require(documents.first)
    #expect(document.keys == ["_id", "name", "address"])
    #expect(document["_id"] == .objectId(contact._id))
    #expect(document["name"] == "Nick Riviera")
    #expect(
      document["address"]
        == .document(["street": "123 Fake St.", "city": "Springfield", "country": "USA", "postalCode": "90710"]))
    #expect(try store.read { try $0.collection("Address").count() } == 0, "embedded objects have no collection")
  }

  @Test func anEmbeddedPropertyChangeRewritesTheParentDocument() throws {
    let (reef, _) = try openReef()
    let contact = Contact(name: "Nick", address: Address())
    try reef.write { reef.add(contact) }
    let id = contact._id
    try reef.write {
      guard let found = reef.object(ofType: Contact.self, forPrimaryKey: id) else {
        Issue.record("contact not found")
        return
      }
      found.address?.street = "Hollywood Upstairs Medical College"
      found.address?.city = "Los Angeles"
      found.address?.postalCode = "90210"
    }
    #expect(contact.address?.city == "Los Angeles", "the first accessor sees the change")
    #expect(contact.address?.street == "Hollywood Upstairs Medical College")
    let results = reef.objects(Contact.self).filter("address.city = %@", "Los Angeles").sorted(
      byKeyPath: "address.street")
    #expect(results.count == 1)
    #expect(results.first?.name == "Nick")
  }

  @Test func overwritingAnEmbeddedObjectInvalidatesTheOldOne() throws {
    let (reef, _) = try openReef()
    let contact = Contact(name: "Nick", address: Address())
    try reef.write { reef.add(contact) }
    let old = try #require(contact.address)
    #expect(!old.isInvalidated)
    try reef.write {
      let newAddress = Address()
      newAddress.city = "Los Angeles"
      contact.address = newAddress
    }
    #expect(old.isInvalidated)
    #expect(contact.address?.city == "Los Angeles")
    try reef.write { contact.address = nil }
    #expect(contact.address == nil)
  }

  @Test func aManagedEmbeddedObjectCannotGetASecondParent() throws {
    let (reef, _) = try openReef()
    let first = Contact(name: "A", address: Address())
    let second = Contact(name: "B", address: Address())
    try reef.write { reef.add([first, second]) }
    #expect(throws: ReefError.self) {
      try reef.write { second.address = first.address }
    }
    do {
      try reef.write {
        second.name = "changed"
        second.address = first.address
      }
    } catch let error as ReefError {
      #expect(error.kind == .embeddedObjectHasParent)
      #expect(error.typeName == "Address")
    }
    #expect(second.name == "B", "the transaction rolled back")
  }

  @Test func aDuplicatePrimaryKeyMakesWriteThrowAndRollBack() throws {
    let (reef, _) = try openReef()
    let contact = Contact(name: "A", address: Address())
    try reef.write { reef.add(contact) }
    let twin = Contact()
    twin._id = contact._id
    do {
      try reef.write {
        reef.add(Contact(name: "C", address: Address()))
        reef.add(twin)
      }
      Issue.record("write did not throw")
    } catch let error as ReefError {
      #expect(error.kind == .primaryKeyExists)
      #expect(error.primaryKey == .objectId(contact._id))
    }
    #expect(reef.objects(Contact.self).count == 1, "nothing of the failed transaction is kept")
    twin.name = "updated"
    try reef.write { reef.add(twin, update: .modified) }
    #expect(contact.name == "updated")
    #expect(reef.objects(Contact.self).count == 1)
  }

  @Test func businessAddressesAreAnInlineArray() throws {
    let (reef, _) = try openReef()
    let addresses = (1...3).map { n -> Address in
      let address = Address()
      address.city = "City \(n)"
      return address
    }
    let business = Business(name: "Acme", addresses: addresses)
    try reef.write { reef.add(business) }
    #expect(business.addresses.count == 3)
    #expect(business.addresses[1].city == "City 2")
    #expect(business.addresses.map { $0.city ?? "" } == ["City 1", "City 2", "City 3"])
    let removed = business.addresses[0]
    try reef.write { business.addresses.remove(at: 0) }
    #expect(removed.isInvalidated, "an embedded object removed from its list is deleted")
    #expect(business.addresses.map { $0.city ?? "" } == ["City 2", "City 3"])
    try reef.write { business.addresses[0].city = "Renamed" }
    let store = reef.store
    let stored = try #require(try store.read { try $0.collection("Business").findOne() })
    #expect(
      stored["addresses"]
        == .array([
          .document(["street": .null, "city": "Renamed", "country": .null, "postalCode": .null]),
          .document(["street": .null, "city": "City 3", "country": .null, "postalCode": .null]),
        ]))
  }

  @Test func linksStoreThePrimaryKeyAndDeletingTheTargetRemovesThem() throws {
    let (reef, _) = try openReef()
    let person = Person()
    person.id = 7
    person.name = "Ann"
    let rex = Dog()
    rex.name = "Rex"
    let fido = Dog()
    fido.name = "Fido"
    person.dogs.append(objectsIn: [rex, fido])
    let club = DogClub(name: "Good Dogs", addresses: [])
    club.members.append(person)
    try reef.write { reef.add(club) }
    #expect(reef.objects(Dog.self).count == 2, "linked objects are added with their parent")
    #expect(reef.objects(Person.self).count == 1)
    #expect(person.clubs.count == 1)
    #expect(person.clubs.first?.name == "Good Dogs")
    let store = reef.store
    let storedClub = try #require(try store.read { try $0.collection("DogClub").findOne() })
    #expect(storedClub["members"] == .array([.int64(7)]))
    try reef.write { reef.delete(rex) }
    #expect(rex.isInvalidated)
    #expect(person.dogs.map(\.name) == ["Fido"], "the deleted dog left the list")
    try reef.write { reef.delete(person) }
    #expect(club.members.isEmpty)
    #expect(reef.objects(Dog.self).count == 1, "deleting a person deletes no dog")
  }

  @Test func linkingObjectsOfTasks() throws {
    let (reef, _) = try openReef()
    let user = User()
    user.name = "Lee"
    let task = Task()
    task.text = "write tests"
    user.tasks.append(task)
    try reef.write { reef.add(user) }
    #expect(task.assignee.count == 1)
    #expect(task.assignee.first?.name == "Lee")
  }

  @Test func everyTypeRoundTrips() throws {
    let (reef, _) = try openReef()
    let object = Everything()
    object.key = "k"
    object.bool = true
    object.int = -5
    object.int8 = 8
    object.int16 = 16
    object.int32 = 32
    object.int64 = 64
    object.float = 1.5
    object.double = 2.25
    object.string = "s"
    object.data = Data([1, 2, 3])
    object.date = Date(timeIntervalSince1970: 1_600_000_000.123)
    object.mood = .excited
    object.optionalInt = 3
    object.ints.append(objectsIn: [1, 2, 3])
    object.optionalStrings.append(objectsIn: ["a", nil])
    let uuid = object.uuid
    let objectId = object.objectId
    try reef.write { reef.add(object) }
    reef.refresh()
    let read = try #require(reef.object(ofType: Everything.self, forPrimaryKey: "k"))
    #expect(read.bool && read.int == -5 && read.int8 == 8 && read.int16 == 16 && read.int32 == 32 && read.int64 == 64)
    #expect(read.float == 1.5 && read.double == 2.25 && read.string == "s" && read.data == Data([1, 2, 3]))
    #expect(read.date == Date(timeIntervalSince1970: 1_600_000_000.123))
    #expect(read.uuid == uuid && read.objectId == objectId && read.mood == .excited)
    #expect(read.optionalInt == 3 && read.optionalString == nil && read.optionalDate == nil)
    #expect(Array(read.ints) == [1, 2, 3] && Array(read.optionalStrings) == ["a", nil])
    let store = reef.store
    let stored = try #require(try store.read { try $0.collection("Everything").findOne() })
    #expect(
      stored.keys.prefix(2) == ["_id", "key"],
      "a primary key not named _id is stored under its name, after a hidden ObjectId _id")
    #expect(stored["_id"]?.type == .objectId)
    #expect(stored["int8"] == .int64(8), "every integer is stored as int64")
    #expect(stored["float"] == .double(1.5))
    #expect(stored["uuid"]?.type == .binary)
    #expect(stored["mood"] == "excited")
    #expect(stored["ignored"] == nil, "properties without @Persisted are not stored")
  }

  @Test func propertiesMappingStoresTheIdAsUnderscoreID() throws {
    let (reef, _) = try openReef()
    let object = Mapped()
    object.id = 42
    object.title = "answer"
    try reef.write { reef.add(object) }
    let store = reef.store
    let stored = try #require(try store.read { try $0.collection("Mapped").findOne() })
    #expect(stored == ["_id": .int64(42), "name": "answer"])
    #expect(reef.objects(Mapped.self).filter("title == 'answer'").count == 1)
    #expect(reef.object(ofType: Mapped.self, forPrimaryKey: 42)?.title == "answer")
  }

  @Test func changingAPrimaryKeyIsRefused() throws {
    let (reef, _) = try openReef()
    let person = Person()
    person.id = 1
    try reef.write { reef.add(person) }
    #expect(throws: ReefError.self) { try reef.write { person.id = 2 } }
    #expect(person.id == 1)
  }
}
