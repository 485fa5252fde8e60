import ReefBSON

/// Parses a Realm Query Language (NSPredicate-style) predicate string into a ``QueryNode`` and
/// its trailing `SORT`, `DISTINCT` and `LIMIT` clauses.
///
/// ```swift
/// let parsed = try parsePredicate("address.city = %@ AND age >= 21 SORT(name ASC) LIMIT(10)",
///                                 arguments: ["Los Angeles"])
/// ```
///
/// The language, as Realm Swift users write it:
/// - Comparisons `==` (`=`), `!=` (`<>`), `<`, `<=` (`=<`), `>`, `>=` (`=>`) between a key path
///   and a value, in either order (`5 < age` is `age > 5`).
/// - String operators `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE` (`*` and `?` wildcards), and
///   `==`/`!=` with a modifier: `[c]` ignores case, `[d]` diacritics, `[cd]` both.
/// - `IN {a, b}` or `IN $0` with an array argument; `value IN listKeyPath` (some element
///   equals the value); `BETWEEN {low, high}` (inclusive).
/// - `ANY`/`SOME`, `ALL`, `NONE` before a key path; without one a key path through a list means
///   `ANY`.
/// - `NOT`/`!`, `AND`/`&&`, `OR`/`||` (binding in that order), parentheses, `TRUEPREDICATE`,
///   `FALSEPREDICATE`. Keywords are case-insensitive.
/// - Aggregates `list.@count` (`@size`), `list.@min`, `@max`, `@sum`, `@avg`, also of a
///   field of the elements (`items.@sum.price`); `SUBQUERY(list, $x, predicate).@count`, where
///   key paths start with the variable (`$x.name`; `$x` alone is the element).
/// - Values: strings in single or double quotes with backslash escapes; integers (`.int64`,
///   also `0x…`); decimals with optional exponent (`.double`); `true`, `false`, `nil`, `NULL`;
///   `oid(<24 hex digits>)`; dates `YYYY-MM-DD@HH:MM:SS` with optional `:NANOSECONDS` (`T` may
///   stand for `@`; UTC) and `T<seconds>:<nanoseconds>` since the epoch (`.datetime`, truncated
///   to milliseconds); `uuid(…)` (binary subtype 4); `B64"…"` (generic binary).
/// - Arguments, as NSPredicate's format strings take them: `%@` takes the next argument in
///   order; so do the printf-style specifiers, which also check it: `%d`, `%i`, `%o`, `%u`,
///   `%x`, `%X` (with a length: `%ld`, `%lld`, `%hd`, `%hhd`, `%qd`, `%zd`…) an integer or a
///   Bool, `%f`, `%e`, `%g`, `%a` (also upper-case, `%lf`, `%Lf`) a number, `%s`, `%S` a
///   string; the value is substituted as given. `%K` takes a string argument in order and
///   substitutes it as a key path (`%K == %@` with `["name", "Jo"]` is `name == "Jo"`; also
///   `%K.%K`, `address.%K`). `$0`…`$n` take the argument at that index. Inside a quoted string
///   `%@` and `%K` are text. Flags, widths and precisions (`%5d`, `%.2f`), `%c`, `%p` and `%%`
///   outside a string are refused.
/// - After the condition, in any order and repeatable: `SORT(a ASC, b.c DESC)` (also `ASCENDING`,
///   `DESCENDING`), `DISTINCT(a, b)`, `LIMIT(n)` (several limits keep the smallest).
///
/// - Parameters:
///   - predicate: The predicate string.
///   - arguments: The values for `%@` and `$n`.
/// - Returns: The condition and the trailing clauses.
/// - Throws: ``QueryError`` with the 1-based ``QueryError/column`` of the offending token and a
///   message saying what was expected and what was found: syntax errors, unknown operators,
///   malformed literals, missing arguments, an argument of the wrong type (a non-array after
///   `IN`, a `%K` argument that is not a key path string, a string for `%d`), `BETWEEN` with
///   other than two values, and nesting deeper than 200 levels.
/// - Complexity: O(n) in the length of the predicate, plus the size of the arguments used.
public func parsePredicate(_ predicate: String, arguments: [BSON] = []) throws(QueryError) -> ParsedPredicate {
  var parser = try PredicateParser(predicate, arguments: arguments)
  return try parser.parse()
}

/// A recursive-descent parser over ``PredicateToken``s. Recursion happens only for parentheses
/// and `SUBQUERY`, and is capped at ``maximumDepth``.
struct PredicateParser {
  /// How deeply parentheses and subqueries may nest.
  static let maximumDepth = 200

