import ReefBSON

/// Parses a MongoDB filter document (`{"address.city": "Los Angeles", "age": {"$gte": 21}}`)
/// into a `QueryNode`, with MongoDB 8.0's semantics.
///
/// Operators: implicit equality, `$eq $ne $gt $gte $lt $lte $in $nin $exists $type $size $all
/// $elemMatch $and $or $nor $not $regex $options $mod $comment`. Operators that need a server
/// (`$where`, `$expr`, `$text`, geospatial) are rejected with an error naming them.
public func parseFilter(_ filter: Document) throws(QueryError) -> QueryNode {
  // A filter built in memory has not been validated: check its nesting (MongoDB's limit of 100
  // levels) before the parser recurses into it.
  do {
    try filter.validate()
  } catch {
    throw QueryError(
      .invalidDocument, "the filter is not a valid document: \(error.message)", keyPath: error.keyPath, bsonError: error
    )
  }
  return try FilterParser().document(filter, keyPath: [])
}

/// A short description of a value for error messages: its type and relaxed Extended JSON.
func describe(_ value: BSON) -> String { "\(value.type.name) \(value.extendedJSON())" }

private struct FilterParser {
  static let unsupported: Set<String> = [
    "$where", "$expr", "$text", "$jsonSchema", "$near", "$nearSphere", "$geoWithin", "$geoIntersects",
    "$within", "$box", "$center", "$centerSphere", "$polygon", "$geometry", "$maxDistance", "$minDistance",
    "$bitsAllSet", "$bitsAnySet", "$bitsAllClear", "$bitsAnyClear", "$sampleRate", "$search", "$meta",
  ]

  func document(_ filter: Document, keyPath: [String]) throws(QueryError) -> QueryNode {
    var clauses: [QueryNode] = []
    for element in filter {
      let key = element.key
      let path = keyPath + [key]
      if key.hasPrefix("$") {
        switch key {
        case "$and", "$or", "$nor":
          let children = try logicalList(element.value, keyPath: path)
          clauses.append(key == "$and" ? .and(children) : key == "$or" ? .or(children) : .nor(children))
        case "$comment":
          continue
        default:
          if FilterParser.unsupported.contains(key) {
            throw QueryError(
              .unsupported, "unsupported operator \(key): Reef evaluates filters without a server", keyPath: path)
          }
          throw QueryError(.unknownOperator, "unknown top-level operator \(key)", keyPath: path)
        }
      } else {
        clauses.append(try field(FieldPath(key), element.value, keyPath: path))
      }
    }
    return clauses.count == 1 ? clauses[0] : (clauses.isEmpty ? .constant(true) : .and(clauses))
  }

  func logicalList(_ value: BSON, keyPath: [String]) throws(QueryError) -> [QueryNode] {
    let name = keyPath.last ?? ""
    guard case .array(let array) = value else {
      throw QueryError(
        .badValue, "\(name) needs an array of filter documents, found \(describe(value))", keyPath: keyPath)
    }
    guard !array.isEmpty else { throw QueryError(.badValue, "\(name) needs a nonempty array", keyPath: keyPath) }
    var children: [QueryNode] = []
    for (index, entry) in array.enumerated() {
      guard case .document(let child) = entry else {
        throw QueryError(
          .badValue,
          "\(name) entries must be filter documents, found \(describe(entry))", keyPath: keyPath + [String(index)])
      }
      children.append(try document(child, keyPath: keyPath + [String(index)]))
    }
    return children
  }

  /// The condition on one field: an operator document, a regular expression or a value.
  func field(_ path: FieldPath, _ value: BSON, keyPath: [String]) throws(QueryError) -> QueryNode {
    switch value {
    case .document(let operators) where operators.firstElement?.key.hasPrefix("$") == true:
      return try operatorDocument(path, operators, keyPath: keyPath)
    case .regex(let regex):
      return .match(path, .regex(pattern: regex.pattern, options: regex.options), .mongo)
    default:
      return .match(path, .compare(.equal, value), .mongo)
    }
  }

