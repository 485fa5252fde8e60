import Foundation
@_spi(ReefInternal) import ReefBSON
@_spi(ReefInternal) import ReefQuery
import ReefTestSupport
import Testing

/// `ParallelStreamScan` against the one-thread path it replaces (a `BSONStreamReader` whose
/// documents are tested one by one): the same matches in the same order, the same skipped
/// documents and the same error, with its index, offset and message, on any number of threads and
/// any chunk size.
@Suite struct ParallelStreamScanTests {
  /// What a scan delivered: the matches' bytes, the skipped documents' errors, the error it
  /// ended with, in order.
  enum Event: Equatable, CustomStringConvertible {
    case match([UInt8])
    case skipped(String)
    case failed(String)

    var description: String {
      switch self {
      case .match(let bytes): "match(\(bytes.count) bytes)"
      case .skipped(let error): "skipped(\(error))"
      case .failed(let error): "failed(\(error))"
      }
    }
  }

  /// An error as the tools print it, with its kind, index, offset and key path.
  static func describe(_ error: Error) -> String {
    if let error = error as? BSONError {
      return "\(error.kind) #\(error.documentIndex ?? -1) @\(error.offset ?? -1) \(error.keyPath): \(error.message)"
    }
    if let error = error as? QueryError { return "query \(error.kind): \(error.message)" }
    return "\(error)"
  }

  /// The one-thread reference: a reader, each document tested as it comes.
  static func sequential(_ path: String, _ query: Query, skipping: Bool, options: ValidationOptions = .default)
    -> [Event]
  {
    var events: [Event] = []
    do {
      var reader = try BSONStreamReader(path: path, compression: .automatic, options: options)
      if skipping { reader.onDamagedDocument = { events.append(.skipped(describe($0))) } }
      while let document = try reader.next() {
        if try query.evaluate(document) { events.append(.match(document.bytes)) }
      }
    } catch {
      events.append(.failed(describe(error)))
    }
    return events
  }

  static func parallel(
    _ path: String, _ query: Query, skipping: Bool, threads: Int, chunkSize: Int,
    options: ValidationOptions = .default
  ) -> [Event] {
    var events: [Event] = []
    do {
      let scan = ParallelStreamScan(
        source: try ByteSource(path: path), options: options, query: query, threads: threads, chunkSize: chunkSize)
      if skipping { scan.onDamagedDocument = { events.append(.skipped(describe($0))) } }
      while let document = try scan.next() { events.append(.match(document.bytes)) }
    } catch {
      events.append(.failed(describe(error)))
    }
    return events
  }

  /// Contacts and businesses shaped as the anchors' stream: an embedded address, a list of
  /// addresses, strings with non-ASCII letters; some documents far larger than a small chunk.
  static func contacts(count: Int, seed: UInt64) -> [[UInt8]] {
    var random = SplitMix64(seed: seed)
    let cities = ["Los Angeles", "Boston", "Zürich", "Paris", "Lagos", "São Paulo"]
    return (0..<count).map { index in
      var document = DocumentBuilder()
      document.append("_id", .int64(Int64(index)))
      document.append("name", .string("Contact \(index)"))
      var address = DocumentBuilder()
      address.append("street", .string("\(random.next() % 9000) Main St"))
      address.append("city", .string(cities[Int(random.next() % UInt64(cities.count))]))
      document.append("address", .document(address.document))
      if random.next() % 4 == 0 {
        var addresses: [BSON] = []
        for _ in 0..<Int(random.next() % 4) {
          var other = DocumentBuilder()
          other.append("city", .string(cities[Int(random.next() % UInt64(cities.count))]))
          addresses.append(.document(other.document))
        }
        document.append("addresses", .array(BSONArray(addresses)))
      }
      if random.next() % 50 == 0 {
        document.append("notes", .string(String(repeating: "ü", count: 3_000 + Int(random.next() % 20_000))))
      }
      return document.document.bytes
    }
  }

  static func write(_ documents: [[UInt8]], in directory: String, _ name: String) -> String {
    let path = directory + "/" + name
    #expect(FileManager.default.createFile(atPath: path, contents: Data(documents.flatMap { $0 })))
    return path
  }

  static let threadsAndChunks = [(1, 4096), (2, 4096), (3, 5000), (4, 1 << 20), (2, 65536)]

