import ReefBSON

/// A MongoDB find projection: which fields of each result to return.
///
/// Inclusion (`{"name": 1, "address.city": 1}`) returns only the named fields, in the
/// document's order; exclusion (`{"logo": 0}`) returns everything else. `_id` is returned unless
/// it is excluded by name, and is the only field that may be excluded in an inclusion projection.
/// Dotted fields reach into embedded documents and into the documents of arrays. `{"tags":
/// {"$slice": 2}}` (also `-2` and `[skip, count]`) trims an array, and `{"addresses":
/// {"$elemMatch": {"city": "Paris"}}}` keeps the first matching element (of a top-level field
/// only, as in MongoDB).
///
/// MongoDB's positional projection (`{"grades.$": 1}`, the element that matched the query) is
/// not supported: it is rejected with a ``QueryError/Kind/unsupported`` error, which suggests
/// `$elemMatch` with the condition instead. A `$` anywhere else in a path is a
/// ``QueryError/Kind/badPath`` error.
public struct Projection: Sendable {
  indirect enum Rule: Sendable {
    case include
    case exclude
    case slice(skip: Int?, count: Int)
    case elementMatch(ElementMatcher)
    case nested([(String, Rule)])
  }

  let rules: [(String, Rule)]
  let inclusion: Bool
  let includesID: Bool

  /// A projection from its document. Throws for mixed inclusion and exclusion, unknown
  /// operators, malformed `$slice` or `$elemMatch`, `$elemMatch` on a dotted field, and the
  /// positional `$` (unsupported).
  public init(_ document: Document) throws(QueryError) {
    var rules: [(String, Rule)] = []
    var sawInclusion = false
    var sawExclusion = false
    var includesID = true
    for element in document {
      let key = element.key
      guard !key.isEmpty, !key.hasPrefix("$") else {
        throw QueryError(
          .badPath, "projection field names cannot be empty or start with '$': \"\(key)\"", keyPath: [key])
      }
      try Projection.checkSegments(of: key)
      let rule = try Projection.rule(element.value, keyPath: [key])
      if case .elementMatch = rule, key.utf8.contains(UInt8(ascii: ".")) {
        // MongoDB: "Cannot use $elemMatch projection on a nested field."
        throw QueryError(
          .badValue, "$elemMatch projection cannot be used on a nested field (\"\(key)\"), only on a top-level one",
          keyPath: [key, "$elemMatch"])
      }
      if key == "_id" {
        if case .exclude = rule {
          includesID = false
          continue
        }
      }
      switch rule {
      case .include, .elementMatch: if key != "_id" { sawInclusion = true }
      case .exclude: sawExclusion = true
      default: break
      }
      if sawInclusion && sawExclusion {
        throw QueryError(
          .conflict,
          "cannot mix inclusion and exclusion in one projection (at \"\(key)\"); only _id may be excluded when fields are included",
          keyPath: [key])
      }
      try Projection.insert(
        rule, at: key.split(separator: ".", omittingEmptySubsequences: false).map(String.init), into: &rules,
        keyPath: [key])
    }
    self.rules = rules
    self.includesID = includesID
    // Only `_id: 1` also makes an inclusion projection; only `$slice` an exclusion one.
    let onlyID = rules.count == 1 && rules[0].0 == "_id"
    self.inclusion =
      sawInclusion || (onlyID && !sawExclusion && { if case .include = rules[0].1 { true } else { false } }())
  }

  /// Rejects a path with an empty segment or one that starts with `$`: the positional `$` at the
  /// end of a path is MongoDB's positional projection, which Reef does not support.
  static func checkSegments(of key: String) throws(QueryError) {
    let segments = key.split(separator: ".", omittingEmptySubsequences: false)
    guard !segments.contains(where: \.isEmpty) else {
      throw QueryError(.badPath, "projection paths cannot have empty segments: \"\(key)\"", keyPath: [key])
    }
    guard let dollar = segments.firstIndex(where: { $0.hasPrefix("$") }) else { return }
    if segments[dollar] == "$" && dollar == segments.count - 1 {
      let array = segments.dropLast().joined(separator: ".")
      throw QueryError(
        .unsupported,
        "the positional projection \"\(key)\" is not supported: project the matching element with "
          + "{\"\(array)\": {\"$elemMatch\": <condition>}}, or the whole array with {\"\(array)\": 1}",
        keyPath: [key])
    }
    if segments[dollar] == "$" {
      throw QueryError(
        .badPath, "the positional operator '$' may only end a projection path (\"a.b.$\"), found \"\(key)\"",
        keyPath: [key])
    }
    throw QueryError(
      .badPath, "projection path segments cannot start with '$': \"\(segments[dollar])\" in \"\(key)\"",
      keyPath: [key])
  }

