import ReefBSON
import ReefQuery
import ReefTestSupport
import Testing

@testable import ReefStore

/// Numeric path components and `$elemMatch` through the store: every case of the two spec files
/// gives its expected `_id`s by a collection scan and with an index on each path it names, and
/// the planner does read some of them through an index (MongoDB's jstests for these paths
/// also run with and without indexes: match_numeric_components.js, indexv.js).
@Suite struct ArrayPathIndexTests {
  @Test(arguments: ["numeric_paths.json", "elemmatch_arrays.json"])
  func expectedResultsWithAndWithoutIndexes(_ name: String) throws {
    let file = try #require(loadQuerySpecs().first { $0.name == name })
    let temporary = try TemporaryStore()
    let plain = temporary.store.collection("plain")
    let indexed = temporary.store.collection("indexed")
    try plain.insertMany(file.documents)
    try indexed.insertMany(file.documents)
    var paths = Set<String>()
    for testCase in file.cases {
      for element in testCase.filter ?? Document() where !element.key.hasPrefix("$") { paths.insert(element.key) }
    }
    for path in paths.sorted() where path != "_id" {
      try indexed.createIndex(Document([(path, .int32(1))]))
    }
    var throughAnIndex = 0
    for testCase in file.cases {
      guard let filter = testCase.filter else { continue }
      guard let expected = testCase.expected else {
        // An error case: both collections refuse the filter.
        #expect(throws: StoreError.self, "\(testCase.name) [scan]") { try plain.find(filter).toArray() }
        #expect(throws: StoreError.self, "\(testCase.name) [indexed]") { try indexed.find(filter).toArray() }
        continue
      }
      let scanned = try plain.find(filter).toArray().map { $0["_id"] ?? .null }
      let cursor = try indexed.find(filter)
      let found = try cursor.toArray().map { $0["_id"] ?? .null }
      #expect(scanned == expected, "\(testCase.name) [scan]")
      #expect(found == expected, "\(testCase.name) [\(cursor.explain.index ?? "no index")]")
      if cursor.explain.index != nil { throughAnIndex += 1 }
    }
    // Equalities, ranges and $in on the numeric paths (v.0, tags.0, a.1.1, ...) go through their
    // indexes; of the $elemMatch file's filters (mostly $elemMatch or $all on x, which scan), one
    // does.
    if name == "numeric_paths.json" {
      #expect(throughAnIndex >= 15, "\(name): \(throughAnIndex) through an index")
    } else {
      #expect(throughAnIndex == 1, "\(name): \(throughAnIndex) through an index")
    }
  }

  /// An index on a positional path holds the elements of an array found there (Reef's keys are a
  /// superset of MongoDB's, which keeps such an array as one key): every candidate is tested
  /// with the whole query, so an array at index 0 never matches one of its elements.
  @Test func aPositionalIndexDoesNotMatchInsideTheArrayItNames() throws {
    let temporary = try TemporaryStore()
    let events = temporary.store.collection("events")
    try events.createIndex(document(#"{"tags.0": 1}"#))
    try events.insert(document(#"{"_id": 1, "tags": [["ssl", "security"], "warning"]}"#))
    try events.insert(document(#"{"_id": 2, "tags": ["security", "ssl"]}"#))
    let explain = try events.explain(document(#"{"tags.0": "security"}"#))
    #expect(explain.index == "tags.0_1")
    #expect(explain.documentsExamined == 2 && explain.returned == 1)
    #expect(try events.find(document(#"{"tags.0": "security"}"#)).toArray().map { $0["_id"] } == [.int32(2)])
    #expect(try events.find(document(#"{"tags.0": "ssl"}"#)).toArray().isEmpty)
  }
}
