import Foundation
import ReefBSON
import ReefCLI
import ReefStore
import ReefTestSupport
import Testing

/// The built `reef models` on real data: the models it prints compile against the built
/// ReefSwift and open that data. The shared mongodump archive is imported into a store, its
/// models are printed from the store (and from the archive itself: the same classes), compiled
/// with a program that opens the store through ReefSwift and reads every object, and what the
/// program reads is compared with the stored documents, value by value.
@Suite("reef models: the models compile and read their data through ReefSwift")
struct ModelsCommandTests {
  static let archive: String? = {
    guard let shared = sharedDirectory("reef models' archive test") else { return nil }
    let path = shared + "/interop/mongodump-parser-test.archive"
    return FileManager.default.fileExists(atPath: path) ? path : nil
  }()

  /// The scalar types whose values the reading program prints and the test compares.
  static let comparedTypes: Set<String> = [
    "String", "Int", "Bool", "Double", "ObjectId", "UUID", "Date", "Decimal128", "Data",
  ]

  /// One compared value: a property of a class reached from its object by `swiftPath`, stored
  /// at `storedPath`.
  struct Value {
    var swiftPath: String
    var storedPath: [String]
    var type: String
    var isList: Bool
  }

  /// The values the reading program prints for objects of `model`: its scalars and list counts,
  /// and those of its embedded objects (not through lists).
  static func values(
    of model: InferredModels.ModelClass, in models: InferredModels, prefix: String = "object", stored: [String] = []
  )
    -> [Value]
  {
    var values: [Value] = []
    for property in model.properties {
      let bare = property.type.hasSuffix("?") ? String(property.type.dropLast()) : property.type
      let path = stored + [property.storedName]
      if property.type.hasPrefix("List<") {
        values.append(Value(swiftPath: "\(prefix).\(property.name)", storedPath: path, type: "List", isList: true))
      } else if comparedTypes.contains(bare) {
        values.append(Value(swiftPath: "\(prefix).\(property.name)", storedPath: path, type: bare, isList: false))
      } else if let embedded = models.classes.first(where: { $0.name == bare && $0.isEmbedded }) {
        values += Self.values(of: embedded, in: models, prefix: "\(prefix).\(property.name)?", stored: path)
      }
    }
    return values
  }

  /// A program that opens the store at its first argument through ReefSwift, reads every object
  /// of every collection (its `description` reads every property), and prints `count` lines and
  /// one line per compared value.
  static func readingProgram(_ models: InferredModels) -> String {
    var out = """
      import Foundation
      import ReefSwift

      func show(_ v: String?) -> String { v.map { "s:" + $0 } ?? "nil" }
      func show(_ v: Int?) -> String { v.map { "i:\\($0)" } ?? "nil" }
      func show(_ v: Bool?) -> String { v.map { "B:\\($0)" } ?? "nil" }
      func show(_ v: Double?) -> String { v.map { "d:\\($0)" } ?? "nil" }
      func show(_ v: ObjectId?) -> String { v.map { "o:" + $0.hex } ?? "nil" }
      func show(_ v: UUID?) -> String { v.map { "u:" + $0.uuidString } ?? "nil" }
      func show(_ v: Date?) -> String { v.map { "t:\\(Int64(($0.timeIntervalSince1970 * 1000).rounded()))" } ?? "nil" }
      func show(_ v: Decimal128?) -> String { v.map { "m:\\($0)" } ?? "nil" }
      func show(_ v: Data?) -> String { v.map { "b:\\($0.count)" } ?? "nil" }

      let reef = try Reef(configuration: Reef.Configuration(fileURL: URL(fileURLWithPath: CommandLine.arguments[1])))
      var described = 0

      """
    for model in models.classes where !model.isEmbedded {
      let collection = model.collection!
      let id = model.properties.first(where: \.isPrimaryKey).map { "show(object.\($0.name))" } ?? "\"-\""
      out += "do {\n  let objects = reef.objects(\(model.name).self)\n"
      out += "  print(\"count|\(collection)|\\(objects.count)\")\n"
      out += "  for object in objects {\n    described += object.description.count > 0 ? 1 : 0\n"
      out += "    let id = \(id)\n"
      for value in values(of: model, in: models) {
        let shown = value.isList ? "\"n:\\(\(value.swiftPath).count)\"" : "show(\(value.swiftPath))"
        out += "    print(\"value|\(collection)|\\(id)|\(value.storedPath.joined(separator: "."))|\\(\(shown))\")\n"
      }
      out += "  }\n}\n"
    }
    out += "print(\"described|\\(described)\")\n"
    return out
  }

