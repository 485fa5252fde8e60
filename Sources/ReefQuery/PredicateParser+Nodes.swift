import ReefBSON

/// Building the query tree: a comparison's operands and operator become a ``QueryNode``.
extension PredicateParser {
  func node(_ lhs: Operand, _ op: Operator, _ rhs: Operand) throws(QueryError) -> QueryNode {
    var lhs = lhs
    var rhs = rhs
    var op = op
    if !lhs.kind.isKeyPath && rhs.kind.isKeyPath {
      if case .in = op.kind { return try valueIn(lhs, op, rhs) }
      switch op.kind {
      case .compare(.less): op.kind = .compare(.greater)
      case .compare(.lessOrEqual): op.kind = .compare(.greaterOrEqual)
      case .compare(.greater): op.kind = .compare(.less)
      case .compare(.greaterOrEqual): op.kind = .compare(.lessOrEqual)
      case .compare: break
      case .string, .between, .in:
        throw error(
          .syntax,
          "'\(op.written)' needs the key path on its left, as in 'name \(op.written) value', but found \(lhs.token.described)",
          at: lhs.token)
      }
      swap(&lhs, &rhs)
    }
    guard !rhs.kind.isKeyPath else {
      throw error(
        .unsupported,
        "comparing two key paths (\(lhs.token.described) and \(rhs.token.described)) is not supported; compare a key path with a value",
        at: rhs.token)
    }
    switch lhs.kind {
    case .path(let path):
      return .match(path, try valueTest(op, rhs), lhs.quantifier?.0 ?? .any)
    case .aggregate(let path, let aggregate, let subpath):
      return try countLike(op, rhs, numeric: aggregate == .count, what: "'\(aggregate.rawValue)'") {
        .aggregate(path, aggregate, subpath: subpath, $0, $1)
      }
    case .subquery(let list, let query):
      return try countLike(op, rhs, numeric: true, what: "SUBQUERY(…).@count") { .subquery(list, query, $0, $1) }
    case .mapEntries(let path, let keys):
      // ANY (the default): some entry passes; ALL: none fails (true for an empty map); NONE: none
      // passes.
      let test = try valueTest(op, rhs)
      func entries(_ test: ValueTest) -> ValueTest { keys ? .anyFieldName(test) : .anyFieldValue(test) }
      switch lhs.quantifier?.0 ?? .any {
      case .all: return .match(path, .not(entries(.not(test))), .any)
      case .none: return .match(path, .not(entries(test)), .any)
      case .any, .mongo: return .match(path, entries(test), .any)
      }
    case .value, .list:
      throw error(
        .syntax,
        "expected a key path on one side of '\(op.written)' but found the values \(lhs.token.described) and \(rhs.token.described)",
        at: lhs.token)
    }
  }

  /// `value IN listKeyPath`: some element of the list equals the value.
  func valueIn(_ lhs: Operand, _ op: Operator, _ rhs: Operand) throws(QueryError) -> QueryNode {
    guard case .value(let value, _) = lhs.kind else {
      throw error(.syntax, "expected a single value before 'IN \(rhs.token.text)' but found a list", at: lhs.token)
    }
    guard case .path(let path) = rhs.kind else {
      throw error(
        .syntax,
        "expected a list key path after '\(lhs.token.text) IN' but found \(rhs.token.described)", at: rhs.token)
    }
    if let modifier = op.modifier {
      throw error(.unsupported, "the modifier [\(modifier)] is not supported with IN", at: op.token)
    }
    return .match(path, .compare(.equal, value), rhs.quantifier?.0 ?? .any)
  }

  /// The values of `{…}` or an array argument, after IN or BETWEEN.
  func listValues(_ operand: Operand, _ op: Operator) throws(QueryError) -> [BSON] {
    switch operand.kind {
    case .list(let values): return values
    case .value(.array(let array), _): return Array(array)
    case .value(let value, let argument?):
      throw error(
        .badValue,
        "the argument \(argument) after '\(op.written)' must be an array but is \(Self.typeName(value))",
        at: operand.token)
    default:
      throw error(
        .syntax,
        "expected a list {…} or an array argument after '\(op.written)' but found \(operand.token.described)",
        at: operand.token)
    }
  }

