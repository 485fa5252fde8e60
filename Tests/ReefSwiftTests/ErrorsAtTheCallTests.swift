import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import Testing

/// What Realm raises at the call stops there, with Realm's message (a missing property would
/// otherwise sort as null, match nothing and aggregate to nothing, silently).
@Suite struct ErrorsAtTheCallTests {
  /// The standard error of an exit test, as text.
  private func errorText(_ result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
  }

  @Test func sortingByAPropertyThatDoesNotExistStops() async {
    let stderr = errorText(
      await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        withSeededReef { _ = $0.objects(Person.self).sorted(byKeyPath: "age") }
      })
    #expect(stderr.contains("Cannot sort on key path 'age': property 'Person.age' does not exist."), "\(stderr)")
  }

  @Test func sortingThroughAnEmbeddedObjectByAPropertyItLacksStops() async {
    let stderr = errorText(
      await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        withSeededReef {
          _ = $0.objects(Person.self).sorted(by: [
            SortDescriptor(keyPath: "name"), SortDescriptor(keyPath: "address.town"),
          ])
        }
      })
    #expect(
      stderr.contains("Cannot sort on key path 'address.town': property 'Address.town' does not exist."), "\(stderr)")
  }

  @Test func distinctByAPropertyThatDoesNotExistStops() async {
    let stderr = errorText(
      await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        withSeededReef { _ = $0.objects(Person.self).distinct(by: ["nickname"]) }
      })
    #expect(stderr.contains("property 'Person.nickname' does not exist."), "\(stderr)")
  }

  @Test func filteringOnAPropertyThatDoesNotExistStops() async {
    let stderr = errorText(
      await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        withSeededReef { _ = $0.objects(Person.self).filter("age > 3") }
      })
    #expect(stderr.contains("Property 'age' not found in object of type 'Person'"), "\(stderr)")
  }

  @Test func filteringThroughALinkOnAPropertyItsTypeLacksStops() async {
    let stderr = errorText(
      await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        withSeededReef { _ = $0.objects(Person.self).filter("ANY dogs.color == 'red'") }
      })
    #expect(stderr.contains("Property 'color' not found in object of type 'Dog'"), "\(stderr)")
  }

  @Test func anAggregateOfAPropertyThatDoesNotExistStops() async {
    let minimum = errorText(
      await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        withSeededReef { let _: Int? = $0.objects(Person.self).min(ofProperty: "age") }
      })
    #expect(minimum.contains("Property 'age' not found in object of type 'Person'"), "\(minimum)")
    let sum = errorText(
      await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        withSeededReef { let _: Int = $0.objects(Person.self).sum(ofProperty: "age") }
      })
    #expect(sum.contains("Property 'age' not found in object of type 'Person'"), "\(sum)")
    let average = errorText(
      await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        withSeededReef { let _: Double? = $0.objects(Person.self).average(ofProperty: "age") }
      })
    #expect(average.contains("Property 'age' not found in object of type 'Person'"), "\(average)")
  }

  @Test func anUpdateOfATypeWithoutAPrimaryKeyStops() async {
    let stderr = errorText(
      await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        withSeededReef { reef in try reef.write { reef.add(Dog(), update: .modified) } }
      })
    #expect(stderr.contains("'Dog' does not have a primary key and can not be updated"), "\(stderr)")
  }

  @Test func addingADeletedObjectStops() async {
    let stderr = errorText(
      await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        withSeededReef { reef in
          let ann = reef.object(ofType: Person.self, forPrimaryKey: 1)!
          try reef.write { reef.delete(ann) }
          try reef.write { reef.add(ann) }
        }
      })
    #expect(stderr.contains("Adding a deleted or invalidated object to a Reef is not permitted"), "\(stderr)")
  }

  @Test func validNamesAreAcceptedEverywhere() throws {
    let (reef, _) = try openReef()
    try reef.write {
      reef.add(makePerson(1, "Ann", city: "Oslo", dogs: ["Rex"]))
      reef.add(makePerson(2, "Bob", city: "Bergen"))
    }
    let people = reef.objects(Person.self)
    #expect(people.sorted(byKeyPath: "address.city").map(\.name) == ["Bob", "Ann"])
    #expect(people.sorted(byKeyPath: "id", ascending: false).map(\.name) == ["Bob", "Ann"])
    #expect(people.filter("ANY dogs.name == 'Rex'").map(\.name) == ["Ann"])
    #expect(people.filter("dogs.@count == 0").map(\.name) == ["Bob"])
    #expect(people.filter("SUBQUERY(dogs, $dog, $dog.name == 'Rex').@count == 1").map(\.name) == ["Ann"])
    #expect(people.distinct(by: ["address.city"]).count == 2)
    let largest: Int? = people.max(ofProperty: "id")
    #expect(largest == 2)
    #expect(throws: ReefError.self) { try people.filter(validating: "nickname == 'A'", []) }
    #expect(reef.objects(Dog.self).sorted(byKeyPath: "_id").count == 1, "a type's hidden _id is known")
  }
}

/// Runs `body` on a fresh file holding one person, in an exit test's process; a clean exit after
/// `body` returns (or an error it throws) fails the test, which expects `body` to stop.
func withSeededReef(_ body: (Reef) throws -> Void) {
  runOrExitCleanly {
    let (reef, _) = try openReef()
    try reef.write { reef.add(makePerson(1, "Ann", city: "Oslo")) }
    try body(reef)
    exit(0)
  }
}