  var tokens: [PredicateToken]
  var position = 0
  let arguments: [BSON]
  var depth = 0
  /// The variables of the enclosing `SUBQUERY`s, innermost last.
  var variables: [String] = []

  init(_ predicate: String, arguments: [BSON]) throws(QueryError) {
    tokens = try PredicateLexer.tokenize(predicate, arguments: arguments)
    self.arguments = arguments
  }

  // MARK: Tokens

  var current: PredicateToken { tokens[position] }

  func peek(_ offset: Int) -> PredicateToken { tokens[min(position + offset, tokens.count - 1)] }

  mutating func advance() {
    if position < tokens.count - 1 { position += 1 }
  }

  func error(_ kind: QueryError.Kind, _ message: String, at token: PredicateToken) -> QueryError {
    QueryError(kind, message, column: token.column)
  }

  mutating func expectSymbol(_ symbol: String, _ context: String) throws(QueryError) {
    guard current.isSymbol(symbol) else {
      throw error(.syntax, "expected '\(symbol)' \(context) but found \(current.described)", at: current)
    }
    advance()
  }

  /// Words that cannot be key paths where a key path or value is expected.
  static let reservedWords: Set<String> = [
    "AND", "OR", "NOT", "ANY", "SOME", "ALL", "NONE", "IN", "BETWEEN", "BEGINSWITH", "ENDSWITH", "CONTAINS",
    "LIKE", "TRUEPREDICATE", "FALSEPREDICATE", "SUBQUERY",
  ]

  func isClauseStart(_ token: PredicateToken, next: PredicateToken) -> Bool {
    guard let word = token.keyword, ["SORT", "DISTINCT", "LIMIT"].contains(word) else { return false }
    return next.isSymbol("(")
  }

  // MARK: Predicate

  mutating func parse() throws(QueryError) -> ParsedPredicate {
    if current.isEnd { throw error(.syntax, "expected a predicate but found end of predicate", at: current) }
    var result = ParsedPredicate(node: try orExpression())
    while !current.isEnd {
      guard isClauseStart(current, next: peek(1)), let word = current.keyword else {
        throw error(
          .syntax,
          "expected AND, OR, SORT(…), DISTINCT(…), LIMIT(…) or the end of the predicate but found \(current.described)",
          at: current)
      }
      advance()
      advance()  // "("
      switch word {
      case "SORT": try sortClause(into: &result)
      case "DISTINCT": try distinctClause(into: &result)
      default: try limitClause(into: &result)
      }
    }
    return result
  }

  func isOr(_ token: PredicateToken) -> Bool { token.isSymbol("||") || token.keyword == "OR" }
  func isAnd(_ token: PredicateToken) -> Bool { token.isSymbol("&&") || token.keyword == "AND" }
  func isNot(_ token: PredicateToken) -> Bool { token.isSymbol("!") || token.keyword == "NOT" }

  mutating func orExpression() throws(QueryError) -> QueryNode {
    var operands = [try andExpression()]
    while isOr(current) {
      advance()
      operands.append(try andExpression())
    }
    return operands.count == 1 ? operands[0] : .or(operands)
  }

  mutating func andExpression() throws(QueryError) -> QueryNode {
    var operands = [try notExpression()]
    while isAnd(current) {
      advance()
      operands.append(try notExpression())
    }
    return operands.count == 1 ? operands[0] : .and(operands)
  }

  /// `NOT`s are counted, not recursed into, and a pair cancels out (a match is true or
  /// false), so `!!!!…` builds no deep tree.
  mutating func notExpression() throws(QueryError) -> QueryNode {
    var negated = false
    while isNot(current) {
      negated.toggle()
      advance()
    }
    let node = try primary()
    return negated ? .not(node) : node
  }

  mutating func enterNesting(_ token: PredicateToken) throws(QueryError) {
    depth += 1
    if depth > Self.maximumDepth {
      throw error(
        .limit, "the predicate nests more than \(Self.maximumDepth) levels of parentheses or SUBQUERY", at: token)
    }
  }

  mutating func primary() throws(QueryError) -> QueryNode {
    let open = current
    if open.isSymbol("(") {
      try enterNesting(open)
      advance()
      let node = try orExpression()
      guard current.isSymbol(")") else {
        throw error(
          .syntax,
          "expected ')' to close the '(' at column \(open.column) but found \(current.described)", at: current)
      }
      advance()
      depth -= 1
      return node
    }
    switch current.keyword {
    case "TRUEPREDICATE":
      advance()
      return .constant(true)
    case "FALSEPREDICATE":
      advance()
      return .constant(false)
    default:
      return try comparison()
    }
  }

