import ReefBSON
import ReefQuery
import ReefTestSupport
import Testing

@testable import ReefStore

@Suite struct IndexTests {
  /// A database created and dropped in one transaction: LMDB closes its handle and gives the
  /// number to the next database opened, so the store must not keep the old name for it (a
  /// later write under that name landed in another collection's database).
  @Test func anIndexCreatedAndDroppedInOneTransactionLeavesNoStaleHandle() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    try store.write { transaction in
      let c = transaction.collection("c")
      try c.insert(document(#"{"_id": 1, "a": 5}"#))
      try c.createIndex(document(#"{"a": 1}"#))
      #expect(try c.dropIndex("a_1"))
    }
    try store.collection("d").insert(document(#"{"_id": "in d", "b": 1}"#))
    try store.collection("c").createIndex(document(#"{"a": 1}"#))
    try store.collection("c").insert(document(#"{"_id": 2, "a": 6}"#))
    #expect(try store.collection("d").find([:]).toArray().map { $0["_id"] } == [.string("in d")])
    #expect(try store.collection("c").find(["a": 6]).toArray().map { $0["_id"] } == [.int32(2)])
    #expect(try store.collection("c").count() == 2)
  }

  /// A duplicate key names the index and the values of the entry that collided: on insert
  /// through a compound multikey index, and when a unique index is built over existing documents.
  @Test func duplicateKeyMessagesNameTheCollidingValues() throws {
    let temporary = try TemporaryStore()
    let people = temporary.store.collection("people")
    try people.createIndex(document(#"{"team": 1, "tags": -1}"#), unique: true)
    try people.insert(document(#"{"_id": 1, "team": "red", "tags": ["x", "y"]}"#))
    do {
      try people.insert(document(#"{"_id": 2, "team": "red", "tags": ["z", "y"]}"#))
      Issue.record("a duplicate unique key was accepted")
    } catch let error as StoreError {
      #expect(error.kind == .duplicateKey)
      #expect(
        error.message.hasSuffix(#"index: team_1_tags_-1 dup key: { team: "red", tags: "y" }"#), "\(error.message)")
    }
    let pets = temporary.store.collection("pets")
    try pets.insert(document(#"{"_id": 1, "name": "Rex", "age": 3}"#))
    try pets.insert(document(#"{"_id": 2, "name": "Rex", "age": {"$numberDouble": "3.0"}}"#))
    do {
      try pets.createIndex(document(#"{"name": 1, "age": 1}"#), unique: true)
      Issue.record("a unique index was built over duplicates")
    } catch let error as StoreError {
      #expect(error.kind == .duplicateKey)
      #expect(error.message.contains(#"dup key: { name: "Rex", age: "#), "\(error.message)")
    }
  }

  @Test func uniqueSparseMultikeyAndParallelArrays() throws {
    let temporary = try TemporaryStore()
    let people = temporary.store.collection("people")
    try people.createIndex(document(#"{"email": 1}"#), unique: true, sparse: true)
    try people.insert(document(#"{"_id": 1, "email": "a@x"}"#))
    try people.insert(document(#"{"_id": 2}"#))
    try people.insert(document(#"{"_id": 3}"#))  // sparse: several documents without an email
    do {
      try people.insert(document(#"{"_id": 4, "email": "a@x"}"#))
      Issue.record("a duplicate unique key was accepted")
    } catch let error as StoreError {
      #expect(error.kind == .duplicateKey)
      #expect(error.message.contains("email_1") && error.message.contains("a@x"), "\(error)")
    }
    #expect(try people.count() == 3)

    try people.createIndex(document(#"{"tags": 1, "n": 1}"#))
    try people.insert(document(#"{"_id": 5, "tags": ["a", "b"], "n": 1}"#))
    do {
      try people.createIndex(document(#"{"tags": 1, "list": 1}"#))
      try people.insert(document(#"{"_id": 6, "tags": ["a"], "list": [1, 2]}"#))
      Issue.record("parallel arrays were indexed")
    } catch let error as StoreError {
      #expect(error.message.contains("parallel arrays"), "\(error)")
    }
    let explain = try people.explain(document(#"{"tags": "b"}"#))
    #expect(explain.index == "tags_1_n_1")
    #expect(explain.returned == 1)
    #expect(try people.listIndexes().map { $0["name"]! } == ["_id_", "email_1", "tags_1_n_1", "tags_1_list_1"])
    #expect(try people.dropIndex("email_1"))
    #expect(try people.insert(document(#"{"_id": 7, "email": "a@x"}"#)) == 7)
  }

  @Test func indexesAreBuiltFromExistingDocumentsAndUsedForRangesAndIn() throws {
    let temporary = try TemporaryStore()
    let numbers = temporary.store.collection("numbers")
    try numbers.insertMany(
      try (0..<200).map { try document(#"{"_id": \#($0), "v": \#($0 % 50), "s": "k\#($0 % 7)"}"#) })
    try numbers.createIndex(document(#"{"v": 1}"#))
    let range = try numbers.explain(document(#"{"v": {"$gte": 45}}"#))
    #expect(range.index == "v_1")
    #expect(range.returned == 20)
    #expect(range.documentsExamined == 20)
    let below = try numbers.explain(document(#"{"v": {"$lt": 2}}"#))
    #expect(below.returned == 8 && below.documentsExamined == 8)
    let list = try numbers.explain(document(#"{"v": {"$in": [3, 4.0, {"$numberLong": "5"}]}}"#))
    #expect(list.returned == 12 && list.documentsExamined == 12)
    let scan = try numbers.explain(document(#"{"s": "k1"}"#))
    #expect(scan.index == nil && scan.documentsExamined == 200)
  }

  /// A Realm predicate's comparisons (`ANY`, its default) read through an index as a filter's
  /// do; `ALL` and `NONE` scan (they hold for documents the index does not list).
  @Test func realmPredicatesUseIndexesForAnyButNotAllOrNone() throws {
    let temporary = try TemporaryStore()
    let contacts = temporary.store.collection("contacts")
    try contacts.insertMany(
      try (0..<100).map {
        try document(#"{"_id": \#($0), "address": {"city": "c\#($0 % 10)", "street": "s\#(1000 - $0)"}, "n": \#($0)}"#)
      })
    try contacts.createIndex(document(#"{"address.city": 1}"#))
    try contacts.createIndex(document(#"{"n": 1}"#))
    func run(_ predicate: String, _ arguments: [BSON] = []) throws -> (ids: [BSON], explain: Explain) {
      let cursor = try contacts.find(predicate: predicate, arguments: arguments)
      let ids = try cursor.toArray().map { $0["_id"] ?? .null }
      return (ids, cursor.explain)
    }
    let equal = try run("address.city == $0 SORT(address.street ASC)", [.string("c3")])
    #expect(equal.explain.index == "address.city_1")
    #expect(equal.explain.documentsExamined == 10)
    #expect(equal.ids == [93, 83, 73, 63, 53, 43, 33, 23, 13, 3].map { BSON.int32($0) })
    let range = try run("n >= 95")
    #expect(range.explain.index == "n_1" && range.explain.documentsExamined == 5 && range.ids.count == 5)
    let list = try run("n IN {1, 2, 3}")
    #expect(list.explain.index == "n_1" && list.ids == [1, 2, 3].map { BSON.int32($0) })
    let id = try run("_id == 7")
    #expect(id.explain.index == "_id_" && id.ids == [.int32(7)])
    let all = try run("ALL n == 3")
    #expect(all.explain.index == nil && all.ids == [.int32(3)])
    let none = try run("NONE n == 3")
    #expect(none.explain.index == nil && none.ids.count == 99)
  }

  /// Every query spec case gives the same results with indexes on its fields as without.
  @Test(arguments: loadQuerySpecs().map(\.name))
  func resultsAreIdenticalWithAndWithoutIndexes(_ name: String) throws {
    let file = try #require(loadQuerySpecs().first { $0.name == name })
    let temporary = try TemporaryStore()
    let plain = temporary.store.collection("plain")
    let indexed = temporary.store.collection("indexed")
    try plain.insertMany(file.documents)
    try indexed.insertMany(file.documents)
    var paths = Set<String>()
    for testCase in file.cases {
      if let filter = testCase.filter { collectPaths(filter, into: &paths) }
      if let predicate = testCase.predicate,
        let query = try? Query(predicate: predicate, arguments: testCase.arguments)
      {
        collectPaths(query.node, into: &paths)
      }
    }
    for path in paths.sorted() {
      // Parallel arrays cannot be indexed together; single-field indexes always can.
      try indexed.createIndex(Document([(path, .int32(1))]))
    }
    var usedIndex = 0
    for testCase in file.cases where testCase.error == nil {
      guard let filter = testCase.filter else { continue }
      var options = FindOptions(skip: testCase.skip, limit: testCase.limit)
      if let sort = testCase.sort { options.sort = try SortSpecification(sort) }
      let expected = try plain.find(filter, options: options).toArray()
      let found = try indexed.find(filter, options: options).toArray()
      #expect(found == expected, "\(testCase.name)")
      if try indexed.explain(filter).index != nil { usedIndex += 1 }
    }
    // Realm predicates: `ANY` (their default) narrows through an index as MongoDB's rule does.
    for testCase in file.cases where testCase.error == nil {
      guard let predicate = testCase.predicate else { continue }
      var options = FindOptions(skip: testCase.skip, limit: testCase.limit)
      if let sort = testCase.sort { options.sort = try SortSpecification(sort) }
      let expected = try plain.find(predicate: predicate, arguments: testCase.arguments, options: options).toArray()
      let cursor = try indexed.find(predicate: predicate, arguments: testCase.arguments, options: options)
      let found = try cursor.toArray()
      #expect(found == expected, "\(testCase.name)")
      if cursor.explain.index != nil { usedIndex += 1 }
    }
    print("\(name): \(usedIndex) filters and predicates ran through an index")
  }

  /// The paths of a compiled query's tests.
  func collectPaths(_ node: QueryNode, into paths: inout Set<String>) {
    switch node {
    case .and(let children), .or(let children), .nor(let children):
      for child in children { collectPaths(child, into: &paths) }
    case .not(let child): collectPaths(child, into: &paths)
    case .match(let path, _, _): paths.insert(path.description)
    default: break
    }
  }

  func collectPaths(_ filter: Document, into paths: inout Set<String>) {
    for element in filter {
      if element.key.hasPrefix("$") {
        if case .array(let children) = element.value {
          for case .document(let child) in children { collectPaths(child, into: &paths) }
        }
      } else if !element.key.isEmpty {
        paths.insert(element.key)
      }
    }
  }
}

@Suite struct PrimaryKeyLookupTests {
  /// `{_id: value}` reads one document by its primary key and finds what a scan finds.
  @Test func idEqualityReadsOneDocumentAndAgreesWithAScan() throws {
    let temporary = try TemporaryStore()
    let things = temporary.store.collection("things")
    let ids = [
      #"1"#, #"{"$numberLong": "2"}"#, #"2.5"#, #""three""#, #"{"$oid": "5f0000000000000000000004"}"#,
      #"{"a": 5}"#, #"null"#, #"true"#,
    ]
    for (position, id) in ids.enumerated() {
      try things.insert(document(#"{"_id": \#(id), "n": \#(position)}"#))
    }
    let probes = ids + [#"1.0"#, #"{"$numberLong": "1"}"#, #"2"#, #"{"$numberDecimal": "2.50"}"#, #"4"#, #""four""#]
    for probe in probes {
      let direct = try document(#"{"_id": \#(probe)}"#)
      let scanned = try document(#"{"$or": [{"_id": \#(probe)}]}"#)
      let expected = try things.find(scanned).toArray()
      #expect(try things.find(direct).toArray() == expected, "\(probe)")
      #expect(try things.findOne(direct) == expected.first, "\(probe)")
      let explain = try things.explain(direct)
      #expect(explain.index == "_id_", "\(probe)")
      #expect(explain.documentsExamined == expected.count && explain.documentsExamined <= 1, "\(probe)")
    }
    // The rest of the query is still tested on the document found.
    #expect(try things.find(document(#"{"_id": 1, "n": 0}"#)).toArray().count == 1)
    #expect(try things.find(document(#"{"_id": 1, "n": 1}"#)).toArray().isEmpty)
    #expect(try things.find(document(#"{"$and": [{"n": 3}, {"_id": "three"}]}"#)).toArray().count == 1)
    #expect(try things.explain(document(#"{"_id": {"$gt": 1}}"#)).index == nil)
  }

  @Test func forEachVisitsMatchingDocumentsInIdOrderAndStops() throws {
    let temporary = try TemporaryStore()
    let numbers = temporary.store.collection("numbers")
    try numbers.insertMany(try (0..<50).reversed().map { try document(#"{"_id": \#($0), "even": \#($0 % 2 == 0)}"#) })
    var seen: [BSON] = []
    try temporary.store.read { transaction in
      try transaction.collection("numbers").forEach(document(#"{"even": true}"#)) { document in
        seen.append(document["_id"]!)
        return seen.count < 10
      }
    }
    #expect(seen == (0..<10).map { .int32(Int32($0 * 2)) })
    struct Stop: Error {}
    #expect(throws: Stop.self) {
      try temporary.store.read { transaction in
        try transaction.collection("numbers").forEach { _ in throw Stop() }
      }
    }
    var none = 0
    try temporary.store.read { transaction in
      try transaction.collection("missing").forEach { _ in
        none += 1
        return true
      }
    }
    #expect(none == 0)
  }
}
