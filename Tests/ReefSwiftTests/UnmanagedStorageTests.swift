import Foundation
import ReefSwift
import Testing

// The values of unmanaged objects: moved from the construction stack into one storage per
// object, destroyed with it.

private final class Nested: EmbeddedObject {
  @Persisted var label = "inner"
  @Persisted var weight = 1.5
}

/// Property initializers that construct objects between the outer object's own properties.
private final class Outer: Object {
  @Persisted var before = "before"
  @Persisted var nested: Nested? = Nested(value: ["label": "made in an initializer", "weight": 2.5])
  @Persisted var count = 7
  @Persisted var list: List<Nested> = {
    let list = List<Nested>()
    list.append(Nested(value: ["label": "in a list"]))
    return list
  }()
  @Persisted var after: String? = "after"
}

private class Animal: Object {
  @Persisted var name = "animal"
  @Persisted var legs = 4
}

private final class Bird: Animal {
  @Persisted var wingspan = 0.3
  @Persisted var song: String? = "tweet"
}

/// A stored property that is not `@Persisted`: its object is made again, and thrown away, each
/// time a managed `SpareKennel` is constructed.
private final class SpareKennel: Object {
  @Persisted var name = "kennel"
  let spare = Dog()
}

/// No properties at all: no storage.
private final class BareObject: Object {}

@Suite struct UnmanagedStorageTests {
  @Test func valuesAreReleasedWithTheirObject() {
    weak var address: Address?
    weak var dogs: List<Dog>?
    weak var dog: Dog?
    do {
      let person = Person()
      let made = Address()
      made.city = "Oslo"
      person.address = made
      let rex = Dog()
      rex.name = "Rex"
      person.dogs.append(rex)
      address = made
      dogs = person.dogs
      dog = rex
      #expect(person.address?.city == "Oslo")
      #expect(person.dogs.first?.name == "Rex")
    }
    #expect(address == nil)
    #expect(dogs == nil)
    #expect(dog == nil)
  }

  @Test func overwrittenValuesAreReleased() {
    let contact = Contact()
    weak var first: Address?
    do {
      let address = Address()
      contact.address = address
      first = address
    }
    #expect(first != nil)
    contact.address = Address()
    #expect(first == nil)
    contact.name = String(repeating: "x", count: 1000)
    #expect(contact.name.count == 1000)
  }

  @Test func objectsMadeByPropertyInitializersKeepTheirValuesApart() {
    let outer = Outer()
    #expect(outer.before == "before")
    #expect(outer.nested?.label == "made in an initializer")
    #expect(outer.nested?.weight == 2.5)
    #expect(outer.count == 7)
    #expect(outer.list.count == 1)
    #expect(outer.list.first?.label == "in a list")
    #expect(outer.list.first?.weight == 1.5)
    #expect(outer.after == "after")
    outer.count = 8
    outer.after = nil
    #expect(outer.count == 8 && outer.after == nil && outer.before == "before")
  }

  @Test func subclassesStoreTheirOwnAndInheritedValues() {
    let bird = Bird()
    #expect(bird.name == "animal" && bird.legs == 4 && bird.wingspan == 0.3 && bird.song == "tweet")
    bird.legs = 2
    bird.song = nil
    bird.name = "robin"
    #expect(bird.name == "robin" && bird.legs == 2 && bird.wingspan == 0.3 && bird.song == nil)
    let animal = Animal()
    #expect(animal.name == "animal" && animal.legs == 4)
    #expect(bird.objectSchema.properties.map(\.name).sorted() == ["legs", "name", "song", "wingspan"])
  }

  @Test func aSubclassListsItsSuperclassPropertiesFirst() {
    let bird = Bird()
    #expect(bird.objectSchema.properties.map(\.name) == ["name", "legs", "wingspan", "song"], "as Realm orders them")
    let robin = Bird(value: ["robin", 2, 0.25, "chirp"])
    #expect(robin.name == "robin" && robin.legs == 2 && robin.wingspan == 0.25 && robin.song == "chirp")
  }

  @Test func everyTypeOnFreshThreads() {
    // Each thread starts with an empty construction stack, which grows for `Everything` (more
    // than 256 bytes of values) while `Outer` objects are made inside.
    final class Failures: @unchecked Sendable {
      let lock = NSLock()
      var messages: [String] = []
      func add(_ message: String) { lock.withLock { messages.append(message) } }
    }
    let failures = Failures()
    let finished = DispatchSemaphore(value: 0)
    let threads = 8
    for index in 0..<threads {
      let thread = Thread {
        for round in 0..<200 {
          let object = Everything()
          object.key = "\(index)-\(round)"
          object.int = round
          object.ints.append(round)
          object.optionalString = "s\(round)"
          let outer = Outer()
          if object.key != "\(index)-\(round)" || object.int != round || object.ints.first != round
            || object.optionalString != "s\(round)" || object.string != "" || object.mood != .calm
            || outer.nested?.label != "made in an initializer" || outer.after != "after"
          {
            failures.add("thread \(index), round \(round): \(object.key) \(object.int)")
            break
          }
        }
        finished.signal()
      }
      thread.start()
    }
    for _ in 0..<threads { finished.wait() }
    #expect(failures.messages.isEmpty, "\(failures.messages)")
  }

  @Test func anObjectWithoutPropertiesHasNoStorageAndIsRefusedByTheSchema() throws {
    let bare = BareObject()
    #expect(bare.objectSchema.properties.isEmpty)
    #expect(bare.description == "BareObject {\n}")
    let (reef, _) = try openReef()
    #expect(throws: ReefError.self) { try reef.write { reef.add(bare) } }
    #expect(try reef.store.read { try $0.collection("BareObject").count() } == 0)
  }

  @Test func anObjectMadeDuringAManagedConstructionStopsWhenRead() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        try reef.write { reef.add(SpareKennel()) }
        let kennel = try #require(reef.objects(SpareKennel.self).first)
        print(kennel.spare.name)
      }
    }
    let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(
      text.contains("Dog was made by a property initializer") && text.contains("holds no property values"), "\(text)")
    // Unmanaged, the same object has its values.
    #expect(SpareKennel().spare.name == "")
  }
}
