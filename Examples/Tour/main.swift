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
