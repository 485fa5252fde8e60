@_spi(ReefInternal) import ReefBSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The documents of a BSON stream that match a query, validated and tested on several threads and
/// delivered in stream order.
///
/// The stream is cut into chunks of whole documents (about 256 KiB each, so that a chunk is still
/// in the processor's cache when its documents are validated and tested) as it is read; each worker
/// thread takes the next chunk, validates each of its documents as ``BSONStreamReader`` does and
/// tests those that are valid, so the bytes are read from memory once per document while they are
/// in the cache. The thread that calls ``next()`` is one of the workers: while the chunk it is
/// to deliver is not ready, it cuts and tests a later one itself. Results, damaged documents and errors reach ``next()`` in stream order, with the
/// same document indexes, offsets and messages as ``BSONStreamReader``: the first error ends the
/// scan there, and nothing past it is delivered.
///
/// ```swift
/// let source = try ByteSource(path: "contacts.bson")
/// let scan = ParallelStreamScan(source: source, query: try Query(filter: ["address.city": "Oslo"]))
/// var results = FindStream(scan, query: scan.query, sourceMatches: true, lifetime: .borrowed)
/// print(try results.count())
/// ```
///
/// Memory is bounded: a few chunks per thread are read ahead of the consumer, and a chunk grows
/// only to hold one document larger than it (up to the validation options' size limit). Use a
/// scan from one thread; its workers stop when it is closed or deinitialized.
public final class ParallelStreamScan: DocumentSource {
  /// The query each document is tested against.
  public let query: Query
  /// When set before the first call to ``next()``, a document that fails validation but whose
  /// length prefix is plausible (as ``BSONStreamReader/skipDamagedDocument()`` needs) is stepped
  /// over: this is called with its error, in stream order, and the scan goes on.
  public var onDamagedDocument: ((BSONError) -> Void)?

  private let shared: ScanState
  private var current: ScanResult?
  private var position = 0
  private var started = false
  private var closed = false
  private var failure: Error?
  private var threads: [pthread_t] = []

  /// The number of threads used by default (the caller's among them): the processors online, at most 8.
  public static var defaultThreadCount: Int {
    let online = sysconf(Int32(_SC_NPROCESSORS_ONLN))
    return max(1, min(8, Int(online)))
  }

  /// A scan of `source`.
  /// - Parameters:
  ///   - source: the stream; read only by the scan's threads from the first ``next()`` on.
  ///   - options: how documents are validated (as ``BSONStreamReader/options``).
  ///   - query: the query each valid document is tested against.
  ///   - threads: the threads that validate and test, counting the one that calls ``next()``
  ///     (`threads - 1` are started; with 1, ``next()`` does all the work).
  ///   - chunkSize: the bytes a chunk of documents is cut at.
  public init(
    source: ByteSource, options: ValidationOptions = .default, query: Query,
    threads: Int = ParallelStreamScan.defaultThreadCount, chunkSize: Int = 1 << 18
  ) {
    self.query = query
    shared = ScanState(
      source: source, options: options, query: query, workers: max(1, threads), chunkSize: max(4096, chunkSize))
  }

  deinit { close() }

  /// The next matching document, in stream order, or nil at the end of the stream.
  ///
  /// The document points into a chunk of the stream that stays alive as long as the document
  /// does.
  /// - Throws: ``BSONError`` as ``BSONStreamReader/next()`` throws it (with the document index and
  ///   stream offset); ``QueryError`` when a test fails (a regular expression past its limits).
  ///   After an error, every call throws it again.
  public func next() throws -> Document? {
    if let failure { throw failure }
    if closed { return nil }
    if !started { start() }
    while true {
      if let result = current, position < result.entries.count {
        let entry = result.entries[position]
        position += 1
        switch entry {
        case .match(let start, let length):
          let bytes = UnsafeRawBufferPointer(start: result.chunk.memory + start, count: length)
          return Document(trustedBytesNoCopy: bytes, owner: result.chunk)
        case .damaged(let error):
          onDamagedDocument?(error)
          continue
        }
      }
      if let result = current, let error = result.failure {
        failure = error
        close()
        throw error
      }
      if current != nil {
        var chunk = current!.chunk
        current = nil
        shared.recycle(&chunk)
      }
      guard let result = shared.take() else {
        close()
        return nil
      }
      current = result
      position = 0
    }
  }