  func operatorDocument(_ path: FieldPath, _ operators: Document, keyPath: [String]) throws(QueryError) -> QueryNode {
    var clauses: [QueryNode] = []
    let regex = try regexTest(operators, keyPath: keyPath)
    for element in operators {
      let name = element.key
      let value = element.value
      let path2 = keyPath + [name]
      switch name {
      case "$regex":
        if let regex { clauses.append(.match(path, regex, .mongo)) }
      case "$options", "$comment":
        continue
      case "$exists":
        clauses.append(.exists(path, truthy(value)))
      case "$size":
        clauses.append(.size(path, try wholeNumber(value, name: name, keyPath: path2, allowNegative: false)))
      case "$all":
        clauses.append(try all(path, value, keyPath: path2))
      case "$elemMatch":
        clauses.append(try elementMatch(path, value, keyPath: path2))
      case "$not":
        clauses.append(.not(try not(path, value, keyPath: path2)))
      case "$ne":
        if case .regex = value { throw QueryError(.badValue, "$ne cannot take a regular expression", keyPath: path2) }
        clauses.append(.not(.match(path, .compare(.equal, value), .mongo)))
      case "$nin":
        clauses.append(.not(.match(path, try valueTest("$in", value, keyPath: path2), .mongo)))
      default:
        clauses.append(.match(path, try valueTest(name, value, keyPath: path2), .mongo))
      }
    }
    return clauses.count == 1 ? clauses[0] : .and(clauses)
  }

  /// `$regex` with its `$options`, if the operator document has one.
  func regexTest(_ operators: Document, keyPath: [String]) throws(QueryError) -> ValueTest? {
    let regex = operators.value(forKey: "$regex")
    let options = operators.value(forKey: "$options")
    guard let regex else {
      if options != nil { throw QueryError(.badValue, "$options needs a $regex", keyPath: keyPath + ["$options"]) }
      return nil
    }
    var optionText = ""
    if let options {
      guard case .string(let text) = options else {
        throw QueryError(
          .badValue, "$options needs a string, found \(describe(options))", keyPath: keyPath + ["$options"])
      }
      optionText = text
    }
    switch regex {
    case .string(let pattern):
      return .regex(pattern: pattern, options: optionText)
    case .regex(let value):
      if !value.options.isEmpty && options != nil {
        throw QueryError(.conflict, "options set in both $regex and $options", keyPath: keyPath + ["$regex"])
      }
      return .regex(pattern: value.pattern, options: options != nil ? optionText : value.options)
    default:
      throw QueryError(
        .badValue,
        "$regex needs a string or a regular expression, found \(describe(regex))", keyPath: keyPath + ["$regex"])
    }
  }

  /// The operators that test one value: comparisons, `$in`, `$type`, `$mod`, `$regex`.
  func valueTest(_ name: String, _ value: BSON, keyPath: [String]) throws(QueryError) -> ValueTest {
    switch name {
    case "$eq": return .compare(.equal, value)
    case "$gt", "$gte", "$lt", "$lte":
      if case .regex = value {
        throw QueryError(
          .badValue, "\(name) cannot take a regular expression; use $regex to match strings", keyPath: keyPath)
      }
      let comparison: ComparisonOperator =
        switch name {
        case "$gt": .greater
        case "$gte": .greaterOrEqual
        case "$lt": .less
        default: .lessOrEqual
        }
      return .compare(comparison, value)
    case "$in":
      guard case .array(let values) = value else {
        throw QueryError(.badValue, "\(name) needs an array, found \(describe(value))", keyPath: keyPath)
      }
      for (index, entry) in values.enumerated() {
        if case .document(let document) = entry, document.firstElement?.key.hasPrefix("$") == true {
          throw QueryError(.badValue, "cannot nest an operator inside $in", keyPath: keyPath + [String(index)])
        }
      }
      return .in(Array(values))
    case "$type":
      return .type(try types(value, keyPath: keyPath))
    case "$mod":
      return try mod(value, keyPath: keyPath)
    default:
      if FilterParser.unsupported.contains(name) {
        throw QueryError(
          .unsupported, "unsupported operator \(name): Reef evaluates filters without a server", keyPath: keyPath)
      }
      throw QueryError(.unknownOperator, "unknown operator \(name)", keyPath: keyPath)
    }
  }

  func not(_ path: FieldPath, _ value: BSON, keyPath: [String]) throws(QueryError) -> QueryNode {
    switch value {
    case .regex(let regex):
      return .match(path, .regex(pattern: regex.pattern, options: regex.options), .mongo)
    case .document(let operators):
      guard let first = operators.firstElement else {
        throw QueryError(.badValue, "$not cannot be empty", keyPath: keyPath)
      }
      guard first.key.hasPrefix("$") else {
        throw QueryError(
          .badValue, "$not needs an operator document or a regular expression, found a document", keyPath: keyPath)
      }
      return try operatorDocument(path, operators, keyPath: keyPath)
    default:
      throw QueryError(
        .badValue, "$not needs a regular expression or a document, found \(describe(value))", keyPath: keyPath)
    }
  }

