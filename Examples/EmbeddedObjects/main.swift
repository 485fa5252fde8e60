// Realm's "Embedded Objects" page (../shared/seeds/embedded-objects.txt) with Realm replaced by
// Reef: its models (in the @Persisted form, as model-relationships.txt declares Address) and each
// of its Swift snippets, verbatim but for the lines marked "Reef example".
//
//   swift run EmbeddedObjects [directory]
//
// It works in `directory` (default: $TMPDIR/reef-examples/EmbeddedObjects), which it empties
// first, opens `default.reef` there as `try! Reef()` does, and ends by writing the store's
// collections as a mongodump directory, `dump/`, that mongorestore and `reef dump` read.
import ReefStore
import ReefSwift

// MARK: The page's models

// The page declares them as `@objc dynamic var`, `let addresses = List<Address>()` and
// `override static func primaryKey()`: `@objc` does not compile on Linux (no Objective-C
// runtime), and without `@Persisted` a property is not stored. These are the same models in the
// @Persisted form (see "Coming from Realm" in the ReefSwift documentation).

// Define an embedded object
class Address: EmbeddedObject {
  @Persisted var street: String?
  @Persisted var city: String?
  @Persisted var country: String?
  @Persisted var postalCode: String?
}

// Define an object with one embedded object
class Contact: Object {
  @Persisted(primaryKey: true) var _id: ObjectId
  @Persisted var name = ""

  // Embed a single object.
  // Embedded object properties must be marked optional.
  @Persisted var address: Address?

  convenience init(name: String, address: Address) {
    self.init()
    self.name = name
    self.address = address
  }
}

// Define an object with an array of embedded objects
class Business: Object {
  @Persisted(primaryKey: true) var _id: ObjectId
  @Persisted var name = ""
  @Persisted var addresses: List<Address>  // Embed an array of objects

  convenience init(name: String, addresses: [Address]) {
    self.init()
    self.name = name
    self.addresses.append(objectsIn: addresses)
  }
}

// MARK: A fresh directory

let directory = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory() + "reef-examples/EmbeddedObjects"
try? FileManager.default.removeItem(atPath: directory)
try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
_ = FileManager.default.changeCurrentDirectoryPath(directory)
print("Working in \(directory)")

// The update and overwrite snippets look a contact up by "an arbitrary id"; the contact the
// first snippet creates gets that id, so that they find it.
let pageID = ObjectId("5f47f4811060b1aa6cc71272")!

// MARK: Create an Embedded Object

print("\n== Create an Embedded Object")
let realm = try! Reef()

try! realm.write {
  let address = Address()
  address.street = "123 Fake St."
  address.city = "Springfield"
  address.country = "USA"
  address.postalCode = "90710"
  let contact = Contact(name: "Nick Riviera", address: address)
  contact._id = pageID  // Reef example: the id the next snippets look up
  realm.add(contact)
}
print("Contacts in Springfield: \(realm.objects(Contact.self).filter("address.city = %@", "Springfield").count)")

// MARK: Update an Embedded Object Property

print("\n== Update an Embedded Object Property")
let addressBefore = realm.object(ofType: Contact.self, forPrimaryKey: pageID)?.address
do {
  let id = ObjectId("5f47f4811060b1aa6cc71272")  // An arbitrary id
  try! realm.write {
    guard let contact = realm.object(ofType: Contact.self, forPrimaryKey: id) else {
      print("Contact not found")
      return
    }
    contact.address?.street = "Hollywood Upstairs Medical College"
    contact.address?.city = "Los Angeles"
    contact.address?.postalCode = "90210"
    print("Updated contact: \(contact)")
  }
}
print("An accessor read before the update sees it: \(addressBefore?.city ?? "nil")")

// MARK: Overwrite an Embedded Object

print("\n== Overwrite an Embedded Object")
do {
  let id = ObjectId("5f47f4811060b1aa6cc71272")  // An arbitrary id
  try! realm.write {
    guard let contact = realm.object(ofType: Contact.self, forPrimaryKey: id) else {
      print("Contact not found")
      return
    }
    let newAddress = Address()
    newAddress.street = "Hollywood Upstairs Medical College"
    newAddress.city = "Los Angeles"
    newAddress.country = "USA"
    newAddress.postalCode = "90210"
    contact.address = newAddress
    print("Updated contact: \(contact)")
  }
}
print("The overwritten address was deleted: isInvalidated = \(addressBefore?.isInvalidated ?? false)")

