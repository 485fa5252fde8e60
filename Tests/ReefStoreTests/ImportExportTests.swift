import ReefBSON
import ReefTestSupport
import Testing

@testable import ReefStore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Documents with distinct `_id`s (`first…first+count-1`) and a few types, for imports.
func importDocuments(_ count: Int, from first: Int = 0, tag: String = "doc") -> [Document] {
  (first..<first + count).map { i in
    var document = Document()
    document.append(.int32(Int32(i)), forKey: "_id")
    document.append(.string("\(tag) \(i)"), forKey: "name")
    document.append(.int32(Int32(i % 3)), forKey: "group")
    document.append(.decimal128(Decimal128("\(i).25")!), forKey: "price")
    document.append(.array([.int32(1), .document(["city": .string("city \(i % 4)")])]), forKey: "places")
    return document
  }
}

/// The documents of each namespace of a source, as sorted byte arrays (a store keeps `_id` order,
/// a dump its own), and the metadata.
func contentsByNamespace(_ path: String) throws -> (
  documents: [String: [[UInt8]]], metadata: [String: CollectionMetadata]
) {
  let source = try DumpSource(path: path)
  var documents: [String: [[UInt8]]] = [:]
  var metadata: [String: CollectionMetadata] = [:]
  for (namespace, data) in try source.prelude() {
    metadata[namespace.dotted] = data
    documents[namespace.dotted] = []
  }
  while let (namespace, document) = try source.nextArchiveDocument() {
    documents[namespace.dotted, default: []].append(document.bytes)
  }
  return (documents.mapValues { $0.sorted { $0.lexicographicallyPrecedes($1) } }, metadata)
}

/// A collection's documents as sorted byte arrays.
func storedDocuments(_ store: Store, _ name: String) throws -> [[UInt8]] {
  try store.collection(name).find().toArray().map(\.bytes).sorted { $0.lexicographicallyPrecedes($1) }
}

/// Index specifications other than `_id_`, comparable whatever their number types.
func secondaryIndexes(_ documents: [Document]) throws -> Set<IndexSpecification> {
  var result: Set<IndexSpecification> = []
  for document in documents {
    if case .string("_id_")? = document["name"] { continue }
    result.insert(try IndexSpecification(document))
  }
  return result
}

/// Writes one namespace per entry (a dotted name, or a collection without a database; its index
/// specifications; its documents) with ``write(_:to:format:gzip:)``.
func writeSource(_ path: String, format: DumpFormat, _ namespaces: [(String, [Document], [Document])]) throws {
  let collections = namespaces.map { name, indexes, documents in
    (Namespace(name) ?? Namespace(database: "", collection: name), CollectionMetadata(indexes: indexes), documents)
  }
  try write(collections, to: path, format: format, gzip: false)
}

let nameIndex: Document = ["v": 2, "key": ["name": 1], "name": "name_1", "unique": .bool(true)]
let groupIndex: Document = ["v": 2, "key": ["group": 1, "places.city": -1], "name": "group_city"]

@Suite struct ImportTests {
  @Test func theSharedArchiveRoundTripsByteForByte() throws {
    guard let archive = sharedArchivePath() else { return }
    let original = try contentsByNamespace(archive)
    let temporary = try TemporaryStore()
    let report = try temporary.store.importDump(from: DumpSource(path: archive))
    #expect(report.documents == 1510)
    #expect(report.skippedCount == 0)
    #expect(Set(report.targets.map(\.collection)) == Set(original.documents.keys))
    #expect(Set(try temporary.store.collectionNames()) == Set(original.documents.keys))
    for (name, documents) in original.documents {
      #expect(try storedDocuments(temporary.store, name) == documents, "documents of \(name)")
      let indexes = try temporary.store.collection(name).listIndexes()
      #expect(try secondaryIndexes(indexes) == secondaryIndexes(original.metadata[name]!.indexes), "indexes of \(name)")
    }
    #expect(try temporary.store.collection("admin.system.users").listIndexes().count == 2)

    let root = temporary.directory
    for (path, format) in [(root + "/again.archive", DumpFormat.archive), (root + "/dump", .dump)] {
      let report = try temporary.store.exportDump(to: DumpWriter(path: path, format: format))
      #expect(report.documents == 1510)
      let again = try contentsByNamespace(path)
      #expect(again.documents == original.documents, "\(format)")
      for (name, metadata) in again.metadata {
        #expect(try secondaryIndexes(metadata.indexes) == secondaryIndexes(original.metadata[name]!.indexes))
        #expect(metadata.indexes.first?["name"] == .string("_id_"))
        #expect(metadata.uuid == (try temporary.store.read { try $0.collection(name).uuid() }))
      }
    }
  }