  func all(_ path: FieldPath, _ value: BSON, keyPath: [String]) throws(QueryError) -> QueryNode {
    guard case .array(let values) = value else {
      throw QueryError(.badValue, "$all needs an array, found \(describe(value))", keyPath: keyPath)
    }
    if values.isEmpty { return .constant(false) }
    var clauses: [QueryNode] = []
    for (index, entry) in values.enumerated() {
      switch entry {
      case .document(let document) where document.firstElement?.key == "$elemMatch":
        clauses.append(
          try elementMatch(path, document.firstElement!.value, keyPath: keyPath + [String(index), "$elemMatch"]))
      case .document(let document) where document.firstElement?.key.hasPrefix("$") == true:
        throw QueryError(.badValue, "$all entries may only use $elemMatch", keyPath: keyPath + [String(index)])
      case .regex(let regex):
        clauses.append(.match(path, .regex(pattern: regex.pattern, options: regex.options), .mongo))
      default:
        clauses.append(.match(path, .compare(.equal, entry), .mongo))
      }
    }
    return clauses.count == 1 ? clauses[0] : .and(clauses)
  }

  func elementMatch(_ path: FieldPath, _ value: BSON, keyPath: [String]) throws(QueryError) -> QueryNode {
    guard case .document(let query) = value else {
      throw QueryError(.badValue, "$elemMatch needs a document, found \(describe(value))", keyPath: keyPath)
    }
    let logical: Set<String> = ["$and", "$or", "$nor", "$comment"]
    guard let first = query.firstElement?.key, first.hasPrefix("$"), !logical.contains(first) else {
      return .elementMatch(path, try document(query, keyPath: keyPath))
    }
    // The value form: operators applied to each element.
    var tests: [ValueTest] = []
    let regex = try regexTest(query, keyPath: keyPath)
    for element in query {
      let name = element.key
      switch name {
      case "$regex": if let regex { tests.append(regex) }
      case "$options", "$comment": continue
      case "$ne": tests.append(.not(.compare(.equal, element.value)))
      case "$nin": tests.append(.not(try valueTest("$in", element.value, keyPath: keyPath + [name])))
      case "$not": tests.append(.not(try valueTestForNot(element.value, keyPath: keyPath + [name])))
      case "$elemMatch":
        // Nested: the element is itself an array with an element passing these operators.
        guard
          case .elementMatchValue(_, let inner) = try elementMatch(
            FieldPath(""), element.value, keyPath: keyPath + [name])
        else {
          throw QueryError(
            .badValue,
            "$elemMatch nested in the value form of $elemMatch takes operators, not a query", keyPath: keyPath + [name])
        }
        tests.append(.elementMatch(inner))
      case "$exists", "$size", "$all":
        throw QueryError(
          .unsupported, "\(name) is not supported inside the value form of $elemMatch", keyPath: keyPath + [name])
      default: tests.append(try valueTest(name, element.value, keyPath: keyPath + [name]))
      }
    }
    return .elementMatchValue(path, tests)
  }

  func valueTestForNot(_ value: BSON, keyPath: [String]) throws(QueryError) -> ValueTest {
    switch value {
    case .regex(let regex): return .regex(pattern: regex.pattern, options: regex.options)
    case .document(let operators):
      var tests: [ValueTest] = []
      for element in operators {
        switch element.key {
        case "$ne": tests.append(.not(.compare(.equal, element.value)))
        default: tests.append(try valueTest(element.key, element.value, keyPath: keyPath + [element.key]))
        }
      }
      guard !tests.isEmpty else { throw QueryError(.badValue, "$not cannot be empty", keyPath: keyPath) }
      return .all(tests)
    default:
      throw QueryError(
        .badValue, "$not needs a regular expression or a document, found \(describe(value))", keyPath: keyPath)
    }
  }