  func betweenBounds(_ operand: Operand, _ op: Operator) throws(QueryError) -> (BSON, BSON) {
    let values = try listValues(operand, op)
    guard values.count == 2 else {
      throw error(
        .badValue, "BETWEEN needs exactly two values {low, high} but found \(values.count)", at: operand.token)
    }
    return (values[0], values[1])
  }

  func singleValue(_ operand: Operand, _ op: Operator) throws(QueryError) -> BSON {
    guard case .value(let value, _) = operand.kind else {
      throw error(
        .syntax,
        "a list {…} can only follow IN or BETWEEN, not '\(op.written)'", at: operand.token)
    }
    return value
  }

  func valueTest(_ op: Operator, _ rhs: Operand) throws(QueryError) -> ValueTest {
    switch op.kind {
    case .compare(let comparison):
      let value = try singleValue(rhs, op)
      guard op.modifier != nil else { return .compare(comparison, value) }
      guard case .string(let s) = value else {
        throw error(
          .badValue,
          "expected a string after '\(op.written)' but found \(Self.describe(value, rhs))", at: rhs.token)
      }
      return .string(comparison == .equal ? .equal : .notEqual, s, op.options)
    case .string(let stringOperator):
      let value = try singleValue(rhs, op)
      guard case .string(let s) = value else {
        throw error(
          .badValue,
          "expected a string after '\(op.written)' but found \(Self.describe(value, rhs))", at: rhs.token)
      }
      return .string(stringOperator, s, op.options)
    case .in:
      if let modifier = op.modifier {
        throw error(.unsupported, "the modifier [\(modifier)] is not supported with IN", at: op.token)
      }
      return .in(try listValues(rhs, op))
    case .between:
      if let modifier = op.modifier {
        throw error(.unsupported, "the modifier [\(modifier)] is not supported with BETWEEN", at: op.token)
      }
      let (low, high) = try betweenBounds(rhs, op)
      return .all([.compare(.greaterOrEqual, low), .compare(.lessOrEqual, high)])
    }
  }

  /// Comparisons of an aggregate or a subquery count: plain operators, IN (any of the values)
  /// and BETWEEN.
  func countLike(
    _ op: Operator, _ rhs: Operand, numeric: Bool, what: String,
    _ make: (ComparisonOperator, BSON) -> QueryNode
  ) throws(QueryError) -> QueryNode {
    func checked(_ value: BSON) throws(QueryError) -> BSON {
      guard numeric else { return value }
      switch value {
      case .int32, .int64, .double, .decimal128: return value
      default:
        throw error(
          .badValue, "expected a number to compare with \(what) but found \(Self.describe(value, rhs))", at: rhs.token)
      }
    }
    switch op.kind {
    case .compare(let comparison):
      if op.modifier != nil {
        throw error(.syntax, "the modifier in '\(op.written)' does not apply to \(what)", at: op.token)
      }
      return make(comparison, try checked(try singleValue(rhs, op)))
    case .string:
      throw error(
        .syntax, "'\(op.written)' does not apply to \(what); use ==, !=, <, <=, >, >=, IN or BETWEEN", at: op.token)
    case .in:
      var nodes: [QueryNode] = []
      for value in try listValues(rhs, op) { nodes.append(make(.equal, try checked(value))) }
      return nodes.isEmpty ? .constant(false) : .or(nodes)
    case .between:
      let (low, high) = try betweenBounds(rhs, op)
      return .and([make(.greaterOrEqual, try checked(low)), make(.lessOrEqual, try checked(high))])
    }
  }

  static func describe(_ value: BSON, _ operand: Operand) -> String {
    if case .value(_, let argument?) = operand.kind { return "the argument \(argument), \(typeName(value))" }
    return operand.token.described
  }

  static func typeName(_ value: BSON) -> String {
    switch value {
    case .array: "an array"
    case .int32, .int64: "an integer"
    case .null: "null"
    default: "a \(value.type.name)"
    }
  }
}
