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
    var results: [Document] = []
    let needsAll = options.sort != nil || !sort.isEmpty || !distinct.isEmpty
    if needsAll {
      results = source.filter(matches)
      if !sort.isEmpty { results = SortSpecification(sort).sorted(results) }
      if !distinct.isEmpty { results = Query.distinct(results, on: distinct) }
      if let limit { results = Array(results.prefix(limit)) }
      if let sort = options.sort { results = sort.sorted(results) }
      results = Array(results.dropFirst(max(0, options.skip)))
      if let limit = options.limit, limit > 0 { results = Array(results.prefix(limit)) }
    } else {
      var matched = 0
      var skipped = 0
      for document in source where matches(document) {
        if let limit, matched >= limit { break }
        matched += 1
        if skipped < options.skip {
          skipped += 1
          continue
        }
        results.append(document)
        if let limit = options.limit, limit > 0, results.count >= limit { break }
      }
    }
    if let projection = options.projection { results = results.map(projection.apply) }
    return results
  }

  /// The first document for each combination of values at `paths`, in order.
  static func distinct(_ documents: [Document], on paths: [FieldPath]) -> [Document] {
    var seen: [[Document]] = []
    var kept: [Document] = []
    for document in documents {
      // The values as one-element documents, compared in MongoDB's order.
      let key = paths.map { path in
        document.withUnsafeBytes { bytes in
          sortValue(RawValue(type: 0x03, pointer: bytes.baseAddress!), SortKey(path)).withElementBytes(key: "") {
            (try? Document(bytes: $0)) ?? Document()
          }
        }
      }
      let duplicate = seen.contains { other in
        zip(other, key).allSatisfy { a, b in
          a.withRawValue { rawA in b.withRawValue { rawB in compareDocuments(rawA, rawB) == 0 } }
        }
      }
      if !duplicate {
        seen.append(key)
        kept.append(document)
      }
    }
    return kept
  }
}
