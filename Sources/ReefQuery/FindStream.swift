@_spi(ReefInternal) import ReefBSON

/// Documents read one at a time, from a file, a store or memory.
public protocol DocumentSource {
  /// The next document, or nil at the end.
  mutating func next() throws -> Document?
}

extension BSONStreamReader: DocumentSource {}

extension ExtendedJSONStreamReader: DocumentSource {}

/// How long the documents of a ``DocumentSource`` stay valid, and what keeping one costs.
public enum DocumentLifetime: Sendable {
  /// Each document owns its memory: kept as it is.
  case owned
  /// Documents share chunks of memory (`DocumentArena`): each stays valid as long as it is kept,
  /// but keeps its whole chunk alive, so a sort copies the few documents it keeps for long.
  case shared
  /// Views valid only until the source's next call (of a memory map): whatever is kept or
  /// returned is copied.
  case borrowed
}

/// The documents of an iterator, as a ``DocumentSource``.
public struct IteratorSource<Base: IteratorProtocol<Document>>: DocumentSource {
  private var base: Base

  /// A source that reads `base`.
  public init(_ base: Base) { self.base = base }

  /// The base iterator's next document.
  public mutating func next() -> Document? { base.next() }
}

/// The results of a find, read one at a time from a source of documents: matching, then the
/// query's own `SORT`, `DISTINCT` and `LIMIT`, then the options' sort, skip, limit and
/// projection.
///
/// Nothing collects every match. Without a sort, each document is tested as it is read and
/// the source is read no further than the limit needs; ``count()`` then runs in constant memory.
/// A sort is a blocking stage (``DocumentSorter``): with a limit, a top-k heap of skip + limit
/// documents; without one, in memory up to ``FindOptions/sortMemory`` and in sorted runs on disk
/// past that.
///
/// ```swift
/// var reader = try BSONStreamReader(path: "people.bson")
/// var results = FindStream(reader, query: try Query(filter: ["city": "Oslo"]),
///                          options: FindOptions(sort: try SortSpecification(["age": -1]), limit: 10))
/// while let person = try results.next() { print(person) }
/// ```
public struct FindStream<Source: DocumentSource> {
  /// The source.
  public private(set) var source: Source
  /// The query: its condition, `SORT`, `DISTINCT` and `LIMIT`.
  public let query: Query
  /// The options: sort, skip, limit, projection and the sort's memory.
  public let options: FindOptions
  private let testsMatches: Bool
  private let lifetime: DocumentLifetime
  /// The query's `SORT`, then the options' sort, once started.
  private var querySorter: DocumentSorter?
  private var optionsSorter: DocumentSorter?
  /// The first document of each distinct combination (owned copies).
  private var distinctKept: [Document] = []
  /// The DISTINCT values of each document in ``distinctKept`` (pointing into its bytes), read
  /// once when it is kept rather than for every later document.
  private var distinctKeptValues: [[RawValue]] = []
  private var limited = 0
  private var skipped = 0
  /// What a positional projection asks the query (made for the first result).
  private var positionRecorder: PositionRecorder?
  /// Results returned so far.
  public private(set) var returned = 0
  private var finished = false

  /// Results of `query` over `source`.
  /// - Parameters:
  ///   - source: the documents, in input order.
  ///   - query: the query; each document is tested unless `sourceMatches`.
  ///   - options: sort, skip, limit, projection, and the memory of a sort.
  ///   - sourceMatches: the source gives only matching documents (a store that tested them).
  ///   - lifetime: how long the source's documents stay valid: results and the documents a sort
  ///     keeps are copied as needed.
  public init(
    _ source: Source, query: Query, options: FindOptions = FindOptions(), sourceMatches: Bool = false,
    lifetime: DocumentLifetime = .owned
  ) {
    self.source = source
    self.query = query
    self.options = options
    testsMatches = !sourceMatches
    self.lifetime = lifetime
  }

  /// The next result, or nil after the last.
  /// - Throws: what the source throws (and then the stream stops); ``QueryError`` when a sort is
  ///   over its memory limit and may not use the disk, or when a match's sort keys reach parallel
  ///   arrays (``QueryError/Kind/sortKey``); ``BSONError`` when a sort's temporary
  ///   file cannot be written or read.
  /// - Complexity: amortized O(1) source documents per result without a sort; the whole source
  ///   on the first call with one.
  public mutating func next() throws -> Document? {
    try nextResult(materialized: true)
  }

  /// Counts the remaining results without copying or projecting them (constant memory without a
  /// sort).
  /// - Throws: as ``next()``.
  /// - Complexity: O(*n*) in the source's documents.
  public mutating func count() throws -> Int {
    var count = 0
    while try nextResult(materialized: false) != nil { count += 1 }
    return count
  }

