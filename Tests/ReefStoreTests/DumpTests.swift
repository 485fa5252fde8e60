import ReefBSON
import ReefStore
import ReefTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Writes bytes to a file.
func writeFile(_ path: String, _ bytes: [UInt8]) {
  let sink = try! ByteSink(path: path, compression: .none)
  try! sink.write(bytes)
  try! sink.close()
}

/// Everything a source yields: namespaces in order with metadata and documents.
struct SourceContents {
  var namespaces: [Namespace] = []
  var metadata: [Namespace: CollectionMetadata] = [:]
  var documents: [Namespace: [Document]] = [:]
  var total: Int { documents.values.reduce(0) { $0 + $1.count } }
}

func readAll(_ source: DumpSource) throws -> SourceContents {
  var contents = SourceContents()
  while let (namespace, metadata) = try source.nextNamespace() {
    if contents.metadata[namespace] == nil { contents.namespaces.append(namespace) }
    contents.metadata[namespace] = metadata
    while let document = try source.nextDocument() { contents.documents[namespace, default: []].append(document) }
  }
  return contents
}

/// The shared mongodump archive, or `nil` (with a printed reason) when the shared material is absent.
func sharedArchivePath() -> String? {
  guard let dir = sharedDirectory("the mongodump archive tests") else { return nil }
  return dir + "/interop/mongodump-parser-test.archive"
}

@Suite struct DumpArchiveTests {
  @Test func readsTheRealArchive() throws {
    guard let path = sharedArchivePath() else { return }
    let source = try DumpSource(path: path)
    #expect(source.kind == .archive)
    #expect(source.totalBytes == 50481)
    let contents = try readAll(source)
    #expect(
      contents.namespaces.map(\.dotted) == [
        "admin.system.users", "admin.system.roles", "admin.system.version", "testDB.testColl",
      ])
    #expect(contents.total == 1510)
    #expect(contents.documents[Namespace("testDB.testColl")!]?.count == 1500)
    #expect(contents.documents[Namespace("admin.system.users")!]?.count == 4)
    #expect(contents.documents[Namespace("admin.system.roles")!]?.count == 4)
    #expect(contents.documents[Namespace("admin.system.version")!]?.count == 2)
    #expect(source.bytesRead == 50481)
    let header = try #require(source.archiveHeader)
    #expect(header["version"] == .string("0.1"))
    #expect(header["server_version"] == .string("8.0.3-120-gbc35ab4"))

