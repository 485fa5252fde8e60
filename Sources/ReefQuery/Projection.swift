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
/// The positional projection `{"grades.$": 1}` keeps, of the first array on the path, the
/// element the query matched (see ``apply(_:matching:)``), as MongoDB does. As in MongoDB, a
/// projection has at most one, only in an inclusion, not with `$elemMatch` or `$slice`; `$`
/// anywhere else in a path is a ``QueryError/Kind/badPath`` error.
public struct Projection: Sendable {
  indirect enum Rule: Sendable {
    case include
    case exclude
    case slice(skip: Int?, count: Int)
    case elementMatch(ElementMatcher)
    /// The positional `$`: the matched element of the first array on its path.
    case positional
    case nested([(String, Rule)])
  }

  let rules: [(String, Rule)]
  let inclusion: Bool
  let includesID: Bool
  /// The path of the positional projection (without its `$`), if there is one.
  let positionalPath: String?

  /// A projection from its document. Throws for mixed inclusion and exclusion, unknown
  /// operators, malformed `$slice` or `$elemMatch`, `$elemMatch` on a dotted field, and a
  /// positional `$` that MongoDB rejects (two of them, beside `$elemMatch`, with `$slice`, in an
  /// exclusion projection, not at the end of a path).
  public init(_ document: Document) throws(QueryError) {
    var rules: [(String, Rule)] = []
    var sawInclusion = false
    var sawExclusion = false
    var includesID = true
    var positionalPath: String?
    var elementMatch: String?
    for element in document {
      let key = element.key
      guard !key.isEmpty, !key.hasPrefix("$") else {
        throw QueryError(
          .badPath, "projection field names cannot be empty or start with '$': \"\(key)\"", keyPath: [key])
      }
      var path = key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
      let rule: Rule
      if try Projection.checkSegments(of: key) {
        path.removeLast()
        rule = try Projection.positionalRule(element.value, keyPath: [key])
        if let positionalPath {
          throw QueryError(
            .conflict,
            "a projection may have only one positional projection, found \"\(positionalPath).$\" and \"\(key)\"",
            keyPath: [key])
        }
        positionalPath = path.joined(separator: ".")
      } else {
        rule = try Projection.rule(element.value, keyPath: [key])
        if case .elementMatch = rule { elementMatch = key }
      }
      if let positionalPath, let elementMatch {
        throw QueryError(
          .conflict,
          "a projection cannot have both a positional projection (\"\(positionalPath).$\") and $elemMatch (\"\(elementMatch)\")",
          keyPath: [key])
      }
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
      case .include, .elementMatch, .positional: if key != "_id" { sawInclusion = true }
      case .exclude: sawExclusion = true
      default: break
      }
      if sawInclusion && sawExclusion {
        throw QueryError(
          .conflict,
          "cannot mix inclusion and exclusion in one projection (at \"\(key)\"); only _id may be excluded when fields are included",
          keyPath: [key])
      }
      try Projection.insert(rule, at: path, into: &rules, keyPath: [key])
    }
    self.rules = rules
    self.includesID = includesID
    self.positionalPath = positionalPath
    // Only `_id: 1` also makes an inclusion projection; only `$slice` an exclusion one.
    let onlyID = rules.count == 1 && rules[0].0 == "_id"
    self.inclusion =
      sawInclusion || (onlyID && !sawExclusion && { if case .include = rules[0].1 { true } else { false } }())
  }

  /// Rejects a path with an empty segment or a segment that starts with `$`, except a `$` that
  /// ends the path: returns whether the path is positional (`grades.$`).
  static func checkSegments(of key: String) throws(QueryError) -> Bool {
    let segments = key.split(separator: ".", omittingEmptySubsequences: false)
    guard !segments.contains(where: \.isEmpty) else {
      throw QueryError(.badPath, "projection paths cannot have empty segments: \"\(key)\"", keyPath: [key])
    }
    guard let dollar = segments.firstIndex(where: { $0.hasPrefix("$") }) else { return false }
    if segments[dollar] == "$" && dollar == segments.count - 1 { return true }
    if segments[dollar] == "$" {
      throw QueryError(
        .badPath, "the positional operator '$' may only end a projection path (\"a.b.$\"), found \"\(key)\"",
        keyPath: [key])
    }
    throw QueryError(
      .badPath, "projection path segments cannot start with '$': \"\(segments[dollar])\" in \"\(key)\"",
      keyPath: [key])
  }

  /// The rule of a positional projection: only an inclusion (`1`, `true`) may have one.
  static func positionalRule(_ value: BSON, keyPath: [String]) throws(QueryError) -> Rule {
    if case .document(let operators) = value {
      let name = operators.firstElement?.key ?? "an operator"
      throw QueryError(
        .conflict, "a positional projection cannot be used with \(name) (it takes 1 or true)", keyPath: keyPath)
    }
    guard case .include = try rule(value, keyPath: keyPath) else {
      throw QueryError(
        .badValue, "a positional projection is an inclusion (1 or true), found \(describe(value))", keyPath: keyPath)
    }
    return .positional
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

  /// Whether the projection has a positional projection (`"grades.$"`), which needs the query:
  /// see ``apply(_:matching:)``.
  public var isPositional: Bool { positionalPath != nil }

  /// The projected document.
  ///
  /// A positional projection (``isPositional``) needs the query that selected the document to
  /// know which element to keep: use ``apply(_:matching:)``, as finds do. Without the query, no
  /// element is known, and the positional field is left out where its path meets an array (where
  /// ``apply(_:matching:)`` with a query that records no element throws).
  public func apply(_ document: Document) -> Document {
    if rules.isEmpty && includesID { return document }
    var positional = PositionalState(path: positionalPath ?? "", index: nil, pending: positionalPath != nil)
    var builder = DocumentBuilder(capacity: document.byteCount)
    project(document, rules, top: true, into: &builder, &positional)
    return builder.document
  }

  /// The projected document, with a positional projection's element chosen by `query`, which
  /// the document matches.
  ///
  /// Of the first array on the positional path, only the element the query matched through is
  /// kept, chosen by MongoDB's rules: a condition that meets an array records the first element
  /// it holds for, `$elemMatch` its element, an `$and` its last child that records one, an `$in`
  /// or an `$or` of equalities on one path its first; other `$or`s, `$nor` and `$not` record
  /// none. A path that meets no array is projected as an inclusion.
  /// - Complexity: one more pass of the query's conditions over the document.
  /// - Throws: ``QueryError/Kind/badValue`` when the path meets an array but the query recorded
  ///   no element (it has no condition that holds through an array element, as `{}` or an
  ///   `$or` over two fields), or one past the end of that array.
  public func apply(_ document: Document, matching query: Query) throws(QueryError) -> Document {
    guard positionalPath != nil else { return apply(document) }
    return try apply(document, recorder: PositionRecorder(query.node))
  }

  /// ``apply(_:matching:)`` with the query's recorder, made once for many documents.
  func apply(_ document: Document, recorder: PositionRecorder) throws(QueryError) -> Document {
    guard let positionalPath else { return apply(document) }
    let index = document.withRawValue { recorder.position(in: $0) }
    var positional = PositionalState(path: positionalPath, index: index, pending: true)
    var builder = DocumentBuilder(capacity: document.byteCount)
    project(document, rules, top: true, into: &builder, &positional)
    if let failure = positional.failure { throw failure }
    return builder.document
  }

  /// Where a positional projection is while a document is projected.
  struct PositionalState {
    let path: String
    /// The element the query recorded.
    let index: Int?
    /// No array has been met on the positional path yet.
    var pending: Bool
    var failure: QueryError?

    /// The recorded element of the first array on the path, as a one-element array.
    mutating func select(_ array: BSONArray) -> BSON? {
      pending = false
      guard let index else {
        failure = QueryError(
          .badValue,
          "the positional projection \"\(path).$\" found no matching element in the array: the query has no "
            + "condition that holds through one of its elements",
          keyPath: [path + ".$"])
        return nil
      }
      guard index < array.count, let element = array[index] else {
        failure = QueryError(
          .badValue,
          "the positional projection \"\(path).$\" found no element \(index) in an array of \(array.count): the query "
            + "matched another array",
          keyPath: [path + ".$"])
        return nil
      }
      return .array([element])
    }
  }

  static func containsPositional(_ rule: Rule) -> Bool {
    switch rule {
    case .positional: true
    case .nested(let children): children.contains { containsPositional($0.1) }
    default: false
    }
  }

  private func project(
    _ document: Document, _ rules: [(String, Rule)], top: Bool, into builder: inout DocumentBuilder,
    _ positional: inout PositionalState
  ) {
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
      if let value = apply(rule, element.value, &positional) { builder.append(key, value) }
    }
  }

  private func apply(_ rule: Rule, _ value: BSON, _ positional: inout PositionalState) -> BSON? {
    switch rule {
    case .include: return value
    case .positional:
      // The first array on the path; past it, or without one, an inclusion.
      guard positional.pending, case .array(let array) = value else { return value }
      return positional.select(array)
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
        project(document, children, top: false, into: &builder, &positional)
        return .document(builder.document)
      case .array(var array):
        if positional.pending && Projection.containsPositional(rule) {
          // The first array on the positional path: only the recorded element goes on.
          guard case .array(let selected)? = positional.select(array) else { return nil }
          array = selected
        }
        var values: [BSON] = []
        for element in array {
          if case .document = element, let projected = apply(rule, element, &positional) {
            values.append(projected)
          } else if case .array = element, let projected = apply(rule, element, &positional) {
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
