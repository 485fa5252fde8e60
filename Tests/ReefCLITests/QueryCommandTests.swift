import Foundation
import ReefBSON
import ReefTestSupport
import Testing

/// `reef query`, end to end through the built binary.
@Suite struct QueryCommandTests {
  /// Every case of `Specs/query`, run through `reef query` on a BSON file of the case's documents.
  @Test(arguments: loadQuerySpecs().map(\.name))
  func specFileThroughCLI(_ name: String) throws {
    let file = try #require(loadQuerySpecs().first { $0.name == name })
    let directory = try TemporaryDirectory()
    let input = try directory.write("documents.bson", stream(file.documents))
    for testCase in file.cases {
      var common: [String] = []
      if let sort = testCase.sort { common += ["--sort", sort.extendedJSON(.canonical)] }
      if testCase.skip > 0 { common += ["--skip", String(testCase.skip)] }
      if let limit = testCase.limit { common += ["--limit", String(limit)] }
      var projection: [String] = []
      if let document = testCase.projection { projection = ["--project", document.extendedJSON(.canonical)] }
      var runs: [(String, [String])] = []
      if let filter = testCase.filter { runs.append(("filter", ["--filter", filter.extendedJSON(.canonical)])) }
      if let predicate = testCase.predicate {
        runs.append(
          (
            "predicate",
            ["--where", predicate] + testCase.arguments.flatMap { ["--arg", $0.extendedJSON(.canonical)] }
          ))
      }
      for (language, arguments) in runs {
        let result = try runProcess(reefBinary, ["query", input] + arguments + common + projection)
        let label = "\(testCase.name) [\(language)]"
        if let error = testCase.error {
          #expect(result.status == 1, "\(label): exit \(result.status)")
          #expect(result.stderr.contains(error), "\(label): stderr \(result.stderr)")
          continue
        }
        guard result.status == 0 else {
          Issue.record("\(label): exit \(result.status): \(result.stderr)")
          continue
        }
        let documents = try result.stdoutLines.map { try Document(extendedJSON: String($0)) }
        if let expected = testCase.expected {
          // The _ids before projection: a projection may drop them.
          var ids = documents.map { $0["_id"] ?? .null }
          if !projection.isEmpty {
            let unprojected = try runProcess(reefBinary, ["query", input] + arguments + common)
            ids = try unprojected.stdoutLines.map { try Document(extendedJSON: String($0))["_id"] ?? .null }
          }
          #expect(ids == expected, "\(label)")
        }
        if let expectedDocuments = testCase.expectedDocuments {
          #expect(documents == expectedDocuments, "\(label)")
        }
      }
    }
  }

  func contacts(in directory: TemporaryDirectory) throws -> String {
    try directory.write(
      "contacts.bson",
      stream(
        try [
          #"{"_id": 1, "name": "Ann", "address": {"city": "Los Angeles"}}"#,
          #"{"_id": 2, "name": "Bob", "addresses": [{"city": "Paris"}, {"city": "Los Angeles"}]}"#,
          #"{"_id": 3, "name": "Cy", "address": {"city": "Rome"}}"#,
        ].map { try Document(extendedJSON: $0) }))
  }

