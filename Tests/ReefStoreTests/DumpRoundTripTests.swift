import ReefBSON
import ReefStore
import ReefTestSupport
import Testing

/// Documents of many types, whose bytes must survive every format.
func sampleDocuments(_ count: Int, tag: String) throws -> [Document] {
  (0..<count).map { i in
    var document = Document()
    document.append(.objectId(ObjectId("57e193d7a9cc81b4027498b\(i % 10)")!), forKey: "_id")
    document.append(.string("\(tag) #\(i) ünïcødé \"quoted\"\n"), forKey: "name")
    document.append(.int32(Int32(i)), forKey: "i32")
    document.append(.int64(Int64(i) << 40), forKey: "i64")
    document.append(.double(Double(i) / 3), forKey: "ratio")
    document.append(.datetime(BSONDateTime(millisecondsSinceEpoch: 1_700_000_000_000 + Int64(i))), forKey: "at")
    document.append(.decimal128(Decimal128("\(i).50")!), forKey: "price")
    document.append(.binary(Binary(subtype: .generic, data: [0, 1, 2, UInt8(i % 256)])), forKey: "blob")
    document.append(.array([.int32(1), .string("two"), .document(["three": .bool(true)])]), forKey: "list")
    document.append(.document(["city": "Los Angeles", "zip": .null]), forKey: "address")
    return document
  }
}

/// The collections written in the round trips: several databases, one collection whose name
/// needs escaping, one without a database, one empty.
func sampleCollections() throws -> [(Namespace, CollectionMetadata, [Document])] {
  let indexes: [Document] = [
    ["v": 2, "key": ["_id": 1], "name": "_id_"],
    ["v": 2, "key": ["name": 1, "at": -1], "name": "name_1_at_-1", "unique": .bool(true)],
    ["v": 2, "key": ["address.city": 1], "name": "city", "sparse": .bool(true)],
  ]
  return [
    (
      Namespace("shop.orders")!, CollectionMetadata(indexes: indexes, uuid: "0123456789abcdef0123456789abcdef"),
      try sampleDocuments(120, tag: "order")
    ),
    (
      Namespace("shop.odd/name %")!, CollectionMetadata(indexes: Array(indexes.prefix(1))),
      try sampleDocuments(3, tag: "odd")
    ),
    (
      Namespace("admin.system.js")!, CollectionMetadata(options: ["capped": .bool(true), "size": 4096]),
      try sampleDocuments(2, tag: "js")
    ),
    (Namespace(database: "", collection: "loose"), CollectionMetadata(), try sampleDocuments(5, tag: "loose")),
    (Namespace("shop.empty")!, CollectionMetadata(indexes: Array(indexes.prefix(1))), []),
  ]
}

func write(
  _ collections: [(Namespace, CollectionMetadata, [Document])], to path: String, format: DumpFormat, gzip: Bool
) throws {
  let writer = try DumpWriter(path: path, format: format, gzip: gzip)
  for (namespace, metadata, documents) in collections {
    try writer.beginNamespace(namespace, metadata: metadata)
    for document in documents { try writer.write(document) }
    try writer.endNamespace()
  }
  try writer.close()
}

@Suite struct DumpRoundTripTests {
  static let cases: [(DumpFormat, Bool)] = DumpFormat.allCases.flatMap { [($0, false), ($0, true)] }