  /// What the program must print, from the stored documents.
  static func expectedLines(_ models: InferredModels, store path: String) throws -> [String] {
    let store = try Store(path: path, options: StoreOptions(readOnly: true))
    var lines: [String] = []
    var total = 0
    try store.read { transaction in
      for model in models.classes where !model.isEmbedded {
        let collection = model.collection!
        let values = Self.values(of: model, in: models)
        let key = model.properties.first(where: \.isPrimaryKey)
        var count = 0
        try transaction.collection(collection).forEach { document in
          count += 1
          let id = key.map { show(document["_id"], as: $0.type) } ?? "-"
          for value in values {
            var element: BSON? = .document(document)
            for field in value.storedPath {
              guard case .document(let inner)? = element else {
                element = nil
                break
              }
              element = inner[field]
            }
            let shown: String
            if value.isList {
              if case .array(let array)? = element { shown = "n:\(array.count)" } else { shown = "n:0" }
            } else {
              shown = show(element, as: value.type)
            }
            lines.append("value|\(collection)|\(id)|\(value.storedPath.joined(separator: "."))|\(shown)")
          }
          return true
        }
        total += count
        lines.append("count|\(collection)|\(count)")
      }
    }
    lines.append("described|\(total)")
    return lines.sorted()
  }

  /// A stored value as the program shows it when read as `type`.
  static func show(_ value: BSON?, as type: String) -> String {
    switch (type, value) {
    case (_, nil), (_, .null?): return "nil"
    case ("String", .string(let s)?): return "s:" + s
    case ("Int", .int32(let n)?): return "i:\(n)"
    case ("Int", .int64(let n)?): return "i:\(n)"
    case ("Double", .double(let d)?): return "d:\(d)"
    case ("Double", .int32(let n)?): return "d:\(Double(n))"
    case ("Double", .int64(let n)?): return "d:\(Double(n))"
    case ("Bool", .bool(let b)?): return "B:\(b)"
    case ("ObjectId", .objectId(let id)?): return "o:" + id.hex
    case ("UUID", .binary(let binary)?):
      return binary.uuidBytes.map { "u:" + UUID(uuid: $0).uuidString } ?? "not a UUID"
    case ("Date", .datetime(let date)?): return "t:\(date.millisecondsSinceEpoch)"
    case ("Decimal128", .decimal128(let d)?): return "m:\(d)"
    case ("Data", .binary(let binary)?): return "b:\(binary.data.count)"
    default: return "unexpected \(type): \(String(describing: value))"
    }
  }

  /// Runs the reading program of `models` on the store and compares what it reads with the
  /// stored documents.
  static func readBack(_ models: InferredModels, source: String, store: String, in directory: TemporaryDirectory)
    throws -> [String]
  {
    let program = try SwiftProgram.build(
      [("main.swift", readingProgram(models)), ("Models.swift", source)], in: directory)
    let run = try runProcess(program, [store])
    #expect(run.status == 0, "\(run.stderr)")
    let read = run.stdout.split(separator: "\n").map(String.init).sorted()
    let expected = try expectedLines(models, store: store)
    #expect(read.count == expected.count)
    let missing = Set(expected).subtracting(read).sorted().prefix(10)
    let extra = Set(read).subtracting(expected).sorted().prefix(10)
    #expect(read == expected, "not read: \(missing)\nread instead: \(extra)")
    return read
  }

