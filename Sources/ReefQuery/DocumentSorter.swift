@_spi(ReefInternal) import ReefBSON

/// How much memory a sort may hold, and what it does beyond that: MongoDB's
/// `allowDiskUse` and its 100 MB limit on a blocking sort.
public struct SortMemory: Sendable, Equatable {
  /// The most bytes (of documents, plus a small overhead for each) a sort without a limit holds
  /// in memory; 100 MB (104,857,600 bytes, MongoDB's limit) by default.
  public var limit: Int
  /// Whether a sort over ``limit`` writes sorted runs to temporary files and merges them
  /// (true by default, as MongoDB 6's `allowDiskUseByDefault`); if false, it fails instead.
  public var allowDiskUse: Bool
  /// The directory of those files; nil means `$TMPDIR`, or `/tmp` when that is not set.
  public var temporaryDirectory: String?

  /// MongoDB's default: 100 MB, and temporary files past that.
  public static let `default` = SortMemory()

  /// A memory budget for sorts.
  /// - Parameters:
  ///   - limit: the most bytes a sort without a limit holds in memory (at least 1).
  ///   - allowDiskUse: whether to spill sorted runs to temporary files past `limit`.
  ///   - temporaryDirectory: where those files go; nil for `$TMPDIR` or `/tmp`.
  public init(limit: Int = 100 * 1024 * 1024, allowDiskUse: Bool = true, temporaryDirectory: String? = nil) {
    self.limit = max(1, limit)
    self.allowDiskUse = allowDiskUse
    self.temporaryDirectory = temporaryDirectory
  }

  /// No limit: everything sorted in memory (never writes a file, never fails).
  static let unlimited = SortMemory(limit: .max, allowDiskUse: false)
}

/// Sorts a stream of documents in bounded memory, as a blocking stage of a find: documents are
/// added one at a time, then read back in order.
///
/// With a bound (a limit, plus what is skipped), it keeps only the best `bound` documents in a
/// heap (a top-k): memory in proportion to the bound, whatever the input's length. Without one,
/// it holds documents up to the ``SortMemory/limit``; past that, it sorts what it holds into a
/// run written to a temporary file, and in the end merges the runs (k-way, through a heap). The
/// files are removed when the merge ends, when ``close()`` is called, or when the sorter is
/// released, also after an error.
///
/// The order is the ``SortSpecification``'s, and stable: documents with equal keys come out in
/// the order they were added, exactly as ``SortSpecification/sorted(_:)`` orders them.
@_spi(ReefInternal)
public final class DocumentSorter {
  let sort: SortSpecification
  let bound: Int?
  let memory: SortMemory
  /// Documents added so far (each one's place in the input, for a stable order).
  private var added = 0
  /// The top-k heap, with a bound.
  private var heap: [Ranked] = []
  /// The sort values of the document being added to the top-k.
  private var scratch: [RawValue] = []
  /// Documents held for the next run, without a bound.
  private var buffer: [Document] = []
  private var bufferBytes = 0
  private var arena = DocumentArena()
  /// The temporary files of the sorted runs written so far.
  var spill: SpillFiles?
  /// What is read back, once ``finish()`` was called.
  private var output: SortedOutput?

  /// The most documents held in memory at once (a top-k holds at most its bound).
  public private(set) var maximumHeld = 0
  /// The number of sorted runs written to temporary files.
  public private(set) var runsWritten = 0

  /// A sorter in the order of `sort`.
  /// - Parameters:
  ///   - sort: the order.
  ///   - bound: how many documents, from the first in that order, are wanted; nil for all.
  ///   - memory: the memory budget and temporary files of a sort without a bound.
  public init(_ sort: SortSpecification, bound: Int?, memory: SortMemory) {
    self.sort = sort
    self.bound = bound.map { max(0, $0) }
    self.memory = memory
  }

  deinit { spill?.remove() }

  /// Where the sorter's temporary files are, once it has written one.
  public var temporaryDirectory: String? { spill?.directory }

  /// Adds a document.
  /// - Parameters:
  ///   - document: the document; kept only if it may be in the result.
  ///   - lifetime: how long the document stays valid: a top-k copies what it keeps unless it owns
  ///     its memory; a sort without a bound keeps documents in shared chunks as they are and
  ///     copies others into chunks of its own.
  /// - Throws: ``QueryError`` when the sort is over its memory limit and may not use the disk,
  ///   or (``QueryError/Kind/sortKey``) when the document's keys reach parallel arrays;
  ///   ``BSONError`` (``BSONError/Kind/io``) when a temporary file cannot be written.
  /// - Complexity: O(log *k*) for a top-k of *k*; amortized O(log *n*) otherwise.
  public func add(_ document: Document, lifetime: DocumentLifetime) throws {
    precondition(output == nil, "a sorter takes no documents after finish()")
    defer { added += 1 }
    if let bound {
      try addBounded(document, lifetime: lifetime, bound: bound)
      return
    }
    let count = document.byteCount
    // Documents in shared chunks stay there (a source's chunks hold little but matches); others
    // are copied into the sorter's chunks: one allocation per 64 KB, not one or two per document,
    // so that what the limit counts is what is held.
    let kept = lifetime == .shared ? document : document.withUnsafeBytes { arena.copy(trusted: $0) }
    buffer.append(kept)
    bufferBytes += count + SortMemory.overheadPerDocument
    maximumHeld = max(maximumHeld, buffer.count)
    if bufferBytes > memory.limit { try spillBuffer() }
  }

