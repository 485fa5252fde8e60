import ReefBSON

/// The trailing `SORT`, `DISTINCT` and `LIMIT` clauses of a predicate.
extension PredicateParser {
  /// The current token as a plain key path for SORT and DISTINCT.
  mutating func plainKeyPath(_ clause: String) throws(QueryError) -> FieldPath {
    let token = current
    guard case .word = token.kind, !token.text.hasPrefix("$"), !token.text.contains("@") else {
      throw error(.syntax, "expected a key path in \(clause)(…) but found \(token.described)", at: token)
    }
    advance()
    return FieldPath(token.text)
  }

  mutating func sortClause(into result: inout ParsedPredicate) throws(QueryError) {
    while true {
      let path = try plainKeyPath("SORT")
      switch current.keyword {
      case "ASC"?, "ASCENDING"?: result.sort.append(SortKey(path, ascending: true))
      case "DESC"?, "DESCENDING"?: result.sort.append(SortKey(path, ascending: false))
      default:
        throw error(
          .syntax, "expected ASC or DESC after '\(path)' in SORT(…) but found \(current.described)", at: current)
      }
      advance()
      if current.isSymbol(")") { break }
      try expectSymbol(",", "or ')' in SORT(…)")
    }
    advance()
  }

  mutating func distinctClause(into result: inout ParsedPredicate) throws(QueryError) {
    while true {
      result.distinct.append(try plainKeyPath("DISTINCT"))
      if current.isSymbol(")") { break }
      try expectSymbol(",", "or ')' in DISTINCT(…)")
    }
    advance()
  }

  mutating func limitClause(into result: inout ParsedPredicate) throws(QueryError) {
    let token = current
    let value: BSON
    switch token.kind {
    case .value(let v): value = v
    case .argument(let placeholder): value = try argument(placeholder, token)
    default: throw error(.syntax, "expected a count in LIMIT(…) but found \(token.described)", at: token)
    }
    let count: Int64
    switch value {
    case .int64(let n): count = n
    case .int32(let n): count = Int64(n)
    default: throw error(.badValue, "expected a whole number in LIMIT(…) but found \(token.described)", at: token)
    }
    guard count >= 0, let limit = Int(exactly: count) else {
      throw error(.badValue, "expected a count of zero or more in LIMIT(…) but found \(token.described)", at: token)
    }
    result.limit = min(result.limit ?? limit, limit)
    advance()
    try expectSymbol(")", "to close LIMIT(…)")
  }
}