  // MARK: Comparisons

  /// One side of a comparison.
  enum OperandKind {
    case path(FieldPath)
    case aggregate(FieldPath, Aggregate, subpath: FieldPath?)
    case subquery(FieldPath, QueryNode)
    /// `map.@allKeys` (`keys` true) or `map.@allValues`: the names or the values of the map's
    /// entries.
    case mapEntries(FieldPath, keys: Bool)
    /// A literal or an argument (`argument` names it for messages).
    case value(BSON, argument: String?)
    /// `{a, b, c}`.
    case list([BSON])

    var isKeyPath: Bool {
      switch self {
      case .path, .aggregate, .subquery, .mapEntries: true
      case .value, .list: false
      }
    }
  }

  struct Operand {
    var kind: OperandKind
    /// The operand's first token (after its quantifier).
    var token: PredicateToken
    var quantifier: (Quantifier, PredicateToken)?
  }

  enum OperatorKind {
    case compare(ComparisonOperator)
    case string(StringOperator)
    case `in`
    case between
  }

  struct Operator {
    var kind: OperatorKind
    var options: StringOptions
    var modifier: String?
    var token: PredicateToken
    /// The operator as written, with its modifier: `==[c]`.
    var written: String { token.text + (modifier.map { "[\($0)]" } ?? "") }
  }

  mutating func comparison() throws(QueryError) -> QueryNode {
    let lhs = try operand(after: nil)
    let op = try comparisonOperator(after: lhs)
    let rhs = try operand(after: op)
    return try node(lhs, op, rhs)
  }

  mutating func comparisonOperator(after lhs: Operand) throws(QueryError) -> Operator {
    let token = current
    let kind: OperatorKind
    switch (token.kind, token.keyword) {
    case (.symbol, _):
      switch token.text {
      case "==", "=": kind = .compare(.equal)
      case "!=", "<>": kind = .compare(.notEqual)
      case "<": kind = .compare(.less)
      case "<=", "=<": kind = .compare(.lessOrEqual)
      case ">": kind = .compare(.greater)
      case ">=", "=>": kind = .compare(.greaterOrEqual)
      default: throw unknownOperator(after: lhs)
      }
    case (_, "BEGINSWITH"?): kind = .string(.beginsWith)
    case (_, "ENDSWITH"?): kind = .string(.endsWith)
    case (_, "CONTAINS"?): kind = .string(.contains)
    case (_, "LIKE"?): kind = .string(.like)
    case (_, "IN"?): kind = .in
    case (_, "BETWEEN"?): kind = .between
    default: throw unknownOperator(after: lhs)
    }
    advance()
    var op = Operator(kind: kind, options: [], modifier: nil, token: token)
    if current.isSymbol("[") {
      let open = current
      advance()
      guard case .word = current.kind, current.keyword != nil else {
        throw error(.syntax, "expected a modifier c, d or cd after '[' but found \(current.described)", at: current)
      }
      let modifier = current.text
      switch modifier.lowercased() {
      case "c": op.options = .caseInsensitive
      case "d": op.options = .diacriticInsensitive
      case "cd", "dc": op.options = [.caseInsensitive, .diacriticInsensitive]
      default:
        throw error(.unknownOperator, "unknown modifier '[\(modifier)]': expected [c], [d] or [cd]", at: current)
      }
      advance()
      guard current.isSymbol("]") else {
        throw error(
          .syntax,
          "expected ']' to close the modifier at column \(open.column) but found \(current.described)", at: current)
      }
      advance()
      op.modifier = modifier
      switch kind {
      case .string: break
      case .compare(.equal), .compare(.notEqual): break
      default:
        throw error(
          .syntax, "the modifier [\(modifier)] applies only to string operators, not to '\(token.text)'", at: open)
      }
    }
    return op
  }

  /// An unknown word where an operator goes is an unknown operator; anything else is a syntax error.
  func unknownOperator(after lhs: Operand) -> QueryError {
    let isWord: Bool
    if case .word = current.kind { isWord = true } else { isWord = false }
    return error(
      isWord ? .unknownOperator : .syntax,
      "expected an operator (==, !=, <, <=, >, >=, BEGINSWITH, ENDSWITH, CONTAINS, LIKE, IN, BETWEEN) after "
        + "\(lhs.token.described) but found \(current.described)", at: current)
  }