  private func addBounded(_ document: Document, lifetime: DocumentLifetime, bound: Int) throws {
    // Every document's keys are read, also those a top-k drops: one whose keys reach parallel
    // arrays fails the sort, as in MongoDB.
    scratch.removeAll(keepingCapacity: true)
    try sort.appendValues(of: document, to: &scratch)
    guard bound > 0 else { return }
    if heap.count < bound {
      heap.append(try kept(document, lifetime))
      siftUp(heap.count - 1)
      maximumHeld = max(maximumHeld, heap.count)
      return
    }
    // The root is the worst document kept; a later one with an equal key comes after it.
    guard sort.compareSortValues(scratch[...], heap[0].values[...]) < 0 else { return }
    heap[0] = try kept(document, lifetime)
    siftDown(0)
  }

  /// The heap's entry for `document`, whose sort values are in ``scratch``: they point into its
  /// bytes, so they are read again only when the sorter keeps a copy.
  private func kept(_ document: Document, _ lifetime: DocumentLifetime) throws(QueryError) -> Ranked {
    guard lifetime != .owned else { return Ranked(document: document, order: added, values: scratch) }
    return try ranked(own(document, lifetime))
  }

  /// A document the heap keeps, with its sort values (which point into its bytes).
  private func ranked(_ document: Document) throws(QueryError) -> Ranked {
    var values: [RawValue] = []
    values.reserveCapacity(sort.keys.count)
    try sort.appendValues(of: document, to: &values)
    return Ranked(document: document, order: added, values: values)
  }

  /// A document the sorter may keep: its own copy unless it owns its memory.
  private func own(_ document: Document, _ lifetime: DocumentLifetime) -> Document {
    guard lifetime != .owned else { return document }
    return document.withUnsafeBytes { Document(trustedCopying: $0) }
  }

  /// Whether `a` goes after `b` in the result (later documents go after equal earlier ones).
  private func after(_ a: Ranked, _ b: Ranked) -> Bool {
    let comparison = sort.compareSortValues(a.values[...], b.values[...])
    return comparison != 0 ? comparison > 0 : a.order > b.order
  }

  private func siftUp(_ start: Int) {
    var child = start
    while child > 0 {
      let parent = (child - 1) / 2
      guard after(heap[child], heap[parent]) else { return }
      heap.swapAt(child, parent)
      child = parent
    }
  }

  private func siftDown(_ start: Int) {
    var parent = start
    while true {
      var worst = parent
      for child in (2 * parent + 1)...(2 * parent + 2) where child < heap.count && after(heap[child], heap[worst]) {
        worst = child
      }
      guard worst != parent else { return }
      heap.swapAt(parent, worst)
      parent = worst
    }
  }

  /// Ends the input: what was added is read back with ``next()``.
  /// - Throws: ``QueryError/Kind/sortKey`` when a document's keys reach parallel arrays;
  ///   ``BSONError`` when the runs cannot be merged (a temporary file that cannot be read or
  ///   written).
  /// - Complexity: O(*k* log *k*) for a top-k; O(*n* log *n*) for a sort in memory; opening
  ///   the runs for a spilled sort.
  public func finish() throws {
    guard output == nil else { return }
    if bound != nil {
      let ordered = heap.sorted { after($1, $0) }.map(\.document)
      heap = []
      output = .memory(ordered[...])
      return
    }
    let sorted = try sort.sorted(buffer)
    buffer = []
    bufferBytes = 0
    guard let spill else {
      output = .memory(sorted[...])
      return
    }
    // The documents still held are the last run; it is merged from memory.
    output = .merge(try RunMerge(sort: sort, files: spill, last: sorted))
    arena = DocumentArena()
  }

  /// The next document in order, or nil after the last (and then the temporary files are gone).
  /// - Throws: ``BSONError`` when a temporary file cannot be read.
  public func next() throws -> Document? {
    if output == nil { try finish() }
    switch output! {
    case .memory(var rest):
      guard let document = rest.popFirst() else { return nil }
      output = .memory(rest)
      return document
    case .merge(let merge):
      if let document = try merge.next() { return document }
      close()
      return nil
    }
  }

  /// Lets go of the documents held and removes the temporary files. Reading is over: ``next()``
  /// returns nil.
  public func close() {
    output = .memory([])
    heap = []
    buffer = []
    spill?.remove()
  }

  /// Sorts the documents held into a run and writes it to a temporary file.
  private func spillBuffer() throws {
    guard memory.allowDiskUse else {
      throw QueryError(
        .limit,
        "the sort needs more than its memory limit of \(memory.limit) bytes and may not write temporary files "
          + "(allow disk use, or raise the limit)")
    }
    if spill == nil { spill = try SpillFiles(parent: memory.temporaryDirectory) }
    try spill!.write(run: try sort.sorted(buffer))
    runsWritten += 1
    buffer = []
    bufferBytes = 0
    arena = DocumentArena()
  }

  /// A document kept by a top-k, with its place in the input and its sort values.
  private struct Ranked {
    var document: Document
    var order: Int
    var values: [RawValue]
  }

  private enum SortedOutput {
    case memory(ArraySlice<Document>)
    case merge(RunMerge)
  }
}

extension SortMemory {
  /// What a held document costs beyond its bytes (its `Document`, its place in the buffer and
  /// in the sort's entries), counted against the limit.
  static let overheadPerDocument = 64
}
