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

// MARK: Typed queries on collection properties

class Tagged: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var tags: List<String>
  @Persisted var scores: List<Int>
  @Persisted var labels: MutableSet<String>
  @Persisted var pals: MutableSet<Dog>
  @Persisted var phones: Map<String, String>
  @Persisted var counts: Map<String, Int>
  @Persisted var pets: Map<String, Dog?>
}

class OrderLine: EmbeddedObject {
  @Persisted var item = ""
  @Persisted var price = 0
}

class Order: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var lines: List<OrderLine>
}

/// An embedded type whose property is stored under another name.
class MappedLine: EmbeddedObject {
  @Persisted var amount = 0
  override class func propertiesMapping() -> [String: String] { ["amount": "a"] }
}

class Invoice: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var lines: List<MappedLine>
}

/// Each typed query is run beside the predicate string it stands for, on the same data: both
/// must find the same objects, and those must be the ones expected.
@Suite struct CollectionTypedQueryTests {
  /// Ann has Rex (3) and Fido (4), Bob has Spot (4), Cy has none; Dee has Rex2 (10).
  func people() throws -> Reef {
    let (reef, _) = try openReef()
    try reef.write {
      for (id, name, dogs) in [(1, "Ann", [("Rex", 3), ("Fido", 4)]), (2, "Bob", [("Spot", 4)]), (3, "Cy", [])] {
        let person = Person()
        person.id = id
        person.name = name
        for (dogName, age) in dogs {
          let dog = Dog()
          dog.name = dogName
          dog.age = age
          person.dogs.append(dog)
        }
        reef.add(person)
      }
      let dee = Person()
      dee.id = 4
      dee.name = "Dee"
      let old = Dog()
      old.name = "Rex2"
      old.age = 10
      dee.dogs.append(old)
      reef.add(dee)
    }
    return reef
  }

  func ids(_ results: Results<Person>) -> [Int] { results.map(\.id).sorted() }
  func ids(_ results: Results<Tagged>) -> [Int] { results.map(\.id).sorted() }
  func ids(_ results: Results<Order>) -> [Int] { results.map(\.id).sorted() }

