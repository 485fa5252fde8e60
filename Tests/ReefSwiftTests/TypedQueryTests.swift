import Foundation
import ReefSwift
import Testing

@Suite struct TypedQueryTests {
  func contacts() throws -> Reef {
    let (reef, _) = try openReef()
    try reef.write {
      for (name, city, street) in [
        ("A", "Los Angeles", "2 Main"), ("B", "Springfield", "1 Elm"), ("C", "Los Angeles", "1 Oak"),
      ] {
        let address = Address()
        address.city = city
        address.street = street
        reef.add(Contact(name: name, address: address))
      }
    }
    return reef
  }

  @Test func whereFollowsEmbeddedObjectsAsThePredicateDoes() throws {
    let reef = try contacts()
    let typed = reef.objects(Contact.self).where { $0.address.city == "Los Angeles" }.sorted(
      byKeyPath: "address.street")
    let predicate = reef.objects(Contact.self).filter("address.city == %@", "Los Angeles")
      .sorted(byKeyPath: "address.street")
    #expect(typed.map(\.name) == ["C", "A"])
    #expect(typed.map(\.name) == predicate.map(\.name))
  }

  @Test func operatorsCombine() throws {
    let reef = try contacts()
    let results = reef.objects(Contact.self).where {
      ($0.name == "A" || $0.name == "B") && !($0.address.city == "Springfield")
    }
    #expect(results.map(\.name) == ["A"])
    #expect(reef.objects(Contact.self).where { $0.name > "A" }.count == 2)
    #expect(reef.objects(Contact.self).where { $0.address.street.starts(with: "1 ") }.count == 2)
    #expect(reef.objects(Contact.self).where { $0.name.in(["A", "C"]) }.count == 2)
  }

  @Test func whereUsesStoredNamesOfMappedProperties() throws {
    let (reef, _) = try openReef()
    try reef.write {
      let object = Mapped()
      object.id = 1
      object.title = "one"
      reef.add(object)
    }
    #expect(reef.objects(Mapped.self).where { $0.title == "one" }.count == 1)
    #expect(reef.objects(Mapped.self).where { $0.id == 1 }.count == 1)
  }
}

@Suite struct LinkPathQueryTests {
  @Test func aPredicateThroughALinkQueriesTheLinkedType() throws {
    let (reef, _) = try openReef()
    try reef.write {
      for (name, dogs) in [("Ann", ["Rex", "Fido"]), ("Bob", ["Spot"]), ("Cy", [])] {
        let person = Person()
        person.id = name.count * 100 + Int(name.unicodeScalars.first!.value)
        person.name = name
        for dogName in dogs {
          let dog = Dog()
          dog.name = dogName
          dog.age = dogName.count
          person.dogs.append(dog)
        }
        reef.add(person)
      }
    }
    #expect(reef.objects(Person.self).filter("ANY dogs.name == 'Spot'").map(\.name) == ["Bob"])
    #expect(Set(reef.objects(Person.self).filter("dogs.age >= 4").map(\.name)) == ["Ann", "Bob"])
    #expect(reef.objects(Person.self).filter("dogs.name == 'Nobody'").isEmpty)
  }
}

class Pet: Object {
  @Persisted var name = ""
  @Persisted var owner: Person?
}

@Suite struct LinkSortTests {
  @Test func sortingThroughAToOneLinkUsesTheLinkedField() throws {
    let (reef, _) = try openReef()
    try reef.write {
      for (pet, owner, id) in [("a", "Zed", 1), ("b", "Amy", 2), ("c", "Max", 3)] {
        let person = Person()
        person.id = id
        person.name = owner
        let animal = Pet()
        animal.name = pet
        animal.owner = person
        reef.add(animal)
      }
      let stray = Pet()
      stray.name = "d"
      reef.add(stray)
    }
    let sorted = reef.objects(Pet.self).sorted(byKeyPath: "owner.name")
    #expect(sorted.map(\.name) == ["d", "b", "c", "a"], "a null link sorts first, as null does in MongoDB")
    #expect(
      reef.objects(Pet.self).sorted(byKeyPath: "owner.name", ascending: false).map(\.name) == ["a", "c", "b", "d"])
    #expect(reef.objects(Pet.self).filter("owner.name BEGINSWITH 'M'").map(\.name) == ["c"])
    #expect(sorted[1].name == "b")
  }
}

@Suite struct DistinctTests {
  @Test func distinctKeepsTheFirstOfEachCombinationInOrder() throws {
    let (reef, _) = try openReef()
    try reef.write {
      for (name, city) in [("A", "LA"), ("B", "SF"), ("C", "LA"), ("D", nil)] {
        let address = Address()
        address.city = city
        reef.add(Contact(name: name, address: address))
      }
    }
    let distinct = reef.objects(Contact.self).sorted(byKeyPath: "name", ascending: false).distinct(by: ["address.city"])
    #expect(distinct.map(\.name) == ["D", "C", "B"])
    #expect(distinct.count == 3)
    #expect(distinct[2].name == "B")
  }
}

class WornBadge: EmbeddedObject {
  @Persisted var label = ""
  @Persisted(originProperty: "badge") var wearer: LinkingObjects<Wearer>
}

class Wearer: Object {
  @Persisted var name = ""
  @Persisted var badge: WornBadge?
}

@Suite struct EmbeddedBacklinkTests {
  @Test func anEmbeddedObjectReachesItsParentThroughLinkingObjects() throws {
    let (reef, path) = try openReef()
    let wearer = Wearer()
    wearer.name = "Ann"
    wearer.badge = WornBadge()
    wearer.badge?.label = "gold"
    try reef.write { reef.add(wearer) }
    let badge = try #require(wearer.badge)
    #expect(badge.wearer.count == 1)
    #expect(badge.wearer.first?.name == "Ann")
    #expect(badge.wearer.first?.isEqual(to: wearer) == true)
    let stored = try #require(try reef.store.read { try $0.collection("Wearer").findOne() })
    #expect(stored["badge"] == .document(["label": "gold"]), "LinkingObjects are not stored")
    _ = path
  }
}