  /// Whether the results are the source's documents as they come (no sort, `DISTINCT`, skip
  /// or limit, and the source tests the query): its caller may then count them at the source.
  public var passesThrough: Bool {
    !testsMatches && query.sort.isEmpty && query.distinct.isEmpty && query.limit == nil && options.sort == nil
      && options.skip <= 0 && (options.limit ?? 0) <= 0
  }

  /// Stops reading: lets go of the documents a sort holds and removes its temporary files.
  public mutating func close() {
    finished = true
    querySorter?.close()
    optionsSorter?.close()
    querySorter = nil
    optionsSorter = nil
    distinctKept = []
    distinctKeptValues = []
  }

  /// The sorters, for tests: the most documents each held and the runs it wrote.
  @_spi(ReefInternal)
  public var sorters: [DocumentSorter] { [querySorter, optionsSorter].compactMap { $0 } }

  private mutating func nextResult(materialized: Bool) throws -> Document? {
    guard !finished else { return nil }
    do {
      let skip = max(0, options.skip)
      while skipped < skip {
        guard try nextAfterOptionsSort() != nil else { return end() }
        skipped += 1
      }
      if let limit = options.limit, limit > 0, returned >= limit { return end() }
      guard var document = try nextAfterOptionsSort() else { return end() }
      returned += 1
      guard materialized else { return document }
      if lifetime == .borrowed && query.sort.isEmpty && options.sort == nil {
        document = document.withUnsafeBytes { Document(trustedCopying: $0) }
      }
      if let projection = options.projection {
        if projection.isPositional {
          if positionRecorder == nil { positionRecorder = try PositionRecorder(query.node) }
          document = try projection.apply(document, recorder: positionRecorder!)
        } else {
          document = projection.apply(document)
        }
      }
      return document
    } catch {
      close()
      throw error
    }
  }

  /// The lifetime of documents after the query's `SORT` (whose output is the sorter's).
  private var afterQuerySort: DocumentLifetime { query.sort.isEmpty ? lifetime : .shared }

  private mutating func end() -> Document? {
    close()
    return nil
  }

  /// Results before skip, limit and projection.
  private mutating func nextAfterOptionsSort() throws -> Document? {
    guard let sort = options.sort else { return try nextAfterQueryLimit() }
    if optionsSorter == nil {
      let limit = options.limit ?? 0
      let bound = limit > 0 ? max(0, options.skip) + limit : nil
      let sorter = DocumentSorter(sort, bound: bound, memory: options.sortMemory)
      while let document = try nextAfterQueryLimit() { try sorter.add(document, lifetime: afterQuerySort) }
      try sorter.finish()
      optionsSorter = sorter
    }
    return try optionsSorter!.next()
  }

  /// Matches after the query's `SORT`, `DISTINCT` and `LIMIT`.
  private mutating func nextAfterQueryLimit() throws -> Document? {
    if let limit = query.limit, limited >= limit { return nil }
    guard let document = try nextDistinct() else { return nil }
    limited += 1
    return document
  }

  private mutating func nextDistinct() throws -> Document? {
    guard !query.distinct.isEmpty else { return try nextAfterQuerySort() }
    let keys = query.distinct.map { SortKey($0) }
    while let document = try nextAfterQuerySort() {
      let values = document.withRawValue { root in keys.map { sortValue(root, $0) } }
      let duplicate = distinctKeptValues.contains { kept in
        zip(kept, values).allSatisfy { compareValues($0, $1) == 0 }
      }
      if duplicate { continue }
      if afterQuerySort == .owned {
        distinctKept.append(document)
        distinctKeptValues.append(values)
        return document
      }
      let owned = document.withUnsafeBytes { Document(trustedCopying: $0) }
      distinctKept.append(owned)
      distinctKeptValues.append(owned.withRawValue { root in keys.map { sortValue(root, $0) } })
      return owned
    }
    return nil
  }

  private mutating func nextAfterQuerySort() throws -> Document? {
    guard !query.sort.isEmpty else { return try nextMatch() }
    if querySorter == nil {
      // Only a `LIMIT` right after the sort bounds it, and the options' skip and limit when
      // nothing sorts again.
      var bound = query.distinct.isEmpty ? query.limit : nil
      if query.distinct.isEmpty, options.sort == nil, let limit = options.limit, limit > 0 {
        bound = min(bound ?? .max, max(0, options.skip) + limit)
      }
      let sorter = DocumentSorter(SortSpecification(query.sort), bound: bound, memory: options.sortMemory)
      while let document = try nextMatch() { try sorter.add(document, lifetime: lifetime) }
      try sorter.finish()
      querySorter = sorter
    }
    return try querySorter!.next()
  }

  private mutating func nextMatch() throws -> Document? {
    while let document = try source.next() {
      if try !testsMatches || query.evaluate(document) { return document }
    }
    return nil
  }
}
