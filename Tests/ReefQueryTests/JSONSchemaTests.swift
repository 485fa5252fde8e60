import ReefBSON
import ReefQuery
import Testing

@Suite struct JSONSchemaTests {
  let schema: Document = [
    "title": "Business", "bsonType": "object", "required": ["_id", "name", "addresses"],
    "properties": [
      "_id": ["bsonType": "objectId"], "name": ["bsonType": "string"],
      "addresses": [
        "bsonType": "array",
        "items": ["title": "Address", "bsonType": "object", "properties": ["city": ["bsonType": ["string", "null"]]]],
      ],
      "tags": ["bsonType": "array", "uniqueItems": true, "items": ["bsonType": "string"]],
    ],
  ]

  @Test func aFittingDocumentHasNoViolations() throws {
    let check = try JSONSchema(schema)
    let document: Document = [
      "_id": .objectId(ObjectId()), "name": "Acme", "addresses": [["city": "LA"], ["city": .null]], "tags": ["a", "b"],
    ]
    #expect(check.violations(in: document).isEmpty)
  }

  @Test func eachViolationNamesPathExpectedAndFound() throws {
    let check = try JSONSchema(schema)
    let document: Document = ["name": 5, "addresses": [["city": "LA"], ["city": true]], "tags": ["a", "a"]]
    let violations = check.violations(in: document).map(\.description)
    #expect(
      violations == [
        "_id: expected a value (required), found nothing", "name: expected string, found int 5",
        "addresses.1.city: expected string or null, found bool true",
        "tags.1: expected unique items, found a repeat of \"a\"",
      ])
  }

  @Test func unsupportedKeywordsAreRefusedRatherThanIgnored() {
    #expect(throws: QueryError.self) { try JSONSchema(["bsonType": "object", "minProperties": 1]) }
    #expect(throws: QueryError.self) { try JSONSchema(["bsonType": "integer"]) }
    #expect(throws: QueryError.self) { try JSONSchema(["properties": ["a": "string"]]) }
  }
}