  @Test(arguments: DumpRoundTripTests.cases)
  func everyFormatRoundTripsThroughAStore(format: DumpFormat, gzip: Bool) throws {
    let first = try TemporaryStore()
    try first.store.write { transaction in
      let orders = transaction.collection("shop.orders")
      try orders.insertMany(importDocuments(30, tag: "order"))
      try orders.createIndex(IndexSpecification(nameIndex))
      try orders.createIndex(IndexSpecification(groupIndex))
      try transaction.collection("loose").insertMany(importDocuments(4, tag: "loose"))
      try transaction.collection("shop.empty").createIndex(["group": 1] as Document)
    }
    let root = first.directory
    let path = format == .archive ? root + "/out.archive" : root + "/out/"
    let exported = try first.store.exportDump(to: DumpWriter(path: path, format: format, gzip: gzip))
    #expect(exported.entries.map(\.collection) == ["loose", "shop.empty", "shop.orders"])
    #expect(exported.entries.map(\.namespace.dotted) == ["loose", "shop.empty", "shop.orders"])

    let second = try TemporaryStore()
    let report = try second.store.importDump(from: DumpSource(path: path))
    #expect(report.documents == 34)
    // "loose" had no database: it went under the writer's default, "reef".
    #expect(try second.store.collectionNames() == ["reef.loose", "shop.empty", "shop.orders"])
    for (old, new) in [("loose", "reef.loose"), ("shop.empty", "shop.empty"), ("shop.orders", "shop.orders")] {
      #expect(try storedDocuments(second.store, new) == storedDocuments(first.store, old), "\(format) \(gzip) \(old)")
      #expect(
        try secondaryIndexes(second.store.collection(new).listIndexes())
          == secondaryIndexes(first.store.collection(old).listIndexes()))
    }

