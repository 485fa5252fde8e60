import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import Testing

/// A type whose primary key is optional.
class MaybeKeyed: Object {
  @Persisted(primaryKey: true) var key: String?
  @Persisted var value = 0
}

@Suite struct ObjectLayerEdgeCaseTests {
  // Realm raises at the call for an object of another file (these were errors thrown by write).
  @Test func addingAnObjectOfAnotherFileStopsWithRealmsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (first, _) = try openReef("first")
        let (second, _) = try openReef("second")
        let tenant = makeTenant(1)
        try first.write { first.add(tenant) }
        try second.write { second.add(tenant) }
      }
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(
      stderr.contains("Object is already managed by another Reef. Use create instead to copy it into this Reef."),
      "\(stderr)")
  }

  @Test func deletingAnObjectOfAnotherFileStopsWithRealmsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (first, _) = try openReef("first")
        let (second, _) = try openReef("second")
        let tenant = makeTenant(1)
        try first.write { first.add(tenant) }
        try second.write { second.delete(tenant) }
      }
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(stderr.contains("Can only delete an object from the Reef it belongs to."), "\(stderr)")
  }

  @Test func copyingAnObjectOfAnotherFileWithCreateWorks() throws {
    let (first, _) = try openReef("first")
    let (second, _) = try openReef("second")
    let tenant = makeTenant(1, "Jack", home: makeBuilding("A"))
    try first.write { first.add(tenant) }
    let copy = try second.write { second.create(Tenant.self, value: tenant) }
    #expect(copy.reef === second)
    #expect(copy.name == "Jack")
    #expect(copy.home?.city == tenant.home?.city)
    #expect(first.objects(Tenant.self).count == 1)
  }

  @Test func aFileOpenedByAnotherPathSharesItsStoreAndASecondStoreIsAnError() throws {
    let (first, path) = try openReef("shared")
    let directory = (path as NSString).deletingLastPathComponent
    var configuration = Reef.Configuration(fileURL: URL(fileURLWithPath: directory + "/./shared.reef"))
    configuration.objectTypes = nil
    let second = try Reef(configuration: configuration)
    #expect(second.store === first.store)
    try first.write { first.add(makeTenant(1)) }
    second.refresh()
    #expect(second.objects(Tenant.self).count == 1)
    // Opening the file's store beside the Reef's (which LMDB does not allow) is an error, not
    // a crash.
    #expect(throws: StoreError.self) { try Store(path: path) }
  }

  @Test func addingTheSameObjectTwiceAddsItOnce() throws {
    let (reef, _) = try openReef()
    let tenant = makeTenant(1)
    try reef.write {
      reef.add(tenant)
      reef.add(tenant)
    }
    try reef.write { reef.add(tenant) }
    #expect(reef.objects(Tenant.self).count == 1)
  }

  @Test func anOptionalPrimaryKeyCanBeNil() throws {
    let (reef, _) = try openReef()
    let none = MaybeKeyed()
    none.value = 1
    let some = MaybeKeyed(value: ["key": "a", "value": 2])
    try reef.write { reef.add([none, some]) }
    #expect(reef.object(ofType: MaybeKeyed.self, forPrimaryKey: nil as String?)?.value == 1)
    #expect(reef.object(ofType: MaybeKeyed.self, forPrimaryKey: "a")?.value == 2)
    #expect(throws: ReefError.self, "nil is a key like any other: only one object has it") {
      try reef.write { reef.add(MaybeKeyed()) }
    }
  }

  @Test func resultsAreLiveInsideAWrite() throws {
    let (reef, _) = try openReef()
    let results = reef.objects(Tenant.self)
    try reef.write {
      #expect(results.isEmpty)
      reef.add(makeTenant(1))
      #expect(results.count == 1)
      reef.delete(results[0])
      #expect(results.isEmpty)
    }
  }

  @Test func aListOfScalarsIsAnInlineArray() throws {
    let (reef, _) = try openReef()
    let object = Everything()
    object.key = "k"
    object.ints.append(objectsIn: [3, 1, 2])
    try reef.write { reef.add(object) }
    try reef.write {
      object.ints.append(4)
      object.ints.insert(0, at: 0)
      object.ints.move(from: 0, to: 4)
      object.ints.swapAt(0, 1)
      object.ints.remove(at: 2)
      object.ints[0] = 10
    }
    #expect(Array(object.ints) == [10, 3, 4, 0])
    let stored = try reef.store.read { try $0.collection("Everything").findOne() }
    #expect(stored?["ints"] == .array([.int64(10), .int64(3), .int64(4), .int64(0)]))
    try reef.write { object.optionalStrings.append(nil) }
    #expect(Array(object.optionalStrings) == [nil])
  }

  @Test func aListKeepsItsAccessorAcrossWrites() throws {
    let (reef, _) = try openReef()
    let tenant = makeTenant(1)
    try reef.write { reef.add(tenant) }
    let list = tenant.buildings
    try reef.write { tenant.buildings.append(makeBuilding("A")) }
    #expect(list.count == 1, "a list accessor is live")
    #expect(list.reef != nil)
  }

  @Test func aWrongTypeInCreateStopsWithRealmsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        try reef.write { reef.create(Tenant.self, value: ["id": 1, "age": "thirty"]) }
      }
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(
      message.contains("Invalid value 'thirty' of type 'String' for 'int' property 'Tenant.age'."), "\(message)")
  }

  @Test func aWrongTypeInCreateValidatingIsAnInvalidValueErrorAndCreatesNothing() throws {
    let (reef, _) = try openReef()
    do {
      try reef.write { try reef.create(Tenant.self, validating: ["id": 1, "age": "thirty"]) }
      Issue.record("create(_:validating:) did not throw")
    } catch let error as ReefError {
      #expect(error.kind == .invalidValue && error.property == "age", "\(error)")
    }
    #expect(reef.objects(Tenant.self).isEmpty)
  }

  @Test func changingAPrimaryKeyThroughDynamicAccessIsRefused() throws {
    let (reef, _) = try openReef()
    let landlord = Landlord(value: ["name": "Roper"])
    try reef.write { reef.add(landlord) }
    do {
      try reef.write { landlord["name"] = "Furley" }
      Issue.record("write did not throw")
    } catch let error as ReefError {
      #expect(error.kind == .primaryKeyChanged)
      #expect(error.property == "name")
    }
    #expect(landlord.name == "Roper")
    try reef.write { landlord.name = "Roper" }
    #expect(landlord.name == "Roper", "setting the same key is allowed")
  }

  @Test func aPrimaryKeyClashFromAChangeIsRefused() throws {
    let (reef, _) = try openReef()
    try reef.write {
      reef.add(makeTenant(1))
      reef.add(makeTenant(2))
    }
    #expect(throws: ReefError.self) { try reef.write { reef.add(makeTenant(2)) } }
    #expect(reef.objects(Tenant.self).count == 2)
  }

  @Test func aDescriptionNamesTheTypeAndValues() throws {
    let (reef, _) = try openReef()
    let tenant = makeTenant(1, "Jack", home: makeBuilding("Paris"))
    try reef.write { reef.add(tenant) }
    #expect(tenant.description.contains("Tenant {") && tenant.description.contains("\tname = Jack;"))
    #expect(tenant.description.contains("Paris"))
    try reef.write { reef.delete(tenant) }
    #expect(tenant.description == "[invalid object]")
  }
}
