import ReefBSON
import ReefQuery
import Testing

/// `Query.find(in:options:)` without a sort: how much of the source it reads.
@Suite struct FindScanTests {
  /// Documents {n: 0}, {n: 1}, … that count how many of them were read.
  final class CountingSource: Sequence {
    let count: Int
    var read = 0
    init(count: Int) { self.count = count }
    func makeIterator() -> AnyIterator<Document> {
      var n = 0
      return AnyIterator { [self] in
        guard n < count else { return nil }
        defer { n += 1 }
        read += 1
        var builder = DocumentBuilder()
        builder.append("n", .int32(Int32(n)))
        return builder.document
      }
    }
  }

  @Test func aLimitStopsTheScanAtTheLastMatchNeeded() throws {
    let source = CountingSource(count: 100)
    let query = try Query(filter: try Document(extendedJSON: #"{"n": {"$in": [2, 5, 90]}}"#))
    let found = try query.find(in: source, options: FindOptions(skip: 1, limit: 1))
    #expect(found.map { $0["n"] } == [.int32(5)])
    #expect(source.read == 6)
  }

  @Test func aPredicateLimitStopsTheScanToo() throws {
    let source = CountingSource(count: 100)
    let query = try Query(predicate: "n == 3 OR n == 70 LIMIT(1)")
    #expect(try query.find(in: source).map { $0["n"] } == [.int32(3)])
    #expect(source.read == 4)
  }

  @Test func aLimitOfZeroReadsNothing() throws {
    let source = CountingSource(count: 10)
    let query = try Query(predicate: "n >= 0 LIMIT(0)")
    #expect(try query.find(in: source).isEmpty)
    #expect(source.read == 0)
  }
}