  @Test(arguments: cases)
  func everyFormatRoundTripsThroughADirectoryOrArchive(format: DumpFormat, gzip: Bool) throws {
    let collections = try sampleCollections()
    let root = makeTemporaryDirectory()
    defer { removeTree(root) }
    let path = format == .archive ? root + "/out.archive" : root + "/out/"
    try write(collections, to: path, format: format, gzip: gzip)
    let source = try DumpSource(path: path)
    #expect(source.kind == (format == .archive ? .archive : .directory))
    let contents = try readAll(source)
    #expect(source.bytesRead == source.totalBytes)
    let expected = collections.map { namespace, _, _ in
      namespace.database.isEmpty ? Namespace(database: "reef", collection: namespace.collection) : namespace
    }
    if format == .archive {
      #expect(contents.namespaces == expected)
    } else {
      #expect(Set(contents.namespaces) == Set(expected))
    }
    for ((_, metadata, documents), namespace) in zip(collections, expected) {
      let read = contents.metadata[namespace]
      #expect(read?.indexes == metadata.indexes, "\(namespace) \(format) gzip \(gzip)")
      #expect(read?.options == metadata.options, "\(namespace) \(format) gzip \(gzip)")
      #expect(read?.collectionName == namespace.collection)
      if let uuid = metadata.uuid { #expect(read?.uuid == uuid) } else { #expect(read?.uuid?.utf8.count == 32) }
      let bytes = (contents.documents[namespace] ?? []).map(\.bytes)
      #expect(bytes == documents.map(\.bytes), "documents of \(namespace) in \(format) gzip \(gzip)")
    }
  }

  @Test func dumpDirectoryHasMongodumpsLayout() throws {
    let root = makeTemporaryDirectory()
    defer { removeTree(root) }
    try write(try sampleCollections(), to: root + "/dump", format: .dump, gzip: false)
    #expect(readFile(root + "/dump/shop/orders.bson") != nil)
    #expect(readFile(root + "/dump/shop/odd%2Fname%20%25.bson") != nil)
    #expect(readFile(root + "/dump/admin/system.js.bson") != nil)
    #expect(readFile(root + "/dump/reef/loose.bson") != nil)
    #expect(readFile(root + "/dump/shop/empty.bson") == [])
    // mongodump's root files do not make the root look like a database folder.
    writeFile(root + "/dump/oplog.bson", [])
    writeFile(root + "/dump/prelude.json", Array(#"{"ServerVersion":"8.0.0"}"#.utf8))
    #expect(try readAll(DumpSource(path: root + "/dump")).namespaces.count == 5)
    let metadata = try #require(readFile(root + "/dump/shop/orders.metadata.json"))
    let text = String(decoding: metadata, as: UTF8.self)
    #expect(text.hasPrefix(#"{"indexes":[{"v":{"$numberInt":"2"},"key":{"_id":{"$numberInt":"1"}},"name":"_id_"}"#))
    #expect(
      text.hasSuffix(#""uuid":"0123456789abcdef0123456789abcdef","collectionName":"orders","type":"collection"}"#))
    let capped = String(decoding: try #require(readFile(root + "/dump/admin/system.js.metadata.json")), as: UTF8.self)
    #expect(capped.hasPrefix(#"{"options":{"capped":true,"size":{"$numberInt":"4096"}},"indexes":[]"#))

    try write(try sampleCollections(), to: root + "/gz", format: .dump, gzip: true)
    #expect(readFile(root + "/gz/shop/orders.bson.gz")?.prefix(2) == [0x1F, 0x8B])
    #expect(readFile(root + "/gz/shop/orders.metadata.json.gz")?.prefix(2) == [0x1F, 0x8B])
  }

  @Test func oneDatabaseFolderIsASource() throws {
    let root = makeTemporaryDirectory()
    defer { removeTree(root) }
    try write(try sampleCollections(), to: root + "/dump", format: .dump, gzip: true)
    let contents = try readAll(DumpSource(path: root + "/dump/shop"))
    #expect(contents.namespaces.map(\.dotted) == ["shop.empty", "shop.odd/name %", "shop.orders"])
    let renamed = try readAll(DumpSource(path: root + "/dump/shop", defaultNamespace: Namespace("other.x")!))
    #expect(renamed.namespaces.first?.database == "other")
  }

  @Test(arguments: [
    ("people.bson", DumpFormat.bson), ("people.bson.gz", .bson), ("people.json", .json),
    ("people.jsonl", .jsonl), ("people.json.gz", .json), ("people.jsonl.gz", .jsonl),
  ])
  func singleFilesRoundTrip(name: String, format: DumpFormat) throws {
    let root = makeTemporaryDirectory()
    defer { removeTree(root) }
    let documents = try sampleDocuments(50, tag: "person")
    let metadata = CollectionMetadata(indexes: [["v": 2, "key": ["name": 1], "name": "name_1"]])
    let path = root + "/" + name
    try write([(Namespace("crm.people")!, metadata, documents)], to: path, format: format, gzip: false)
    if name.hasSuffix(".gz") { #expect(readFile(path)?.prefix(2) == [0x1F, 0x8B]) }
    let source = try DumpSource(path: path)
    #expect(source.kind == (format == .bson ? .bsonFile : .extendedJSON))
    let contents = try readAll(source)
    #expect(source.bytesRead == source.totalBytes)
    #expect(contents.namespaces == [Namespace(database: "", collection: "people")])
    #expect(contents.documents.values.first?.map(\.bytes) == documents.map(\.bytes))
    if format == .bson { #expect(contents.metadata.values.first?.indexes == metadata.indexes) }
    let named = try readAll(DumpSource(path: path, defaultNamespace: Namespace("crm.customers")!))
    #expect(named.namespaces == [Namespace("crm.customers")!])

    let writer = try DumpWriter(path: root + "/other-" + name, format: format)
    try writer.beginNamespace(Namespace("a.b")!, metadata: CollectionMetadata())
    try writer.endNamespace()
    #expect(throws: BSONError.self) { try writer.beginNamespace(Namespace("a.c")!, metadata: CollectionMetadata()) }
  }

  @Test func jsonFormatsLookLikeMongoexport() throws {
    let root = makeTemporaryDirectory()
    defer { removeTree(root) }
    let documents: [Document] = [["a": 1], ["a": 2]]
    try write(
      [(Namespace("d.c")!, CollectionMetadata(), documents)], to: root + "/c.jsonl", format: .jsonl, gzip: false)
    try write([(Namespace("d.c")!, CollectionMetadata(), documents)], to: root + "/c.json", format: .json, gzip: false)
    try write([(Namespace("d.c")!, CollectionMetadata(), [])], to: root + "/e.json", format: .json, gzip: false)
    #expect(
      readFile(root + "/c.jsonl").map { String(decoding: $0, as: UTF8.self) }
        == "{\"a\":{\"$numberInt\":\"1\"}}\n{\"a\":{\"$numberInt\":\"2\"}}\n")
    #expect(
      readFile(root + "/c.json").map { String(decoding: $0, as: UTF8.self) }
        == "[\n{\"a\":{\"$numberInt\":\"1\"}},\n{\"a\":{\"$numberInt\":\"2\"}}\n]\n")
    #expect(try readAll(DumpSource(path: root + "/e.json")).total == 0)
  }

  @Test func relaxedJSONAndPrettyArraysAreRead() throws {
    let root = makeTemporaryDirectory()
    defer { removeTree(root) }
    let text = """
      \u{FEFF}[
        {"_id": {"$oid": "57e193d7a9cc81b4027498b5"}, "n": 1, "s": "a } ] {",
         "d": {"$date": "2024-01-02T03:04:05.006Z"}},
        {"n": 2.5, "nested": {"list": [1, {"x": "\\"}"}]}}
      ]
      """
    writeFile(root + "/export.txt", Array(text.utf8))
    let source = try DumpSource(path: root + "/export.txt")
    #expect(source.kind == .extendedJSON)
    let contents = try readAll(source)
    let documents = try #require(contents.documents[Namespace(database: "", collection: "export.txt")])
    #expect(documents.count == 2)
    #expect(documents[0]["s"] == .string("a } ] {"))
    #expect(documents[0]["n"] == .int32(1))
    #expect(documents[1]["nested.list"] == .array([.int32(1), .document(["x": .string("\"}")])]))
  }
}
