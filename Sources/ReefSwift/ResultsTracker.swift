import ReefBSON
import ReefQuery
import ReefStore

/// What a `Results` observer remembers of its results between notifications, so that a commit
/// that changed a few objects costs work in proportion to them, not to the results.
///
/// The store returns a query's documents in `_id` order, and its sorts are stable: the results'
/// order is the sort's order, then `_id`'s. The tracker keeps each object's `_id` with its sort
/// values, in that order. For a commit that changed `k` objects of the collection, it reads
/// those `k` documents, tests them against the query and finds their old and new places by
/// binary search: O(*k* log *n*) comparisons and, for a few changes, one move of the array's
/// tail per change (for more, one pass that merges them in), instead of reading and sorting
/// every match again.
///
/// Results whose answer depends on other objects than their own (conditions or sorts through
/// links or linking objects, `distinct`) and batches that do not say exactly which objects
/// changed (a reset collection, a feed that was trimmed) are read again in full, as are commits
/// that changed more than a sixteenth of the results.
final class ResultsTracker<Element: Object> {
  /// The results followed: the same query, in the `Reef` whose state the tracker moves to
  /// (the async sequences give it a new frozen `Reef` for each batch).
  var results: Results<Element>
  private let collection: String
  /// The results' sort (nil: `_id` order).
  private let sort: SortSpecification?
  /// Whether the results can be followed object by object (see the type's comment).
  let isIncremental: Bool
  /// The results' objects in order: their `_id` and sort values (empty without a sort).
  private(set) var entries: [(id: BSON, values: [BSON])] = []
  /// The sort values of each object in the results, by `_id` (its ``DocumentChange/identity(of:)``:
  /// the feed may name a document by an `_id` of another number type than the one stored).
  private var members: [BSON: [BSON]] = [:]
  /// Set when an update failed: the results the observer last saw are still ``entries``, and
  /// the changes of the failed batch are not in them, so the next update reads everything again.
  private var isStale = false
  /// Only the `_id`s, in order, for results followed by reading them again.
  private var ids: [BSON] = []

  init(_ results: Results<Element>) throws(ReefError) {
    self.results = results
    collection = results.schema.className
    sort = results.sortKeys.isEmpty ? nil : SortSpecification(results.sortKeys)
    isIncremental =
      results.distinctPaths.isEmpty && results.base == nil && !ResultsTracker.dependsOnOtherObjects(results.schema)
    try reload()
  }

  /// Whether a type's results may depend on other objects than their own: it has links (a
  /// condition or sort may go through them) or linking objects.
  static func dependsOnOtherObjects(_ schema: ObjectSchema) -> Bool {
    schema.allProperties.contains { $0.isLink || $0.type == .linkingObjects }
  }

  /// The number of objects in the results.
  var count: Int { isIncremental ? entries.count : ids.count }

  /// Reads the results in full.
  private func reload() throws(ReefError) {
    guard isIncremental else {
      ids = try results.fetchIDs()
      return
    }
    var entries: [(id: BSON, values: [BSON])] = []
    var members: [BSON: [BSON]] = [:]
    let sort = sort
    try results.forEachDocument { (document) throws(ReefError) in
      let id = document["_id"] ?? .null
      let values = try sort.map { (sort) throws(ReefError) in try sortValues(sort, document) } ?? []
      entries.append((id, values))
      members[DocumentChange.identity(of: id)] = values
    }
    self.entries = entries
    self.members = members
  }

  private func sortValues(_ sort: SortSpecification, _ document: Document) throws(ReefError) -> [BSON] {
    do {
      return try sort.sortValues(of: document)
    } catch {
      throw queryFailed(error)
    }
  }

  private func queryFailed(_ error: QueryError) -> ReefError {
    var wrapped = ReefError(.invalidQuery, "the query on \(collection) failed: \(error)", type: collection)
    wrapped.queryError = error
    return wrapped
  }

