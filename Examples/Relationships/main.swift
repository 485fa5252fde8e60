// Realm's "Model Relationships" page (../shared/seeds/model-relationships.txt) with Realm
// replaced by Reef: its @Persisted models, verbatim, and a run that shows each relationship:
// to-one, to-many, inverse (LinkingObjects) and embedded. The inverse section's User and Task are
// in the UserTasks example.
//
//   swift run Relationships [directory]
//
// The page declares `Person` three times, one per section; here the to-one and to-many forms
// are nested in `ToOne` and `ToMany`, and each section runs in a file of its own, since all three
// are stored in a collection named `Person`. It works in `directory` (default:
// $TMPDIR/reef-examples/Relationships), which it empties first, and ends by writing the three
// files' collections as one mongodump directory, `dump/`, one database per file. Dog and DogClub
// have no primary key, so each run gives them new hidden `_id`s; the rest of the output repeats.
import ReefStore
import ReefSwift

// MARK: Define a To-One Relationship Property

enum ToOne {
  class Person: Object {
    @Persisted var name: String = ""
    @Persisted var birthdate: Date = Date(timeIntervalSince1970: 1)
    // A person can have one dog
    @Persisted var dog: Dog?
  }
}

class Dog: Object {
  @Persisted var name: String = ""
  @Persisted var age: Int = 0
  @Persisted var breed: String?
  // No backlink to person -- one-directional relationship
}

// MARK: Define a To-Many Relationship Property

enum ToMany {
  class Person: Object {
    @Persisted var name: String = ""
    @Persisted var birthdate: Date = Date(timeIntervalSince1970: 1)
    // A person can have many dogs
    @Persisted var dogs: List<Dog>
  }
}

// MARK: Define an Embedded Object Property (with an inverse relationship)

class Person: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var name = ""
  // To-many relationship - a person can have many dogs
  @Persisted var dogs: List<Dog>
  // Inverse relationship - a person can be a member of many clubs
  @Persisted(originProperty: "members") var clubs: LinkingObjects<DogClub>
  // Embed a single object.
  // Embedded object properties must be marked optional.
  @Persisted var address: Address?
  convenience init(name: String, address: Address) {
    self.init()
    self.name = name
    self.address = address
  }
}

class DogClub: Object {
  @Persisted var name = ""
  @Persisted var members: List<Person>
  // DogClub has an array of regional office addresses.
  // These are embedded objects.
  @Persisted var regionalOfficeAddresses: List<Address>
  convenience init(name: String, addresses: [Address]) {
    self.init()
    self.name = name
    self.regionalOfficeAddresses.append(objectsIn: addresses)
  }
}

class Address: EmbeddedObject {
  @Persisted var street: String?
  @Persisted var city: String?
  @Persisted var country: String?
  @Persisted var postalCode: String?
}

// MARK: A fresh directory

let directory = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory() + "reef-examples/Relationships"
try? FileManager.default.removeItem(atPath: directory)
try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
_ = FileManager.default.changeCurrentDirectoryPath(directory)
print("Working in \(directory)")

/// Opens one section's file with the types it holds.
func openReef(_ name: String, _ types: [ObjectBase.Type]) throws -> Reef {
  try Reef(configuration: Reef.Configuration(fileURL: URL(fileURLWithPath: "\(name).reef"), objectTypes: types))
}

func makeDog(_ name: String, age: Int, breed: String?) -> Dog {
  let dog = Dog()
  dog.name = name
  dog.age = age
  dog.breed = breed
  return dog
}

// MARK: To-one

print("\n== To-one: a person has at most one dog")
let toOne = try openReef("to-one", [ToOne.Person.self, Dog.self])
let ann = ToOne.Person()
ann.name = "Ann"
ann.dog = makeDog("Rex", age: 3, breed: "Beagle")
try toOne.write { toOne.add(ann) }
print("\(ann.name)'s dog: \(ann.dog?.name ?? "none"), a \(ann.dog?.breed ?? "dog") of \(ann.dog?.age ?? 0)")
print("The dog was added with her: \(toOne.objects(Dog.self).count) dog in the file")
print("People with a beagle: \(toOne.objects(ToOne.Person.self).filter("dog.breed == %@", "Beagle").map(\.name))")
try toOne.write { ann.dog = nil }
print("Setting the link to nil deletes no dog: \(toOne.objects(Dog.self).count) dog in the file")
try toOne.write { ann.dog = toOne.objects(Dog.self).first }
print("Linked again: \(ann.dog?.name ?? "none")")

