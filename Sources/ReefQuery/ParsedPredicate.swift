import ReefBSON

/// A Realm-style predicate string after parsing: the condition and its trailing
/// `SORT(…)`, `DISTINCT(…)` and `LIMIT(…)` clauses.
public struct ParsedPredicate: Sendable {
  /// The condition.
  public var node: QueryNode
  /// `SORT(a ASC, b DESC)`, in order; several SORT clauses append.
  public var sort: [SortKey] = []
  /// `DISTINCT(a, b)`: keep the first document for each combination of these values.
  public var distinct: [FieldPath] = []
  /// `LIMIT(n)`.
  public var limit: Int?

  public init(node: QueryNode, sort: [SortKey] = [], distinct: [FieldPath] = [], limit: Int? = nil) {
    self.node = node
    self.sort = sort
    self.distinct = distinct
    self.limit = limit
  }
}
