// The README's tour of objects, compiled and run by `swift run ObjectTour`; keep the two in step.
import ReefStore
import ReefSwift

// MARK: Models: Realm's, with Realm replaced by Reef

class Address: EmbeddedObject {
  @Persisted var street: String?
  @Persisted var city: String?
}

class Contact: Object {
  @Persisted(primaryKey: true) var _id: ObjectId
  @Persisted var name = ""
  @Persisted var address: Address?  // embedded: a subdocument of the contact's document
}

// MARK: Write, query, change

let configuration = Reef.Configuration(fileURL: URL(fileURLWithPath: "/tmp/reef-tour-objects.reef"))
try Reef.deleteFiles(for: configuration)  // start afresh: the file, its lock file and its log
let reef = try Reef(configuration: configuration)

try reef.write {
  let address = Address()
  address.street = "123 Fake St."
  address.city = "Los Angeles"
  let contact = Contact()
  contact.name = "Nick Riviera"
  contact.address = address
  reef.add(contact)
}

let inLA = reef.objects(Contact.self).filter("address.city = %@", "Los Angeles").sorted(byKeyPath: "name")
print(inLA.count, inLA.first?.name ?? "")  // 1 Nick Riviera

let nick = inLA.first!
try reef.write { nick.address?.city = "Springfield" }  // rewrites the contact's document
print(inLA.count, nick.address?.city ?? "")  // 0 Springfield: results and objects are live

// MARK: The same objects are MongoDB documents

let stored = try reef.store.read { try $0.collection("Contact").findOne() }
print(stored!)  // {"_id":{"$oid":…},"name":"Nick Riviera","address":{"street":"123 Fake St.","city":"Springfield"}}
try reef.store.exportDump(to: DumpWriter(path: "/tmp/reef-tour-dump", format: .dump))  // mongorestore loads it
