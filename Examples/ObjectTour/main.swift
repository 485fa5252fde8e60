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

// MARK: Live data: notifications, frozen snapshots, async sequences

let token = inLA.observe { change in  // after each commit of this Reef, and at refresh()
  switch change {
  case .initial(let results): print("initial:", results.count)
  case .update(_, let deletions, let insertions, let modifications):
    print("deleted \(deletions), inserted \(insertions), modified \(modifications)")
  case .error(let error): print(error)
  }
}  // initial: 0
try reef.write { nick.address?.city = "Los Angeles" }  // deleted [], inserted [0], modified []
let before = inLA.freeze()  // an immutable snapshot, readable from any thread
try reef.write { nick.name = "Dr. Nick" }  // deleted [], inserted [], modified [0]
print(before.first?.name ?? "", inLA.first?.name ?? "")  // Nick Riviera Dr. Nick
token.invalidate()

// Async sequences follow every thread's and process's commits, with frozen results.
changesLoop: for await change in inLA.changes {
  switch change {
  case .initial: try reef.write { nick.address?.city = "Springfield" }
  case .update(let results, let deletions, _, _):
    print(results.isFrozen, results.count, deletions)  // true 0 [0]
    break changesLoop
  case .error(let error): print(error)
  }
}

// MARK: The same objects are MongoDB documents

let stored = try reef.store.read { try $0.collection("Contact").findOne() }
print(stored!)  // {"_id":{"$oid":…},"name":"Dr. Nick","address":{"street":"123 Fake St.","city":"Springfield"}}
try reef.store.exportDump(to: DumpWriter(path: "/tmp/reef-tour-dump", format: .dump))  // mongorestore loads it