  static func rule(_ value: BSON, keyPath: [String]) throws(QueryError) -> Rule {
    switch value {
    case .bool(let flag): return flag ? .include : .exclude
    case .int32(let number): return number != 0 ? .include : .exclude
    case .int64(let number): return number != 0 ? .include : .exclude
    case .double(let number): return number != 0 ? .include : .exclude
    case .document(let operators):
      guard let first = operators.firstElement, operators.count == 1 else {
        throw QueryError(
          .badValue, "a projection operator document needs exactly one of $slice, $elemMatch", keyPath: keyPath)
      }
      switch first.key {
      case "$slice": return try slice(first.value, keyPath: keyPath + ["$slice"])
      case "$elemMatch":
        var operatorDocument = DocumentBuilder()
        operatorDocument.append("$elemMatch", first.value)
        var builder = DocumentBuilder()
        builder.append("", .document(operatorDocument.document))
        let node = try parseFilter(builder.document)
        guard let matcher = try compile(node) as? ElementMatcher else {
          throw QueryError(.badValue, "$elemMatch in a projection needs a document", keyPath: keyPath + ["$elemMatch"])
        }
        return .elementMatch(matcher)
      default:
        throw QueryError(.unsupported, "unsupported projection operator \(first.key)", keyPath: keyPath + [first.key])
      }
    default:
      throw QueryError(
        .badValue,
        "projection values are 1, 0, true, false or an operator, found \(describe(value))", keyPath: keyPath)
    }
  }

  static func slice(_ value: BSON, keyPath: [String]) throws(QueryError) -> Rule {
    func integer(_ value: BSON?) -> Int? {
      switch value {
      case .int32(let number): Int(number)
      case .int64(let number): Int(number)
      case .double(let number) where number.isFinite && number.rounded() == number && abs(number) < 1e15: Int(number)
      default: nil
      }
    }
    if case .array(let pair) = value {
      guard pair.count == 2, let skip = integer(pair[0]), let count = integer(pair[1]) else {
        throw QueryError(.badValue, "$slice needs a number or an array [skip, count] of two numbers", keyPath: keyPath)
      }
      guard count > 0 else {
        throw QueryError(.badValue, "$slice count must be positive, found \(count)", keyPath: keyPath)
      }
      return .slice(skip: skip, count: count)
    }
    guard let count = integer(value) else {
      throw QueryError(
        .badValue, "$slice needs a number or an array [skip, count], found \(describe(value))", keyPath: keyPath)
    }
    return .slice(skip: nil, count: count)
  }

  static func insert(_ rule: Rule, at path: [String], into rules: inout [(String, Rule)], keyPath: [String])
    throws(QueryError)
  {
    guard let head = path.first, !head.isEmpty else {
      throw QueryError(.badPath, "projection paths cannot have empty segments", keyPath: keyPath)
    }
    let index = rules.firstIndex { $0.0 == head }
    if path.count == 1 {
      guard index == nil else {
        throw QueryError(.conflict, "path collision at \(keyPath.joined(separator: "."))", keyPath: keyPath)
      }
      rules.append((head, rule))
      return
    }
    var children: [(String, Rule)] = []
    if let index {
      guard case .nested(let existing) = rules[index].1 else {
        throw QueryError(.conflict, "path collision at \(keyPath.joined(separator: "."))", keyPath: keyPath)
      }
      children = existing
    }
    try insert(rule, at: Array(path.dropFirst()), into: &children, keyPath: keyPath)
    if let index { rules[index].1 = .nested(children) } else { rules.append((head, .nested(children))) }
  }

  /// The projected document.
  public func apply(_ document: Document) -> Document {
    if rules.isEmpty && includesID { return document }
    var builder = DocumentBuilder(capacity: document.byteCount)
    project(document, rules, top: true, into: &builder)
    return builder.document
  }

  private func project(_ document: Document, _ rules: [(String, Rule)], top: Bool, into builder: inout DocumentBuilder)
  {
    for element in document {
      let key = element.key
      if top && key == "_id" {
        if !includesID { continue }
        if !rules.contains(where: { $0.0 == "_id" }) {
          builder.append(key, element.value)
          continue
        }
      }
      guard let rule = rules.first(where: { $0.0 == key })?.1 else {
        if !inclusion { builder.append(key, element.value) }
        continue
      }
      if let value = apply(rule, element.value) { builder.append(key, value) }
    }
  }

  private func apply(_ rule: Rule, _ value: BSON) -> BSON? {
    switch rule {
    case .include: return value
    case .exclude: return nil
    case .slice(let skip, let count):
      guard case .array(let array) = value else { return value }
      return .array(BSONArray(Projection.slice(Array(array), skip: skip, count: count)))
    case .elementMatch(let matcher):
      guard case .array(let array) = value else { return nil }
      return array.document.withUnsafeBytes { bytes -> BSON? in
        var elements = RawElements(RawValue(type: 0x04, pointer: bytes.baseAddress!))
        while let element = elements.next() {
          if matcher.matchesElement(element.value) { return .array(BSONArray([element.value.bson()])) }
        }
        return nil
      }
    case .nested(let children):
      switch value {
      case .document(let document):
        var builder = DocumentBuilder(capacity: document.byteCount)
        project(document, children, top: false, into: &builder)
        return .document(builder.document)
      case .array(let array):
        var values: [BSON] = []
        for element in array {
          if case .document = element, let projected = apply(rule, element) {
            values.append(projected)
          } else if case .array = element, let projected = apply(rule, element) {
            values.append(projected)
          } else if !inclusion {
            values.append(element)
          }
        }
        return .array(BSONArray(values))
      default:
        return inclusion ? nil : value
      }
    }
  }

  static func slice(_ values: [BSON], skip: Int?, count: Int) -> [BSON] {
    // Counts and skips are clamped to the array, so extreme values (Int64.min, .max) are safe.
    let size = values.count
    guard let skip else {
      if count >= 0 { return Array(values.prefix(count)) }
      return Array(values.suffix(count < -size ? size : -count))
    }
    let start = skip >= 0 ? min(skip, size) : (skip < -size ? 0 : size + skip)
    return Array(values[start..<(start + min(count, size - start))])
  }
}
