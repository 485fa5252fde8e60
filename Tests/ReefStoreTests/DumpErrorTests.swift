import ReefBSON
import ReefStore
import ReefTestSupport
import Testing

/// Reads a whole source and returns the error it throws, or `nil` when it reads cleanly.
func firstError(_ path: String, _ defaultNamespace: Namespace? = nil) -> BSONError? {
  do {
    _ = try readAll(DumpSource(path: path, defaultNamespace: defaultNamespace))
    return nil
  } catch let error as BSONError {
    return error
  } catch {
    Issue.record("unexpected error type: \(error)")
    return nil
  }
}

@Suite struct DumpErrorTests {
  @Test func truncatedArchivesSayWhere() throws {
    guard let path = sharedArchivePath() else { return }
    let bytes = try #require(readFile(path))
    let root = makeTemporaryDirectory()
    defer { removeTree(root) }
    // Inside the header, inside the prelude, inside a document, and at a block boundary.
    let blockBoundary = bytes.count - 4 - 0x40  // just before testColl's end block
    for cut in [6, 300, 20_000, blockBoundary, bytes.count - 1] {
      let cutPath = root + "/cut-\(cut).archive"
      writeFile(cutPath, Array(bytes[0..<cut]))
      let error = try #require(firstError(cutPath), "cut at \(cut)")
      #expect(error.kind == .truncated, "cut at \(cut): \(error)")
      #expect(error.offset != nil, "cut at \(cut): \(error)")
      #expect(error.message.contains(cutPath), "cut at \(cut): \(error)")
    }
    let inDocument = try #require(firstError(root + "/cut-20000.archive"))
    #expect(inDocument.documentIndex != nil)
    #expect(inDocument.message.contains("testDB.testColl"))
    let atBoundary = try #require(firstError(root + "/cut-\(blockBoundary).archive"))
    #expect(atBoundary.message.contains("end block of 'testDB.testColl'"), "\(atBoundary)")
  }

  @Test func badMagicIsRejected() throws {
    let root = makeTemporaryDirectory()
    defer { removeTree(root) }
    var archive = ArchiveBuilder(namespaces: [Namespace("a.b")!]).bytes
    archive[1] = 0xE3
    writeFile(root + "/bad.archive", archive)
    // Not the magic: taken for BSON, whose first length is impossible.
    let error = try #require(firstError(root + "/bad.archive"))
    #expect(error.offset == 0)

    let source = try DumpSource(path: root + "/bad.archive")
    #expect(source.kind != .archive)
  }

  @Test func wrongVersionAndChecksumAreRejected() throws {
    let root = makeTemporaryDirectory()
    defer { removeTree(root) }
    let a = Namespace("d.a")!
    let version = ArchiveBuilder(namespaces: [a], version: "0.2")
    version.end(a)
    writeFile(root + "/version.archive", version.bytes)
    let versionError = try #require(firstError(root + "/version.archive"))
    #expect(versionError.kind == .invalidValue)
    #expect(versionError.keyPath == ["version"])

    let crc = ArchiveBuilder(namespaces: [a])
    crc.segment(a, [["x": 1]])
    crc.end(a, crc: 12345)
    writeFile(root + "/crc.archive", crc.bytes)
    let crcError = try #require(firstError(root + "/crc.archive"))
    #expect(crcError.kind == .invalidValue)
    #expect(crcError.message.contains("checksum"))
  }