  static let typeAliases: [String: [BSONType]] = [
    "double": [.double], "string": [.string], "object": [.document], "array": [.array], "binData": [.binary],
    "undefined": [.undefined], "objectId": [.objectId], "bool": [.bool], "date": [.datetime], "null": [.null],
    "regex": [.regex], "dbPointer": [.dbPointer], "javascript": [.javascript], "symbol": [.symbol],
    "javascriptWithScope": [.javascriptWithScope], "int": [.int32], "timestamp": [.timestamp], "long": [.int64],
    "decimal": [.decimal128], "minKey": [.minKey], "maxKey": [.maxKey],
    "number": [.double, .int32, .int64, .decimal128],
  ]

  func types(_ value: BSON, keyPath: [String]) throws(QueryError) -> [BSONType] {
    if case .array(let entries) = value {
      guard !entries.isEmpty else { throw QueryError(.badValue, "$type needs at least one type", keyPath: keyPath) }
      var result: [BSONType] = []
      for (index, entry) in entries.enumerated() {
        result += try types(entry, keyPath: keyPath + [String(index)])
      }
      return result
    }
    if case .string(let alias) = value {
      guard let types = FilterParser.typeAliases[alias] else {
        throw QueryError(.badValue, "unknown type name alias \"\(alias)\"", keyPath: keyPath)
      }
      return types
    }
    let code = try wholeNumber(value, name: "$type", keyPath: keyPath, allowNegative: true)
    if code == -1 { return [.minKey] }
    if code == 127 { return [.maxKey] }
    guard (1...19).contains(code) else {
      throw QueryError(.badValue, "invalid numerical type code \(code)", keyPath: keyPath)
    }
    return [BSONType(rawValue: UInt8(code))]
  }

  func mod(_ value: BSON, keyPath: [String]) throws(QueryError) -> ValueTest {
    guard case .array(let entries) = value else {
      throw QueryError(
        .badValue, "$mod needs an array [divisor, remainder], found \(describe(value))", keyPath: keyPath)
    }
    guard entries.count >= 2 else {
      throw QueryError(.badValue, "malformed $mod: not enough elements", keyPath: keyPath)
    }
    guard entries.count == 2 else { throw QueryError(.badValue, "malformed $mod: too many elements", keyPath: keyPath) }
    let divisor = try truncated(entries[0]!, what: "divisor", keyPath: keyPath)
    let remainder = try truncated(entries[1]!, what: "remainder", keyPath: keyPath)
    guard divisor != 0 else { throw QueryError(.badValue, "$mod divisor cannot be 0", keyPath: keyPath) }
    return .mod(divisor: divisor, remainder: remainder)
  }

  func truncated(_ value: BSON, what: String, keyPath: [String]) throws(QueryError) -> Int64 {
    let double: Double
    switch value {
    case .int32(let number): return Int64(number)
    case .int64(let number): return number
    case .double(let number): double = number
    case .decimal128(let number): double = Double(number.description) ?? .nan
    default: throw QueryError(.badValue, "$mod \(what) must be a number, found \(describe(value))", keyPath: keyPath)
    }
    guard double.isFinite, abs(double) < 9.2e18 else {
      throw QueryError(.badValue, "$mod \(what) must be a finite number, found \(double)", keyPath: keyPath)
    }
    return Int64(double.rounded(.towardZero))
  }

  func wholeNumber(_ value: BSON, name: String, keyPath: [String], allowNegative: Bool) throws(QueryError) -> Int {
    let number: Double
    switch value {
    case .int32(let value): number = Double(value)
    case .int64(let value): number = Double(value)
    case .double(let value): number = value
    case .decimal128(let value): number = Double(value.description) ?? .nan
    default: throw QueryError(.badValue, "\(name) needs a number, found \(describe(value))", keyPath: keyPath)
    }
    guard number.isFinite, number.rounded() == number, abs(number) < 2_147_483_648 else {
      throw QueryError(.badValue, "\(name) needs a whole number, found \(number)", keyPath: keyPath)
    }
    guard allowNegative || number >= 0 else {
      throw QueryError(.badValue, "\(name) may not be negative", keyPath: keyPath)
    }
    return Int(number)
  }

  /// `$exists` takes any value: false, 0, null and undefined mean false.
  func truthy(_ value: BSON) -> Bool {
    switch value {
    case .bool(let flag): flag
    case .int32(let number): number != 0
    case .int64(let number): number != 0
    case .double(let number): number != 0
    case .null, .undefined: false
    default: true
    }
  }
}
