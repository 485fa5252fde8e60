import Foundation
import ReefBSON
@_spi(ReefInternal) import ReefQuery
import ReefTestSupport
import Testing

@_spi(ReefInternal) @testable import ReefStore

/// A store's find is a cursor over one snapshot: read as it goes, its transaction ended when it
/// is done, its errors thrown.
@Suite struct CursorTests {
  /// A store with `count` documents {_id: i, n: (i * 7919) % count, group: i % 10}.
  func store(_ count: Int, options: StoreOptions = StoreOptions()) throws -> TemporaryStore {
    let temporary = try TemporaryStore(options: options)
    try temporary.store.collection("items").insertMany(
      (0..<count).map { (index: Int) -> Document in
        ["_id": .int32(Int32(index)), "n": .int32(Int32(index * 7919 % count)), "group": .int32(Int32(index % 10))]
      })
    return temporary
  }

  @Test func aCursorReadsAsItGoesAndSeesOneSnapshot() throws {
    let temporary = try store(100)
    let items = temporary.store.collection("items")
    let cursor = try items.find()
    var ids: [BSON] = []
    for _ in 0..<10 { ids.append(try #require(try cursor.next())["_id"]!) }
    // Read lazily: ten results read at most one document ahead.
    #expect(cursor.explain.documentsExamined <= 11, "\(cursor.explain)")
    // Writes committed while the cursor is open are not seen by it.
    try items.insert(["_id": -1, "n": 0, "group": 0])
    try items.deleteMany(["_id": ["$gte": 50]])
    #expect(try items.count() == 51)
    while let document = try cursor.next() { ids.append(document["_id"]!) }
    #expect(ids == (0..<100).map { .int32(Int32($0)) })
    #expect(cursor.isClosed)
    #expect(try items.find().toArray().count == 51)
  }

  @Test func cursorsEndTheirTransactionsWhenReadClosedOrReleased() throws {
    // With 8 reader slots, cursors that kept their read transactions would run out of them.
    let temporary = try store(50, options: StoreOptions(maximumReaders: 8))
    let items = temporary.store.collection("items")
    for round in 0..<200 {
      switch round % 4 {
      case 0: _ = try items.find().toArray()  // read to the end
      case 1: _ = try items.find().next()  // released after one result
      case 2:
        let cursor = try items.find(["group": 3])
        _ = try cursor.next()
        cursor.close()
        #expect(try cursor.next() == nil)
      default: _ = try items.find(options: FindOptions(sort: try SortSpecification(["n": -1]), limit: 3)).count()
      }
      try items.updateOne(["_id": 0], ["$inc": ["round": 1]])  // a writer goes on meanwhile
    }
    let open = (0..<4).map { _ in try? items.find() }
    #expect(open.allSatisfy { $0 != nil })
    #expect(try items.findOne(["_id": 0])?["round"] == .int32(200))
  }

  @Test func aTransactionsCursorThrowsWhenReadAfterItsTransaction() throws {
    let temporary = try store(20)
    let cursor = try temporary.store.read { transaction in
      let cursor = try transaction.collection("items").find()
      #expect(try cursor.next()?["_id"] == .int32(0))
      return cursor
    }
    #expect(throws: StoreError.self) { try cursor.next() }
    do {
      _ = try cursor.next()
      Issue.record("a cursor was read after its transaction ended without an error")
    } catch {
      #expect(error.kind == .storage && error.message.contains("after its transaction ended"), "\(error)")
    }
  }

  @Test func aWriteTransactionsFindReadsItsResultsAtOnce() throws {
    let temporary = try store(30)
    try temporary.store.write { transaction in
      let items = transaction.collection("items")
      let cursor = try items.find(["group": 1])
      // Deleting what the cursor would read next does not move it: its results were read.
      try items.deleteMany(["group": 1])
      #expect(try cursor.toArray().map { $0["_id"]! } == [1, 11, 21].map { BSON.int32($0) })
    }
  }

  @Test func aDamagedDocumentIsAThrownErrorAndEndsTheIteration() throws {
    let temporary = try store(20)
    try StoredDocumentTests().damage(temporary.store, "items", id: .int32(7)) { value in
      var damaged = value
      damaged[damaged.count - 3] ^= 0x10
      return damaged
    }
    let cursor = try temporary.store.collection("items").find()
    var read = 0
    do {
      while try cursor.next() != nil { read += 1 }
      Issue.record("a damaged document was read without an error")
    } catch {
      #expect(error.kind == .corrupt, "\(error)")
    }
    #expect(read == 7)
    #expect(cursor.isClosed)
    // The same error again, as a stream reader does.
    #expect(throws: StoreError.self) { try cursor.next() }
    // A for-in loop gets the error as its last element.
    let results = Array(try temporary.store.collection("items").find())
    #expect(results.count == 8)
    guard case .failure(let error) = results.last else {
      Issue.record("expected the last element to be the error, found \(String(describing: results.last))")
      return
    }
    #expect(error.kind == .corrupt)
  }

  @Test func aSortWithALimitKeepsOnlySkipPlusLimitDocuments() throws {
    let temporary = try store(3_000)
    let items = temporary.store.collection("items")
    let sort = try SortSpecification(["group": -1, "n": 1])
    let cursor = try items.find(options: FindOptions(sort: sort, skip: 5, limit: 10))
    let top = try cursor.toArray()
    let expected = Array(try sort.sorted(try items.find().toArray()).dropFirst(5).prefix(10))
    #expect(top == expected)
    #expect(cursor.sorters.isEmpty)  // ended: let go of
    let counted = try items.find(options: FindOptions(sort: sort, skip: 5, limit: 10))
    _ = try counted.next()
    let held = counted.sorters.map(\.maximumHeld)
    #expect(held == [15], "the top-k held \(held) documents")
  }

  @Test func aSortOverItsMemorySpillsSortedRunsAndRemovesThem() throws {
    let temporary = try store(4_000)
    let items = temporary.store.collection("items")
    let spillDirectory = temporary.directory + "/spill"
    try FileManager.default.createDirectory(atPath: spillDirectory, withIntermediateDirectories: true)
    let sort = try SortSpecification(["group": 1])  // many equal keys: the order of equals matters
    let memory = SortMemory(limit: 4096, temporaryDirectory: spillDirectory)
    let cursor = try items.find(options: FindOptions(sort: sort, sortMemory: memory))
    let first = try #require(try cursor.next())
    let runs = cursor.sorters.first?.runsWritten ?? 0
    #expect(runs > 64, "\(runs) runs: more than a merge opens at once (64) exercise the merge of merges")
    #expect(try FileManager.default.contentsOfDirectory(atPath: spillDirectory).count == 1)
    let spilled = try [first] + cursor.toArray()
    #expect(try spilled == sort.sorted(try items.find().toArray()))
    #expect(try FileManager.default.contentsOfDirectory(atPath: spillDirectory).isEmpty)
    // Closed before the end, or released: the files go too.
    let closed = try items.find(options: FindOptions(sort: sort, sortMemory: memory))
    _ = try closed.next()
    closed.close()
    _ = try items.find(options: FindOptions(sort: sort, sortMemory: memory)).next()
    #expect(try FileManager.default.contentsOfDirectory(atPath: spillDirectory).isEmpty)
    // Without disk use, a sort over its memory is an error that says so.
    let refused = FindOptions(sort: sort, sortMemory: SortMemory(limit: 4096, allowDiskUse: false))
    do {
      _ = try items.find(options: refused).next()
      Issue.record("a sort over its memory limit without disk use did not fail")
    } catch {
      #expect(error.kind == .invalidQuery && error.message.contains("4096 bytes"), "\(error)")
    }
  }

  @Test func countAndIndexPlansGiveWhatTheyGaveBefore() throws {
    let temporary = try store(500)
    let items = temporary.store.collection("items")
    try items.createIndex(["group": 1])
    #expect(try items.count(["group": 4]) == 50)
    #expect(try items.count(["group": ["$in": [4, 2]]]) == 100)
    let explain = try items.explain(["group": ["$gte": 8]], options: FindOptions(limit: 30))
    #expect(explain.index == "group_1" && explain.returned == 30, "\(explain)")
    // Several ranges come back in `_id` order, each document once.
    let ids = try items.find(["group": ["$in": [9, 1]]]).toArray().map { $0["_id"]! }
    let expected: [BSON] = (0..<500).filter { (n: Int) in n % 10 == 1 || n % 10 == 9 }.map { .int32(Int32($0)) }
    #expect(ids == expected)
  }

  /// A regular expression past its match limit ends a scan, a count, an index plan's reads and
  /// forEach with an error that carries the query error (its kind, the pattern and the limit).
  @Test func aRegexPastItsLimitEndsTheQueryWithAnError() throws {
    let temporary = try store(20)
    let items = temporary.store.collection("items")
    try items.insert(["_id": 100, "group": 3, "s": .string(String(repeating: "a", count: 40) + "ba")])
    try items.createIndex(["group": 1])
    let hostile: Document = ["s": ["$regex": "^(a|aa)+b$"]]
    let throughIndex: Document = ["group": 3, "s": ["$regex": "^(a|aa)+b$"]]
    func expectLimit(_ what: String, _ body: () throws -> Void) {
      do {
        try body()
        Issue.record("\(what): no error")
      } catch let error as StoreError {
        #expect(error.kind == .invalidQuery, "\(what): \(error)")
        #expect(error.queryError?.kind == .regexLimit, "\(what): \(error)")
        #expect(error.message.contains("/^(a|aa)+b$/") && error.message.contains("match limit"), "\(what): \(error)")
      } catch {
        Issue.record("\(what): \(error)")
      }
    }
    expectLimit("find") { _ = try items.find(hostile).toArray() }
    expectLimit("count") { _ = try items.count(hostile) }
    expectLimit("find through an index") { _ = try items.find(throughIndex).toArray() }
    expectLimit("forEach") { try temporary.store.read { try $0.collection("items").forEach(hostile) { _ in true } } }
    // The same pattern on strings it decides quickly is a query like any other.
    try items.deleteMany(["_id": 100])
    #expect(try items.count(hostile) == 0)
  }
}