// MARK: To-many

print("\n== To-many: a person has any number of dogs")
let toMany = try openReef("to-many", [ToMany.Person.self, Dog.self])
let bob = ToMany.Person()
bob.name = "Bob"
bob.dogs.append(objectsIn: [makeDog("Fido", age: 5, breed: nil), makeDog("Lassie", age: 7, breed: "Collie")])
try toMany.write { toMany.add(bob) }
print("\(bob.name)'s dogs: \(bob.dogs.map(\.name).joined(separator: ", "))")
print("Dogs older than 6 in his list: \(bob.dogs.filter("age > 6").map(\.name))")
print("People with a collie: \(toMany.objects(ToMany.Person.self).filter("ANY dogs.breed == 'Collie'").map(\.name))")
let fido = bob.dogs[0]
try toMany.write { toMany.delete(fido) }
print("Deleting Fido removes him from the list: \(bob.dogs.map(\.name))")

// MARK: Inverse and embedded

print("\n== Inverse and embedded: people in dog clubs, with addresses")
let reef = try openReef("default", [Person.self, DogClub.self, Dog.self, Address.self])
func makeAddress(_ street: String, _ city: String) -> Address {
  let address = Address()
  address.street = street
  address.city = city
  address.country = "USA"
  return address
}
let carol = Person(name: "Carol", address: makeAddress("12 Elm St", "Springfield"))
carol.id = 1
carol.dogs.append(makeDog("Rover", age: 2, breed: "Labrador"))
let dave = Person(name: "Dave", address: makeAddress("8 Oak Ave", "Shelbyville"))
dave.id = 2
let goodDogs = DogClub(name: "Good Dogs", addresses: [makeAddress("1 Kennel Rd", "Springfield")])
goodDogs.members.append(objectsIn: [carol, dave])
let agility = DogClub(
  name: "Agility Club", addresses: [makeAddress("5 Jump Ln", "Capital City"), makeAddress("9 Hoop St", "Ogdenville")])
agility.members.append(carol)
try reef.write { reef.add([goodDogs, agility]) }
print("Adding the clubs added their members and the members' dogs:")
print("  \(reef.objects(Person.self).count) people, \(reef.objects(Dog.self).count) dog")
for person in reef.objects(Person.self).sorted(byKeyPath: "name") {
  // LinkingObjects: computed from the clubs whose `members` hold this person.
  let clubs = person.clubs.map(\.name).sorted().joined(separator: ", ")
  print("  \(person.name) of \(person.address?.city ?? "-") is in: \(clubs)")
}
let ogdenville = reef.objects(DogClub.self).filter("ANY regionalOfficeAddresses.city == 'Ogdenville'")
print("Clubs with an office in Ogdenville: \(ogdenville.map(\.name))")
let springfield = reef.objects(Person.self).filter("address.city == %@", "Springfield")
print("People living in Springfield: \(springfield.map(\.name))")
let springfieldClubs = reef.objects(DogClub.self).filter("ANY members.address.city == %@", "Springfield")
print("Clubs with a member in Springfield (a link, then an address): \(springfieldClubs.map(\.name))")
let roverOwners = reef.objects(Person.self).filter("ANY dogs.name == %@", "Rover")
print("People with a dog named Rover: \(roverOwners.map(\.name))")
try reef.write { agility.members.removeAll() }
print("Removed from the Agility Club's members, Carol is in: \(carol.clubs.map(\.name))")
let davesAddress = dave.address!
try reef.write { reef.delete(dave) }
print("Deleting Dave deleted his embedded address (\(davesAddress.isInvalidated ? "invalidated" : "still there"))")
print("and took him out of Good Dogs: \(goodDogs.members.map(\.name))")

// MARK: The stored documents, and a mongodump directory

print("\n== As stored: links are primary keys (or the hidden _id), embedded objects are inline")
for collection in ["Person", "DogClub"] {
  let documents = try reef.store.read { try $0.collection(collection).find().toArray() }
  for document in documents { print("\(collection): \(document.extendedJSON(.relaxed))") }
}
for (file, store) in [("to-one", toOne.store), ("to-many", toMany.store), ("default", reef.store)] {
  let report = try store.exportDump(to: DumpWriter(path: "dump", format: .dump, defaultDatabase: file))
  for entry in report.entries {
    print("dump/\(file)/\(entry.collection).bson (documents: \(entry.documents))")
  }
}