// MARK: Query a Collection on Embedded Object Properties

print("\n== Query a Collection on Embedded Object Properties")
// Reef example: more contacts, so that the filter and the sort have something to do.
try! realm.write {
  for (id, name, street, city) in [
    ("5f47f4811060b1aa6cc71273", "Dr. Hibbert", "1 Springfield General", "Springfield"),
    ("5f47f4811060b1aa6cc71274", "Julius Hibbert Jr.", "742 Evergreen Terrace", "Los Angeles"),
    ("5f47f4811060b1aa6cc71275", "Troy McClure", "10 Hollywood Blvd", "Los Angeles"),
  ] {
    let address = Address()
    address.street = street
    address.city = city
    address.country = "USA"
    let contact = Contact(name: name, address: address)
    contact._id = ObjectId(id)!
    realm.add(contact)
  }
}
do {
  let losAngelesContacts = realm.objects(Contact.self)
    .filter("address.city = %@", "Los Angeles")
    .sorted(byKeyPath: "address.street")
  print("Los Angeles Contacts: \(losAngelesContacts)")
  // Reef example: Reef's description of Results gives the count; Realm's lists the objects.
  for contact in losAngelesContacts {
    print("  \(contact.address?.street ?? "-"): \(contact.name)")
  }
}
// Reef example: the same query with the type-safe builder.
let typed = realm.objects(Contact.self).where { $0.address.city == "Los Angeles" }.sorted(byKeyPath: "address.street")
print("The same with where { $0.address.city == \"Los Angeles\" }: \(typed.map(\.name))")

// MARK: A Business with an array of embedded addresses

print("\n== A Business: a list of embedded objects is an array of subdocuments")
try! realm.write {
  let offices = [("1633 Broadway", "New York City"), ("3 Bryant St", "San Francisco"), ("Ruhr 5", "Essen")]
    .map { street, city -> Address in
      let address = Address()
      address.street = street
      address.city = city
      return address
    }
  let business = Business(name: "MongoDB", addresses: offices)
  business._id = ObjectId("5f47f4811060b1aa6cc71280")!
  realm.add(business)
}
let business = realm.objects(Business.self).first!
print("\(business.name): \(business.addresses.map { $0.city ?? "-" }.joined(separator: ", "))")
let removed = business.addresses[2]
try! realm.write { business.addresses.remove(at: 2) }
print("Removed from its list, the Essen office was deleted: isInvalidated = \(removed.isInvalidated)")
print(
  "Businesses with an office in San Francisco:",
  realm.objects(Business.self).filter("ANY addresses.city == %@", "San Francisco").count)

// MARK: Cascading delete

print("\n== Deleting a parent deletes its embedded objects")
let troy = realm.objects(Contact.self).filter("name == %@", "Troy McClure").first!
let troysAddress = troy.address!
try! realm.write { realm.delete(troy) }
print("Troy's address: isInvalidated = \(troysAddress.isInvalidated)")
print("Contacts left: \(realm.objects(Contact.self).count)")

// MARK: JSON Schema

print("\n== JSON Schema: embedded objects are embedded documents in the parent's schema")
for type in ["Contact", "Business"] {
  print(try realm.jsonSchema[type]?.extendedJSON(.relaxed) ?? "no schema for \(type)")
}

// MARK: The stored documents, and a mongodump directory

print("\n== As stored: one document per object, embedded objects inline")
let stored = try realm.store.read { try $0.collection("Contact").find().toArray() }
print(stored[0].extendedJSON(.relaxed))
let report = try realm.store.exportDump(
  to: DumpWriter(path: "dump", format: .dump, defaultDatabase: "EmbeddedObjects"))
for entry in report.entries {
  print("dump/EmbeddedObjects/\(entry.collection).bson (documents: \(entry.documents))")
}
