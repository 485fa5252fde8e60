import ReefBSON

/// A compiled query: tests documents by walking their bytes.
///
/// Make one from a MongoDB filter document or from a Realm-style predicate string; both compile
/// to the same matcher. A `Query` is immutable and `Sendable`, so one query can test documents
/// on several threads.
///
/// ```swift
/// let query = try Query(filter: ["address.city": "Los Angeles"])
/// let matches = documents.filter(query.matches)
/// ```
public struct Query: Sendable {
  /// The condition, as parsed.
  public let node: QueryNode
  /// The sort a predicate's `SORT(…)` asked for.
  public var sort: [SortKey] = []
  /// The paths a predicate's `DISTINCT(…)` asked for.
  public var distinct: [FieldPath] = []
  /// The limit a predicate's `LIMIT(…)` asked for.
  public var limit: Int?

  @usableFromInline let matcher: Matcher
  /// Whether some test is a regular expression, whose matching can pass a limit.
  @usableFromInline let usesRegex: Bool

  /// Compiles a query tree. Throws for invalid regular expressions, and for patterns over
  /// Reef's limits (``QueryError/Kind/limit``).
  public init(_ node: QueryNode) throws(QueryError) {
    self.node = node
    matcher = try compile(node)
    usesRegex = node.usesRegex
  }

  /// Compiles a MongoDB filter document.
  public init(filter: Document) throws(QueryError) {
    try self.init(parseFilter(filter))
  }

  /// Compiles a Realm-style predicate string (`"address.city == %@"`) with its arguments
  /// for `%@`, `%K`, `%d`, `%f`, `%s`… and `$0…$n` (see ``parsePredicate(_:arguments:)``). Its `SORT`, `DISTINCT` and `LIMIT` clauses land in `sort`,
  /// `distinct` and `limit`.
  public init(predicate: String, arguments: [BSON] = []) throws(QueryError) {
    try self.init(parsePredicate(predicate, arguments: arguments))
  }

  /// Compiles a parsed predicate (see ``parsePredicate(_:arguments:)``); its `SORT`, `DISTINCT`
  /// and `LIMIT` clauses land in `sort`, `distinct` and `limit`.
  public init(_ parsed: ParsedPredicate) throws(QueryError) {
    try self.init(parsed.node)
    sort = parsed.sort
    distinct = parsed.distinct
    limit = parsed.limit
  }

  /// Whether the document matches.
  ///
  /// A regular expression that goes past its limits on a string of the document does not match
  /// it; ``evaluate(_:)`` throws instead.
  @inlinable public func matches(_ document: Document) -> Bool {
    document.withUnsafeBytes { bytes in matcher.matches(RawValue(type: 0x03, pointer: bytes.baseAddress!)) }
  }

  /// Whether the document in `bytes` matches, without making a `Document` of them.
  ///
  /// For Reef's own modules only: the bytes must be exactly one document that Reef validated
  /// (the store passes documents whose checksum it has just verified); they are trusted.
  @_spi(ReefInternal)
  @inlinable public func matches(trustedBytes bytes: UnsafeRawBufferPointer) -> Bool {
    matcher.matches(RawValue(type: 0x03, pointer: bytes.baseAddress!))
  }
}

extension Query {
  /// Whether the document matches, or the error that ends the query: a regular expression that
  /// went past its match, depth or memory limit on one of the document's strings
  /// (``QueryError/Kind/regexLimit``).
  ///
  /// Scans use this, so that a pathological pattern (`^(a|aa)+b$` on a long run of `a`s) ends
  /// the query in milliseconds with an error instead of running for hours or reporting no match.
  /// - Throws: ``QueryError`` of kind ``QueryError/Kind/regexLimit``.
  @inlinable public func evaluate(_ document: Document) throws(QueryError) -> Bool {
    guard usesRegex else { return matches(document) }
    return try document.withUnsafeBytes { bytes throws(QueryError) in try evaluateWithRegex(bytes) }
  }

  /// ``evaluate(_:)`` on the document in `bytes`, trusted as ``matches(trustedBytes:)`` trusts them.
  @_spi(ReefInternal)
  @inlinable public func evaluate(trustedBytes bytes: UnsafeRawBufferPointer) throws(QueryError) -> Bool {
    guard usesRegex else { return matches(trustedBytes: bytes) }
    return try evaluateWithRegex(bytes)
  }

  @usableFromInline func evaluateWithRegex(_ bytes: UnsafeRawBufferPointer) throws(QueryError) -> Bool {
    let scratch = RegexScratch.current
    _ = scratch.take()
    let matched = matches(trustedBytes: bytes)
    if let failure = scratch.take() { throw failure }
    return matched
  }
}

