import ArgumentParser
import Foundation
import ReefBSON
import ReefTestSupport
import Testing

@testable import ReefCLI

@Suite("reef import and export")
struct ImportExportCommandTests {
  @Test("import and export parse their options")
  func parsing() throws {
    let command = try #require(
      try ReefCommand.parseAsRoot([
        "import", "dump", "--store", "s.reef", "--db", "shop", "--nsInclude", "a.*", "--nsInclude", "b.*",
        "--nsExclude", "a.x", "--drop", "--skip-invalid",
      ]) as? ImportCommand)
    #expect(command.source == "dump")
    #expect(command.storeOptions.store == "s.reef")
    #expect(command.db == "shop")
    #expect(command.include == ["a.*", "b.*"])
    #expect(command.exclude == ["a.x"])
    #expect(command.drop && command.skipInvalid)
    #expect(command.collection == nil)

    let export = try #require(
      try ReefCommand.parseAsRoot([
        "export", "--store", "s.reef", "--out", "o.archive", "--format", "archive", "--gzip", "--collection", "a",
      ]) as? ExportCommand)
    #expect(export.format == .archive)
    #expect(export.gzip)
    #expect(export.collection == ["a"])
    #expect(export.db == "reef")
    let defaults = try #require(
      try ReefCommand.parseAsRoot(["export", "--store", "s", "--out", "d"]) as? ExportCommand)
    #expect(defaults.format == .dump)
    #expect(defaults.collection.isEmpty)
  }

  @Test("usage errors exit 64")
  func usageErrors() throws {
    let dir = try TemporaryDirectory()
    let store = dir.path("s.reef")
    for arguments in [
      ["import", "x.bson"], ["import", "x.bson", "--store", store, "--collection", ""],
      ["import", "x.bson", "--store", store, "--db", "a.b"], ["export", "--store", store],
      ["export", "--store", store, "--out", "x", "--format", "csv"], ["export", "--store", store, "--out", "-"],
    ] {
      let result = try runProcess(reefBinary, arguments)
      #expect(result.status == 64, "\(arguments): \(result.stderr)")
      #expect(result.stderr.contains("Error: "), "\(arguments)")
    }
  }

  @Test("the shared archive imports, exports to a dump directory and imports again the same")
  func archiveRoundTrip() throws {
    guard let shared = sharedDirectory("the import command's archive test") else { return }
    let dir = try TemporaryDirectory()
    let store = dir.path("s.reef")
    let imported = try reef("import", shared + "/interop/mongodump-parser-test.archive", "--store", store)
    #expect(imported.status == 0, "\(imported.stderr)")
    #expect(imported.stdout == "imported 1510 documents into 4 collections, 0 skipped\n")
    #expect(imported.stderr.isEmpty)  // no progress bar when standard error is not a terminal

    let exported = try reef("export", "--store", store, "--out", dir.path("dump"))
    #expect(exported.status == 0, "\(exported.stderr)")
    #expect(exported.stdout == "exported 1510 documents from 4 collections to \(dir.path("dump"))\n")
    #expect(FileManager.default.fileExists(atPath: dir.path("dump/testDB/testColl.bson")))
    #expect(FileManager.default.fileExists(atPath: dir.path("dump/admin/system.users.metadata.json")))

    let again = try reef("import", dir.path("dump"), "--store", dir.path("t.reef"))
    #expect(again.stdout == "imported 1510 documents into 4 collections, 0 skipped\n")
    let before = try reef(
      "export", "--store", store, "--out", dir.path("a.jsonl"), "--collection", "testDB.testColl",
      "--format", "jsonl")
    let after = try reef(
      "export", "--store", dir.path("t.reef"), "--out", dir.path("b.jsonl"), "--collection",
      "testDB.testColl", "--format", "jsonl")
    #expect(before.status == 0 && after.status == 0)
    #expect(try dir.read("a.jsonl") == dir.read("b.jsonl"))
    let stats = try reef("stats", "--store", dir.path("t.reef"))
    #expect(stats.stdout.contains("index user_1_db_1: 4 keys"))
  }

  @Test("a file goes into --collection, --drop replaces, duplicates fail with exit 1 and change nothing")
  func singleFile() throws {
    let dir = try TemporaryDirectory()
    let store = dir.path("s.reef")
    let lines = try dir.write("people.jsonl", text: "{\"_id\": 1, \"name\": \"a\"}\n{\"_id\": 2, \"name\": \"b\"}\n")
    let first = try reef("import", lines, "--store", store, "--collection", "people")
    #expect(first.status == 0)
    #expect(first.stdout == "imported 2 documents into 1 collection, 0 skipped\n")

    let duplicate = try reef("import", lines, "--store", store, "--collection", "people")
    #expect(duplicate.status == 1)
    #expect(duplicate.stdout.isEmpty)
    #expect(
      duplicate.stderr
        == "reef: error: importing people document 0 into people: E11000 duplicate key error collection: people index: _id_ dup key: { _id: 1 }; nothing was imported\n"
    )
    #expect(try reef("query", "--store", store, "--collection", "people", "--count").stdout == "2\n")

    let dropped = try reef("import", lines, "--store", store, "--collection", "people", "--drop")
    #expect(dropped.status == 0)
    #expect(try reef("query", "--store", store, "--collection", "people", "--count").stdout == "2\n")

    let named = try reef("import", lines, "--store", store, "--db", "app")
    #expect(named.status == 0)
    #expect(try reef("query", "--store", store, "--collection", "app.people", "--count").stdout == "2\n")
  }

  @Test("--skip-invalid lists what it skipped and imports the rest")
  func skipInvalid() throws {
    let dir = try TemporaryDirectory()
    let store = dir.path("s.reef")
    var bytes: [UInt8] = []
    for i in 0..<3 {
      var builder = DocumentBuilder()
      builder.append("_id", Int32(i % 2))
      bytes += builder.document.bytes
    }
    let path = try dir.write("p.bson", bytes)
    let failed = try reef("import", path, "--store", store)
    #expect(failed.status == 1)
    #expect(failed.stderr.hasPrefix("reef: error: importing p document 2 (offset 28) into p: E11000"))
    let result = try reef("import", path, "--store", store, "--skip-invalid")
    #expect(result.status == 0)
    #expect(result.stdout == "imported 2 documents into 1 collection, 1 skipped\n")
    #expect(
      result.stderr
        == "reef: skipped p document 2 (offset 28): E11000 duplicate key error collection: p index: _id_ dup key: { _id: 0 }\n"
    )
  }

  @Test("namespaces are selected with --nsInclude and --nsExclude; export writes every format")
  func namespacesAndFormats() throws {
    let dir = try TemporaryDirectory()
    let store = dir.path("s.reef")
    let lines = try dir.write("x.jsonl", text: "{\"_id\": 1}\n{\"_id\": 2}\n")
    for db in ["shop", "admin"] {
      #expect(try reef("import", lines, "--store", store, "--db", db).status == 0)
    }
    #expect(try reef("import", lines, "--store", store).status == 0)
    let archive = dir.path("all.archive")
    #expect(try reef("export", "--store", store, "--out", archive, "--format", "archive", "--db", "misc").status == 0)
    let selected = try reef(
      "import", archive, "--store", dir.path("t.reef"), "--nsInclude", "*.x", "--nsExclude", "admin.*")
    #expect(selected.stdout == "imported 4 documents into 2 collections, 0 skipped\n")
    #expect(try reef("stats", "--store", dir.path("t.reef")).stdout.contains("misc.x: 2 documents"))

    for format in ["dump", "bson", "json", "jsonl"] {
      for gzip in [false, true] {
        let out = dir.path("out-\(format)-\(gzip)") + "/"  // a directory, even for bson and json
        let result = try runProcess(
          reefBinary, ["export", "--store", store, "--out", out, "--format", format] + (gzip ? ["--gzip"] : []))
        #expect(result.status == 0, "\(format) \(gzip): \(result.stderr)")
        let back = try reef("import", out, "--store", dir.path("\(format)-\(gzip).reef"))
        #expect(back.stdout == "imported 6 documents into 3 collections, 0 skipped\n", "\(format) \(gzip)")
      }
    }
    let many = try reef("import", archive, "--store", store, "--collection", "one")
    #expect(many.status == 1)
    #expect(many.stderr.hasPrefix("reef: error: a collection name renames one namespace, but the source has 3"))
  }

  @Test("missing sources and damaged files exit 1 with the reason")
  func dataErrors() throws {
    let dir = try TemporaryDirectory()
    let store = dir.path("s.reef")
    let missing = try reef("import", "/nonexistent/dump.bson", "--store", store)
    #expect(missing.status == 1)
    #expect(missing.stderr.hasPrefix("reef: error: io: cannot open '/nonexistent/dump.bson'"))
    let cut = try dir.write("cut.bson", [20, 0, 0, 0, 2])
    let damaged = try reef("import", cut, "--store", store)
    #expect(damaged.status == 1)
    #expect(damaged.stderr.contains("truncated") && damaged.stderr.hasSuffix("nothing was imported\n"))
    let readOnly = try reef("export", "--store", dir.path("none.reef"), "--out", dir.path("d"))
    #expect(readOnly.status == 1)
    #expect(readOnly.stderr.hasPrefix("reef: error: cannot open the store"))
  }
}
