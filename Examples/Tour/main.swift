// The README's tour, compiled and run by `swift run ReefTour`; keep the two in step.
import Dispatch
import ReefBSON
import ReefQuery
import ReefStore

#if canImport(Glibc)
  import Glibc
#endif

// MARK: Documents are ordered views over BSON bytes

let contact: Document = [
  "_id": .objectId(ObjectId()),
  "name": "Nick Riviera",
  "address": ["street": "123 Fake St", "city": "Springfield", "country": "USA", "postalCode": "90710"],
]
print(contact["address.city"] ?? .null)  // string("Springfield")
for element in contact {
  print(element.key, element.type)  // _id objectId, name string, address object
}

// MARK: Building in place

var builder = DocumentBuilder()
builder.append("name", "MongoDB")
builder.appendArray("addresses") { addresses in
  addresses.appendDocument { $0.append("city", "New York City") }
  addresses.appendDocument { $0.append("city", "Palo Alto") }
}
let business = builder.document
print(business["addresses.1.city"] ?? .null)  // string("Palo Alto")

// MARK: Bad bytes get a precise error

var bytes = business.bytes
bytes[bytes.count - 2] = 0x7A  // damage the end of the embedded array
do {
  _ = try Document(bytes: bytes)
} catch {
  print(error.kind, error.offset ?? -1, error.keyPath)  // missingTerminator, offset, key path
}

// MARK: Extended JSON v2, both ways