  @Test(
    "the archive's models, from its store or from the archive, compile and read every object as stored",
    .enabled(if: archive != nil))
  func archiveModels() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path("archive.reef")
    let imported = try reef("import", Self.archive!, "--store", store)
    #expect(imported.status == 0, "\(imported.stderr)")
    let fromStore = try reef("models", "--store", store)
    #expect(fromStore.status == 0 && fromStore.stderr.isEmpty, "\(fromStore.stderr)")
    let fromArchive = try reef("models", Self.archive!)
    #expect(fromArchive.status == 0, "\(fromArchive.stderr)")
    // The same classes and properties but the header's first line (where they come from);
    // properties come in the order their fields first appear, in _id order in a store and in
    // file order in a dump (admin.system.version's two documents have one field each).
    #expect(fromStore.stdoutLines.dropFirst().sorted() == fromArchive.stdoutLines.dropFirst().sorted())
    #expect(fromStore.stdoutLines.count == fromArchive.stdoutLines.count)
    #expect(fromStore.stdoutLines.dropFirst().first == "// 4 collections, 1510 documents.")
    // What the models say about the archive.
    for line in [
      "class TestColl: Object {", #"  override class func className() -> String { "testDB.testColl" }"#,
      "  @Persisted(primaryKey: true) var _id: ObjectId", "  @Persisted var i: Int",
      "class SystemUsers: Object {", "  @Persisted var userId: UUID",
      "  @Persisted var credentials: SystemUsersCredentials?",
      #"  override class func propertiesMapping() -> [String: String] { ["SCRAMSHA1": "SCRAM-SHA-1"] }"#,
      "  @Persisted var roles: List<SystemUsersRoles>", "class SystemRolesPrivileges: EmbeddedObject {",
    ] {
      #expect(fromStore.stdoutLines.contains(Substring(line)), "\(line)")
    }
    let models = try Self.inferred(store: store)
    // The library infers the same from the store: the source but its header.
    let library = models.swiftSource(header: "").split(separator: "\n", omittingEmptySubsequences: false)
    #expect(
      Array(library.dropFirst())
        == Array(fromStore.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropFirst(2)))
    let read = try Self.readBack(models, source: fromStore.stdout, store: store, in: directory)
    #expect(read.contains("count|testDB.testColl|1500"))
    #expect(read.contains("described|1510"))
    #expect(
      read.contains { $0.hasPrefix("value|admin.system.users|s:admin.user|credentials.SCRAM-SHA-1.iterationCount|i:") })
  }

  /// The models the library infers from a store's documents.
  static func inferred(store path: String) throws -> InferredModels {
    let store = try Store(path: path, options: StoreOptions(readOnly: true))
    return InferredModels(collections: try InferredModels.collections(of: store))
  }

  /// Documents that test the inference's edges: names that are not Swift names, keywords and
  /// Object's own member names, missing and null fields, mixed types, ints with doubles, nested
  /// and empty arrays, lists of subdocuments of different shapes, values ReefSwift cannot read,
  /// collections of the same name in two databases, a reserved class name, `_id`s of mixed types.
  static let edgeCollections: [(String, [String])] = [
    (
      "a.people",
      [
        #"{"_id": 1, "first name": "Ann", "class": "A", "description": "tall", "1st": true, "e-mail": "ann@x", "managed": 1, "score": 5, "mixed": "x", "tags": ["a", "b"], "grid": [[1, 2], [3]], "address": {"city": "Oslo", "geo": {"lat": 59.9, "lng": 10.7}}, "pets": [{"name": "Rex", "age": 3}, {"name": "Tom"}], "empty": [], "pattern": {"$regularExpression": {"pattern": "a+", "options": "i"}}, "nested": {"when": {"$timestamp": {"t": 1, "i": 2}}, "keep": "yes"}, "when": {"$date": "2024-01-02T03:04:05.678Z"}, "uid": {"$binary": {"base64": "AAECAwQFBgcICQoLDA0ODw==", "subType": "04"}}, "blob": {"$binary": {"base64": "AQID", "subType": "00"}}, "price": {"$numberDecimal": "9.99"}}"#,
        #"{"_id": 2, "first name": "Bo", "class": "B", "description": null, "1st": false, "e-mail": "bo@x", "managed": 2, "score": 6.5, "mixed": 7, "tags": [], "grid": [], "address": null, "pets": [], "empty": [], "nested": {"keep": "no"}, "when": {"$date": "2024-02-03T04:05:06.789Z"}, "uid": {"$binary": {"base64": "AAECAwQFBgcICQoLDA0ODw==", "subType": "04"}}, "blob": {"$binary": {"base64": "", "subType": "00"}}, "price": {"$numberDecimal": "1"}}"#,
        #"{"_id": 3, "first name": "Cy", "1st": true, "e-mail": "cy@x", "managed": 3, "score": 7, "mixed": {"k": [1, "two"]}, "grid": [[]], "pets": [{"name": "Kit", "age": 1, "toy": "ball"}], "empty": [], "nested": {"keep": "maybe"}, "when": {"$date": "2024-03-04T05:06:07.890Z"}, "uid": {"$binary": {"base64": "AAECAwQFBgcICQoLDA0ODw==", "subType": "04"}}, "blob": {"$binary": {"base64": "AA==", "subType": "00"}}, "price": {"$numberDecimal": "2.5"}}"#,
      ]
    ),
    ("b.people", [#"{"_id": "b1", "first name": "Di"}"#]),
    (
      "data",
      [#"{"_id": "a", "n": 1}"#, #"{"_id": 2, "n": 2}"#, #"{"_id": {"$oid": "5f47f4811060b1aa6cc71272"}, "n": 3}"#]
    ),
  ]

  @Test("models of awkward documents compile and read every object as stored")
  func edgeModels() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("edges.reef")
    do {
      let store = try Store(path: path)
      try store.write { transaction in
        for (name, documents) in Self.edgeCollections {
          for json in documents { _ = try transaction.collection(name).insert(try Document(extendedJSON: json)) }
        }
      }
    }
    let printed = try reef("models", "--store", path, "-o", directory.path("Models.swift"))
    #expect(printed.status == 0 && printed.stdout.isEmpty, "\(printed.stderr)")
    let source = try String(contentsOfFile: directory.path("Models.swift"), encoding: .utf8)
    for line in [
      "class APeople: Object {", "class BPeople: Object {", "class DataObject: Object {",
      #"      "firstName": "first name","#, "  @Persisted var `class`: String?  // missing in 1 of 3",
      "  @Persisted var description_: String?  // missing in 1, null in 1 of 3",
      "  @Persisted var score: Double  // ints and doubles, read as Double",
      "  @Persisted var mixed: AnyReefValue  // int in 1, object in 1, string in 1 of 3",
      "  @Persisted var grid: List<AnyReefValue>", "  @Persisted var pets: List<APeoplePets>",
      "  @Persisted var toy: String?  // missing in 2 of 3",
      "  // `pattern` is left out: it holds regex values, which ReefSwift has no property type for.",
      "  // `when` is left out: it holds timestamp values, which ReefSwift has no property type for.",
      "  @Persisted var keep: String",
    ] {
      #expect(source.contains(line + "\n"), "\(line)")
    }
    let models = try Self.inferred(store: path)
    _ = try Self.readBack(models, source: source, store: path, in: directory)
  }

  @Test("a store's JSON Schemas name the embedded classes and type what the documents leave open")
  func schemaHints() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("typed.reef")
    let address =
      #"{"title": "Address", "bsonType": ["object", "null"], "properties": {"street": {"bsonType": ["string", "null"]}, "zip": {"bsonType": ["string", "null"]}}}"#
    let schemas = [
      "Contact":
        #"{"title": "Contact", "bsonType": "object", "properties": {"_id": {"bsonType": "objectId"}, "name": {"bsonType": "string"}, "address": \#(address)}}"#,
      "Shop":
        #"{"title": "Shop", "bsonType": "object", "properties": {"_id": {"bsonType": "objectId"}, "branches": {"bsonType": "array", "items": \#(address)}}}"#,
    ]
    do {
      let store = try Store(path: path)
      try store.write { transaction in
        for (name, schema) in schemas {
          try transaction.setJSONSchema(try Document(extendedJSON: schema), forCollection: name)
        }
        for json in [
          #"{"_id": {"$oid": "5f47f4811060b1aa6cc71272"}, "name": "Ann", "address": {"street": "Main", "zip": null}}"#,
          #"{"_id": {"$oid": "5f47f4811060b1aa6cc71273"}, "name": "Bo", "address": {"street": "High", "zip": null}}"#,
        ] {
          _ = try transaction.collection("Contact").insert(try Document(extendedJSON: json))
        }
        _ = try transaction.collection("Shop").insert(
          try Document(
            extendedJSON: #"{"_id": {"$oid": "5f47f4811060b1aa6cc71274"}, "branches": [{"street": "Quay"}]}"#))
      }
    }
    let printed = try reef("models", "--store", path)
    #expect(printed.status == 0, "\(printed.stderr)")
    for line in [
      "  @Persisted var address: Address?", "class Address: EmbeddedObject {",
      "  @Persisted var street: String?",
      "  @Persisted var zip: String?  // no value but null (null in 2 of 2): the schema's type",
      // The title is taken: the second class of that title is named after its path.
      "  @Persisted var branches: List<ShopBranches>", "class ShopBranches: EmbeddedObject {",
    ] {
      #expect(printed.stdoutLines.contains(Substring(line)), "\(line)\n\(printed.stdout)")
    }
    _ = try Self.readBack(try Self.inferred(store: path), source: printed.stdout, store: path, in: directory)
    // Exported, the schemas are the collections' validators in metadata.json: a dump's models
    // read them there.
    let exported = try reef("export", "--store", path, "--out", directory.path("dump"))
    #expect(exported.status == 0, "\(exported.stderr)")
    let fromDump = try reef("models", directory.path("dump"))
    #expect(fromDump.status == 0, "\(fromDump.stderr)")
    #expect(fromDump.stdoutLines.contains(#"  override class func className() -> String { "reef.Contact" }"#))
    for line in [
      "class Address: EmbeddedObject {",
      "  @Persisted var zip: String?  // no value but null (null in 2 of 2): the schema's type",
    ] {
      #expect(fromDump.stdoutLines.contains(Substring(line)), "\(line)\n\(fromDump.stdout)")
    }
  }

  @Test("a .bson file, gzipped or not, and Extended JSON lines give the same models, named after the file")
  func singleFiles() throws {
    let directory = try TemporaryDirectory()
    let bson = try directory.write("people.bson", stream(sampleDocuments(count: 4)))
    try directory.write("people.bson.gz", try gzipped(stream(sampleDocuments(count: 4)), in: directory))
    let converted = try reef("convert", bson, "--to", "canonical", "-o", directory.path("people.jsonl"))
    #expect(converted.status == 0, "\(converted.stderr)")
    var outputs: [[Substring]] = []
    for name in ["people.bson", "people.bson.gz", "people.jsonl"] {
      let result = try reef("models", directory.path(name))
      #expect(result.status == 0, "\(name): \(result.stderr)")
      outputs.append(Array(result.stdoutLines.dropFirst()))
    }
    #expect(outputs[0] == outputs[1] && outputs[1] == outputs[2])
    for line in [
      "class People: Object {", #"  override class func className() -> String { "people" }"#,
      "  @Persisted(primaryKey: true) var _id: Int", "  @Persisted var score: Double", "  @Persisted var active: Bool",
      "  @Persisted var address: PeopleAddress?", "  @Persisted var tags: List<AnyReefValue>",
      "  @Persisted var zip: Int",
    ] {
      #expect(outputs[0].contains(Substring(line)), "\(line)")
    }
  }

  @Test("--collection selects collections; a missing one, no input or two inputs are errors")
  func options() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("s.reef")
    do {
      let store = try Store(path: path)
      try store.write { transaction in
        _ = try transaction.collection("a").insert(try Document(extendedJSON: #"{"_id": 1, "x": "y"}"#))
        _ = try transaction.collection("b").insert(try Document(extendedJSON: #"{"_id": 1}"#))
      }
    }
    let one = try reef("models", "--store", path, "--collection", "b")
    #expect(one.status == 0)
    #expect(one.stdout.contains("class B: Object {") && !one.stdout.contains("class A: Object {"))
    let missing = try reef("models", "--store", path, "--collection", "c")
    #expect(missing.status == 1)
    #expect(missing.stderr.contains("the store has no collection c"))
    #expect(try reef("models").status == 64)
    #expect(try reef("models", "dump", "--store", path).status == 64)
    let help = try reef("models", "--help")
    for phrase in ["EmbeddedObject", "AnyReefValue", "propertiesMapping()", "--store"] {
      #expect(help.stdout.contains(phrase), "\(phrase)")
    }
  }
}