    let users = try #require(contents.metadata[Namespace("admin.system.users")!])
    #expect(users.indexes.map { $0["name"] } == [.string("_id_"), .string("user_1_db_1")])
    #expect(users.indexes[1]["unique"] == .bool(true))
    #expect(users.indexes[1]["key"] == .document(["user": .int32(1), "db": .int32(1)]))
    #expect(users.uuid == "ce53ac21899e478fb7e5402dd85bfafb")
    #expect(users.collectionName == "system.users")
    let testColl = try #require(contents.metadata[Namespace("testDB.testColl")!])
    #expect(testColl.indexes.count == 1)
    #expect(testColl.uuid == "f4df33f029b34b4fbd5326b5b5c286f3")
  }

  @Test func preludeListsEveryNamespaceBeforeAnyDocument() throws {
    guard let path = sharedArchivePath() else { return }
    let source = try DumpSource(path: path)
    let prelude = try source.prelude()
    #expect(
      prelude.map(\.namespace.dotted) == [
        "testDB.testColl", "admin.system.users", "admin.system.roles", "admin.system.version",
      ])
    #expect(prelude[1].metadata.indexes.count == 2)
    var count = 0
    var perNamespace: [Namespace: Int] = [:]
    while let (namespace, _) = try source.nextArchiveDocument() {
      count += 1
      perNamespace[namespace, default: 0] += 1
    }
    #expect(count == 1510)
    #expect(perNamespace[Namespace("testDB.testColl")!] == 1500)
  }

  @Test func reexportingTheArchiveKeepsEveryDocumentByteForByte() throws {
    guard let path = sharedArchivePath() else { return }
    let original = try readAll(DumpSource(path: path))
    let dir = makeTemporaryDirectory()
    defer { removeTree(dir) }
    for (format, gzip) in [(DumpFormat.archive, false), (.archive, true), (.dump, false), (.dump, true)] {
      let out = dir + "/again-\(format)-\(gzip)" + (format == .archive ? ".archive" : "")
      let writer = try DumpWriter(path: out, format: format, gzip: gzip)
      for namespace in original.namespaces {
        try writer.beginNamespace(namespace, metadata: original.metadata[namespace]!)
        for document in original.documents[namespace] ?? [] { try writer.write(document) }
        try writer.endNamespace()
      }
      try writer.close()
      let again = try readAll(DumpSource(path: out))
      #expect(Set(again.namespaces) == Set(original.namespaces), "\(format) gzip \(gzip)")
      for namespace in original.namespaces {
        #expect(
          again.documents[namespace]?.map(\.bytes) == original.documents[namespace]?.map(\.bytes),
          "\(namespace) in \(format) gzip \(gzip)")
        #expect(again.metadata[namespace]?.indexes == original.metadata[namespace]?.indexes)
        #expect(again.metadata[namespace]?.uuid == original.metadata[namespace]?.uuid)
      }
    }
  }

  @Test func writtenArchiveHasTheSpecifiedLayout() throws {
    let dir = makeTemporaryDirectory()
    defer { removeTree(dir) }
    let out = dir + "/one.archive"
    let writer = try DumpWriter(path: out, format: .archive)
    try writer.beginNamespace(Namespace(database: "db", collection: "c"), metadata: CollectionMetadata())
    try writer.write(["a": 1])
    try writer.endNamespace()
    try writer.beginNamespace(Namespace(database: "", collection: "empty"), metadata: CollectionMetadata())
    try writer.endNamespace()
    try writer.close()
    let bytes = try #require(readFile(out))
    #expect(Array(bytes[0..<4]) == [0x6D, 0xE2, 0x99, 0x81])
    var offset = 4
    func next() throws -> Document {
      let length = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16
      defer { offset += length }
      return try Document(bytes: bytes[offset..<offset + length])
    }
    func terminator() {
      #expect(Array(bytes[offset..<offset + 4]) == [0xFF, 0xFF, 0xFF, 0xFF])
      offset += 4
    }
    let header = try next()
    #expect(header.keys == ["concurrent_collections", "version", "server_version", "tool_version"])
    #expect(header["version"] == .string("0.1"))
    let first = try next()
    #expect(first.keys == ["db", "collection", "metadata", "size", "type"])
    #expect(first["db"] == .string("db"))
    #expect(first["size"] == .int32(12))
    guard case .string(let json)? = first["metadata"] else { Issue.record("metadata is not a string"); return }
    #expect(json.hasPrefix(#"{"indexes":[],"uuid":""#))
    #expect(json.hasSuffix(#","collectionName":"c","type":"collection"}"#))
    let second = try next()
    #expect(second["db"] == .string("reef"))
    #expect(second["collection"] == .string("empty"))
    terminator()
    #expect(try next() == ["db": "db", "collection": "c", "EOF": .bool(false), "CRC": .int64(0)])
    #expect(try next() == ["a": 1])
    terminator()
    let eof = try next()
    #expect(eof["EOF"] == .bool(true))
    #expect(eof["CRC"] != .int64(0))
    terminator()
    #expect(try next()["collection"] == .string("empty"))
    terminator()
    #expect(offset == bytes.count)
  }

  @Test func interleavedBlocksAreYieldedInFileOrder() throws {
    let a = Namespace(database: "d", collection: "a")
    let b = Namespace(database: "d", collection: "b")
    let e = Namespace(database: "d", collection: "e")
    let archive = ArchiveBuilder(namespaces: [a, b, e])
    archive.segment(a, [["i": 0], ["i": 1]])
    archive.segment(b, [["j": 0]])
    archive.segment(a, [["i": 2]])
    archive.segment(a, [["i": 3]])
    archive.end(b)
    archive.end(e)
    archive.end(a)
    let root = makeTemporaryDirectory()
    defer { removeTree(root) }
    let path = root + "/interleaved.archive"
    writeFile(path, archive.bytes)

    let source = try DumpSource(path: path)
    var runs: [(String, Int)] = []
    while let (namespace, _) = try source.nextNamespace() {
      var n = 0
      while try source.nextDocument() != nil { n += 1 }
      runs.append((namespace.collection, n))
    }
    #expect(runs.map(\.0) == ["a", "b", "a", "e"])
    #expect(runs.map(\.1) == [2, 1, 2, 0])

    let again = try DumpSource(path: path)
    #expect(try again.prelude().map(\.namespace) == [a, b, e])
    var order: [String] = []
    while let (namespace, document) = try again.nextArchiveDocument() {
      guard case .int32(let value)? = document["i"] ?? document["j"] else { continue }
      order.append(namespace.collection + "\(value)")
    }
    #expect(order == ["a0", "a1", "b0", "a2", "a3"])
  }
}

