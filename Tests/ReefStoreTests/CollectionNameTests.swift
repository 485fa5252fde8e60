import ReefBSON
import ReefTestSupport
import Testing

@testable import ReefStore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Collection names follow MongoDB's rules, so that every collection comes back from a dump
/// (issue 12, item 5): names that cannot are refused when the collection is made, and an import
/// reports what it does not read instead of passing over it.
@Suite struct CollectionNameTests {
  /// Names that break a rule, and what the error says about it.
  static let illegal: [(name: String, says: String)] = [
    ("", "a name cannot be empty"),
    ("sub/dir.coll", #"its database part "sub/dir" contains '/' at byte 3; database names cannot contain"#),
    (#"a\b.c"#, #"contains '\' at byte 1"#),
    ("my db.c", "contains a space at byte 2"),
    (#"d"b.c"#, #"contains '"' at byte 1"#),
    ("d$b.c", "contains '$' at byte 1; database names"),
    (".coll", "the database part (before the first dot) is empty"),
    ("db.", "the collection part (after the first dot) is empty"),
    ("db.a$b", #"its collection part "a$b" contains '$' at byte 4; collection names cannot contain $"#),
    ("a$b", "the name contains '$' at byte 1"),
    ("db.system.foo", #"its collection part "system.foo" starts with "system.", which MongoDB reserves"#),
    ("db.a.system.b", #"contains ".system." at byte 4"#),
    (
      String(repeating: "d", count: 64) + ".c", "its database part is 64 bytes long; database names are shorter than 64"
    ),
    ("db." + String(repeating: "c", count: 253), "it is 256 bytes long; a namespace is at most 255 bytes"),
    ("__x", "names starting with __ are reserved"),
  ]

  @Test(arguments: illegal)
  func illegalNamesAreRefusedWhenTheCollectionIsMade(name: String, says: String) throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    func refused(_ error: any Error) -> Bool {
      guard let error = error as? StoreError, error.kind == .namespace else { return false }
      return error.message.hasPrefix("invalid collection name \"") && error.message.contains(says)
    }
    #expect(performing: { try store.collection(name).insert(["_id": 1]) }, throws: refused)
    #expect(performing: { try store.collection(name).createIndex(["a": 1]) }, throws: refused)
    try store.collection("legal").insert(["_id": 1])
    #expect(performing: { try store.write { try $0.collection("legal").rename(to: name) } }, throws: refused)
    #expect(try store.read { try $0.catalogNames() } == ["legal"])
  }

  /// (Not among the cases above, whose names the test log prints.)
  @Test func aNameWithNULIsRefused() throws {
    let temporary = try TemporaryStore()
    #expect {
      try temporary.store.collection("a\u{0}b").insert(["_id": 1])
    } throws: { error in
      (error as? StoreError)?.kind == .namespace
        && "\(error)" == #"invalid collection name "a\u{0}b": it contains NUL at byte 1; names cannot contain NUL"#
    }
  }

  @Test func anImportIntoAnIllegalNameImportsNothing() throws {
    let temporary = try TemporaryStore()
    let source = temporary.directory + "/people.jsonl"
    writeLines(source, ids: 0..<3, tag: "p")
    #expect {
      try temporary.store.importDump(from: DumpSource(path: source), options: ImportOptions(database: "sub/dir"))
    } throws: { error in
      (error as? StoreError)?.kind == .namespace
        && "\(error)".contains(#"invalid collection name "sub/dir.people": its database part "sub/dir" contains '/'"#)
    }
    #expect(try temporary.store.read { try $0.catalogNames() }.isEmpty)
  }

  static let legal = [
    "contacts", "a/b", "a b", "db.coll", "db.a/b", "db.coll.with.dots", "admin.system.users",
    "admin.system.version", "shop.system.js", "shop.system.views", "db.system.buckets.weather", "Zürich.straße",
  ]

  @Test func legalNamesAreAccepted() throws {
    let temporary = try TemporaryStore()
    let longest = "db." + String(repeating: "c", count: 252)  // 255 bytes
    for name in Self.legal + [longest] { try temporary.store.collection(name).insert(["_id": 1]) }
    #expect(Set(try temporary.store.collectionNames()) == Set(Self.legal + [longest]))
  }

  /// Every legal collection is exported and imported again, under the same name (a name
  /// without a database comes back under the export's default database).
  @Test(arguments: [DumpFormat.dump, .archive])
  func everyLegalCollectionComesBackFromADump(format: DumpFormat) throws {
    let temporary = try TemporaryStore()
    for (number, name) in Self.legal.enumerated() {
      for id in 0...number { try temporary.store.collection(name).insert(["_id": .int32(Int32(id))]) }
    }
    let dump = temporary.directory + (format == .dump ? "/dump" : "/dump.archive")
    let exported = try temporary.store.exportDump(to: DumpWriter(path: dump, format: format))
    #expect(exported.entries.count == Self.legal.count)
    let copy = try Store(path: temporary.directory + "/copy.reef")
    let report = try copy.importDump(from: DumpSource(path: dump))
    #expect(report.ignored.isEmpty)
    let expected = Self.legal.map { $0.contains(".") ? $0 : "reef." + $0 }
    #expect(Set(try copy.collectionNames()) == Set(expected))
    for (number, name) in expected.enumerated() {
      #expect(try copy.collection(name).count() == number + 1, "\(name)")
    }
  }

  /// What an import of a dump directory does not read is reported, not passed over: folders
  /// nested in a database folder (as exports of `sub/dir.coll` wrote them), files that are not
  /// dump files, an oplog.
  @Test func anImportReportsWhatItDoesNotRead() throws {
    let temporary = try TemporaryStore()
    let dump = temporary.directory + "/dump"
    for folder in [dump, dump + "/shop", dump + "/sub", dump + "/sub/dir"] { mkdir(folder, 0o755) }
    let documents = try [Document(extendedJSON: #"{"_id": 1}"#), Document(extendedJSON: #"{"_id": 2}"#)]
    writeFile(dump + "/shop/orders.bson", documents.flatMap(\.bytes))
    writeFile(dump + "/sub/dir/coll.bson", documents.flatMap(\.bytes))
    writeFile(dump + "/shop/notes.txt", Array("notes".utf8))
    writeFile(dump + "/README", Array("read me".utf8))
    writeFile(dump + "/oplog.bson", [])
    writeFile(dump + "/prelude.json", Array("{}".utf8))
    let report = try temporary.store.importDump(from: DumpSource(path: dump))
    #expect(report.documents == 2)
    #expect(try temporary.store.collectionNames() == ["shop.orders"])
    let ignored = Dictionary(uniqueKeysWithValues: report.ignored.map { ($0.path, $0.reason) })
    #expect(
      ignored.keys.sorted() == [dump + "/README", dump + "/oplog.bson", dump + "/shop/notes.txt", dump + "/sub/dir"])
    #expect(ignored[dump + "/sub/dir"]?.hasPrefix("a folder inside the database folder of sub") == true)
    #expect(ignored[dump + "/shop/notes.txt"]?.hasPrefix("not a dump file: expected <collection>.bson") == true)
    #expect(ignored[dump + "/README"]?.hasPrefix("not a database folder") == true)
    #expect(ignored[dump + "/oplog.bson"]?.hasPrefix("an oplog") == true)

    // The `reef` tool lists them on standard error (and still succeeds).
    let run = try ReefRun()
    let pid = try run.start("import", ["import", dump, "--store", run.store])
    #expect(try run.finish(pid) == 0)
    #expect(run.output("import") == "imported 2 documents into 1 collection, 0 skipped\n")
    #expect(run.errors("import").contains("reef: not imported: \(dump)/sub/dir: a folder inside the database folder"))
    #expect(run.errors("import").split(separator: "\n").count == 4)
  }

  /// A store made before the rules may hold `sub/dir.coll`: exporting it as a dump directory
  /// says why it cannot, instead of writing nested folders that do not import again.
  @Test func aDatabaseNameThatIsNotOneFolderIsNotWrittenAsADumpDirectory() throws {
    let folder = makeTemporaryDirectory("reef-names")
    defer { removeTree(folder) }
    let writer = try DumpWriter(path: folder + "/dump", format: .dump)
    #expect {
      try writer.beginNamespace(Namespace(database: "sub/dir", collection: "coll"), metadata: CollectionMetadata())
    } throws: { error in
      "\(error)".contains("cannot write 'sub/dir.coll' as a dump directory: its database name 'sub/dir' contains '/'")
    }
    #expect(readFile(folder + "/dump/sub/dir/coll.bson") == nil)
  }
}
