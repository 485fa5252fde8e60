import ReefBSON

/// The options of a find: sort, skip, limit and projection, applied in that order after the
/// query has selected documents.
public struct FindOptions: Sendable {
  /// The order of the results; without one, results keep their input order.
  public var sort: SortSpecification?
  /// How many results to drop from the front (negative counts as 0).
  public var skip: Int
  /// The most results to return; nil or 0 means no limit, as in MongoDB.
  public var limit: Int?
  /// Which fields of each result to return.
  public var projection: Projection?
  /// How much memory a sort without a limit may hold before it writes sorted runs to temporary
  /// files (MongoDB's `allowDiskUse`): 100 MB by default. A sort with a limit keeps only skip +
  /// limit documents, whatever this says.
  public var sortMemory: SortMemory

  /// Options of a find.
  /// - Parameters:
  ///   - sort: the order of the results; nil keeps the input order.
  ///   - skip: results to drop from the front (negative counts as 0).
  ///   - limit: the most results; nil or 0 for no limit.
  ///   - projection: the fields of each result.
  ///   - sortMemory: the memory budget of a sort without a limit, and its temporary files.
  public init(
    sort: SortSpecification? = nil, skip: Int = 0, limit: Int? = nil, projection: Projection? = nil,
    sortMemory: SortMemory = .default
  ) {
    self.sort = sort
    self.skip = skip
    self.limit = limit
    self.projection = projection
    self.sortMemory = sortMemory
  }

  /// The same options with a sort's memory that has no limit (for input already in memory).
  var inMemory: FindOptions {
    var options = self
    options.sortMemory = .unlimited
    return options
  }
}

extension Query {
  /// The documents of `source` that match, after the query's own `SORT`, `DISTINCT` and `LIMIT`
  /// and then the options' sort, skip, limit and projection.
  ///
  /// Documents are tested one at a time and the source is read no further than the limit
  /// needs, without a sort. A sort with a limit keeps only skip + limit documents (a top-k); one
  /// without a limit sorts in memory (`options.sortMemory` does not apply: the results are
  /// returned in memory anyway). To read a large input in bounded memory, use ``FindStream``.
  /// - Throws: ``QueryError`` of kind ``QueryError/Kind/regexLimit`` when a regular expression
  ///   goes past its limits on a document's string, of kind ``QueryError/Kind/sortKey`` when a
  ///   match's sort keys reach parallel arrays.
  /// - Complexity: O(*n*) in the source's documents, plus O(*m* log *k*) for a sort of *m*
  ///   matches keeping *k*.
  public func find(in source: some Sequence<Document>, options: FindOptions = FindOptions()) throws(QueryError)
    -> [Document]
  {
    var stream = FindStream(IteratorSource(source.makeIterator()), query: self, options: options.inMemory)
    return try Query.collect(&stream)
  }

  /// How many matches, in input order, decide the result of a find: nil when all of them may
  /// (a sort, `DISTINCT`, or no limit), so a scan may stop after this many.
  public func matchesNeeded(for options: FindOptions) -> Int? {
    guard options.sort == nil, sort.isEmpty, distinct.isEmpty else { return nil }
    var needed = limit
    if let optionsLimit = options.limit, optionsLimit > 0 {
      let throughLimit = max(0, options.skip) + optionsLimit
      needed = min(needed ?? throughLimit, throughLimit)
    }
    return needed
  }

  /// Documents that already match, in input order, after the query's own `SORT`, `DISTINCT`
  /// and `LIMIT` and then the options' sort, skip, limit and projection: the rest of a find
  /// whose matching was done elsewhere (through an index, or while reading a stream).
  /// - Throws: ``QueryError`` of kind ``QueryError/Kind/sortKey`` when a document's sort keys
  ///   reach parallel arrays.
  public func arrange(_ matches: [Document], options: FindOptions = FindOptions()) throws(QueryError) -> [Document] {
    var stream = FindStream(
      IteratorSource(matches.makeIterator()), query: self, options: options.inMemory, sourceMatches: true)
    return try Query.collect(&stream)
  }

  /// The results of a stream over documents in memory, whose sorts hold everything in memory:
  /// only a regular expression's limit or a document that cannot be sorted (parallel arrays)
  /// can end it with an error.
  static func collect<Base>(_ stream: inout FindStream<IteratorSource<Base>>) throws(QueryError) -> [Document] {
    var results: [Document] = []
    do {
      while let document = try stream.next() { results.append(document) }
    } catch let error as QueryError {
      throw error
    } catch {
      preconditionFailure("a find over documents in memory, sorted in memory, cannot fail: \(error)")
    }
    return results
  }
}
