import ReefBSON
import ReefCLI
import Testing

/// `reef models`' inference, from documents to models: types, optionals, lists, embedded classes
/// (one per path, shapes merged), mixed types, the primary key, names, order.
@Suite("reef models: the models inferred from documents")
struct ModelInferenceTests {
  /// The models of collections given as Extended JSON documents.
  static func models(_ collections: [(String, [String])]) throws -> InferredModels {
    var shapes: [(name: String, shape: DocumentShape)] = []
    for (name, documents) in collections {
      let shape = DocumentShape()
      for json in documents { shape.add(try Document(extendedJSON: json)) }
      shapes.append((name, shape))
    }
    return InferredModels(collections: shapes)
  }

  /// The properties of class `name` as `name: type`.
  static func properties(_ models: InferredModels, _ name: String) -> [String] {
    models.classes.first { $0.name == name }?.properties.map { "\($0.name): \($0.type)" } ?? []
  }

  @Test("each field's type; optional where it is missing or null in some documents")
  func scalarTypes() throws {
    let models = try Self.models([
      (
        "shop.items",
        [
          #"{"_id": {"$oid": "5f47f4811060b1aa6cc71272"}, "name": "a", "count": 1, "big": {"$numberLong": "5"}, "price": 1.5, "ok": true, "when": {"$date": "2024-01-01T00:00:00Z"}, "cost": {"$numberDecimal": "1.10"}, "uid": {"$binary": {"base64": "AAECAwQFBgcICQoLDA0ODw==", "subType": "04"}}, "raw": {"$binary": {"base64": "AQ==", "subType": "00"}}, "note": "x"}"#,
          #"{"_id": {"$oid": "5f47f4811060b1aa6cc71273"}, "name": "b", "count": 2, "big": 7, "price": 2.5, "ok": false, "when": {"$date": "2024-01-02T00:00:00Z"}, "cost": {"$numberDecimal": "2"}, "uid": {"$binary": {"base64": "AAECAwQFBgcICQoLDA0ODw==", "subType": "04"}}, "raw": {"$binary": {"base64": "", "subType": "00"}}, "note": null, "extra": 1}"#,
        ]
      )
    ])
    #expect(models.classes.map(\.name) == ["Items"])
    #expect(
      Self.properties(models, "Items") == [
        "_id: ObjectId", "name: String", "count: Int", "big: Int", "price: Double", "ok: Bool", "when: Date",
        "cost: Decimal128", "uid: UUID", "raw: Data", "note: String?", "extra: Int?",
      ])
    let items = models.classes[0]
    #expect(items.collection == "shop.items" && !items.isEmbedded && items.documentCount == 2)
    #expect(items.properties[0].isPrimaryKey && items.properties.dropFirst().allSatisfy { !$0.isPrimaryKey })
    #expect(items.properties.first { $0.name == "note" }?.comment == "null in 1 of 2")
    #expect(items.properties.first { $0.name == "extra" }?.comment == "missing in 1 of 2")
  }

  @Test("mixed types are AnyReefValue; ints with doubles are Double while every integer is exact in one")
  func mixedTypes() throws {
    let models = try Self.models([
      (
        "c",
        [
          #"{"_id": 1, "v": "a", "n": 1, "huge": {"$numberLong": "9007199254740993"}, "none": null}"#,
          #"{"_id": 2, "v": 2, "n": 2.5, "huge": 0.5}"#,
          #"{"_id": {"$numberLong": "3"}, "v": [1], "n": 3, "huge": 1}"#,
        ]
      )
    ])
    #expect(
      Self.properties(models, "C") == [
        "_id: Int", "v: AnyReefValue", "n: Double", "huge: AnyReefValue", "none: AnyReefValue",
      ])
    let comments = models.classes[0].properties.map(\.comment)
    #expect(comments[1] == "array in 1, int in 1, string in 1 of 3")
    #expect(comments[2] == "ints and doubles, read as Double")
    #expect(comments[4] == "no value but null: null in 1, missing in 2 of 3")
  }

  @Test("subdocuments are one EmbeddedObject per path, their shapes merged; arrays are Lists")
  func embeddedAndLists() throws {
    let models = try Self.models([
      (
        "people",
        [
          #"{"_id": "a", "address": {"city": "Oslo"}, "pets": [{"name": "Rex", "age": 3}], "tags": ["x"], "grid": [[1]], "maybe": [1, null], "none": []}"#,
          #"{"_id": "b", "address": {"city": "Bergen", "zip": "5003", "geo": {"lat": 60.4}}, "pets": [{"name": "Tom", "toy": {"kind": "ball"}}, {"name": "Kit"}], "tags": []}"#,
          #"{"_id": "c", "address": null, "pets": []}"#,
        ]
      )
    ])
    #expect(
      models.classes.map(\.name) == ["People", "PeopleAddress", "PeopleAddressGeo", "PeoplePets", "PeoplePetsToy"])
    #expect(
      Self.properties(models, "People") == [
        "_id: String", "address: PeopleAddress?", "pets: List<PeoplePets>", "tags: List<String>",
        "grid: List<AnyReefValue>", "maybe: List<Int?>", "none: List<AnyReefValue>",
      ])
    #expect(Self.properties(models, "PeopleAddress") == ["city: String", "zip: String?", "geo: PeopleAddressGeo?"])
    #expect(Self.properties(models, "PeoplePets") == ["name: String", "age: Int?", "toy: PeoplePetsToy?"])
    let pets = models.classes.first { $0.name == "PeoplePets" }!
    #expect(pets.isEmbedded && pets.path == "people.pets" && pets.documentCount == 3)
    // An array that is null somewhere is no List: AnyReefValue reads null.
    let nullArray = try Self.models([("d", [#"{"_id": 1, "a": [1]}"#, #"{"_id": 2, "a": null}"#])])
    #expect(Self.properties(nullArray, "D") == ["_id: Int", "a: AnyReefValue"])
    // Only empty subdocuments: no class to declare.
    let empty = try Self.models([("e", [#"{"_id": 1, "a": {}}"#])])
    #expect(Self.properties(empty, "E") == ["_id: Int", "a: AnyReefValue"] && empty.classes.count == 1)
  }

  @Test("values ReefSwift cannot read leave their field out, with why; inside a subdocument only that field")
  func unreadable() throws {
    let models = try Self.models([
      (
        "logs",
        [
          #"{"_id": 1, "re": {"$regularExpression": {"pattern": "a", "options": ""}}, "meta": {"at": {"$timestamp": {"t": 1, "i": 1}}, "by": "me"}, "codes": [{"$code": "f()"}], "mix": [1, {"$minKey": 1}]}"#
        ]
      )
    ])
    let logs = models.classes[0]
    #expect(Self.properties(models, "Logs") == ["_id: Int", "meta: LogsMeta?"])
    #expect(Self.properties(models, "LogsMeta") == ["by: String"])
    #expect(
      logs.leftOut.map { "\($0.storedName) \($0.reason)" } == [
        "re holds regex values, which ReefSwift has no property type for",
        "codes holds arrays of javascript values, which ReefSwift has no type for",
        "mix holds arrays of minKey values, which ReefSwift has no type for",
      ])
    #expect(models.classes[1].leftOut.map(\.storedName) == ["at"])
  }

  @Test("the _id is the primary key with its type, or left out (no primary key) when its types mix")
  func primaryKeys() throws {
    let models = try Self.models([
      ("u", [#"{"_id": {"$uuid": "00010203-0405-0607-0809-0a0b0c0d0e0f"}}"#]),
      ("mixed", [#"{"_id": 1, "n": 1}"#, #"{"_id": "two", "n": 2}"#]),
      ("doc", [#"{"_id": {"a": 1}, "n": 1}"#]),
      ("none", []),
    ])
    #expect(Self.properties(models, "U") == ["_id: UUID"])
    #expect(Self.properties(models, "Mixed") == ["n: Int"])
    #expect(models.classes.first { $0.name == "Mixed" }?.leftOut.first?.storedName == "_id")
    #expect(Self.properties(models, "Doc") == ["n: Int"])
    #expect(Self.properties(models, "None") == ["_id: ObjectId"])
  }

  @Test("names become Swift identifiers, the stored ones kept; reserved and colliding names are changed")
  func names() throws {
    let models = try Self.models([
      (
        "a.people",
        [
          #"{"_id": 1, "first name": 1, "class": 1, "description": 1, "1st": 1, "e-mail": 1, "managed": 1, "self": 1, "firstName": 1, "é": 1, "$x": 1, "": 1}"#
        ]
      ),
      ("b.people", [#"{"_id": 1}"#]),
      ("data", [#"{"_id": 1}"#]),
      ("2024 logs", [#"{"_id": 1}"#]),
    ])
    #expect(models.classes.map(\.name) == ["Model2024Logs", "APeople", "BPeople", "DataObject"])
    #expect(models.classes.map(\.collection) == ["2024 logs", "a.people", "b.people", "data"])
    let people = models.classes[1].properties.map { "\($0.name)=\($0.storedName)" }
    #expect(
      people == [
        "_id=_id", "firstName=first name", "`class`=class", "description_=description", "_1st=1st", "eMail=e-mail",
        "managed_=managed", "self_=self", "firstName2=firstName", "é=é", "x=$x", "field=",
      ])
    let source = models.swiftSource(header: "test")
    #expect(source.contains(#"override class func className() -> String { "a.people" }"#))
    #expect(source.contains(#""firstName": "first name","#) && source.contains(#""firstName2": "firstName","#))
    #expect(!source.contains(#""é": "é""#))
    #expect(source.contains("class DataObject: Object {\n  override class func className() -> String { \"data\" }"))
  }

  @Test("a JSON Schema types null-only fields, makes nullable fields optional and names embedded classes")
  func schemaHints() throws {
    let shape = DocumentShape()
    for json in [
      #"{"_id": 1, "a": null, "b": "x", "c": {"d": 1}, "e": null, "f": null}"#, #"{"_id": 2, "b": "y", "c": {"d": 2}}"#,
    ] {
      shape.add(try Document(extendedJSON: json))
    }
    let schema = try Document(
      extendedJSON: #"""
        {"properties": {"a": {"bsonType": ["date", "null"]}, "b": {"bsonType": ["string", "null"]},
         "c": {"title": "Inner", "bsonType": "object", "properties": {"d": {"bsonType": "long"}}},
         "e": {"bsonType": ["binData", "null"]}, "f": {"bsonType": ["string", "int"]}}}
        """#)
    let models = InferredModels(collections: [InferredModels.CollectionSample(name: "t", shape: shape, schema: schema)])
    #expect(models.classes.map(\.name) == ["T", "Inner"])
    #expect(
      Self.properties(models, "T") == [
        "_id: Int", "a: Date?", "b: String?", "c: Inner?", "e: AnyReefValue", "f: AnyReefValue",
      ])
    #expect(
      models.classes[0].properties[1].comment == "no value but null (null in 1, missing in 1 of 2): the schema's type")
    #expect(Self.properties(models, "Inner") == ["d: Int"])
  }

  @Test("the source: a header, an import, each class with its comments, in a stable order")
  func source() throws {
    let collections = [
      ("zoo.keepers", [#"{"_id": 1, "name": "Jo"}"#]),
      (
        "zoo.animals",
        [
          #"{"_id": 1, "name": "Rex", "home": {"pen": 4}, "re": {"$regularExpression": {"pattern": "a", "options": ""}}}"#,
          #"{"_id": 2}"#,
        ]
      ),
    ]
    let text = try Self.models(collections).swiftSource(header: "from zoo\n2 collections")
    #expect(
      text == """
        // from zoo
        // 2 collections
        // Each collection is an Object, each subdocument path an EmbeddedObject. A property is optional
        // where its field is missing or null in some documents, AnyReefValue where its types mix;
        // className() and propertiesMapping() keep the stored names that are not Swift names.
        import ReefSwift

        /// The collection `zoo.animals`: 2 documents.
        class Animals: Object {
          override class func className() -> String { "zoo.animals" }
          @Persisted(primaryKey: true) var _id: Int
          @Persisted var name: String?  // missing in 1 of 2
          @Persisted var home: AnimalsHome?  // missing in 1 of 2
          // `re` is left out: it holds regex values, which ReefSwift has no property type for.
        }

        /// The subdocuments at `zoo.animals.home`: 1 subdocument.
        class AnimalsHome: EmbeddedObject {
          @Persisted var pen: Int
        }

        /// The collection `zoo.keepers`: 1 document.
        class Keepers: Object {
          override class func className() -> String { "zoo.keepers" }
          @Persisted(primaryKey: true) var _id: Int
          @Persisted var name: String
        }

        """)
    // The same documents in another order of collections give the same source.
    #expect(try Self.models(collections.reversed()).swiftSource(header: "from zoo\n2 collections") == text)
  }
}
