import ReefBSON

/// Parses a MongoDB filter document (`{"address.city": "Los Angeles", "age": {"$gte": 21}}`)
/// into a `QueryNode`, with MongoDB 8.0's semantics.
///
/// Operators: implicit equality, `$eq $ne $gt $gte $lt $lte $in $nin $exists $type $size $all
/// $elemMatch $and $or $nor $not $regex $options $mod $comment`; every one that applies to a field
/// also in the value form of `$elemMatch`. `$all` takes values or, when its first entry is one,
/// `$elemMatch` entries only, as MongoDB does. Operators that need a server (`$where`, `$expr`,
/// `$text`, geospatial) are rejected with an error naming them.
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
    var clauses: [QueryNode] = []
    switch try allEntries(value, keyPath: keyPath) {
    case .elementMatches(let arguments):
      for (argument, argumentPath) in arguments {
        clauses.append(try elementMatch(path, argument, keyPath: argumentPath))
      }
    case .values(let values):
      for entry in values {
        if case .regex(let regex) = entry {
          clauses.append(.match(path, .regex(pattern: regex.pattern, options: regex.options), .mongo))
        } else {
          clauses.append(.match(path, .compare(.equal, entry), .mongo))
        }
      }
    }
    if clauses.isEmpty { return .constant(false) }
    return clauses.count == 1 ? clauses[0] : .and(clauses)
  }

  /// The entries of `$all`, checked as MongoDB checks them.
  enum AllEntries {
    /// Every entry is `{$elemMatch: …}`: the arguments, each with its key path.
    case elementMatches([(BSON, [String])])
    /// No entry is an operator document: values (regular expressions match strings).
    case values([BSON])
  }

  /// Operators that apply to a field; a document in `$all` whose first key is one of them is an
  /// operator, any other document is a value (as MongoDB reads `$all`).
  static let fieldOperators: Set<String> = [
    "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists", "$type", "$size", "$all", "$elemMatch",
    "$not", "$regex", "$options", "$mod", "$near", "$nearSphere", "$geoWithin", "$geoIntersects", "$within",
    "$bitsAllSet", "$bitsAnySet", "$bitsAllClear", "$bitsAnyClear",
  ]

  /// `$all`'s entries: either all `$elemMatch` documents (when the first one is) or values only,
  /// as MongoDB requires ("$all/$elemMatch has to be consistent", "no $ expressions in $all").
  func allEntries(_ value: BSON, keyPath: [String]) throws(QueryError) -> AllEntries {
    guard case .array(let values) = value else {
      throw QueryError(.badValue, "$all needs an array, found \(describe(value))", keyPath: keyPath)
    }
    func firstKey(_ entry: BSON) -> String? {
      guard case .document(let document) = entry else { return nil }
      return document.firstElement?.key
    }
    let entries = Array(values)
    if let first = entries.first, firstKey(first) == "$elemMatch" {
      var arguments: [(BSON, [String])] = []
      for (index, entry) in entries.enumerated() {
        guard case .document(let document) = entry, let element = document.firstElement, element.key == "$elemMatch"
        else {
          throw QueryError(
            .badValue,
            "$all/$elemMatch has to be consistent: the first entry is an $elemMatch, so every entry must be one, "
              + "found \(describe(entry))",
            keyPath: keyPath + [String(index)])
        }
        arguments.append((element.value, keyPath + [String(index), "$elemMatch"]))
      }
      return .elementMatches(arguments)
    }
    for (index, entry) in entries.enumerated() {
      if let key = firstKey(entry), FilterParser.fieldOperators.contains(key) {
        throw QueryError(
          .badValue,
          "no $ expressions in $all: found the operator \(key) where a value was expected "
            + "(an $elemMatch must be the first entry and every other entry one too)",
          keyPath: keyPath + [String(index)])
      }
    }
    return .values(entries)
  }

  func elementMatch(_ path: FieldPath, _ value: BSON, keyPath: [String]) throws(QueryError) -> QueryNode {
    guard case .document(let query) = value else {
      throw QueryError(.badValue, "$elemMatch needs a document, found \(describe(value))", keyPath: keyPath)
    }
    if FilterParser.isValueForm(query) {
      return .elementMatchValue(path, try valueForm(query, keyPath: keyPath))
    }
    return .elementMatch(path, try document(query, keyPath: keyPath))
  }

  /// Whether `$elemMatch`'s document is its value form (operators on each element) rather than
  /// its object form (a query on each element): MongoDB's rule, the first key is an operator that
  /// is not one of a query's top-level keys (`$and`, `$or`, `$nor`, `$comment`, `$where`, …).
  static func isValueForm(_ query: Document) -> Bool {
    guard let first = query.firstElement?.key, first.hasPrefix("$") else { return false }
    return !queryTopLevelKeys.contains(first)
  }

  /// The keys a query document takes at its top level (made once, not per call).
  static let queryTopLevelKeys: Set<String> = [
    "$and", "$or", "$nor", "$comment", "$where", "$expr", "$text", "$jsonSchema",
  ]

  /// The tests of an operator document applied to one value: each element of an array in the
  /// value form of `$elemMatch`, and the value under `$not` there. Every operator that applies
  /// to a field is taken, as MongoDB takes it: an element always exists (`$exists: true` holds,
  /// `$exists: false` does not), `$size` and a nested `$elemMatch` (either form) test an element
  /// that is an array, `$all` holds when the element equals every value (or passes every
  /// `$elemMatch`).
  func valueForm(_ operators: Document, keyPath: [String]) throws(QueryError) -> [ValueTest] {
    var tests: [ValueTest] = []
    let regex = try regexTest(operators, keyPath: keyPath)
    for element in operators {
      let name = element.key
      let value = element.value
      let path = keyPath + [name]
      switch name {
      case "$regex": if let regex { tests.append(regex) }
      case "$options", "$comment": continue
      case "$ne":
        if case .regex = value { throw QueryError(.badValue, "$ne cannot take a regular expression", keyPath: path) }
        tests.append(.not(.compare(.equal, value)))
      case "$nin": tests.append(.not(try valueTest("$in", value, keyPath: path)))
      case "$exists": tests.append(.exists(truthy(value)))
      case "$size": tests.append(.size(try wholeNumber(value, name: name, keyPath: path, allowNegative: false)))
      case "$all":
        switch try allEntries(value, keyPath: path) {
        case .elementMatches(let arguments):
          var all: [ValueTest] = []
          for (argument, argumentPath) in arguments {
            all.append(try nestedElementMatch(argument, keyPath: argumentPath))
          }
          tests.append(.all(all))
        case .values(let values):
          // `$all: []` matches nothing: no value is in an empty list.
          if values.isEmpty { tests.append(.in([])) }
          for entry in values {
            if case .regex(let regex) = entry {
              tests.append(.regex(pattern: regex.pattern, options: regex.options))
            } else {
              tests.append(.compare(.equal, entry))
            }
          }
        }
      case "$elemMatch": tests.append(try nestedElementMatch(value, keyPath: path))
      case "$not": tests.append(.not(try valueTestForNot(value, keyPath: path)))
      default: tests.append(try valueTest(name, value, keyPath: path))
      }
    }
    return tests
  }

  /// `$elemMatch` inside the value form of another: the element is an array with an element
  /// that passes the operators (value form) or matches the query (object form).
  func nestedElementMatch(_ value: BSON, keyPath: [String]) throws(QueryError) -> ValueTest {
    guard case .document(let query) = value else {
      throw QueryError(.badValue, "$elemMatch needs a document, found \(describe(value))", keyPath: keyPath)
    }
    if FilterParser.isValueForm(query) { return .elementMatch(try valueForm(query, keyPath: keyPath)) }
    return .elementMatchQuery(try document(query, keyPath: keyPath))
  }

  func valueTestForNot(_ value: BSON, keyPath: [String]) throws(QueryError) -> ValueTest {
    switch value {
    case .regex(let regex): return .regex(pattern: regex.pattern, options: regex.options)
    case .document(let operators):
      guard let first = operators.firstElement else {
        throw QueryError(.badValue, "$not cannot be empty", keyPath: keyPath)
      }
      guard first.key.hasPrefix("$") else {
        throw QueryError(
          .badValue, "$not needs an operator document or a regular expression, found a document", keyPath: keyPath)
      }
      let tests = try valueForm(operators, keyPath: keyPath)
      guard !tests.isEmpty else {
        throw QueryError(.badValue, "$not needs at least one operator besides $comment", keyPath: keyPath)
      }
      return tests.count == 1 ? tests[0] : .all(tests)
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