  @Test func aBrokenDocumentInADumpDirectorySaysWhichFileAndWhere() throws {
    let root = makeTemporaryDirectory()
    defer { removeTree(root) }
    let documents = try sampleDocuments(10, tag: "x")
    try write(
      [
        (Namespace("db.good")!, CollectionMetadata(), documents),
        (Namespace("db.bad")!, CollectionMetadata(), documents),
      ],
      to: root + "/dump", format: .dump, gzip: false)
    var bytes = try #require(readFile(root + "/dump/db/bad.bson"))
    let third = documents[0].byteCount + documents[1].byteCount
    bytes[third + 4] = 0x42  // an undefined type byte in the third document
    writeFile(root + "/dump/db/bad.bson", bytes)
    let source = try DumpSource(path: root + "/dump")
    var read = 0
    let result = Result { () throws(BSONError) in
      while try source.nextNamespace() != nil {
        while try source.nextDocument() != nil { read += 1 }
      }
    }
    guard case .failure(let caught) = result else {
      Issue.record("the broken document was not reported")
      return
    }
    #expect(read == 2)  // db.bad comes first, and fails at its third document
    #expect(caught.kind == .unknownType)
    #expect(caught.documentIndex == 2)
    #expect(caught.offset == third + 4)
    #expect(caught.message.contains("bad.bson"))
    #expect(throws: BSONError.self) { try source.nextDocument() }

    writeFile(root + "/dump/db/good.metadata.json", Array(#"{"indexes": 3}"#.utf8))
    let metadataError = try #require(firstError(root + "/dump/db/good.bson"))
    #expect(metadataError.keyPath == ["indexes"])
    #expect(metadataError.message.contains("good.metadata.json"))
  }

  @Test func truncatedGzipIsAnError() throws {
    let root = makeTemporaryDirectory()
    defer { removeTree(root) }
    try write(
      [(Namespace("db.c")!, CollectionMetadata(), try sampleDocuments(200, tag: "z"))], to: root + "/c.bson.gz",
      format: .bson, gzip: true)
    let bytes = try #require(readFile(root + "/c.bson.gz"))
    writeFile(root + "/c.bson.gz", Array(bytes.prefix(bytes.count / 2)))
    let error = try #require(firstError(root + "/c.bson.gz"))
    #expect(error.kind == .io || error.kind == .truncated)
  }

  @Test func badJSONSaysLineAndColumn() throws {
    let root = makeTemporaryDirectory()
    defer { removeTree(root) }
    writeFile(root + "/lines.jsonl", Array("{\"a\": 1}\n{\"a\": 2}\n  {\"a\": {\"$numberInt\": \"x\"}}\n".utf8))
    let error = try #require(firstError(root + "/lines.jsonl"))
    #expect(error.kind == .invalidExtendedJSON)
    #expect(error.line == 3)
    #expect(error.documentIndex == 2)
    #expect((error.column ?? 0) > 3)
    #expect(error.message.contains("lines.jsonl"))

    writeFile(root + "/cut.json", Array("[{\"a\": 1},\n {\"a\": [1, 2".utf8))
    let cut = try #require(firstError(root + "/cut.json"))
    #expect(cut.kind == .truncated)
    #expect(cut.documentIndex == 1)
    #expect(cut.message.contains("line 2, column 2"))

    writeFile(root + "/junk.json", Array("[{\"a\": 1} {\"a\": 2}]".utf8))
    let junk = try #require(firstError(root + "/junk.json"))
    #expect(junk.kind == .invalidJSON)
    #expect(junk.column == 11)
  }

  @Test func writerCallsOutOfOrderAreErrors() throws {
    let root = makeTemporaryDirectory()
    defer { removeTree(root) }
    let writer = try DumpWriter(path: root + "/x", format: .dump)
    #expect(throws: BSONError.self) { try writer.write(["a": 1]) }
    #expect(throws: BSONError.self) { try writer.endNamespace() }
    try writer.beginNamespace(Namespace("a.b")!, metadata: CollectionMetadata())
    #expect(throws: BSONError.self) { try writer.beginNamespace(Namespace("a.c")!, metadata: CollectionMetadata()) }
    try writer.endNamespace()
    #expect(throws: BSONError.self) { try writer.beginNamespace(Namespace("a.b")!, metadata: CollectionMetadata()) }
    try writer.close()
    #expect(throws: BSONError.self) { try writer.beginNamespace(Namespace("a.d")!, metadata: CollectionMetadata()) }
  }

  @Test func aDirectoryWithoutDumpFilesIsAnError() throws {
    let root = makeTemporaryDirectory()
    defer { removeTree(root) }
    #expect(throws: BSONError.self) { try DumpSource(path: root) }
  }
}