  @Test func theMatchesComeInStreamOrderOnAnyThreadsAndChunks() throws {
    let directory = makeTemporaryDirectory("reef-parallel-scan")
    defer { removeTree(directory) }
    let path = Self.write(Self.contacts(count: 5_000, seed: 11), in: directory, "contacts.bson")
    for filter: Document in [
      ["address.city": "Los Angeles"], ["addresses.city": "Boston"], [:], ["name": "nobody"],
    ] {
      let query = try Query(filter: filter)
      let expected = Self.sequential(path, query, skipping: false)
      #expect(!expected.contains { if case .failed = $0 { true } else { false } })
      for (threads, chunk) in Self.threadsAndChunks {
        let found = Self.parallel(path, query, skipping: false, threads: threads, chunkSize: chunk)
        #expect(found == expected, "\(filter) on \(threads) threads, chunks of \(chunk)")
      }
    }
  }

  /// Damage at random places of the stream: a byte changed in a string, a key or a length prefix,
  /// or the stream cut short. With and without skipping, the scan reports what the reader does.
  @Test func damagedStreamsEndOrSkipAsTheReaderDoes() throws {
    let directory = makeTemporaryDirectory("reef-parallel-scan")
    defer { removeTree(directory) }
    let documents = Self.contacts(count: 800, seed: 5)
    let clean = documents.flatMap { $0 }
    var random = SplitMix64(seed: 99)
    let query = try Query(filter: ["address.city": "Paris"])
    var failures = 0
    var skips = 0
    for round in 0..<40 {
      var bytes = clean
      switch round % 4 {
      case 0: bytes[Int(random.next() % UInt64(bytes.count))] = 0xFF  // anywhere: UTF-8, a type, a length
      case 1: bytes[Int(random.next() % UInt64(bytes.count))] = 0x00  // cuts a key or string short
      case 2: bytes.removeLast(Int(random.next() % 400) + 1)  // truncated
      default:
        // Two damaged documents, then more good ones.
        bytes[Int(random.next() % UInt64(bytes.count / 2))] ^= 0x80
        bytes[bytes.count / 2 + Int(random.next() % UInt64(bytes.count / 2))] ^= 0x80
      }
      let path = directory + "/damaged-\(round).bson"
      #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
      for skipping in [false, true] {
        let expected = Self.sequential(path, query, skipping: skipping)
        failures += expected.contains { if case .failed = $0 { true } else { false } } ? 1 : 0
        skips += expected.filter { if case .skipped = $0 { true } else { false } }.count
        for (threads, chunk) in Self.threadsAndChunks {
          let found = Self.parallel(path, query, skipping: skipping, threads: threads, chunkSize: chunk)
          #expect(found == expected, "round \(round), skipping \(skipping), \(threads) threads, chunks of \(chunk)")
        }
      }
    }
    // The rounds did damage: some streams failed and some documents were skipped.
    #expect(failures > 10)
    #expect(skips > 5)
  }

