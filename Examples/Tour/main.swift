// The README's tour, compiled and run by `swift run ReefTour`; keep the two in step.
import ReefBSON

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
