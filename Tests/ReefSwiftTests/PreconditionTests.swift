import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import Testing

/// Runs `body` on a new thread and waits for it; returns what it threw.
@discardableResult
func onAnotherThread(_ body: @escaping @Sendable () throws -> Void) -> (any Error)? {
  final class Outcome: @unchecked Sendable { var error: (any Error)? }
  let outcome = Outcome()
  let done = DispatchSemaphore(value: 0)
  let thread = Thread {
    do { try body() } catch { outcome.error = error }
    done.signal()
  }
  thread.start()
  done.wait()
  return outcome.error
}

/// Runs an exit test's body: an error it throws ends the process with success, so that the
/// test fails (it expects the precondition to stop the process, not an error).
func runOrExitCleanly(_ body: () throws -> Void) {
  do {
    try body()
  } catch {
    print("the exit test's body threw \(error)")
    exit(0)
  }
}

/// Carries a value that is not `Sendable` to another thread, on purpose (to check that the
/// object layer stops it).
struct Smuggled<Value>: @unchecked Sendable {
  let value: Value
}

@Suite struct PreconditionTests {
  /// The standard error of an exit test, as text.
  private func stderr(_ result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
  }

  @Test func writingAManagedPropertyOutsideAWriteStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        let landlord = Landlord()
        landlord.name = "Mr. Roper"
        try reef.write { reef.add(landlord) }
        landlord.rent = 900
      }
    }
    #expect(stderr(result).contains("outside of a write transaction"), "\(stderr(result))")
  }

  @Test func writingAnEmbeddedPropertyOutsideAWriteStops() async {
    await #expect(processExitsWith: .failure) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        let tenant = Tenant()
        tenant.home = Building()
        try reef.write { reef.add(tenant) }
        tenant.home?.city = "Los Angeles"
      }
    }
  }

  @Test func aManagedListIndexOutOfBoundsStopsWithRealmsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        let tenant = makeTenant(1, buildings: [makeBuilding("A"), makeBuilding("B")])
        try reef.write { reef.add(tenant) }
        try reef.write { tenant.buildings.swapAt(0, 5) }
      }
    }
    #expect(stderr(result).contains("Index 5 is out of bounds (must be less than 2)."), "\(stderr(result))")
  }

  @Test func readingAManagedListPastItsEndStopsWithRealmsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        let tenant = makeTenant(1, buildings: [makeBuilding("A")])
        try reef.write { reef.add(tenant) }
        _ = tenant.buildings[3].city
      }
    }
    #expect(stderr(result).contains("Index 3 is out of bounds (must be less than 1)."), "\(stderr(result))")
  }

  @Test func appendingToAManagedListOutsideAWriteStops() async {
    await #expect(processExitsWith: .failure) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        let tenant = Tenant()
        try reef.write { reef.add(tenant) }
        tenant.buildings.append(Building())
      }
    }
  }

  @Test func dynamicWriteOutsideAWriteStops() async {
    await #expect(processExitsWith: .failure) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        let tenant = Tenant()
        try reef.write { reef.add(tenant) }
        tenant["name"] = "Jack"
      }
    }
  }

  @Test func addOutsideAWriteStops() async {
    await #expect(processExitsWith: .failure) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        reef.add(Tenant())
      }
    }
  }

  @Test func theSameWritesInsideAWriteDoNotStop() throws {
    let (reef, _) = try openReef()
    let tenant = Tenant()
    tenant.home = Building()
    try reef.write { reef.add(tenant) }
    try reef.write {
      tenant.name = "Jack"
      tenant.home?.city = "Los Angeles"
      tenant.buildings.append(Building())
      tenant["age"] = 30
    }
    #expect(tenant.name == "Jack" && tenant.home?.city == "Los Angeles" && tenant.buildings.count == 1)
    #expect(tenant.age == 30)
  }

  @Test func readingALiveObjectFromAnotherThreadStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        let landlord = Landlord()
        try reef.write { reef.add(landlord) }
        let smuggled = Smuggled(value: landlord)
        onAnotherThread { _ = smuggled.value.rent }
      }
    }
    #expect(stderr(result).contains("incorrect thread"), "\(stderr(result))")
  }

  @Test func usingAReefFromAnotherThreadStops() async {
    await #expect(processExitsWith: .failure) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        let smuggled = Smuggled(value: reef)
        onAnotherThread { _ = smuggled.value.objects(Landlord.self).count }
      }
    }
  }

  @Test func writingWithAReefFromAnotherThreadStops() async {
    await #expect(processExitsWith: .failure) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        let smuggled = Smuggled(value: reef)
        onAnotherThread { try? smuggled.value.write { smuggled.value.add(Landlord()) } }
      }
    }
  }

  @Test func readingAFieldThatDoesNotFitStopsNamingCollectionIDFieldAndTypes() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        let id = ObjectId()
        _ = try reef.store.write {
          try $0.collection("Contact").insert(["_id": .objectId(id), "name": .int32(5), "address": .null])
        }
        let contact = reef.objects(Contact.self).first
        FileHandle.standardError.write(Data("ID=\(id.hex)\n".utf8))
        _ = contact?.name
      }
    }
    let text = stderr(result)
    let id = text.split(separator: "\n").first { $0.hasPrefix("ID=") }.map { String($0.dropFirst(3)) }
    let message = text.split(separator: "\n").first { $0.contains("Fatal error") }.map(String.init) ?? text
    #expect(id != nil && message.contains(id!), "the _id: \(message)")
    #expect(message.contains("Contact"), "the collection: \(message)")
    #expect(message.contains("field name"), "the field: \(message)")
    #expect(message.contains("String"), "the expected type: \(message)")
    #expect(message.lowercased().contains("int32"), "the found type: \(message)")
  }

  @Test func readingAnEmbeddedFieldThatDoesNotFitStopsNamingThePath() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        _ = try reef.store.write {
          try $0.collection("Contact").insert(["_id": .objectId(ObjectId()), "name": "Nick", "address": ["city": true]])
        }
        _ = reef.objects(Contact.self).first?.address?.city
      }
    }
    let text = stderr(result)
    #expect(text.contains("Contact") && text.contains("city") && text.contains("address"), "\(text)")
    #expect(text.lowercased().contains("bool"), "\(text)")
  }

  @Test func readingAMissingRequiredFieldStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        _ = try reef.store.write { try $0.collection("Landlord").insert(["_id": .objectId(ObjectId()), "name": "X"]) }
        _ = reef.objects(Landlord.self).first?.rent
      }
    }
    #expect(stderr(result).contains("rent"), "\(stderr(result))")
  }

  @Test func readingADeletedObjectStops() async {
    await #expect(processExitsWith: .failure) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        let landlord = Landlord()
        try reef.write { reef.add(landlord) }
        try reef.write { reef.delete(landlord) }
        _ = landlord.rent
      }
    }
  }

  @Test func anInvalidPredicateStops() async {
    await #expect(processExitsWith: .failure) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        _ = reef.objects(Landlord.self).filter("rent >>> 3").count
      }
    }
  }

  @Test func anInvalidPredicateThrowsWithFilterValidating() throws {
    let (reef, _) = try openReef()
    #expect(throws: ReefError.self) { _ = try reef.objects(Landlord.self).filter(validating: "rent >>> 3", []) }
  }

  @Test func settingAValueOfTheWrongTypeDynamicallyStops() async {
    await #expect(processExitsWith: .failure) {
      runOrExitCleanly {
        let tenant = Tenant()
        tenant["age"] = "thirty"
      }
    }
  }
}