    // One collection to a single file, imported under another name.
    guard format != .dump && format != .archive else { return }
    let file = root + "/orders." + (format == .jsonl ? "jsonl" : format.rawValue) + (gzip ? ".gz" : "")
    try first.store.exportDump(to: DumpWriter(path: file, format: format, gzip: gzip), collections: ["shop.orders"])
    let single = try second.store.importDump(
      from: DumpSource(path: file), options: ImportOptions(collection: "copy"))
    #expect(single.targets.map(\.collection) == ["copy"])
    #expect(try storedDocuments(second.store, "copy") == storedDocuments(first.store, "shop.orders"))
    if format == .bson {
      #expect(try secondaryIndexes(second.store.collection("copy").listIndexes()).count == 2)
    }
    let named = try second.store.importDump(from: DumpSource(path: file), options: ImportOptions(database: "x"))
    #expect(named.targets.map(\.collection) == ["x.orders"])
  }

  @Test func aFailedImportLeavesEveryTargetAsItWas() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    try store.write { transaction in
      try transaction.collection("shop.orders").insertMany(importDocuments(5, from: 100))
      try transaction.collection("shop.orders").createIndex(["group": 1] as Document)
    }
    let before = try storedDocuments(store, "shop.orders")
    let root = temporary.directory
    // Several batches are committed before document 7 of shop.orders (a duplicate of 101) fails.
    var documents = importDocuments(7)
    documents.append(importDocuments(1, from: 101)[0])
    try writeSource(
      root + "/in.archive", format: .archive,
      [("shop.new", [], importDocuments(10)), ("shop.orders", [nameIndex], documents)])
    var progress: [ImportProgress] = []
    #expect {
      try store.importDump(
        from: DumpSource(path: root + "/in.archive"), options: ImportOptions(batchDocuments: 2)
      ) { progress.append($0) }
    } throws: { error in
      let message = (error as? StoreError)?.message ?? ""
      return (error as? StoreError)?.kind == .duplicateKey
        && message.contains("shop.orders document 7 (offset ") && message.contains("_id: 101")
        && message.contains("nothing was imported") && !message.contains("__import")
    }
    #expect(progress.count >= 5)
    #expect(try storedDocuments(store, "shop.orders") == before)
    #expect(try store.collection("shop.orders").listIndexes().count == 2)
    #expect(try store.collectionNames() == ["shop.orders"])
    #expect(try store.read { try $0.catalogNames() }.allSatisfy { !$0.hasPrefix("__import") })

    // A source that fails to read also changes nothing.
    writeFile(root + "/cut.bson", Array(documents[0].bytes.dropLast(3)))
    #expect(throws: BSONError.self) {
      try store.importDump(
        from: DumpSource(path: root + "/cut.bson"), options: ImportOptions(collection: "shop.orders"))
    }
    #expect(try storedDocuments(store, "shop.orders") == before)
  }

  @Test func addingKeepsTheTargetAndDropReplacesIt() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    try store.write { transaction in
      try transaction.collection("people").insertMany(importDocuments(3, from: 50))
      try transaction.collection("people").createIndex(["group": 1] as Document)
    }
    let root = temporary.directory
    try writeSource(root + "/people.bson", format: .bson, [("people", [nameIndex], importDocuments(4))])
    let added = try store.importDump(from: DumpSource(path: root + "/people.bson"))
    #expect(
      added.targets == [
        ImportReport.Target(
          collection: "people", sources: [Namespace(database: "", collection: "people")], documents: 4, indexes: 3)
      ])
    #expect(try store.collection("people").count() == 7)
    #expect(try store.collection("people").explain(["group": 1]).index == "group_1")
    let dropped = try store.importDump(
      from: DumpSource(path: root + "/people.bson"), options: ImportOptions(drop: true))
    #expect(dropped.documents == 4)
    #expect(try storedDocuments(store, "people") == importDocuments(4).map(\.bytes))
    #expect(try store.collection("people").listIndexes().map { $0["name"] } == [.string("_id_"), .string("name_1")])
  }

  @Test func skipInvalidReportsEachSkippedDocumentAndImportsTheRest() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    try store.collection("people").insert(importDocuments(1, from: 2)[0])
    let root = temporary.directory
    let documents = importDocuments(6)
    // Document 1: an unknown type byte (its length is intact); document 2: a duplicate _id (of
    // the one stored); document 4: a duplicate of the unique name of document 3.
    var bytes: [UInt8] = []
    var offsets: [Int] = []
    for (i, document) in documents.enumerated() {
      offsets.append(bytes.count)
      var raw = document.bytes
      if i == 1 { raw[4] = 0x42 }
      if i == 4 {
        var renamed = document
        renamed.set("doc 3", forKey: "name")
        raw = renamed.bytes
      }
      bytes += raw
    }
    writeFile(root + "/people.bson", bytes)
    writeFile(
      root + "/people.metadata.json", CollectionMetadata(indexes: [nameIndex]).json())
    let source = try DumpSource(path: root + "/people.bson")
    let report = try store.importDump(from: source, options: ImportOptions(skipInvalid: true, batchDocuments: 2))
    #expect(report.documents == 3)
    #expect(report.skippedCount == 3)
    #expect(report.skipped.map(\.index) == [1, 2, 4])
    #expect(report.skipped.map(\.offset) == [offsets[1] + 4, offsets[2], offsets[4]])
    #expect(report.skipped[0].reason.contains("unknown") || report.skipped[0].reason.contains("type"))
    #expect(report.skipped[1].reason.contains("duplicate key") && report.skipped[1].reason.contains("_id_"))
    #expect(report.skipped[2].reason.contains("name_1") && !report.skipped[2].reason.contains("__import"))
    #expect(
      try store.collection("people").find().toArray().compactMap { $0["_id"] } == [0, 2, 3, 5].map { BSON.int32($0) })

    // Without the option, the same file fails and changes nothing.
    #expect(throws: BSONError.self) { try store.importDump(from: DumpSource(path: root + "/people.bson")) }
    #expect(try store.collection("people").count() == 4)

    // A malformed JSON document whose braces balance is skipped alone, with its index and line.
    writeFile(root + "/lines.jsonl", Array("{\"_id\": 1}\n{\"_id\": 2,,}\n{\"_id\": 3}\n".utf8))
    let json = try store.importDump(
      from: DumpSource(path: root + "/lines.jsonl"), options: ImportOptions(skipInvalid: true))
    #expect(json.documents == 2)
    #expect(json.skipped.map(\.index) == [1])
    #expect(json.skipped.first?.offset == 21)  // the second comma
    #expect(json.skipped.first?.reason.contains("the rest of this file") == false)
    #expect(try store.collection("lines").find().toArray().compactMap { $0["_id"] } == [1, 3].map { BSON.int32($0) })

    // Text that is not a document cannot be stepped over: the rest of its file is skipped, and said so.
    writeFile(root + "/broken.jsonl", Array("{\"_id\": 1}\n_id: 2\n{\"_id\": 3}\n".utf8))
    let broken = try store.importDump(
      from: DumpSource(path: root + "/broken.jsonl"), options: ImportOptions(skipInvalid: true))
    #expect(broken.documents == 1)
    #expect(broken.skipped.count == 1)
    #expect(broken.skipped.first?.reason.hasSuffix("the rest of this file is skipped") == true)
  }

  @Test func aDamagedLengthPrefixSkipsTheRestOfTheFile() throws {
    let temporary = try TemporaryStore()
    let root = temporary.directory
    let documents = importDocuments(3)
    var bytes = documents[0].bytes + documents[1].bytes + documents[2].bytes
    bytes[documents[0].byteCount] = 2  // a length of 2 cannot be trusted
    writeFile(root + "/p.bson", bytes)
    let report = try temporary.store.importDump(
      from: DumpSource(path: root + "/p.bson"), options: ImportOptions(skipInvalid: true))
    #expect(report.documents == 1)
    #expect(report.skipped.map(\.index) == [1])
    #expect(report.skipped.first?.reason.contains("the rest of this file is skipped") == true)
  }

  @Test func aDamagedArchiveFailsEvenWhenSkipping() throws {
    let temporary = try TemporaryStore()
    let root = temporary.directory
    let documents = importDocuments(3)
    try writeSource(root + "/in.archive", format: .archive, [("shop.orders", [], documents)])
    var bytes = try #require(readFile(root + "/in.archive"))
    let second = documents[1].bytes
    let at = try #require(
      (0...(bytes.count - second.count)).first { bytes[$0..<$0 + second.count].elementsEqual(second) })
    bytes[at + 4] = 0x42  // an unknown type byte
    writeFile(root + "/in.archive", bytes)
    #expect(throws: BSONError.self) {
      try temporary.store.importDump(
        from: DumpSource(path: root + "/in.archive"), options: ImportOptions(skipInvalid: true))
    }
    #expect(try temporary.store.collectionNames().isEmpty)
    #expect(try temporary.store.read { try $0.catalogNames() }.isEmpty)
  }

  @Test func namespacesAreSelectedAndRenamed() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    let root = temporary.directory
    try writeSource(
      root + "/in.archive", format: .archive,
      [
        ("shop.orders", [nameIndex], importDocuments(3)), ("shop.audit", [], importDocuments(2)),
        ("admin.users", [], importDocuments(1)), ("shop.empty", [groupIndex], []),
      ])
    let source = root + "/in.archive"
    let selected = try store.importDump(
      from: DumpSource(path: source), options: ImportOptions(include: ["shop.*"], exclude: ["shop.audit"]))
    #expect(selected.targets.map(\.collection) == ["shop.orders", "shop.empty"])
    #expect(try store.collectionNames() == ["shop.empty", "shop.orders"])
    #expect(try store.collection("shop.empty").listIndexes().count == 2)

    let renamed = try store.importDump(
      from: DumpSource(path: source), options: ImportOptions(database: "copy", exclude: ["admin.*"]))
    #expect(renamed.targets.map(\.collection) == ["copy.orders", "copy.audit", "copy.empty"])

    let one = try store.importDump(
      from: DumpSource(path: source), options: ImportOptions(collection: "audit2", include: ["shop.audit"]))
    #expect(one.targets.map(\.collection) == ["shop.audit2"])
    #expect(try store.collection("shop.audit2").count() == 2)

    #expect {
      try store.importDump(from: DumpSource(path: source), options: ImportOptions(collection: "x"))
    } throws: { error in
      (error as? StoreError)?.kind == .namespace && "\(error)".contains("source has 4")
    }
    #expect(throws: BSONError.self) {
      try store.importDump(from: DumpSource(path: source), options: ImportOptions(include: [""]))
    }
  }

  @Test func importsRemoveTemporaryCollectionsOfDeadProcesses() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    // A pid that is not running: the largest that `kill` reports as missing.
    var dead: pid_t = 4_000_000
    while kill(dead, 0) == 0 || errno != ESRCH { dead -= 1 }
    try store.write { transaction in
      _ = try transaction.info("__import.\(dead).1", create: true, reserved: true)
      _ = try transaction.info("__import.\(getpid()).2", create: true, reserved: true)
    }
    #expect(try store.collectionNames().isEmpty)
    let root = temporary.directory
    writeFile(root + "/a.jsonl", Array("{\"_id\": 1}\n".utf8))
    #expect(try store.importDump(from: DumpSource(path: root + "/a.jsonl")).documents == 1)
    #expect(try store.read { try $0.catalogNames() } == ["__import.\(getpid()).2", "a"])
  }
}