  @Test func aPropertyThroughAListOfLinksIsAnyOfTheLinkedObjects() throws {
    let reef = try people()
    let people = reef.objects(Person.self)
    #expect(ids(people.where { $0.dogs.name == "Spot" }) == [2])
    #expect(ids(people.where { $0.dogs.name == "Spot" }) == ids(people.filter("ANY dogs.name == %@", "Spot")))
    #expect(ids(people.where { $0.dogs.name.starts(with: "Rex") }) == [1, 4])
    #expect(
      ids(people.where { $0.dogs.name.starts(with: "Rex") }) == ids(people.filter("ANY dogs.name BEGINSWITH 'Rex'")))
    #expect(ids(people.where { $0.dogs.age >= 4 }) == [1, 2, 4])
    #expect(ids(people.where { $0.dogs.age >= 4 }) == ids(people.filter("dogs.age >= 4")))
    #expect(ids(people.where { $0.dogs.name == "Nobody" }).isEmpty)
    #expect(ids(people.where { !($0.dogs.age > 3) }) == [3])
    #expect(ids(people.where { !($0.dogs.age > 3) }) == ids(people.filter("NOT (ANY dogs.age > 3)")))
  }

  @Test func aPropertyThroughAListOfEmbeddedObjectsIsAnyOfThem() throws {
    let (reef, _) = try openReef()
    try reef.write {
      for (name, cities) in [("One", ["Paris", "Rome"]), ("Two", ["Oslo"]), ("Three", [])] {
        reef.add(
          Business(
            name: name,
            addresses: cities.map {
              let address = Address()
              address.city = $0
              return address
            }))
      }
    }
    let businesses = reef.objects(Business.self)
    let typed = businesses.where { $0.addresses.city == "Rome" }
    #expect(typed.map(\.name) == ["One"])
    #expect(typed.map(\.name) == businesses.filter("ANY addresses.city == 'Rome'").map(\.name))
    let counted = businesses.where { $0.addresses.count >= 1 }.map(\.name)
    #expect(counted == ["One", "Two"])
    #expect(counted == businesses.filter("addresses.@count >= 1").map(\.name))
  }

  @Test func countComparesTheNumberOfElements() throws {
    let reef = try people()
    let people = reef.objects(Person.self)
    #expect(ids(people.where { $0.dogs.count > 1 }) == [1])
    #expect(ids(people.where { $0.dogs.count > 1 }) == ids(people.filter("dogs.@count > 1")))
    #expect(ids(people.where { $0.dogs.count == 0 }) == [3])
    #expect(ids(people.where { $0.dogs.count == 0 }) == ids(people.filter("dogs.@count == 0")))
    #expect(ids(people.where { $0.dogs.count.in([0, 2]) }) == [1, 3])
    #expect(ids(people.where { $0.dogs.count.in([0, 2]) }) == ids(people.filter("dogs.@count IN {0, 2}")))
    #expect(ids(people.where { $0.dogs.count.in([]) }).isEmpty)
  }

  @Test func aggregatesOfAPropertyOfLinkedObjects() throws {
    let reef = try people()
    let people = reef.objects(Person.self)
    #expect(ids(people.where { $0.dogs.age.avg > 3.5 }) == [2, 4], "Ann's dogs average 3.5")
    #expect(ids(people.where { $0.dogs.age.avg >= 3.5 }) == [1, 2, 4])
    #expect(ids(people.where { $0.dogs.age.avg >= 3.5 }) == ids(people.filter("dogs.@avg.age >= 3.5")))
    #expect(ids(people.where { $0.dogs.age.min == 3 }) == [1])
    #expect(ids(people.where { $0.dogs.age.min == 3 }) == ids(people.filter("dogs.@min.age == 3")))
    #expect(ids(people.where { $0.dogs.age.max < 10 }) == [1, 2])
    #expect(ids(people.where { $0.dogs.age.max < 10 }) == ids(people.filter("dogs.@max.age < 10")))
    #expect(ids(people.where { $0.dogs.age.sum == 7 }) == [1])
    #expect(ids(people.where { $0.dogs.age.sum == 7 }) == ids(people.filter("dogs.@sum.age == 7")))
    #expect(ids(people.where { $0.dogs.age.sum == 0 }) == [3], "the sum over no dogs is 0")
  }

  @Test func aggregatesOfAPropertyOfEmbeddedObjects() throws {
    let (reef, _) = try openReef()
    try addOrders(to: reef)
    let orders = reef.objects(Order.self)
    #expect(ids(orders.where { $0.lines.price.sum > 10 }) == [1, 2])
    #expect(ids(orders.where { $0.lines.price.sum > 10 }) == ids(orders.filter("lines.@sum.price > 10")))
    #expect(ids(orders.where { $0.lines.price.avg == 6 }) == [1])
    #expect(ids(orders.where { $0.lines.price.avg == 6 }) == ids(orders.filter("lines.@avg.price == 6")))
    #expect(ids(orders.where { $0.lines.price.max >= 7 && $0.lines.price.min <= 5 }) == [1])
    #expect(
      ids(orders.where { $0.lines.price.max >= 7 && $0.lines.price.min <= 5 })
        == ids(orders.filter("lines.@max.price >= 7 AND lines.@min.price <= 5")))
  }

  func tagged() throws -> (Reef, [Dog]) {
    let (reef, _) = try openReef()
    var dogs: [Dog] = []
    try reef.write {
      for name in ["Rex", "Spot", "Fido"] {
        let dog = Dog()
        dog.name = name
        reef.add(dog)
        dogs.append(dog)
      }
      for (id, tags, scores, phones) in [
        (1, ["red", "big"], [1, 2, 3], ["home": "555-1"]), (2, ["blue"], [10], ["work": "555-2"]),
        (3, [], [], [:]),
      ] {
        let object = Tagged()
        object.id = id
        object.tags.append(objectsIn: tags)
        object.scores.append(objectsIn: scores)
        for tag in tags { object.labels.insert(tag) }
        for (key, value) in phones.sorted(by: { $0.key < $1.key }) { object.phones[key] = value }
        object.counts["a"] = id
        object.pets["best"] = dogs[id - 1]
        if id == 1 { object.pals.insert(dogs[0]) }
        if id == 2 {
          object.pals.insert(dogs[1])
          object.pals.insert(dogs[2])
        }
        reef.add(object)
      }
    }
    return (reef, dogs)
  }

  @Test func aListOfValuesComparesAnyElement() throws {
    let (reef, _) = try tagged()
    let all = reef.objects(Tagged.self)
    #expect(ids(all.where { $0.tags == "blue" }) == [2])
    #expect(ids(all.where { $0.tags == "blue" }) == ids(all.filter("tags == 'blue'")))
    #expect(ids(all.where { $0.tags != "blue" }) == ids(all.filter("tags != 'blue'")))
    #expect(ids(all.where { $0.tags != "blue" }) == [1])
    #expect(ids(all.where { $0.tags.contains("big") }) == [1])
    #expect(ids(all.where { $0.tags.contains("big") }) == ids(all.filter("%@ IN tags", "big")))
    #expect(ids(all.where { $0.tags.containsAny(in: ["big", "blue"]) }) == [1, 2])
    #expect(
      ids(all.where { $0.tags.containsAny(in: ["big", "blue"]) }) == ids(all.filter("ANY tags IN %@", ["big", "blue"])))
    #expect(ids(all.where { $0.scores > 2 }) == [1, 2])
    #expect(ids(all.where { $0.scores > 2 }) == ids(all.filter("scores > 2")))
    #expect(ids(all.where { $0.scores <= 1 }) == [1])
    #expect(ids(all.where { $0.scores <= 1 }) == ids(all.filter("scores <= 1")))
    #expect(ids(all.where { $0.tags.count == 0 }) == [3])
  }

  @Test func aggregatesOfAListOfNumbers() throws {
    let (reef, _) = try tagged()
    let all = reef.objects(Tagged.self)
    #expect(ids(all.where { $0.scores.avg == 2 }) == [1])
    #expect(ids(all.where { $0.scores.avg == 2 }) == ids(all.filter("scores.@avg == 2")))
    #expect(ids(all.where { $0.scores.sum >= 6 }) == [1, 2])
    #expect(ids(all.where { $0.scores.sum >= 6 }) == ids(all.filter("scores.@sum >= 6")))
    #expect(ids(all.where { $0.scores.min == 1 || $0.scores.max == 10 }) == [1, 2])
    #expect(
      ids(all.where { $0.scores.min == 1 || $0.scores.max == 10 })
        == ids(all.filter("scores.@min == 1 OR scores.@max == 10")))
  }

  @Test func aSetOfValuesOrOfLinks() throws {
    let (reef, dogs) = try tagged()
    let all = reef.objects(Tagged.self)
    #expect(ids(all.where { $0.labels.contains("red") }) == [1])
    #expect(ids(all.where { $0.labels.contains("red") }) == ids(all.filter("%@ IN labels", "red")))
    #expect(ids(all.where { $0.labels.count == 2 }) == ids(all.filter("labels.@count == 2")))
    #expect(ids(all.where { $0.pals.contains(dogs[2]) }) == [2])
    #expect(ids(all.where { $0.pals.contains(dogs[2]) }) == ids(all.filter("%@ IN pals", dogs[2])))
    #expect(ids(all.where { $0.pals.containsAny(in: [dogs[0], dogs[1]]) }) == [1, 2])
    #expect(
      ids(all.where { $0.pals.containsAny(in: [dogs[0], dogs[1]]) })
        == ids(all.filter("ANY pals IN %@", [dogs[0], dogs[1]])))
    #expect(ids(all.where { $0.pals.name == "Fido" }) == [2])
    #expect(ids(all.where { $0.pals.name == "Fido" }) == ids(all.filter("ANY pals.name == 'Fido'")))
  }

  @Test func aListOfLinksContainsAnObject() throws {
    let reef = try people()
    let people = reef.objects(Person.self)
    let spot = try #require(reef.objects(Dog.self).where { $0.name == "Spot" }.first)
    let rex = try #require(reef.objects(Dog.self).where { $0.name == "Rex" }.first)
    #expect(ids(people.where { $0.dogs.contains(spot) }) == [2])
    #expect(ids(people.where { $0.dogs.contains(spot) }) == ids(people.filter("%@ IN dogs", spot)))
    #expect(ids(people.where { $0.dogs.containsAny(in: [spot, rex]) }) == [1, 2])
    #expect(
      ids(people.where { $0.dogs.containsAny(in: [spot, rex]) }) == ids(people.filter("ANY dogs IN %@", [spot, rex])))
  }

  @Test func aMapValueByKeyAndTheMapsKeys() throws {
    let (reef, _) = try tagged()
    let all = reef.objects(Tagged.self)
    #expect(ids(all.where { $0.phones["home"] == "555-1" }) == [1])
    #expect(ids(all.where { $0.phones["home"] == "555-1" }) == ids(all.filter("phones.home == '555-1'")))
    #expect(ids(all.where { $0.phones["work"].starts(with: "555") }) == [2])
    #expect(ids(all.where { $0.counts["a"] >= 2 }) == [2, 3])
    #expect(ids(all.where { $0.counts["a"] >= 2 }) == ids(all.filter("counts.a >= 2")))
    #expect(ids(all.where { $0.phones.keys == "work" }) == [2])
    #expect(
      ids(all.where { $0.phones.keys == "work" }) == ids(all.filter(document: ["phones.work": ["$exists": true]])))
    #expect(ids(all.where { $0.phones.keys.in(["home", "work"]) }) == [1, 2])
  }

  @Test func aSubqueryCountsTheElementsThatMatch() throws {
    let reef = try people()
    let people = reef.objects(Person.self)
    #expect(ids(people.where { ($0.dogs.age >= 4).count == 1 }) == [1, 2, 4])
    #expect(
      ids(people.where { ($0.dogs.age >= 4).count == 1 })
        == ids(people.filter("SUBQUERY(dogs, $d, $d.age >= 4).@count == 1")))
    let rexes = people.where { ($0.dogs.age >= 3 && $0.dogs.name.starts(with: "R")).count > 0 }
    #expect(ids(rexes) == [1, 4])
    #expect(ids(rexes) == ids(people.filter("SUBQUERY(dogs, $d, $d.age >= 3 AND $d.name BEGINSWITH 'R').@count > 0")))
    #expect(ids(people.where { (!($0.dogs.age > 3)).count == 0 }) == [2, 3, 4])
    #expect(
      ids(people.where { (!($0.dogs.age > 3)).count == 0 })
        == ids(people.filter("SUBQUERY(dogs, $d, NOT ($d.age > 3)).@count == 0")))
    let (orderReef, _) = try openReef("orders")
    try addOrders(to: orderReef)
    let orders = orderReef.objects(Order.self)
    #expect(ids(orders.where { ($0.lines.price > 6).count == 1 }) == [1, 2])
    #expect(
      ids(orders.where { ($0.lines.price > 6).count == 1 })
        == ids(orders.filter("SUBQUERY(lines, $l, $l.price > 6).@count == 1")))
    let (tagReef, _) = try tagged()
    let all = tagReef.objects(Tagged.self)
    #expect(ids(all.where { ($0.scores > 1).count >= 2 }) == [1])
    #expect(
      ids(all.where { ($0.scores > 1).count >= 2 }) == ids(all.filter("SUBQUERY(scores, $s, $s > 1).@count >= 2")))
  }

  @Test func aggregatesAndSubqueriesUseTheStoredNamesOfTheElements() throws {
    let (reef, _) = try openReef()
    try reef.write {
      for (id, amounts) in [(1, [5, 7]), (2, [20]), (3, [])] {
        let invoice = Invoice()
        invoice.id = id
        for amount in amounts {
          let line = MappedLine()
          line.amount = amount
          invoice.lines.append(line)
        }
        reef.add(invoice)
      }
    }
    let stored = try reef.store.read { try $0.collection("Invoice").findOne(["id": .int64(1)]) }
    #expect(stored?["lines.0.a"] == .int64(5))
    let invoices = reef.objects(Invoice.self)
    func ids(_ results: Results<Invoice>) -> [Int] { results.map(\.id).sorted() }
    #expect(ids(invoices.where { $0.lines.amount.sum > 10 }) == [1, 2])
    #expect(ids(invoices.where { $0.lines.amount.sum > 10 }) == ids(invoices.filter("lines.@sum.amount > 10")))
    #expect(ids(invoices.where { ($0.lines.amount > 6).count == 1 }) == [1, 2])
    #expect(
      ids(invoices.where { ($0.lines.amount > 6).count == 1 })
        == ids(invoices.filter("SUBQUERY(lines, $l, $l.amount > 6).@count == 1")))
    #expect(ids(invoices.where { $0.lines.amount == 7 }) == [1])
  }

  @Test func aRangeIsABetween() throws {
    let reef = try people()
    let people = reef.objects(Person.self)
    #expect(ids(people.where { $0.dogs.age.contains(4...5) }) == [1, 2])
    #expect(ids(people.where { $0.dogs.age.contains(4...5) }) == ids(people.filter("ANY dogs.age BETWEEN {4, 5}")))
    #expect(reef.objects(Dog.self).where { $0.age.contains(3..<5) }.map(\.name).sorted() == ["Fido", "Rex", "Spot"])
    #expect(ids(people.where { $0.dogs.count.contains(1...2) }) == [1, 2, 4])
    #expect(ids(people.where { $0.dogs.count.contains(1...2) }) == ids(people.filter("dogs.@count BETWEEN {1, 2}")))
    let (tagReef, _) = try tagged()
    let all = tagReef.objects(Tagged.self)
    #expect(ids(all.where { $0.scores.contains(1...3) }) == [1], "every element is in the range")
    #expect(
      ids(all.where { $0.scores.contains(1...3) }) == ids(all.filter("scores.@min >= 1 AND scores.@max <= 3")))
    #expect(ids(all.where { $0.scores.contains(1..<10) }) == [1])
    #expect(ids(all.where { $0.scores.contains(1..<11) }) == [1, 2])
  }

  @Test func aMapOfLinksQueriesTheLinkedObject() throws {
    let (reef, _) = try tagged()
    let all = reef.objects(Tagged.self)
    #expect(ids(all.where { $0.pets["best"].name == "Spot" }) == [2])
    #expect(ids(all.where { $0.pets["best"].name == "Spot" }) == ids(all.filter("pets.best.name == 'Spot'")))
    #expect(ids(all.where { $0.pets["other"].name == "Spot" }).isEmpty)
  }
}

@Suite struct CollectionTypedQueryMisuseTests {
  @Test func anAggregateOfAPathThroughNoCollectionStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        _ = reef.objects(Dog.self).where { $0.age.avg > 1 }
      }
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("must go through one"), "\(message)")
  }

  @Test func aSubqueryCountOfConditionsOnTwoCollectionsStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        _ = reef.objects(Person.self).where { ($0.dogs.age > 1 && $0.name == "Ann").count > 1 }
      }
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("all go through one List"), "\(message)")
  }
}

/// Orders 1 (lines priced 5 and 7), 2 (20) and 3 (no lines).
private func addOrders(to reef: Reef) throws {
  try reef.write {
    for (id, prices) in [(1, [5, 7]), (2, [20]), (3, [])] {
      let order = Order()
      order.id = id
      for price in prices {
        let line = OrderLine()
        line.price = price
        order.lines.append(line)
      }
      reef.add(order)
    }
  }
}
