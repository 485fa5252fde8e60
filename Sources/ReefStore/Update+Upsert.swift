import ReefBSON

extension Update {
  /// The document an upsert starts from: the filter's equality conditions, as MongoDB seeds an
  /// upsert before applying the update to it with `isInsert: true`.
  ///
  /// Equalities are `{a: 1}` (any value that is not an operator document or a regular
  /// expression), `{a: {$eq: 1}}` (also next to other operators), `{a: {$in: [1]}}` with one
  /// element, and the equalities inside `$and`, and inside an `$or` of a single clause. Dotted
  /// paths become nested documents (`{"a.b": 1}` seeds `{a: {b: 1}}`). Fields are ordered by
  /// path, with `_id` first; a path that overlaps one already seeded (`a` and `a.b`) is skipped.
  ///
  /// - Complexity: O(*n*) in the size of the filter, times the number of equalities.
  public static func upsertSeed(from filter: Document) -> Document {
    var equalities: [(path: String, value: BSON)] = []
    collectEqualities(filter, into: &equalities)
    equalities.sort { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
    if let id = equalities.firstIndex(where: { $0.path == "_id" }) {
      equalities.insert(equalities.remove(at: id), at: 0)
    }
    var root = UpdateNode.document(UpdateFields(Document()))
    var seeded: [[String]] = []
    for (dotted, value) in equalities {
      let path = dotted.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
      guard !path.contains(where: \.isEmpty) else { continue }
      let overlaps = seeded.contains { other in
        let common = min(other.count, path.count)
        return other.prefix(common) == path.prefix(common)
      }
      guard !overlaps else { continue }
      seeded.append(path)
      try? UpdateState.descend(&root, name: "", path: path, depth: 0, creates: true) { _ in .replace(value) }
    }
    guard case .document(let fields) = root else { return Document() }
    return fields.document
  }
}

/// Adds the equality conditions of `filter` to `equalities`.
private func collectEqualities(_ filter: Document, into equalities: inout [(path: String, value: BSON)]) {
  for element in filter {
    let key = element.key
    if key.hasPrefix("$") {
      guard key == "$and" || key == "$or", case .array(let clauses) = element.value else { continue }
      if key == "$or" && clauses.count != 1 { continue }
      for clause in clauses {
        if case .document(let clause) = clause { collectEqualities(clause, into: &equalities) }
      }
      continue
    }
    switch element.value {
    case .regex: continue
    case .document(let condition) where firstElement(condition)?.key.hasPrefix("$") == true:
      if let value = condition.value(forKey: "$eq") {
        equalities.append((key, value))
      } else if case .array(let values)? = condition.value(forKey: "$in"), values.count == 1, let value = values[0] {
        if case .regex = value { continue }
        equalities.append((key, value))
      }
    default:
      equalities.append((key, element.value))
    }
  }
}
