import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import Testing

@Suite struct ImportedDataTests {
  @Test func aRawDocumentThatFitsOpensAsAnObject() throws {
    let (reef, _) = try openReef()
    let id = ObjectId()
    _ = try reef.store.write {
      try $0.collection("Contact").insert([
        "_id": .objectId(id), "name": "Nick Riviera",
        "address": ["street": "123 Fake St.", "city": "Springfield", "country": "USA", "postalCode": "90710"],
      ])
    }
    let contact = try #require(reef.object(ofType: Contact.self, forPrimaryKey: id))
    #expect(contact.name == "Nick Riviera")
    #expect(contact.address?.city == "Springfield")
    #expect(reef.objects(Contact.self).filter("address.city == 'Springfield'").count == 1)
    try reef.write { contact.address?.city = "Los Angeles" }
    let stored = try reef.store.read { try $0.collection("Contact").findOne() }
    #expect(
      stored?["address"]
        == .document(["street": "123 Fake St.", "city": "Los Angeles", "country": "USA", "postalCode": "90710"]))
  }

  @Test func aRawDocumentWithMissingOptionalFieldsAndOtherIntegerWidthsOpens() throws {
    let (reef, _) = try openReef()
    _ = try reef.store.write {
      try $0.collection("Tenant").insert([
        "_id": .objectId(ObjectId()), "id": .int32(9), "name": "int32 key", "age": .int32(41), "score": .int32(3),
      ])
    }
    let tenant = reef.objects(Tenant.self).first
    #expect(tenant?.age == 41, "an int32 (as mongoimport writes small numbers) reads as Int")
    #expect(tenant?.nickname == nil, "a missing optional field is nil")
    #expect(tenant?.home == nil)
    #expect(tenant?.buildings.isEmpty == true, "a missing list is empty")
    #expect(reef.object(ofType: Tenant.self, forPrimaryKey: 9)?.name == "int32 key", "an int32 key is found by an Int")
  }

  @Test func extraFieldsOfAnImportedDocumentAreKeptWhenTheObjectChanges() throws {
    let (reef, _) = try openReef()
    _ = try reef.store.write {
      try $0.collection("Landlord").insert(["_id": .objectId(ObjectId()), "name": "Roper", "rent": 1, "extra": "kept"])
    }
    let landlord = try #require(reef.object(ofType: Landlord.self, forPrimaryKey: "Roper"))
    try reef.write { landlord.rent = 2 }
    let stored = try reef.store.read { try $0.collection("Landlord").findOne() }
    #expect(stored?["extra"] == "kept")
    #expect(stored?["rent"] == .int64(2))
  }

  @Test func aRawDocumentThatDoesNotFitFailsWithTheMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        _ = try reef.store.write {
          try $0.collection("Landlord").insert(["_id": .objectId(ObjectId()), "name": "Roper", "rent": "a lot"])
        }
        let landlord = reef.object(ofType: Landlord.self, forPrimaryKey: "Roper")
        _ = landlord?.name
        _ = landlord?.rent
      }
    }
    let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(text.contains("Landlord") && text.contains("rent") && text.contains("Int"), "\(text)")
    #expect(text.lowercased().contains("string"), "\(text)")
  }

  @Test func aRawListElementThatDoesNotFitFails() async {
    await #expect(processExitsWith: .failure) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        _ = try reef.store.write {
          try $0.collection("Tenant").insert(["_id": .int64(1), "name": "x", "buildings": [["city": 5]]])
        }
        _ = reef.objects(Tenant.self).first?.buildings.first?.city
      }
    }
  }

  @Test func validateListsEveryDocumentThatDoesNotFit() throws {
    let (reef, _) = try openReef()
    let good = ObjectId()
    let bad = ObjectId()
    let worse = ObjectId()
    _ = try reef.store.write {
      let contacts = $0.collection("Contact")
      _ = try contacts.insert(["_id": .objectId(good), "name": "ok", "address": ["city": "Paris"]])
      _ = try contacts.insert(["_id": .objectId(bad), "name": .int32(5), "address": .null])
      _ = try contacts.insert(["_id": .objectId(worse), "name": "x", "address": ["city": true]])
    }
    let violations = try reef.validate([Contact.self])
    #expect(violations.count == 2, "\(violations)")
    let name = violations.first { $0.id == .objectId(bad) }
    #expect(name?.collection == "Contact" && name?.field == "name", "\(String(describing: name))")
    #expect(name?.expected.lowercased().contains("string") == true && name?.found.lowercased().contains("int") == true)
    let city = violations.first { $0.id == .objectId(worse) }
    #expect(city?.field == "address.city", "\(String(describing: city))")
    #expect(city?.found.lowercased().contains("bool") == true, "\(String(describing: city))")
    #expect(!violations.contains { $0.id == .objectId(good) })
  }

  @Test func whatTheObjectLayerWritesValidates() throws {
    let (reef, _) = try openReef()
    try reef.write {
      reef.add(makeTenant(1))
      reef.add(makeTenant(2, home: makeBuilding("Paris"), buildings: [makeBuilding("A")]))
      reef.add(Contact())
    }
    let violations = try reef.validate([Tenant.self, Contact.self])
    #expect(violations.isEmpty, "\(violations)")
  }
}
