import Foundation
import ReefBSON
import ReefStore
import ReefTestSupport
import Testing

@Suite("reef schema, and object types in stats and export")
struct SchemaCommandTests {
  /// A store with a Contact type's schema, as the object layer stores it, and two documents:
  /// one that fits and one whose address.city is a number.
  func makeStore(_ dir: TemporaryDirectory) throws -> String {
    let path = dir.path("s.reef")
    let store = try Store(path: path)
    try store.write { transaction in
      try transaction.setJSONSchema(
        [
          "title": "Contact", "bsonType": "object", "required": ["_id", "name"],
          "properties": [
            "_id": ["bsonType": "objectId"], "name": ["bsonType": "string"],
            "address": [
              "title": "Address", "bsonType": ["object", "null"],
              "properties": ["city": ["bsonType": ["string", "null"]]],
            ],
          ],
        ], forCollection: "Contact")
      let contacts = transaction.collection("Contact")
      try contacts.insert([
        "_id": .objectId(ObjectId("5f47f4811060b1aa6cc71272")!), "name": "Nick", "address": ["city": "LA"],
      ])
      try contacts.insert([
        "_id": .objectId(ObjectId("5f47f4811060b1aa6cc71273")!), "name": "Ann", "address": ["city": 90210],
      ])
      try transaction.collection("plain").insert(["x": 1])
    }
    return path
  }

  @Test("schema prints each type's JSON Schema")
  func printsSchemas() throws {
    let dir = try TemporaryDirectory()
    let store = try makeStore(dir)
    let result = try reef("schema", "--store", store)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains("\"title\" : \"Contact\"") || result.stdout.contains("\"title\": \"Contact\""))
    #expect(result.stdout.contains("Address"))
    let missing = try reef("schema", "--store", store, "--collection", "Nope")
    #expect(missing.status != 0)
    #expect(missing.stderr.contains("no schema for Nope"))
  }

  @Test("schema --check lists each document that does not fit and exits 1")
  func checks() throws {
    let dir = try TemporaryDirectory()
    let store = try makeStore(dir)
    let result = try reef("schema", "--store", store, "--check")
    #expect(result.status == 1)
    #expect(
      result.stdout.contains(
        #"Contact _id {"$oid":"5f47f4811060b1aa6cc71273"}: address.city: expected string or null, found int 90210"#),
      "\(result.stdout)")
    #expect(!result.stdout.contains("5f47f4811060b1aa6cc71272"), "the fitting document is not listed")
    #expect(result.stdout.contains("Contact: 2 documents, 1 do not fit"))
  }

  @Test("stats marks object types; export writes the schema as the collection's validator")
  func statsAndExport() throws {
    let dir = try TemporaryDirectory()
    let store = try makeStore(dir)
    let stats = try reef("stats", "--store", store)
    #expect(stats.stdout.contains("Contact (object type): 2 documents"), "\(stats.stdout)")
    #expect(stats.stdout.contains("plain: 1 documents"))
    let out = dir.path("dump")
    let export = try reef("export", "--store", store, "--out", out)
    #expect(export.status == 0, "\(export.stderr)")
    let metadata = try String(contentsOfFile: out + "/reef/Contact.metadata.json", encoding: .utf8)
    #expect(metadata.contains("\"validator\""))
    #expect(metadata.contains("\"$jsonSchema\""))
    #expect(metadata.contains("\"title\":\"Contact\"") || metadata.contains("\"title\": \"Contact\""))
    let plain = try String(contentsOfFile: out + "/reef/plain.metadata.json", encoding: .utf8)
    #expect(!plain.contains("validator"))
    let again = dir.path("again.reef")
    let imported = try reef("import", out, "--store", again)
    #expect(imported.status == 0, "\(imported.stderr)")
    let schemas = try reef("schema", "--store", again, "--collection", "reef.Contact")
    #expect(schemas.status == 0, "an imported validator is stored as the type's schema: \(schemas.stderr)")
    #expect(schemas.stdout.contains("Address"))
  }
}