  /// bsondump's own good and broken files, as `reef query` reads them.
  @Test func bsondumpTestFilesGiveTheReadersAnswers() throws {
    guard let shared = sharedDirectory("bsondump's test files") else { return }
    let folder = shared + "/interop/bsondump-testdata"
    let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".bson") }.sorted()
    #expect(names.count >= 10)
    let options = ValidationOptions(maximumDepth: 1_000)
    for name in names {
      for skipping in [false, true] {
        let expected = Self.sequential(
          folder + "/" + name, try Query(filter: [:]), skipping: skipping, options: options)
        for (threads, chunk) in [(1, 4096), (2, 4096)] {
          let found = Self.parallel(
            folder + "/" + name, try Query(filter: [:]), skipping: skipping, threads: threads, chunkSize: chunk,
            options: options)
          #expect(found == expected, "\(name), skipping \(skipping), \(threads) threads")
        }
      }
    }
  }

  @Test func framingErrorsNameTheDocumentAndOffset() throws {
    let directory = makeTemporaryDirectory("reef-parallel-scan")
    defer { removeTree(directory) }
    let good = Self.contacts(count: 3, seed: 1)
    let offset = good.reduce(0) { $0 + $1.count }
    let cases: [(String, [UInt8], BSONError.Kind)] = [
      ("a length below 5", le32(3) + [0, 0, 0], .invalidLength),
      ("a length past the size limit", le32(20_000_000) + [UInt8](repeating: 0, count: 100), .sizeLimitExceeded),
      ("a length past the end of the stream", le32(1_000_000) + [UInt8](repeating: 0, count: 100), .truncated),
      ("three bytes of a length", [7, 0, 0], .truncated),
    ]
    for (what, tail, kind) in cases {
      let path = Self.write(good + [tail], in: directory, "framing.bson")
      let scan = ParallelStreamScan(
        source: try ByteSource(path: path), query: try Query(filter: [:]), threads: 2, chunkSize: 4096)
      for _ in 0..<3 { #expect(try scan.next() != nil, "\(what)") }
      let error = try #require(throws: BSONError.self, "\(what)") { try scan.next() }
      #expect(error.kind == kind, "\(what)")
      #expect(error.documentIndex == 3, "\(what)")
      #expect(error.offset == offset, "\(what)")
      // The same error again, as the reader does.
      let again = try #require(throws: BSONError.self) { try scan.next() }
      #expect(again.message == error.message)
    }
  }

  @Test func aRegexPastItsLimitEndsTheScanWithTheQueryError() throws {
    let directory = makeTemporaryDirectory("reef-parallel-scan")
    defer { removeTree(directory) }
    var documents = Self.contacts(count: 2_000, seed: 3)
    var hostile = DocumentBuilder()
    hostile.append("name", .string(String(repeating: "a", count: 40) + "ba"))
    documents.insert(hostile.document.bytes, at: 1_500)
    let path = Self.write(documents, in: directory, "hostile.bson")
    let query = try Query(filter: ["name": ["$regex": "^(a|aa)+b$"]])
    let started = Date()
    let scan = ParallelStreamScan(source: try ByteSource(path: path), query: query, threads: 2, chunkSize: 4096)
    let error = try #require(throws: QueryError.self) { while try scan.next() != nil {} }
    #expect(error.kind == .regexLimit)
    #expect(Date().timeIntervalSince(started) < 10)
  }

  /// A consumer that stops early (a limit) lets the workers go; they stop after their chunk.
  @Test func closingEarlyStopsTheWorkers() throws {
    let directory = makeTemporaryDirectory("reef-parallel-scan")
    defer { removeTree(directory) }
    let path = Self.write(Self.contacts(count: 20_000, seed: 8), in: directory, "many.bson")
    for _ in 0..<20 {
      let scan = ParallelStreamScan(
        source: try ByteSource(path: path), query: try Query(filter: [:]), threads: 3, chunkSize: 4096)
      let first = try #require(try scan.next())
      scan.close()
      // Documents already returned stay valid, and the scan is over.
      #expect(first["_id"] == .int64(0))
      #expect(try scan.next() == nil)
    }
  }

  /// At the default chunk size (256 KiB), documents larger than a chunk between small ones, and
  /// a consumer that is one of the workers: every document once, in order, on 1 to 3 threads.
  @Test func documentsLargerThanTheDefaultChunkComeThroughInOrder() throws {
    let directory = makeTemporaryDirectory("reef-parallel-scan")
    defer { removeTree(directory) }
    var documents = Self.contacts(count: 4_000, seed: 34)
    for (at, size) in [(10, 300_000), (1_000, 1_100_000), (1_001, 262_144), (3_999, 700_000)] {
      var large = DocumentBuilder()
      large.append("_id", .int64(Int64(-at)))
      large.append("notes", .string(String(repeating: "x", count: size)))
      documents.insert(large.document.bytes, at: at)
    }
    let path = Self.write(documents, in: directory, "large.bson")
    let query = try Query(filter: [:])
    for threads in 1...3 {
      let scan = ParallelStreamScan(source: try ByteSource(path: path), query: query, threads: threads)
      var found: [[UInt8]] = []
      while let document = try scan.next() { found.append(document.bytes) }
      #expect(found.count == documents.count, "\(threads) threads")
      #expect(found == documents, "\(threads) threads")
    }
  }

  @Test func anEmptyStreamHasNoDocuments() throws {
    let directory = makeTemporaryDirectory("reef-parallel-scan")
    defer { removeTree(directory) }
    let path = Self.write([], in: directory, "empty.bson")
    let scan = ParallelStreamScan(source: try ByteSource(path: path), query: try Query(filter: [:]), threads: 2)
    #expect(try scan.next() == nil)
    #expect(try scan.next() == nil)
  }

  /// gzip input goes through the same cutting (the source decompresses under the cut's lock).
  @Test func gzipInputGivesTheSameMatches() throws {
    let directory = makeTemporaryDirectory("reef-parallel-scan")
    defer { removeTree(directory) }
    let documents = Self.contacts(count: 3_000, seed: 21)
    let path = Self.write(documents, in: directory, "contacts.bson")
    let sink = try ByteSink(path: path + ".gz")
    for document in documents { try sink.write(document) }
    try sink.close()
    let query = try Query(filter: ["address.city": "Zürich"])
    let expected = Self.sequential(path, query, skipping: false)
    #expect(expected.count > 100)
    #expect(Self.parallel(path + ".gz", query, skipping: false, threads: 2, chunkSize: 4096) == expected)
  }
}