extension QueryNode {
  /// Whether a test of this tree is a regular expression.
  var usesRegex: Bool {
    switch self {
    case .constant, .exists, .size, .aggregate: return false
    case .and(let children), .or(let children), .nor(let children): return children.contains { $0.usesRegex }
    case .not(let child), .elementMatch(_, let child), .subquery(_, let child, _, _): return child.usesRegex
    case .match(_, let test, _): return test.usesRegex
    case .elementMatchValue(_, let tests): return tests.contains { $0.usesRegex }
    }
  }
}

extension ValueTest {
  /// Whether this test or one inside it is a regular expression.
  var usesRegex: Bool {
    switch self {
    case .regex: return true
    case .in(let values): return values.contains { if case .regex = $0 { true } else { false } }
    case .compare, .type, .mod, .string, .exists, .size: return false
    case .all(let tests), .elementMatch(let tests): return tests.contains { $0.usesRegex }
    case .elementMatchQuery(let query): return query.usesRegex
    case .not(let test), .anyFieldValue(let test), .anyFieldName(let test): return test.usesRegex
    }
  }
}

/// Compiles a query tree into matchers.
func compile(_ node: QueryNode) throws(QueryError) -> Matcher {
  switch node {
  case .constant(let value): return ConstantMatcher(value)
  case .and(let children):
    if children.count == 1 { return try compile(children[0]) }
    return AndMatcher(try compileAll(children))
  case .or(let children):
    if children.count == 1 { return try compile(children[0]) }
    return OrMatcher(try compileAll(children))
  case .nor(let children): return NotMatcher(OrMatcher(try compileAll(children)))
  case .not(let child): return NotMatcher(try compile(child))
  case .match(let path, let test, let quantifier):
    if quantifier == .mongo, case .compare(.equal, let value) = test, let fast = EqualityMatcher(path, value) {
      return fast
    }
    return PathMatcher(path, try compile(test), quantifier)
  case .exists(let path, let exists): return ExistsMatcher(path, exists)
  case .size(let path, let size): return SizeMatcher(path, size)
  case .elementMatch(let path, let query): return ElementMatcher(path, query: try compile(query), tests: [])
  case .elementMatchValue(let path, let tests):
    return ElementMatcher(path, query: nil, tests: try compileAll(tests))
  case .aggregate(let path, let aggregate, let subpath, let comparison, let value):
    return AggregateMatcher(path, aggregate, subpath, .compare(comparison, Literal(value)))
  case .subquery(let path, let query, let comparison, let value):
    return SubqueryMatcher(path, try compile(query), .compare(comparison, Literal(value)))
  }
}

private func compileAll(_ nodes: [QueryNode]) throws(QueryError) -> [Matcher] {
  var matchers: [Matcher] = []
  for node in nodes { matchers.append(try compile(node)) }
  return matchers
}

func compile(_ test: ValueTest) throws(QueryError) -> CompiledTest {
  switch test {
  case .compare(let comparison, let value): return .compare(comparison, Literal(value))
  case .in(let values):
    var literals: [Literal] = []
    var regexes: [RegexTest] = []
    for value in values {
      if case .regex(let regex) = value {
        regexes.append(try RegexTest(pattern: regex.pattern, options: regex.options))
      } else {
        literals.append(Literal(value))
      }
    }
    return .in(literals, regexes)
  case .regex(let pattern, let options): return .regex(try RegexTest(pattern: pattern, options: options))
  case .type(let types): return .type(Set(types.map(\.rawValue)))
  case .mod(let divisor, let remainder): return .mod(divisor: divisor, remainder: remainder)
  case .string(let operation, let pattern, let options): return .string(StringPattern(operation, pattern, options))
  case .all(let tests): return .all(try compileAll(tests))
  case .elementMatch(let tests): return .elementMatch(try compileAll(tests))
  case .elementMatchQuery(let query): return .elementMatchQuery(try compile(query))
  case .exists(let exists): return .exists(exists)
  case .size(let size): return .size(size)
  case .not(let test): return .not(try compile(test))
  case .anyFieldValue(let test): return .anyFieldValue(try compile(test))
  case .anyFieldName(let test): return .anyFieldName(try compile(test))
  }
}

private func compileAll(_ tests: [ValueTest]) throws(QueryError) -> [CompiledTest] {
  var compiled: [CompiledTest] = []
  for test in tests { compiled.append(try compile(test)) }
  return compiled
}