/// Builds archives by hand for tests.
final class ArchiveBuilder {
  var bytes: [UInt8] = [0x6D, 0xE2, 0x99, 0x81]
  var checksums: [Namespace: [UInt8]] = [:]

  init(namespaces: [Namespace], version: String = "0.1") {
    let header: Document = [
      "concurrent_collections": .int32(1), "version": .string(version), "server_version": "8.0.0",
      "tool_version": "test",
    ]
    bytes += header.bytes
    for namespace in namespaces {
      let metadata = CollectionMetadata(indexes: [["v": 2, "key": ["_id": 1], "name": "_id_"]])
      let entry: Document = [
        "db": .string(namespace.database), "collection": .string(namespace.collection),
        "metadata": .string(String(decoding: metadata.json(), as: UTF8.self)), "size": .int32(0), "type": "collection",
      ]
      bytes += entry.bytes
    }
    bytes += [0xFF, 0xFF, 0xFF, 0xFF]
  }

  func segment(_ namespace: Namespace, _ documents: [Document]) {
    let header: Document = [
      "db": .string(namespace.database), "collection": .string(namespace.collection), "EOF": .bool(false),
      "CRC": .int64(0),
    ]
    bytes += header.bytes
    for document in documents {
      bytes += document.bytes
      checksums[namespace, default: []] += document.bytes
    }
    bytes += [0xFF, 0xFF, 0xFF, 0xFF]
  }

  func end(_ namespace: Namespace, crc: Int64? = nil) {
    let header: Document = [
      "db": .string(namespace.database), "collection": .string(namespace.collection), "EOF": .bool(true),
      "CRC": .int64(crc ?? Int64(bitPattern: crc64(checksums[namespace] ?? []))),
    ]
    bytes += header.bytes
    bytes += [0xFF, 0xFF, 0xFF, 0xFF]
  }

  /// Go's crc64 with the ECMA table, written out independently of the library's.
  func crc64(_ data: [UInt8]) -> UInt64 {
    var crc: UInt64 = ~0
    for byte in data {
      crc ^= UInt64(byte)
      for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xC96C_5795_D787_0F42 : crc >> 1 }
    }
    return ~crc
  }
}

@Suite struct DumpNamespaceTests {
  @Test func dottedNamesSplitAtTheFirstDot() {
    #expect(Namespace("admin.system.users") == Namespace(database: "admin", collection: "system.users"))
    #expect(Namespace("users") == nil)
    #expect(Namespace(".users") == nil)
    #expect(Namespace("db.") == nil)
    #expect(Namespace(database: "", collection: "people").dotted == "people")
    #expect(Namespace(database: "db", collection: "people").description == "db.people")
  }

  @Test func filtersFollowMongorestorePatterns() throws {
    let users = Namespace("admin.system.users")!
    let orders = Namespace("shop.orders")!
    let audit = Namespace("shop.audit2024")!
    let star = Namespace(database: "odd", collection: "a*b")
    #expect(try NamespaceFilter().matches(users))
    #expect(try NamespaceFilter(include: ["shop.*"]).matches(orders))
    #expect(try !NamespaceFilter(include: ["shop.*"]).matches(users))
    #expect(try NamespaceFilter(include: ["*.system.*"]).matches(users))
    #expect(try !NamespaceFilter(include: ["shop.*"], exclude: ["shop.audit*"]).matches(audit))
    #expect(try NamespaceFilter(include: ["shop.*"], exclude: ["shop.audit*"]).matches(orders))
    #expect(try NamespaceFilter(exclude: ["admin.*"]).matches(orders))
    #expect(try !NamespaceFilter(exclude: ["admin.*"]).matches(users))
    #expect(try NamespaceFilter(include: [#"odd.a\*b"#]).matches(star))
    #expect(try !NamespaceFilter(include: [#"odd.a\*b"#]).matches(Namespace("odd.axb")!))
    #expect(try NamespaceFilter(include: ["*orders"]).matches(orders))
    #expect(try !NamespaceFilter(include: ["shop.order"]).matches(orders))
    #expect(throws: BSONError.self) { try NamespaceFilter(include: [""]) }
    #expect(throws: BSONError.self) { try NamespaceFilter(include: [#"shop.\"#]) }
  }
}
