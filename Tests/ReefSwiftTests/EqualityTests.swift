import Foundation
import ReefSwift
import Testing

/// `==`, hashing and `isSameObject(as:)` of objects, and `==` of `Reef` and `Results`, as
/// Realm's: an object is itself and, once managed, every accessor of the same stored object of
/// the same `Reef`.
@Suite struct EqualityTests {
  @Test func anUnmanagedObjectIsEqualOnlyToItself() {
    let rex = Dog()
    let twin = Dog()
    #expect(rex == rex)
    #expect(rex != twin, "two unmanaged objects with the same values are two objects")
    #expect(rex.isSameObject(as: rex) && !rex.isSameObject(as: twin) && !rex.isSameObject(as: nil))
    #expect(Set([rex, twin, rex]).count == 2)
  }

  @Test func accessorsOfOneStoredObjectAreEqualAndHashAlike() throws {
    let (reef, _) = try openReef()
    try reef.write {
      reef.add(makePerson(1, "Ann"))
      reef.add(makePerson(2, "Bob"))
    }
    let ann = try #require(reef.object(ofType: Person.self, forPrimaryKey: 1))
    let again = try #require(reef.objects(Person.self).filter("name == 'Ann'").first)
    let bob = try #require(reef.object(ofType: Person.self, forPrimaryKey: 2))
    #expect(ann !== again, "two accessors")
    #expect(ann == again && ann.isSameObject(as: again))
    #expect(ann.hashValue == again.hashValue)
    #expect(ann.hash == again.hash, "Realm's spelling of the hash value")
    #expect(ann != bob)
    #expect(Set([ann, again, bob]).count == 2)
    #expect(reef.objects(Person.self).firstIndex(of: bob) == 1)
  }

  @Test func objectsWithoutAPrimaryKeyAreEqualOnlyToTheirOwnInstance() throws {
    let (reef, _) = try openReef()
    let rex = Dog()
    rex.name = "Rex"
    let fido = Dog()
    fido.name = "Fido"
    try reef.write { reef.add([rex, fido]) }
    let dogs = reef.objects(Dog.self)
    let first = dogs[0]
    #expect(first == first && first.hashValue == first.hashValue)
    #expect(dogs[0] != dogs[0], "Realm: two accessors of an object without a primary key are not equal")
    #expect(dogs[0].isSameObject(as: dogs[0]) && dogs[0].isSameObject(as: rex) && !dogs[0].isSameObject(as: fido))
    #expect(Set([first, first, dogs[1]]).count == 2)
  }

  @Test func frozenObjectsWithoutAPrimaryKeyCompareByTheirStoredObject() throws {
    let (reef, _) = try openReef()
    let rex = Dog()
    rex.name = "Rex"
    try reef.write { reef.add(rex) }
    let frozen = reef.freeze()
    let dogs = frozen.objects(Dog.self)
    #expect(
      dogs[0] == dogs[0] && dogs[0].hashValue == dogs[0].hashValue,
      "Realm: a frozen object compares by its stored object")
  }

  @Test func aDeletedObjectIsEqualOnlyToItsOwnInstance() throws {
    let (reef, _) = try openReef()
    try reef.write { reef.add(makePerson(1, "Ann")) }
    let ann = try #require(reef.object(ofType: Person.self, forPrimaryKey: 1))
    let again = try #require(reef.object(ofType: Person.self, forPrimaryKey: 1))
    try reef.write { reef.delete(ann) }
    #expect(ann == ann)
    #expect(ann != again && !ann.isSameObject(as: again), "Realm: a deleted object is no stored object")
  }

  @Test func embeddedObjectsAreTheSameObjectByTheirPlace() throws {
    let (reef, _) = try openReef()
    let tenant = makeTenant(1, home: makeBuilding("Home"), buildings: [makeBuilding("A"), makeBuilding("B")])
    try reef.write { reef.add(tenant) }
    #expect(tenant.home!.isSameObject(as: tenant.home!), "two accessors of the embedded object")
    #expect(tenant.home! != tenant.home!, "Realm: an embedded type has no primary key, == compares instances")
    #expect(tenant.buildings[0].isSameObject(as: tenant.buildings[0]))
    #expect(!tenant.buildings[0].isSameObject(as: tenant.buildings[1]))
    #expect(!tenant.buildings[0].isSameObject(as: tenant.home!))
    let b = tenant.buildings[1]
    try reef.write { tenant.buildings.remove(at: 0) }
    #expect(b.isSameObject(as: tenant.buildings[0]), "an accessor follows its element to its new position")
    #expect(b == b && b.hashValue == b.hashValue)
    let other = makeTenant(2, home: makeBuilding("Home"))
    try reef.write { reef.add(other) }
    #expect(!other.home!.isSameObject(as: tenant.home!), "the same field of another object")
  }

  @Test func aFrozenObjectIsNotItsLiveOriginal() throws {
    let (reef, _) = try openReef()
    let ann = makePerson(1, "Ann", city: "Oslo")
    try reef.write { reef.add(ann) }
    let frozen = ann.freeze()
    #expect(frozen != ann, "read through another Reef")
    #expect(frozen == ann.freeze(), "two freezes of one snapshot share the frozen Reef")
    #expect(frozen.address! == frozen.address!)
    #expect(frozen.thaw() == ann, "thawed into this thread's Reef, which manages ann")
  }

  @Test func objectsOfTwoFilesAreNotEqual() throws {
    let (first, _) = try openReef("first")
    let (second, _) = try openReef("second")
    try first.write { first.add(makePerson(1, "Ann")) }
    try second.write { second.add(makePerson(1, "Ann")) }
    let a = try #require(first.object(ofType: Person.self, forPrimaryKey: 1))
    let b = try #require(second.object(ofType: Person.self, forPrimaryKey: 1))
    #expect(a != b)
  }

  @Test func aReefIsEqualToItselfOnly() throws {
    let (reef, _) = try openReef("one")
    let (other, _) = try openReef("two")
    try reef.write { reef.add(makePerson(1, "Ann")) }
    let ann = try #require(reef.object(ofType: Person.self, forPrimaryKey: 1))
    #expect(ann.reef == reef && ann.realm == reef)
    #expect(reef != other)
    let frozen = reef.freeze()
    #expect(frozen != reef)
    #expect(frozen == reef.freeze(), "each freeze of one snapshot gives the same frozen Reef")
    #expect(reef.thaw() == reef)
    #expect(frozen.thaw() == reef, "thawed into the Reef open on this thread")
  }

  @Test func resultsAreEqualToTheirCopies() throws {
    let (reef, _) = try openReef()
    try reef.write { reef.add(makePerson(1, "Ann")) }
    let people = reef.objects(Person.self)
    let copy = people
    #expect(people == copy)
    #expect(people != people.filter("id > 0"), "a filter makes other results")
    #expect(people != reef.objects(Person.self), "as Realm's: another call makes other results")
    #expect(people != people.freeze())
  }
}