  @Test func countFormatsAndTheCanonicalRealmExample() throws {
    let directory = try TemporaryDirectory()
    let input = try contacts(in: directory)
    let realm = try reef(
      "query", input, "--where", "address.city = %@", "--arg", #""Los Angeles""#, "--format", "relaxed")
    #expect(realm.status == 0)
    #expect(realm.stdout == #"{"_id":1,"name":"Ann","address":{"city":"Los Angeles"}}"# + "\n")
    let count = try reef(
      "query", input, "--filter", #"{"$or": [{"address.city": "Los Angeles"}, {"addresses.city": "Los Angeles"}]}"#,
      "--count")
    #expect(count.stdout == "2\n")
    let all = try reef("query", input, "--count")
    #expect(all.stdout == "3\n")
    let bson = try reef("query", input, "--filter", #"{"_id": {"$gte": 2}}"#, "--format", "bson")
    let expected = try [
      "{\"_id\": 2, \"name\": \"Bob\", \"addresses\": [{\"city\": \"Paris\"}, {\"city\": \"Los Angeles\"}]}",
      #"{"_id": 3, "name": "Cy", "address": {"city": "Rome"}}"#,
    ]
    .map { try Document(extendedJSON: $0) }
    #expect(bson.stdoutBytes == stream(expected))
    let canonical = try reef("query", input, "--filter", #"{"_id": 3}"#, "--project", #"{"_id": 0, "name": 1}"#)
    #expect(canonical.stdout == #"{"name":"Cy"}"# + "\n")
    let sorted = try reef("query", input, "--sort", #"{"name": -1}"#, "--skip", "1", "--limit", "1", "--count")
    #expect(sorted.stdout == "1\n")
  }

  /// The parallel scan gives the one-thread answer in stream order, for output, sorting and
  /// counting, over a stream of many chunks; --threads outside 1…64 is a usage error.
  @Test func everyThreadCountPrintsTheSameResultsInStreamOrder() throws {
    let directory = try TemporaryDirectory()
    let input = try directory.write("many.bson", stream(sampleDocuments(count: 40_000)))
    let queries: [[String]] = [
      ["--filter", #"{"score": {"$gte": 100}}"#],
      ["--where", "name ENDSWITH '7'", "--format", "relaxed"],
      ["--filter", #"{"_id": {"$mod": [3, 0]}}"#, "--sort", #"{"score": -1}"#, "--limit", "25"],
      ["--count"],
    ]
    for arguments in queries {
      let one = try runProcess(reefBinary, ["query", input, "--threads", "1"] + arguments)
      #expect(one.status == 0, "\(arguments): \(one.stderr)")
      #expect(!one.stdout.isEmpty)
      for threads in ["2", "5"] {
        let many = try runProcess(reefBinary, ["query", input, "--threads", threads] + arguments)
        #expect(many.status == 0)
        #expect(many.stdout == one.stdout, "\(arguments) on \(threads) threads")
      }
    }
    for bad in ["0", "65"] {
      let result = try reef("query", input, "--threads", bad, "--count")
      #expect(result.status == 64)
      #expect(result.stderr.contains("--threads must be between 1 and 64, found \(bad)"), "\(result.stderr)")
    }
  }

  @Test func compileErrorsExitOneWithThePosition() throws {
    let directory = try TemporaryDirectory()
    let input = try contacts(in: directory)
    let predicate = try reef("query", input, "--where", "name == ")
    #expect(predicate.status == 1)
    #expect(predicate.stderr.contains("column"), "\(predicate.stderr)")
    let json = try reef("query", input, "--filter", #"{"name": }"#)
    #expect(json.status == 1)
    #expect(json.stderr.contains("line 1, column 10"), "\(json.stderr)")
    let operatorError = try reef("query", input, "--filter", #"{"tags": {"$size": "a"}}"#)
    #expect(operatorError.status == 1)
    #expect(operatorError.stderr.contains("tags.$size"), "\(operatorError.stderr)")
    let unsupported = try reef("query", input, "--filter", #"{"$where": "1"}"#)
    #expect(unsupported.stderr.contains("$where"))
    let argument = try reef("query", input, "--where", "name == $0", "--arg", "{bad")
    #expect(argument.status == 1)
    #expect(argument.stderr.contains("--arg 1"), "\(argument.stderr)")
  }

  @Test func usageErrorsExit64() throws {
    let directory = try TemporaryDirectory()
    let input = try contacts(in: directory)
    #expect(try reef("query", input, "--filter", "{}", "--where", "TRUEPREDICATE").status == 64)
    #expect(try reef("query", input, "--arg", "1").status == 64)
    #expect(try reef("query", input, "--limit", "-1").status == 64)
    #expect(try reef("query", input, "--format", "xml").status == 64)
  }

  @Test func aSortPastSortMemorySpillsToTempDirAndGivesTheSameResults() throws {
    let directory = try TemporaryDirectory()
    // 20,000 documents: over 1 MB with the sort's overhead per document, so --sort-memory 1 spills.
    let input = try directory.write("many.bson", stream(sampleDocuments(count: 20_000)))
    let spill = directory.url.appendingPathComponent("spill").path
    try FileManager.default.createDirectory(atPath: spill, withIntermediateDirectories: true)
    // Ties on "active" keep the input order, in memory and merged from runs alike.
    let sort = #"{"active": 1, "address.city": -1}"#
    let inMemory = try reef("query", input, "--sort", sort, "--format", "bson")
    let spilled = try reef(
      "query", input, "--sort", sort, "--format", "bson", "--sort-memory", "1", "--temp-dir", spill)
    #expect(inMemory.status == 0 && spilled.status == 0, "\(spilled.stderr)")
    #expect(spilled.stdoutBytes.count == inMemory.stdoutBytes.count)
    #expect(spilled.stdoutBytes == inMemory.stdoutBytes)
    #expect(try FileManager.default.contentsOfDirectory(atPath: spill).isEmpty)
    let top = try reef("query", input, "--sort", sort, "--limit", "3", "--format", "bson")
    #expect(top.stdoutBytes == Array(inMemory.stdoutBytes.prefix(top.stdoutBytes.count)))
    #expect(try reef("query", input, "--sort", sort, "--sort-memory", "0").status == 64)
    let missing = try reef("query", input, "--sort", sort, "--sort-memory", "1", "--temp-dir", spill + "/none")
    #expect(missing.status == 1 && missing.stderr.contains(spill + "/none"), "\(missing.stderr)")
  }

  @Test func malformedStreamPrintsTheMatchesBeforeTheBadDocument() throws {
    let directory = try TemporaryDirectory()
    var bytes = stream(sampleDocuments(count: 3))
    bytes += [0x10, 0, 0, 0, 0x02, 0x61, 0]  // a truncated fourth document
    let input = try directory.write("bad.bson", bytes)
    let result = try reef("query", input, "--filter", #"{"active": true}"#, "--format", "relaxed")
    #expect(result.status == 1)
    #expect(result.stdoutLines.count == 2)
    #expect(result.stderr.contains("document 3"), "\(result.stderr)")
  }

  @Test func gzipInput() throws {
    let directory = try TemporaryDirectory()
    let bytes = try gzipped(stream(sampleDocuments(count: 50)), in: directory)
    let input = try directory.write("people.bson.gz", bytes)
    let result = try reef("query", input, "--filter", #"{"address.city": "London"}"#, "--count")
    #expect(result.status == 0)
    #expect(result.stdout == "17\n")
  }
}