  /// A key path, a value, a list literal or a `SUBQUERY(…).@count`, with an optional quantifier.
  mutating func operand(after op: Operator?) throws(QueryError) -> Operand {
    var quantifier: (Quantifier, PredicateToken)?
    switch current.keyword {
    case "ANY"?, "SOME"?: quantifier = (.any, current)
    case "ALL"?: quantifier = (.all, current)
    case "NONE"?: quantifier = (.none, current)
    default: break
    }
    if let (_, token) = quantifier {
      advance()
      guard case .word = current.kind, !Self.reservedWords.contains(current.keyword ?? ""),
        !["TRUE", "FALSE", "NIL", "NULL"].contains(current.keyword ?? "")
      else {
        throw error(.syntax, "expected a key path after '\(token.text)' but found \(current.described)", at: current)
      }
    }
    let token = current
    let expected = op.map { "a value after '\($0.written)'" } ?? "a key path or a value"
    var kind: OperandKind
    switch token.kind {
    case .value(let value):
      kind = .value(value, argument: nil)
      advance()
    case .argument(let placeholder):
      kind = .value(try argument(placeholder, token), argument: token.text)
      advance()
    case .symbol where token.text == "{":
      kind = .list(try listLiteral())
    case .word:
      switch token.keyword {
      case "TRUE"?:
        kind = .value(.bool(true), argument: nil)
        advance()
      case "FALSE"?:
        kind = .value(.bool(false), argument: nil)
        advance()
      case "NIL"?, "NULL"?:
        kind = .value(.null, argument: nil)
        advance()
      case "SUBQUERY"? where peek(1).isSymbol("("):
        kind = try subquery()
      case let word? where Self.reservedWords.contains(word) || isClauseStart(token, next: peek(1)):
        throw error(.syntax, "expected \(expected) but found \(token.described)", at: token)
      default:
        kind = try keyPath(token)
        advance()
      }
    case .symbol, .aggregateSuffix, .end:
      throw error(.syntax, "expected \(expected) but found \(token.described)", at: token)
    }
    if let (_, quantifierToken) = quantifier {
      // A key path, or a map's keys or values (`ANY prices.@allValues > 10`).
      switch kind {
      case .path, .mapEntries: break
      default:
        throw error(
          .syntax,
          "'\(quantifierToken.text)' applies to a key path, not to the aggregate \(token.described)",
          at: quantifierToken)
      }
    }
    return Operand(kind: kind, token: token, quantifier: quantifier)
  }

  /// The value of an argument placeholder, checked against what its specifier accepts (`%d`
  /// an integer or a Bool, `%f` a number, `%s` a string).
  func argument(_ placeholder: PredicateArgument, _ token: PredicateToken) throws(QueryError) -> BSON {
    let number = placeholder.isSequential ? " number \(placeholder.index + 1)" : ""
    guard placeholder.index < arguments.count else {
      throw error(
        .argument, "no argument for '\(token.text)'\(number): \(arguments.count) argument(s) were given", at: token)
    }
    let value = arguments[placeholder.index]
    let expected: String
    switch (placeholder.conversion, value) {
    case (.object, _), (.integer, .int32), (.integer, .int64), (.integer, .bool), (.floatingPoint, .double),
      (.floatingPoint, .int32), (.floatingPoint, .int64), (.floatingPoint, .decimal128), (.string, .string):
      return value
    case (.integer, _): expected = "an integer or a Bool"
    case (.floatingPoint, _): expected = "a number"
    case (.string, _): expected = "a string"
    }
    throw error(
      .argument,
      "the argument for '\(token.text)'\(number) must be \(expected) but is \(Self.typeName(value))", at: token)
  }

  /// `{a, b, c}`: values and arguments, possibly none.
  mutating func listLiteral() throws(QueryError) -> [BSON] {
    let open = current
    advance()
    var values: [BSON] = []
    if current.isSymbol("}") {
      advance()
      return values
    }
    while true {
      let token = current
      switch (token.kind, token.keyword) {
      case (.value(let value), _): values.append(value)
      case (.argument(let placeholder), _): values.append(try argument(placeholder, token))
      case (_, "TRUE"?): values.append(.bool(true))
      case (_, "FALSE"?): values.append(.bool(false))
      case (_, "NIL"?), (_, "NULL"?): values.append(.null)
      default:
        throw error(
          .syntax, "expected a value in the list at column \(open.column) but found \(token.described)", at: token)
      }
      advance()
      if current.isSymbol("}") {
        advance()
        return values
      }
      guard current.isSymbol(",") else {
        throw error(
          .syntax,
          "expected ',' or '}' in the list at column \(open.column) but found \(current.described)", at: current)
      }
      advance()
    }
  }

  // MARK: Key paths