  /// Ends the scan (``next()`` then returns nil) and stops the workers: they end after the chunk
  /// each is on (a worker blocked reading a pipe ends when the read returns). Documents already
  /// returned stay valid.
  public func close() {
    closed = true
    current = nil
    shared.stop()
    for thread in threads { pthread_detach(thread) }
    threads = []
  }

  private func start() {
    started = true
    shared.skipsDamaged = onDamagedDocument != nil
    let shared = self.shared
    // The consumer's own calls to next() do a worker's share: one thread fewer is started.
    for _ in 1..<shared.workers {
      if let thread = startThread({ shared.work() }) { threads.append(thread) }
    }
    // Without a thread, the consumer's own calls do all the work.
    if threads.isEmpty { shared.runsInline = true }
  }
}

/// A chunk's bytes: whole documents of the stream, from `streamOffset` on.
final class ScanChunk {
  private(set) var memory: UnsafeMutableRawPointer
  private(set) var capacity: Int
  /// The bytes read into the chunk (whole documents once the chunk is cut).
  var count = 0

  init(capacity: Int) {
    memory = .allocate(byteCount: capacity, alignment: 8)
    self.capacity = capacity
  }

  deinit { memory.deallocate() }

  /// Makes room for at least `wanted` bytes, keeping those read.
  func reserve(_ wanted: Int) {
    guard wanted > capacity else { return }
    let bigger = UnsafeMutableRawPointer.allocate(byteCount: wanted, alignment: 8)
    bigger.copyMemory(from: memory, byteCount: count)
    memory.deallocate()
    memory = bigger
    capacity = wanted
  }

  func length(at offset: Int) -> Int {
    Int(Int32(littleEndian: memory.loadUnaligned(fromByteOffset: offset, as: Int32.self)))
  }
}

/// What a worker found in one chunk, in stream order.
struct ScanResult {
  enum Entry {
    /// A matching document's place in the chunk.
    case match(start: Int, length: Int)
    /// A damaged document stepped over.
    case damaged(BSONError)
  }
  var chunk: ScanChunk
  var entries: [Entry] = []
  /// The error that ends the scan after the entries.
  var failure: Error?
}

/// A chunk as cut from the stream, before its documents are tested.
private struct CutChunk {
  var chunk: ScanChunk
  var sequence: Int
  var firstIndex: Int
  var streamOffset: Int
  /// The framing error right after the chunk's documents (the stream cannot be cut further).
  var failure: BSONError?
}

/// The state the consumer and the workers share.
final class ScanState: @unchecked Sendable {
  let options: ValidationOptions
  let query: Query
  let workers: Int
  let chunkSize: Int
  var skipsDamaged = false
  var runsInline = false

  // Cutting, under `cutLock`: the source, the bytes read past the last whole document, where the
  // next chunk starts.
  private let source: ByteSource
  private let cutLock = ScanLock()
  private var carry: [UInt8] = []
  private var nextSequence = 0
  private var nextIndex = 0
  private var nextOffset = 0
  private var sourceEnded = false

  // Delivery, under `lock`.
  private let lock = ScanLock()
  private var results: [Int: ScanResult] = [:]
  private var delivered = 0
  private var reserved = 0
  /// The number of chunks in the stream, once it is known.
  private var total: Int?
  private var stopped = false
  private var spare: [ScanChunk] = []
  /// Chunks read ahead of the consumer, at most.
  private var ahead: Int { 4 * workers }

  init(source: ByteSource, options: ValidationOptions, query: Query, workers: Int, chunkSize: Int) {
    self.source = source
    self.options = options
    self.query = query
    self.workers = workers
    self.chunkSize = chunkSize
  }

  /// A worker's loop: cut the next chunk, test it, post its result.
  func work() {
    while let cut = claim() {
      post(test(cut), sequence: cut.sequence)
    }
  }