let json = contact.extendedJSON(.canonical)  // {"_id":{"$oid":"…"},"name":"Nick Riviera",…}
let parsed = try Document(extendedJSON: json)
print(parsed == contact)  // true: same bytes, same key order
print(try Document(extendedJSON: #"{"n": {"$numberLong": "42"}, "when": {"$date": "2024-01-02T10:00:00Z"}}"#))

// MARK: Codable straight to and from bytes

struct Address: Codable, Equatable {
  var street: String
  var city: String
  var country: String
  var postalCode: String
}

struct Business: Codable, Equatable {
  var _id: ObjectId
  var name: String
  var addresses: [Address]
}

let mongo = Business(
  _id: ObjectId(), name: "MongoDB",
  addresses: [Address(street: "1633 Broadway", city: "New York City", country: "USA", postalCode: "10019")])
let encoded = try BSONEncoder().encode(mongo)
print(encoded["addresses.0.city"] ?? .null)  // string("New York City")
print(try BSONDecoder().decode(Business.self, from: encoded) == mongo)  // true

// MARK: Streams of documents, as mongodump and bsondump write them (.gz by extension)

let path = "/tmp/reef-tour-businesses.bson.gz"
let writer = try BSONStreamWriter(path: path)
try writer.write(encoded)
try writer.write(business)
try writer.close()
var reader = try BSONStreamReader(path: path)
while let document = try reader.next() {
  print(document["name"] ?? .null)  // string("MongoDB"), twice
}

// MARK: Queries over the bytes: MongoDB filters and Realm predicates, one matcher

let people = try [
  #"{"_id": 1, "name": "Ann", "address": {"city": "Los Angeles"}, "tags": ["admin", "ops"]}"#,
  #"{"_id": 2, "name": "Bob", "addresses": [{"city": "Paris"}, {"city": "Los Angeles"}]}"#,
  #"{"_id": 3, "name": "Cy", "address": {"city": "Rome"}, "tags": []}"#,
].map { try Document(extendedJSON: $0) }

let inLA = try Query(filter: Document(extendedJSON: #"{"address.city": "Los Angeles"}"#))
print(people.filter(inLA.matches).count)  // 1 (Ann)

let anyLA = try Query(predicate: "ANY addresses.city BEGINSWITH[c] $0", arguments: ["los"])
print(people.filter(anyLA.matches).first?["name"] ?? .null)  // string("Bob")

// Sort, skip, limit and projection, as in a MongoDB find.
let sorted = try Query(filter: Document(extendedJSON: #"{"name": {"$ne": null}}"#)).find(
  in: people,
  options: FindOptions(
    sort: SortSpecification(Document(extendedJSON: #"{"address.city": -1}"#)),
    limit: 2,
    projection: Projection(Document(extendedJSON: #"{"name": 1, "_id": 0}"#))))
print(sorted)  // [{"name":"Cy"}, {"name":"Ann"}]

// A predicate may carry its own SORT, DISTINCT and LIMIT.
let tagged = try Query(predicate: "tags.@count > 0 SORT(name DESC)")
print(try tagged.find(in: people).first?["name"] ?? .null)  // string("Ann"): Cy's list is empty

// Mistakes are errors that say where, with a kind to switch on.
do {
  _ = try Query(predicate: "name == ")
} catch {
  print(error)  // expected a value after '==' but found end of predicate (at column 9)
  print(error.kind)  // syntax
}

// Regular expressions are PCRE2's, as MongoDB's; one that backtracks exponentially on a string
// ends the find with an error in milliseconds instead of running for hours.
let hostile = try Query(filter: Document(extendedJSON: #"{"s": {"$regex": "^(a|aa)+b$"}}"#))
let almost: Document = ["s": .string(String(repeating: "a", count: 40) + "ba")]
do {
  _ = try hostile.find(in: [almost])
} catch {
  print(error.kind)  // regexLimit: "regular expression /^(a|aa)+b$/ went past its match limit …"
}

// MARK: A store: collections on LMDB, with indexes and transactions

let storePath = "/tmp/reef-tour.reef"
try Store.deleteFiles(at: storePath)  // the store file, its lock file and its commit log
let store = try Store(path: storePath)
let contacts = store.collection("contacts")
try contacts.createIndex(Document(extendedJSON: #"{"address.city": 1}"#))
try contacts.insertMany(people)
print(try contacts.count())  // 3

// A store error keeps the error behind it: here the query's, with its kind and key path.
do {
  _ = try contacts.find(Document(extendedJSON: #"{"age": {"$foo": 2}}"#))
} catch let error as StoreError {
  print(error.kind, error.queryError?.kind.rawValue ?? "", error.queryError?.keyPath ?? [])
  // invalidQuery unknownOperator ["age", "$foo"]
}
print(try contacts.explain(Document(extendedJSON: #"{"address.city": "Rome"}"#)))  // IXSCAN address.city_1: …

// Several changes commit together or not at all.
try store.write { transaction in
  let contactsInTransaction = transaction.collection("contacts")
  try contactsInTransaction.updateOne(
    Document(extendedJSON: #"{"_id": 3}"#), Document(extendedJSON: #"{"$set": {"address.city": "Milan"}}"#))
  try contactsInTransaction.deleteOne(Document(extendedJSON: #"{"_id": 2}"#))
}
print(try contacts.find(predicate: "address.city == 'Milan'").count())  // 1

// The change feed: what each commit changed, for every process that has the store open.
let lastCommit = try store.read { try $0.changes(after: 1) }.commits[0]
print(lastCommit.sequence, lastCommit.changes)  // 2 [contacts 3 modified [address.city], contacts 2 deleted]
let delivered = DispatchSemaphore(value: 0)
let observation = try store.observeChanges { batch in
  for commit in batch.commits { print("commit \(commit.sequence):", commit.changes) }
  delivered.signal()
}
try contacts.insert(Document(extendedJSON: #"{"_id": 4, "name": "Dr. Nick"}"#))
delivered.wait()  // commit 3: [contacts 4 inserted]
observation.cancel()

// Codable values over the same collections.
let businesses = store.collection("businesses", as: Business.self)
try businesses.insert(mongo)
let inNewYork = try businesses.find(predicate: "ANY addresses.city == $0", arguments: ["New York City"])
print(inNewYork.first?.name ?? "")  // MongoDB