  /// Resolves a key path word: the SUBQUERY variable, aggregates, and the remaining segments.
  func keyPath(_ token: PredicateToken) throws(QueryError) -> OperandKind {
    var segments = token.text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    if segments[0].hasPrefix("$") {
      let variable = segments[0]
      guard let innermost = variables.last, variables.contains(variable) else {
        throw error(
          .syntax,
          "unknown variable '\(variable)': variables are declared by SUBQUERY(list, \(variable), predicate)",
          at: token)
      }
      guard variable == innermost else {
        throw error(
          .unsupported,
          "'\(token.text)' uses the outer SUBQUERY variable '\(variable)' inside the SUBQUERY of '\(innermost)', "
            + "which is not supported", at: token)
      }
      segments.removeFirst()
    } else if let innermost = variables.last {
      throw error(
        .syntax,
        "expected a key path starting with '\(innermost)' inside its SUBQUERY but found \(token.described)", at: token)
    }
    guard let at = segments.firstIndex(where: { $0.hasPrefix("@") }) else {
      return .path(FieldPath(segments: segments.map(FieldPath.Segment.init)))
    }
    let name = segments[at]
    if name == "@allKeys" || name == "@allValues" {
      guard at == segments.count - 1 else {
        throw error(
          .syntax, "expected nothing after '\(name)' in '\(token.text)' but found '.\(segments[at + 1])'", at: token)
      }
      return .mapEntries(FieldPath(segments: segments[..<at].map(FieldPath.Segment.init)), keys: name == "@allKeys")
    }
    let aggregate: Aggregate
    switch name.lowercased() {
    case "@count", "@size": aggregate = .count
    case "@min": aggregate = .min
    case "@max": aggregate = .max
    case "@sum": aggregate = .sum
    case "@avg": aggregate = .avg
    default:
      throw error(
        .unknownOperator,
        "unknown aggregate '\(name)': expected @count, @size, @min, @max, @sum, @avg, @allKeys or @allValues", at: token
      )
    }
    let rest = Array(segments[(at + 1)...])
    if let other = rest.first(where: { $0.hasPrefix("@") }) {
      throw error(
        .syntax, "only one aggregate is allowed in a key path, but '\(token.text)' also has '\(other)'", at: token)
    }
    if aggregate == .count && !rest.isEmpty {
      throw error(.syntax, "expected nothing after '\(name)' in '\(token.text)' but found '.\(rest[0])'", at: token)
    }
    let path = FieldPath(segments: segments[..<at].map(FieldPath.Segment.init))
    let subpath = rest.isEmpty ? nil : FieldPath(segments: rest.map(FieldPath.Segment.init))
    return .aggregate(path, aggregate, subpath: subpath)
  }

  /// `SUBQUERY(list, $x, predicate).@count`; the current token is `SUBQUERY`.
  mutating func subquery() throws(QueryError) -> OperandKind {
    let start = current
    try enterNesting(start)
    advance()
    advance()  // "("
    let listToken = current
    guard case .word = listToken.kind, !Self.reservedWords.contains(listToken.keyword ?? "") else {
      throw error(
        .syntax,
        "expected a list key path as the first argument of SUBQUERY but found \(listToken.described)", at: listToken)
    }
    guard case .path(let list) = try keyPath(listToken) else {
      throw error(
        .syntax,
        "expected a list key path without an aggregate in SUBQUERY but found \(listToken.described)", at: listToken)
    }
    advance()
    try expectSymbol(",", "after the list key path of SUBQUERY")
    let variableToken = current
    guard case .word = variableToken.kind, variableToken.text.hasPrefix("$"), !variableToken.text.contains(".") else {
      throw error(
        .syntax,
        "expected a variable such as '$x' as the second argument of SUBQUERY but found \(variableToken.described)",
        at: variableToken)
    }
    guard !variables.contains(variableToken.text) else {
      throw error(
        .syntax, "the variable '\(variableToken.text)' is already used by an enclosing SUBQUERY", at: variableToken)
    }
    advance()
    try expectSymbol(",", "after the variable of SUBQUERY")
    variables.append(variableToken.text)
    let node = try orExpression()
    variables.removeLast()
    guard current.isSymbol(")") else {
      throw error(
        .syntax,
        "expected ')' to close the SUBQUERY at column \(start.column) but found \(current.described)", at: current)
    }
    advance()
    depth -= 1
    guard case .aggregateSuffix(let name) = current.kind, ["count", "size"].contains(name.lowercased()) else {
      throw error(.syntax, "expected '.@count' after SUBQUERY(…) but found \(current.described)", at: current)
    }
    advance()
    return .subquery(list, node)
  }

}