  /// The next chunk's result, cutting and testing later chunks while it is not ready; nil after
  /// the last chunk.
  func take() -> ScanResult? {
    if runsInline {
      guard let cut = claim() else { return nil }
      lock.withLock { delivered += 1 }
      return test(cut)
    }
    while true {
      do {
        lock.lock()
        defer { lock.unlock() }
        if let result = results.removeValue(forKey: delivered) {
          delivered += 1
          lock.broadcast()
          return result
        }
        if let total, delivered >= total { return nil }
        if stopped { return nil }
        // Nothing to cut (the stream is cut to its end, or far enough ahead): wait for a worker.
        if total != nil || reserved - delivered >= ahead {
          lock.wait()
          continue
        }
      }
      // Work as the workers do, without waiting (only this thread can move `delivered` on).
      if let cut = claim(waits: false) { post(test(cut), sequence: cut.sequence) }
    }
  }

  /// Keeps a chunk the consumer is done with for a later cut, unless a document still uses it.
  func recycle(_ chunk: inout ScanChunk) {
    // A chunk grown for one large document is let go.
    guard isKnownUniquelyReferenced(&chunk), chunk.capacity <= 2 * chunkSize else { return }
    lock.withLock { if spare.count < ahead + workers { spare.append(chunk) } }
  }

  /// Stops cutting and wakes every waiting thread.
  func stop() {
    lock.withLock {
      stopped = true
      lock.broadcast()
    }
  }

  private func post(_ result: ScanResult, sequence: Int) {
    lock.withLock {
      results[sequence] = result
      if result.failure != nil {
        // Nothing after an error is delivered: stop cutting.
        total = min(total ?? Int.max, sequence + 1)
      }
      lock.broadcast()
    }
  }

  /// Waits until the consumer is near enough (unless `waits` is false: nil then instead), then
  /// cuts the next chunk; nil at the end.
  private func claim(waits: Bool = true) -> CutChunk? {
    var chunk: ScanChunk
    do {
      lock.lock()
      defer { lock.unlock() }
      while waits && !runsInline && !stopped && reserved - delivered >= ahead && total == nil { lock.wait() }
      if stopped || total != nil || !runsInline && reserved - delivered >= ahead { return nil }
      reserved += 1
      chunk = spare.popLast() ?? ScanChunk(capacity: chunkSize)
    }
    guard let cut = cutLock.withLock({ cut(into: chunk) }) else {
      lock.withLock {
        reserved -= 1
        lock.broadcast()
      }
      return nil
    }
    return cut
  }

