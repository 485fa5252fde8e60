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

  public init(sort: SortSpecification? = nil, skip: Int = 0, limit: Int? = nil, projection: Projection? = nil) {
    self.sort = sort
    self.skip = skip
    self.limit = limit
    self.projection = projection
  }
}

extension Query {
  /// The documents of `source` that match, after the query's own `SORT`, `DISTINCT` and `LIMIT`
  /// and then the options' sort, skip, limit and projection.
  ///
  /// Without a sort or `DISTINCT`, documents are tested one at a time and the scan stops once
  /// the limit is reached.
  public func find(in source: some Sequence<Document>, options: FindOptions = FindOptions()) -> [Document] {
    guard let needed = matchesNeeded(for: options) else { return arrange(source.filter(matches), options: options) }
    var matched: [Document] = []
    // Stop at the last match needed, not at the next one: the rest of the source is not tested.
    if needed > 0 {
      for document in source where matches(document) {
        matched.append(document)
        if matched.count == needed { break }
      }
    }
    return arrange(matched, options: options)
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
  public func arrange(_ matches: [Document], options: FindOptions = FindOptions()) -> [Document] {
    var results = matches
    if !sort.isEmpty { results = SortSpecification(sort).sorted(results) }
    if !distinct.isEmpty { results = Query.distinct(results, on: distinct) }
    if let limit { results = Array(results.prefix(limit)) }
    if let sort = options.sort { results = sort.sorted(results) }
    results = Array(results.dropFirst(max(0, options.skip)))
    if let limit = options.limit, limit > 0 { results = Array(results.prefix(limit)) }
    if let projection = options.projection { results = results.map(projection.apply) }
    return results
  }

  /// The first document for each combination of values at `paths`, in order.
  static func distinct(_ documents: [Document], on paths: [FieldPath]) -> [Document] {
    let keys = paths.map { SortKey($0) }
    // The values stay in their documents' bytes, which `documents` keeps alive, and compare in
    // MongoDB's order.
    return withExtendedLifetime(documents) {
      var seen: [[RawValue]] = []
      var kept: [Document] = []
      for document in documents {
        let key = document.withRawValue { root in keys.map { sortValue(root, $0) } }
        let duplicate = seen.contains { other in zip(other, key).allSatisfy { compareValues($0, $1) == 0 } }
        if !duplicate {
          seen.append(key)
          kept.append(document)
        }
      }
      return kept
    }
  }
}