@Suite struct ExportTests {
  @Test func aMissingCollectionExportsAsEmpty() throws {
    let temporary = try TemporaryStore()
    let root = temporary.directory
    let report = try temporary.store.exportDump(
      to: DumpWriter(path: root + "/dump", format: .dump, defaultDatabase: "app"), collections: ["nothing"])
    #expect(report.entries.map(\.documents) == [0])
    #expect(readFile(root + "/dump/app/nothing.bson") == [])
    let metadata = try CollectionMetadata(json: try #require(readFile(root + "/dump/app/nothing.metadata.json")))
    #expect(metadata.indexes.map { $0["name"] } == [.string("_id_")])
    #expect(metadata.uuid?.utf8.count == 32)
  }

  @Test func aSecondCollectionInASingleFileIsAnError() throws {
    let temporary = try TemporaryStore()
    try temporary.store.collection("a").insert(["x": 1])
    try temporary.store.collection("b").insert(["x": 2])
    let root = temporary.directory
    #expect(throws: BSONError.self) {
      try temporary.store.exportDump(to: DumpWriter(path: root + "/one.bson", format: .bson))
    }
  }
}

@Suite struct CatalogTests {
  @Test func renamingMovesDocumentsIndexesAndUUID() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    try store.write { transaction in
      try transaction.collection("a").insertMany(importDocuments(3))
      try transaction.collection("a").createIndex(["group": 1] as Document)
      try transaction.collection("b").insert(["_id": 1])
    }
    let uuid = try store.read { try $0.collection("a").uuid() }
    #expect(uuid?.utf8.count == 32)
    #expect(try store.read { try $0.collection("missing").uuid() } == nil)
    try store.write { try $0.collection("a").rename(to: "c") }
    #expect(try store.collectionNames() == ["b", "c"])
    #expect(try store.read { try $0.collection("c").uuid() } == uuid)
    #expect(try store.collection("c").count(["group": 1]) == 1)
    #expect(try store.collection("c").explain(["group": 1]).index == "group_1")
    #expect(try store.collection("a").count() == 0)