  /// Reads whole documents into `chunk` (under `cutLock`): nil when the stream has ended.
  private func cut(into chunk: ScanChunk) -> CutChunk? {
    guard !sourceEnded else { return nil }
    chunk.count = 0
    chunk.reserve(max(chunkSize, carry.count))
    carry.withUnsafeBytes { bytes in
      if bytes.count > 0 { chunk.memory.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
    }
    chunk.count = carry.count
    carry.removeAll(keepingCapacity: true)
    var failure: BSONError?
    var atEnd = false
    var cutAt = 0
    var documents = 0
    // Reads until the chunk is full or the input ends.
    func fill() {
      while chunk.count < chunk.capacity && !atEnd {
        do {
          let n = try source.read(
            into: UnsafeMutableRawBufferPointer(start: chunk.memory + chunk.count, count: chunk.capacity - chunk.count))
          if n == 0 { atEnd = true }
          chunk.count += n
        } catch {
          failure = error
          atEnd = true
        }
      }
    }
    fill()
    framing: while true {
      let left = chunk.count - cutAt
      let offset = nextOffset + cutAt
      let index = nextIndex + documents
      if left == 0 { break }
      guard left >= 4 else {
        if !atEnd { break }
        if failure == nil {
          failure = BSONError(
            .truncated, "expected a 4-byte document length, found \(left) bytes before the end of the stream",
            offset: offset, documentIndex: index)
        }
        break
      }
      let length = chunk.length(at: cutAt)
      guard length >= 5 else {
        failure = BSONError(
          .invalidLength, "expected a document length of at least 5, found \(length)", offset: offset,
          documentIndex: index)
        break
      }
      guard length <= options.maximumSize else {
        failure = BSONError(
          .sizeLimitExceeded, "document length \(length) exceeds the limit of \(options.maximumSize) bytes",
          offset: offset, documentIndex: index)
        break
      }
      guard length <= left else {
        if atEnd {
          if failure == nil {
            failure = BSONError(
              .truncated,
              "document length \(length) runs past the end of the stream, which ends after \(left) bytes of the document",
              offset: offset, documentIndex: index)
          }
          break
        }
        if documents > 0 { break }
        // The chunk's first document is larger than the chunk: grow for it, doubling as its
        // bytes arrive (a damaged length prefix does not allocate what it claims).
        chunk.reserve(min(length, max(chunk.capacity * 2, chunkSize)))
        fill()
        continue framing
      }
      cutAt += length
      documents += 1
    }
    if failure == nil && !atEnd && cutAt < chunk.count {
      carry.append(contentsOf: UnsafeRawBufferPointer(start: chunk.memory + cutAt, count: chunk.count - cutAt))
    }
    chunk.count = cutAt
    if failure != nil && failure!.documentIndex == nil { failure!.documentIndex = nextIndex + documents }
    if failure != nil || atEnd && carry.isEmpty { sourceEnded = true }
    if documents == 0 && failure == nil {
      lock.withLock {
        total = min(total ?? Int.max, nextSequence)
        lock.broadcast()
      }
      return nil
    }
    let cut = CutChunk(
      chunk: chunk, sequence: nextSequence, firstIndex: nextIndex, streamOffset: nextOffset, failure: failure)
    nextSequence += 1
    nextIndex += documents
    nextOffset += cutAt
    if sourceEnded {
      lock.withLock {
        total = min(total ?? Int.max, nextSequence)
        lock.broadcast()
      }
    }
    return cut
  }

  /// Validates and tests the documents of a chunk.
  private func test(_ cut: CutChunk) -> ScanResult {
    let chunk = cut.chunk
    var result = ScanResult(chunk: chunk)
    var offset = 0
    var index = cut.firstIndex
    let validator = DocumentValidator(options: options)
    // The chunk's memory and size in locals, read once: a class's stored properties are checked
    // for exclusive access at run time.
    let memory = UnsafeRawPointer(chunk.memory)
    let count = chunk.count
    while offset < count {
      // Safe: the chunk was cut at whole documents, so a length prefix lies at `offset`.
      let length = Int(Int32(littleEndian: memory.loadUnaligned(fromByteOffset: offset, as: Int32.self)))
      let bytes = UnsafeRawBufferPointer(start: memory + offset, count: length)
      do throws(BSONError) {
        _ = try validator.validatedLength(of: bytes)
      } catch {
        var error = error
        error.offset = cut.streamOffset + offset + (error.offset ?? 0)
        error.documentIndex = index
        // As BSONStreamReader: a damaged document can be stepped over when it ends in a zero byte.
        guard skipsDamaged && bytes[length - 1] == 0 else {
          result.failure = error
          return result
        }
        result.entries.append(.damaged(error))
        offset += length
        index += 1
        continue
      }
      do {
        if try query.evaluate(trustedBytes: bytes) { result.entries.append(.match(start: offset, length: length)) }
      } catch {
        result.failure = error
        return result
      }
      offset += length
      index += 1
    }
    result.failure = cut.failure
    return result
  }
}

/// A mutex with one condition.
final class ScanLock: @unchecked Sendable {
  private var mutex = pthread_mutex_t()
  private var condition = pthread_cond_t()

  init() {
    pthread_mutex_init(&mutex, nil)
    pthread_cond_init(&condition, nil)
  }

  deinit {
    pthread_cond_destroy(&condition)
    pthread_mutex_destroy(&mutex)
  }

  func lock() { pthread_mutex_lock(&mutex) }
  func unlock() { pthread_mutex_unlock(&mutex) }
  /// Waits for a broadcast; the mutex must be held.
  func wait() { pthread_cond_wait(&condition, &mutex) }
  func broadcast() { pthread_cond_broadcast(&condition) }

  func withLock<T>(_ body: () throws -> T) rethrows -> T {
    pthread_mutex_lock(&mutex)
    defer { pthread_mutex_unlock(&mutex) }
    return try body()
  }
}
