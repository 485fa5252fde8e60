import Foundation
@_spi(ReefInternal) import ReefBSON
@_spi(ReefInternal) import ReefQuery
import Testing

/// `FindStream` and its sorter: nothing collects every match, and the order is the in-memory
/// sort's.
@Suite struct FindStreamTests {
  /// Counts the documents alive: each document a ``TrackedSource`` makes holds one.
  final class Liveness {
    var alive = 0
    var peak = 0
    var read = 0
  }

  final class Token {
    let liveness: Liveness
    init(_ liveness: Liveness) {
      self.liveness = liveness
      liveness.alive += 1
      liveness.peak = max(liveness.peak, liveness.alive)
    }
    deinit { liveness.alive -= 1 }
  }

  /// Random documents {_id: i, key: 0..<20, text}, each keeping a token alive while it is.
  struct TrackedSource: DocumentSource {
    let documents: [[UInt8]]
    let liveness: Liveness
    var position = 0
    var failAt: Int?

    init(count: Int, liveness: Liveness, seed: UInt64 = 7) {
      var generator = SplitMix(seed: seed)
      documents = (0..<count).map { index in
        var builder = DocumentBuilder()
        builder.append("_id", .int32(Int32(index)))
        builder.append("key", .int32(Int32(generator.next() % 20)))
        builder.append("text", .string(String(repeating: "x", count: Int(generator.next() % 40))))
        return builder.document.bytes
      }
      self.liveness = liveness
    }

    mutating func next() throws -> Document? {
      guard position < documents.count else { return nil }
      if position == failAt { throw SourceFailure() }
      defer { position += 1 }
      liveness.read += 1
      let owner = TrackedBytes(documents[position], Token(liveness))
      return Document(trustedBytesNoCopy: UnsafeRawBufferPointer(owner.buffer), owner: owner)
    }
  }

  /// A document's bytes in memory of their own, with a token alive as long as they are.
  final class TrackedBytes {
    let buffer: UnsafeMutableRawBufferPointer
    let token: Token
    init(_ bytes: [UInt8], _ token: Token) {
      buffer = .allocate(byteCount: bytes.count, alignment: 8)
      buffer.copyBytes(from: bytes)
      self.token = token
    }
    deinit { buffer.deallocate() }
  }

  struct SourceFailure: Error {}

  struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
      state &+= 0x9E37_79B9_7F4A_7C15
      var z = state
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return z ^ (z >> 31)
    }
  }

  func all(_ count: Int) -> [Document] {
    TrackedSource(count: count, liveness: Liveness()).documents.map { try! Document(bytes: $0) }
  }

  @Test func countingAndUnsortedQueriesHoldOneDocumentAtATime() throws {
    let liveness = Liveness()
    let query = try Query(filter: ["key": ["$lt": 10]])
    var stream = FindStream(TrackedSource(count: 5_000, liveness: liveness), query: query)
    let expected = all(5_000).filter(query.matches).count
    #expect(try stream.count() == expected)
    #expect(liveness.read == 5_000)
    #expect(liveness.peak <= 2, "\(liveness.peak) documents were alive at once")
    let unsorted = Liveness()
    var results = FindStream(TrackedSource(count: 5_000, liveness: unsorted), query: query)
    var returned = 0
    while try results.next() != nil { returned += 1 }
    #expect(returned == expected && unsorted.peak <= 2, "\(unsorted.peak) documents were alive at once")
  }

  @Test func aSortWithALimitIsATopKOfSkipPlusLimit() throws {
    let liveness = Liveness()
    let sort = try SortSpecification(["key": -1])
    let options = FindOptions(sort: sort, skip: 7, limit: 5)
    let query = try Query(filter: [:])
    var stream = FindStream(TrackedSource(count: 5_000, liveness: liveness), query: query, options: options)
    var results: [Document] = []
    while let document = try stream.next() { results.append(document) }
    // Stable: equal keys in input order, exactly as the in-memory sort.
    #expect(try results == Array(sort.sorted(all(5_000)).dropFirst(7).prefix(5)))
    #expect(liveness.peak <= 7 + 5 + 1, "\(liveness.peak) documents were alive at once")
  }

  @Test func aSpilledSortGivesTheInMemoryOrderAndRemovesItsFiles() throws {
    let directory = NSTemporaryDirectory() + "reef-find-stream-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let sort = try SortSpecification(["key": 1, "text": -1])
    let memory = SortMemory(limit: 8 * 1024, temporaryDirectory: directory)
    let query = try Query(filter: ["key": ["$ne": 3]])
    var stream = FindStream(
      TrackedSource(count: 3_000, liveness: Liveness()), query: query,
      options: FindOptions(sort: sort, projection: try Projection(["key": 1]), sortMemory: memory))
    let first = try #require(try stream.next())
    let runs = stream.sorters.first?.runsWritten ?? 0
    #expect(runs > 1, "\(runs) runs")
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory).count == 1)
    var results = [first]
    while let document = try stream.next() { results.append(document) }
    let projection = try Projection(["key": 1])
    #expect(try results == sort.sorted(all(3_000).filter(query.matches)).map(projection.apply))
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
  }

  @Test func aSourceErrorStopsTheStreamAndRemovesTheSortsFiles() throws {
    let directory = NSTemporaryDirectory() + "reef-find-stream-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var source = TrackedSource(count: 3_000, liveness: Liveness())
    source.failAt = 2_500
    let options = FindOptions(
      sort: try SortSpecification(["key": 1]), sortMemory: SortMemory(limit: 8 * 1024, temporaryDirectory: directory))
    var stream = FindStream(source, query: try Query(filter: [:]), options: options)
    #expect(throws: SourceFailure.self) { try stream.next() }
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
    #expect(try stream.next() == nil)
  }

  @Test func findInAndArrangeKeepTheirResults() throws {
    let documents = all(400)
    let query = try Query(predicate: "key < 15 SORT(key DESC) DISTINCT(key) LIMIT(6)")
    let options = FindOptions(sort: try SortSpecification(["_id": 1]), skip: 1, limit: 3)
    // The same stages written out: SORT, DISTINCT, LIMIT, then the options.
    let sorted = try SortSpecification(query.sort).sorted(documents.filter(query.matches))
    var seen = Set<BSON>()
    let distinct = sorted.filter { seen.insert($0["key"]!).inserted }
    let expected = Array(try options.sort!.sorted(Array(distinct.prefix(6))).dropFirst(1).prefix(3))
    #expect(try query.find(in: documents, options: options) == expected)
    #expect(try query.arrange(documents.filter(query.matches), options: options) == expected)
  }
}