    #expect { try store.write { try $0.collection("c").rename(to: "b") } } throws: {
      ($0 as? StoreError)?.kind == .namespace
    }
    #expect { try store.write { try $0.collection("missing").rename(to: "z") } } throws: {
      ($0 as? StoreError)?.kind == .namespace
    }
    #expect { try store.write { try $0.collection("c").rename(to: "__x") } } throws: {
      ($0 as? StoreError)?.kind == .namespace
    }
    try store.write { try $0.collection("c").rename(to: "b", dropTarget: true) }
    #expect(try store.collectionNames() == ["b"])
    #expect(try store.collection("b").count() == 3)
    // The old b's storage went with it: inserting its _id again works.
    try store.collection("b").insert(["_id": 99])
  }

  @Test func openingAMissingStoreReadOnlyThrowsOnce() throws {
    // Used to close the LMDB environment twice (in init and deinit) and abort.
    for _ in 0..<3 {
      #expect { try Store(path: "/nonexistent/none.reef", options: StoreOptions(readOnly: true)) } throws: {
        ($0 as? StoreError)?.kind == .open
      }
    }
  }

  @Test func aFailedInsertWritesNothingAndTheTransactionGoesOn() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    try store.write { transaction in
      let people = transaction.collection("people")
      try people.createIndex(["name": 1] as Document, unique: true)
      try people.createIndex(["group": 1] as Document)
      try people.insert(["_id": 1, "name": "a", "group": 1])
      #expect(throws: StoreError.self) { try people.insert(["_id": 2, "name": "a", "group": 2]) }
      #expect(throws: StoreError.self) { try people.insert(["_id": 1, "name": "b", "group": 3]) }
      try people.insert(["_id": 3, "name": "c", "group": 2])
    }
    let statistics = try store.statistics()
    #expect(statistics.first?.count == 2)
    #expect(statistics.first?.indexes.map(\.entries) == [2, 2])
    #expect(try store.collection("people").find(["group": 2]).toArray().map { $0["_id"] } == [.int32(3)])
  }
}