  /// The change the batch made to the results (read in the `Reef`'s current state), after
  /// which the tracker holds the new results; nil when nothing of them changed.
  /// - Parameter modified: the `_id`s whose changes count as modifications (nil: every object
  ///   may have changed).
  func update(batch: ChangeBatch, modified: Set<BSON>?) throws(ReefError) -> CollectionDiff? {
    let wasStale = isStale
    isStale = true
    let diff = try update(batch: batch, modified: modified, stale: wasStale)
    isStale = false
    return diff
  }

  private func update(batch: ChangeBatch, modified: Set<BSON>?, stale: Bool) throws(ReefError) -> CollectionDiff? {
    // After a failed update, what changed since the results last seen is not known.
    let modified = stale ? nil : modified.map { Set($0.map(DocumentChange.identity(of:))) }
    let exact =
      !stale && isIncremental && batch.isComplete
      && !batch.commits.contains { $0.resetCollections.contains(collection) }
    if exact {
      var changed: [BSON] = []
      var seen: Set<BSON> = []
      for commit in batch.commits {
        for change in commit.changes where change.collection == collection {
          if seen.insert(DocumentChange.identity(of: change.id)).inserted { changed.append(change.id) }
        }
      }
      if changed.isEmpty { return nil }
      if changed.count <= max(16, entries.count / 16) {
        return try apply(changed, modified: modified)
      }
    }
    return try reloadAndDiff(modified: modified)
  }

  /// The order of two objects in the results: their sort values, then their `_id`s.
  private func compare(_ a: (id: BSON, values: [BSON]), _ b: (id: BSON, values: [BSON])) -> Int {
    if let sort {
      let order = sort.compare(sortValues: a.values, b.values)
      if order != 0 { return order }
    }
    return compareBSON(a.id, b.id)
  }

  /// The first position whose object does not come before `entry`.
  private func position(of entry: (id: BSON, values: [BSON])) -> Int {
    var low = 0
    var high = entries.count
    while low < high {
      let middle = (low + high) / 2
      if compare(entries[middle], entry) < 0 { low = middle + 1 } else { high = middle }
    }
    return low
  }

  /// Follows the objects `changed` (each once) to their new places.
  private func apply(_ changed: [BSON], modified: Set<BSON>?) throws(ReefError) -> CollectionDiff? {
    let query = try results.compiledQuery()
    // Where the changed objects were, and what they are now.
    var before: [(id: BSON, position: Int)] = []
    var after: [(id: BSON, values: [BSON])] = []
    for id in changed {
      if let values = members[DocumentChange.identity(of: id)] {
        let position = position(of: (id, values))
        guard position < entries.count, compareBSON(entries[position].id, id) == 0 else {
          // The tracker lost its order: read everything again (never expected).
          return try reloadAndDiff(modified: modified)
        }
        before.append((DocumentChange.identity(of: id), position))
      }
      guard let document = try results.readDocument(id: id) else { continue }
      // The `_id` stored, of the type the results read.
      let storedID = document["_id"] ?? id
      let matches: Bool
      do {
        matches = try query.evaluate(document)
      } catch {
        throw queryFailed(error)
      }
      guard matches else { continue }
      let values = try sort.map { (sort) throws(ReefError) in try sortValues(sort, document) } ?? []
      after.append((storedID, values))
    }
    // Out of the old order, then into the new.
    before.sort { $0.position < $1.position }
    for (key, _) in before { members[key] = nil }
    for entry in after { members[DocumentChange.identity(of: entry.id)] = entry.values }
    var newPositions: [BSON: Int] = [:]
    if before.count + after.count <= 8 {
      // A few: moved in place (each a move of the array's tail).
      for (_, position) in before.reversed() { entries.remove(at: position) }
      for entry in after { entries.insert(entry, at: position(of: entry)) }
      for entry in after { newPositions[DocumentChange.identity(of: entry.id)] = position(of: entry) }
    } else {
      // More: one pass over the array, merging the changed objects in their order, each at
      // the place a binary search found for it in the old array (whose removed objects are
      // skipped).
      after.sort { compare($0, $1) < 0 }
      let places = after.map { position(of: $0) }
      var merged: [(id: BSON, values: [BSON])] = []
      merged.reserveCapacity(entries.count - before.count + after.count)
      var removed = before.makeIterator()
      var nextRemoved = removed.next()?.position
      var added = 0
      for (position, entry) in entries.enumerated() {
        while added < after.count, places[added] <= position {
          newPositions[DocumentChange.identity(of: after[added].id)] = merged.count
          merged.append(after[added])
          added += 1
        }
        if position == nextRemoved {
          nextRemoved = removed.next()?.position
          continue
        }
        merged.append(entry)
      }
      while added < after.count {
        newPositions[DocumentChange.identity(of: after[added].id)] = merged.count
        merged.append(after[added])
        added += 1
      }
      entries = merged
    }
    return ResultsTracker.diff(before: before, after: newPositions, modified: modified)
  }

  /// Reads the results again and compares them with the old ones by the `_id`s'
  /// ``DocumentChange/identity(of:)`` (`modified` holds identities too).
  private func reloadAndDiff(modified: Set<BSON>?) throws(ReefError) -> CollectionDiff? {
    let oldIDs = (isIncremental ? entries.map(\.id) : ids).map(DocumentChange.identity(of:))
    try reload()
    let newIDs = (isIncremental ? entries.map(\.id) : ids).map(DocumentChange.identity(of:))
    let diff = CollectionDiff(old: oldIDs, new: newIDs, modified: modified)
    return diff.isEmpty ? nil : diff
  }

  /// The change set of objects that moved from `before` (old positions) to `after` (new
  /// positions) while every other object kept its relative order.
  ///
  /// An object in both stayed in place when as many unchanged objects come before it as did
  /// before, and it keeps its order with the other changed objects that stayed (a longest
  /// increasing run of them); it is then a modification (when `modified` says so), otherwise a
  /// deletion and an insertion.
  static func diff(before: [(id: BSON, position: Int)], after: [BSON: Int], modified: Set<BSON>?)
    -> CollectionDiff?
  {
    var diff = CollectionDiff()
    let oldPositions = before.map(\.position)  // ascending
    let newPositions = after.values.sorted()
    /// How many of `sorted` are below `value`.
    func below(_ sorted: [Int], _ value: Int) -> Int {
      var low = 0
      var high = sorted.count
      while low < high {
        let middle = (low + high) / 2
        if sorted[middle] < value { low = middle + 1 } else { high = middle }
      }
      return low
    }
    var candidates: [(id: BSON, old: Int, new: Int)] = []
    var inBoth: Set<BSON> = []
    for (id, old) in before {
      guard let new = after[id] else {
        diff.deletions.append(old)
        continue
      }
      inBoth.insert(id)
      let unchangedBefore = old - below(oldPositions, old)
      let unchangedAfter = new - below(newPositions, new)
      if unchangedBefore == unchangedAfter {
        candidates.append((id, old, new))
      } else {
        diff.deletions.append(old)
        diff.insertions.append(new)
      }
    }
    for (id, new) in after where !inBoth.contains(id) { diff.insertions.append(new) }
    let stayed = CollectionDiff.longestIncreasing(candidates.map(\.new))
    for (index, candidate) in candidates.enumerated() {
      if stayed.contains(index) {
        if modified?.contains(candidate.id) ?? true { diff.modifications.append(candidate.old) }
      } else {
        diff.deletions.append(candidate.old)
        diff.insertions.append(candidate.new)
      }
    }
    diff.deletions.sort()
    diff.insertions.sort()
    diff.modifications.sort()
    return diff.isEmpty ? nil : diff
  }
}
