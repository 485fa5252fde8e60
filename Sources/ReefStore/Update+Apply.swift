import ReefBSON
import ReefQuery

/// A document being updated: only the documents and arrays on the updated paths are decoded;
/// everything else stays a view on the original bytes until it is written out again.
enum UpdateNode {
  case value(BSON)
  case document(UpdateFields)
  case array([UpdateNode])

  /// Decodes one level of a document or array value; other values stay as they are.
  init(expanding value: BSON) {
    switch value {
    case .document(let document): self = .document(UpdateFields(document))
    case .array(let array): self = .array(array.map { .value($0) })
    default: self = .value(value)
    }
  }

  /// The node as a BSON value (re-encoding the parts that were decoded).
  var bson: BSON {
    switch self {
    case .value(let value): return value
    case .document(let fields): return .document(fields.document)
    case .array(let elements): return .array(BSONArray(elements.map(\.bson)))
    }
  }

  /// Whether the node is an array (decoded or not).
  var isArray: Bool {
    switch self {
    case .value(.array), .array: true
    default: false
    }
  }

  /// Whether the node is a document or array (decoded or not).
  var isContainer: Bool {
    switch self {
    case .value(.document), .value(.array), .document, .array: true
    default: false
    }
  }
}

/// The fields of a document being updated, in order.
struct UpdateFields {
  var keys: [String]
  var values: [UpdateNode]

  init(_ document: Document) {
    keys = []
    values = []
    for element in document {
      keys.append(element.key)
      values.append(.value(element.value))
    }
  }

  func index(of key: String) -> Int? { keys.firstIndex(of: key) }

  /// The document, encoded.
  var document: Document {
    var builder = DocumentBuilder()
    write(to: &builder)
    return builder.document
  }

  func write(to builder: inout DocumentBuilder) {
    for (key, value) in zip(keys, values) {
      switch value {
      case .value(let bson): builder.append(key, bson)
      case .document(let fields): builder.appendDocument(key) { fields.write(to: &$0) }
      case .array(let elements): builder.appendArray(key) { UpdateFields.write(elements, to: &$0) }
      }
    }
  }

  static func write(_ elements: [UpdateNode], to builder: inout ArrayBuilder) {
    for element in elements {
      switch element {
      case .value(let bson): builder.append(bson)
      case .document(let fields): builder.appendDocument { fields.write(to: &$0) }
      case .array(let nested): builder.appendArray { write(nested, to: &$0) }
      }
    }
  }
}

/// What an operator does to the field it targets.
enum LeafResult {
  case keep
  case replace(BSON)
  /// Remove the field (an array element becomes null instead, as `$unset` does in MongoDB).
  case remove
}

extension Update {
  /// The updated document.
  ///
  /// - Parameters:
  ///   - document: The document to update.
  ///   - isInsert: Whether `document` is an upsert's new document (see ``upsertSeed(from:)``):
  ///     `$setOnInsert` applies only then, and `_id` is moved to the front, as MongoDB inserts it.
  ///   - query: The query that selected `document`, for the positional `$`: it stands for the
  ///     index of the array element through which the query matched (`{"grades": 80}` matching
  ///     `grades: [85, 80]` makes `grades.$` the path `grades.1`). Needed only when the update
  ///     uses `$`.
  /// - Returns: The updated document; `document` itself (no copy) when nothing changes.
  /// - Throws: ``UpdateError`` for updates that cannot apply to this document: `$inc` or `$mul`
  ///   on a non-number, `$push`, `$addToSet`, `$pop` or `$pull` on a non-array, a path through a
  ///   scalar or through an array with a field name (`"Cannot create field 'b' in element
  ///   {a: 1}"`), `$rename` through an array, integer overflow in `$inc`/`$mul`, and changing or
  ///   removing `_id` (`"Performing an update on the path '_id' would modify the immutable field
  ///   '_id'"`). The message names the field and the types found. For positional paths: `$`
  ///   without a `query` that matched through an array, or in an insert (`"The positional
  ///   operator did not find the match needed from the query"`); an array for `$[]` or
  ///   `$[identifier]` that is missing (`"The path 'a' must exist in the document in order to
  ///   apply array updates."`) or is not an array; two positional paths that reach one element
  ///   (`"Update created a conflict at 'a.0'"`).
  /// - Complexity: O(*n*) in the size of the document per path, plus the work of the operators;
  ///   a positional path counts once per element it reaches.
  public func apply(to document: Document, isInsert: Bool = false, matching query: Query? = nil) throws(UpdateError)
    -> Document
  {
    let finder = try usesMatchedPosition && !isInsert ? query.map(MatchedPositionFinder.init) : nil
    return try apply(to: document, isInsert: isInsert, finder: finder)
  }

  /// ``apply(to:isInsert:matching:)`` with the query's position finder made once for many documents.
  func apply(to document: Document, isInsert: Bool, finder: MatchedPositionFinder?) throws(UpdateError) -> Document {
    var state = UpdateState(root: .document(UpdateFields(document)), id: document.value(forKey: "_id"))
    let steps =
      hasPositionalPaths
      ? try resolvedSteps(in: document, isInsert: isInsert) { () throws(UpdateError) in
        try finder?.position(in: document)
      } : self.steps
    for step in steps {
      try state.apply(step, isInsert: isInsert)
    }
    guard state.changed || isInsert else { return document }
    guard case .document(var fields) = state.root else { return document }
    if let id = state.id {
      let index = fields.index(of: "_id")
      if index == nil || fields.values[index!].bson != id {
        throw UpdateError(
          .immutableField,
          "Performing an update on the path '_id' would modify the immutable field '_id'", keyPath: ["_id"])
      }
    }
    if isInsert, let index = fields.index(of: "_id"), index > 0 {
      let value = fields.values.remove(at: index)
      fields.keys.remove(at: index)
      fields.keys.insert("_id", at: 0)
      fields.values.insert(value, at: 0)
    }
    return fields.document
  }
}

/// The document being updated, and what the messages need to know about it.
struct UpdateState {
  var root: UpdateNode
  /// The original `_id`, for messages and for the immutability check.
  let id: BSON?
  var changed = false

  /// `{_id: …}` for messages.
  var idDescription: String { UpdateState.describe(id: id) }

  /// `{_id: …}` for messages about the document whose `_id` is `id`.
  static func describe(id: BSON?) -> String { id.map { "{_id: \($0.extendedJSON())}" } ?? "{no _id}" }

  mutating func apply(_ step: UpdateStep, isInsert: Bool) throws(UpdateError) {
    switch step.operation {
    case .setOnInsert where !isInsert: return
    case .renameFrom(let source): return try rename(from: source, to: step.path)
    default: break
    }
    let operation = step.operation
    let path = step.path
    let id = self.id
    var changed = false
    try UpdateState.descend(&root, name: "", path: path, depth: 0, creates: operation.createsPath) {
      (current) throws(UpdateError) -> LeafResult in
      let result = try leaf(operation, current, path: path, id: id)
      if case .keep = result {} else { changed = true }
      return result
    }
    if changed { self.changed = true }
  }

  /// Walks `path` from `node` (a container named `name`) and applies `body` to the field at its
  /// end, creating missing intermediate documents when `creates`.
  static func descend(
    _ node: inout UpdateNode, name: String, path: [String], depth: Int, creates: Bool,
    _ body: (BSON?) throws(UpdateError) -> LeafResult
  ) throws(UpdateError) {
    let segment = path[depth]
    let isLast = depth == path.count - 1
    if case .value(let value) = node { node = UpdateNode(expanding: value) }
    switch node {
    case .document(var fields):
      node = .value(.null)  // keep `fields` uniquely referenced while it changes
      defer { node = .document(fields) }
      let index = fields.index(of: segment)
      if isLast {
        switch try body(index.map { fields.values[$0].bson }) {
        case .keep: break
        case .replace(let value):
          if let index {
            fields.values[index] = .value(value)
          } else {
            fields.keys.append(segment)
            fields.values.append(.value(value))
          }
        case .remove:
          if let index {
            fields.keys.remove(at: index)
            fields.values.remove(at: index)
          }
        }
      } else if let index {
        guard fields.values[index].isContainer else {
          guard creates else { return }
          throw notViable(path, depth + 1, name: segment, value: fields.values[index].bson)
        }
        try descend(&fields.values[index], name: segment, path: path, depth: depth + 1, creates: creates, body)
      } else if creates, let created = try create(path, from: depth + 1, body) {
        fields.keys.append(segment)
        fields.values.append(.value(created))
      }
    case .array(var elements):
      guard let index = arrayIndex(segment) else {
        guard creates else { return }
        throw notViable(path, depth, name: name, value: node.bson)
      }
      node = .value(.null)
      defer { node = .array(elements) }
      if index < elements.count {
        if isLast {
          switch try body(elements[index].bson) {
          case .keep: break
          case .replace(let value): elements[index] = .value(value)
          case .remove: elements[index] = .value(.null)
          }
        } else {
          guard elements[index].isContainer else {
            guard creates else { return }
            throw notViable(path, depth + 1, name: segment, value: elements[index].bson)
          }
          try descend(&elements[index], name: segment, path: path, depth: depth + 1, creates: creates, body)
        }
      } else if creates {
        guard index - elements.count <= UpdateState.maximumPadding else {
          throw UpdateError(
            .limit,
            "can't backfill more than \(UpdateState.maximumPadding) elements: the path '\(path.prefix(depth + 1).joined(separator: "."))' "
              + "indexes an array of \(elements.count) elements", keyPath: path)
        }
        let created: BSON?
        if isLast {
          if case .replace(let value) = try body(nil) { created = value } else { created = nil }
        } else {
          created = try create(path, from: depth + 1, body)
        }
        if let created {
          // MongoDB pads the array with nulls up to the index.
          elements.append(contentsOf: repeatElement(.value(.null), count: index - elements.count))
          elements.append(.value(created))
        }
      }
    case .value(let value):
      guard creates else { return }
      throw notViable(path, depth, name: name, value: value)
    }
  }

  /// The value of a missing field `path[depth...]`: nested documents around what `body` sets.
  static func create(
    _ path: [String], from depth: Int, _ body: (BSON?) throws(UpdateError) -> LeafResult
  ) throws(UpdateError) -> BSON? {
    guard case .replace(var value) = try body(nil) else { return nil }
    for segment in path[depth...].reversed() { value = .document(Document([(segment, value)])) }
    return value
  }

  static func notViable(_ path: [String], _ depth: Int, name: String, value: BSON) -> UpdateError {
    UpdateError(
      .pathNotViable,
      "Cannot create field '\(path[depth])' in element {\(name): \(value.extendedJSON())}: "
        + "the path '\(path.prefix(depth).joined(separator: "."))' holds a value of type \(typeName(value))",
      keyPath: path)
  }

  /// The most nulls an update may pad an array with (MongoDB's limit).
  static let maximumPadding = 1_500_000

  /// An array index segment: decimal digits only.
  static func arrayIndex(_ segment: String) -> Int? {
    guard !segment.isEmpty, segment.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
    return Int(segment)
  }

  // MARK: - $rename

  mutating func rename(from source: [String], to target: [String]) throws(UpdateError) {
    // Find the source, as MongoDB's findLongestPrefix does.
    var node = root
    var arrayName: String?
    for (depth, segment) in source.enumerated() {
      if case .value(let value) = node { node = UpdateNode(expanding: value) }
      let child: UpdateNode?
      switch node {
      case .document(let fields): child = fields.index(of: segment).map { fields.values[$0] }
      case .array(let elements):
        guard let index = UpdateState.arrayIndex(segment) else {
          throw traverseError(source, depth, node.bson)
        }
        child = index < elements.count ? elements[index] : nil
      case .value(let value): throw traverseError(source, depth, value)
      }
      guard let child else { return }  // a missing source is a no-op
      if depth < source.count - 1, arrayName == nil, child.isArray { arrayName = segment }
      node = child
    }
    if let arrayName {
      throw UpdateError(
        .pathNotViable,
        "The source field cannot be an array element, '\(source.joined(separator: "."))' in doc with "
          + "\(idDescription) has an array field called '\(arrayName)'", keyPath: source)
    }
    let value = node.bson
    // The target's existing part must not go through an array.
    var walk = root
    for segment in target.dropLast() {
      if case .value(let value) = walk { walk = UpdateNode(expanding: value) }
      guard case .document(let fields) = walk, let index = fields.index(of: segment) else { break }
      walk = fields.values[index]
      if walk.isArray {
        throw UpdateError(
          .pathNotViable,
          "The destination field cannot be an array element, '\(target.joined(separator: "."))' in doc with "
            + "\(idDescription) has an array field called '\(segment)'", keyPath: target)
      }
    }
    try UpdateState.descend(&root, name: "", path: target, depth: 0, creates: true) { _ in .replace(value) }
    try UpdateState.descend(&root, name: "", path: source, depth: 0, creates: false) { _ in .remove }
    changed = true
  }

  func traverseError(_ path: [String], _ depth: Int, _ value: BSON) -> UpdateError {
    UpdateError(
      .pathNotViable,
      "cannot use the part (\(path[depth]) of \(path.joined(separator: "."))) to traverse the element "
        + "({\(depth > 0 ? path[depth - 1] : ""): \(value.extendedJSON())})", keyPath: path)
  }
}

// MARK: - Operators

/// What `operation` does to a field whose current value is `current` (`nil` when missing), in
/// the document whose `_id` is `id` (for messages).
func leaf(_ operation: UpdateOperation, _ current: BSON?, path: [String], id: BSON?) throws(UpdateError)
  -> LeafResult
{
  // For messages only: made when an error needs them, not for every field updated.
  var field: String { path.joined(separator: ".") }
  var document: String { UpdateState.describe(id: id) }
  switch operation {
  case .set(let value), .setOnInsert(let value):
    return current == value ? .keep : .replace(value)
  case .unset:
    return current == nil ? .keep : .remove
  case .inc(let operand), .mul(let operand):
    let isInc: Bool
    if case .inc = operation { isInc = true } else { isInc = false }
    guard let current else {
      // $mul on a missing field sets a zero of the multiplier's type.
      return .replace(isInc ? operand : multiply(.int32(0), operand) ?? operand)
    }
    guard isNumeric(current) else {
      throw UpdateError(
        .typeMismatch,
        "Cannot apply \(operation.name) to a value of non-numeric type. \(document) has the field '\(path.last!)' "
          + "of non-numeric type \(typeName(current))", keyPath: path)
    }
    guard let result = isInc ? add(current, operand) : multiply(current, operand) else {
      throw UpdateError(
        .overflow,
        "Failed to apply \(operation.name) operations to current value (\(typeName(current)) "
          + "\(current.extendedJSON())) for document \(document): the result overflows a \(typeName(current))",
        keyPath: path)
    }
    return result == current ? .keep : .replace(result)
  case .min(let value):
    guard let current else { return .replace(value) }
    return compareBSON(value, current) < 0 ? .replace(value) : .keep
  case .max(let value):
    guard let current else { return .replace(value) }
    return compareBSON(value, current) > 0 ? .replace(value) : .keep
  case .currentDate(let timestamp):
    return .replace(currentTime(timestamp: timestamp))
  case .push(let spec):
    var elements: [BSON]
    switch current {
    case nil: elements = []
    case .array(let array)?: elements = Array(array)
    case let other?:
      throw UpdateError(
        .typeMismatch,
        "The field '\(field)' must be an array but is of type \(typeName(other)) in document \(document)", keyPath: path
      )
    }
    var position = elements.count
    if let requested = spec.position {
      position = requested >= 0 ? min(requested, elements.count) : max(0, elements.count + requested)
    }
    elements.insert(contentsOf: spec.values, at: position)
    if let sort = spec.sort { sortElements(&elements, sort) }
    if let slice = spec.slice {
      if slice >= 0 {
        if elements.count > slice { elements.removeLast(elements.count - slice) }
      } else if elements.count > -slice {
        elements.removeFirst(elements.count + slice)
      }
    }
    return .replace(.array(BSONArray(elements)))
  case .addToSet(let values):
    var elements: [BSON]
    switch current {
    case nil: elements = []
    case .array(let array)?: elements = Array(array)
    case let other?:
      throw UpdateError(
        .typeMismatch,
        "Cannot apply $addToSet to non-array field. Field named '\(path.last!)' has non-array type \(typeName(other))",
        keyPath: path)
    }
    let before = elements.count
    for value in values where !elements.contains(where: { compareBSON($0, value) == 0 }) {
      elements.append(value)
    }
    return current != nil && elements.count == before ? .keep : .replace(.array(BSONArray(elements)))
  case .pop(let first):
    guard let current else { return .keep }
    guard case .array(let array) = current else {
      throw UpdateError(
        .typeMismatch,
        "Path '\(field)' contains an element of non-array type '\(typeName(current))'", keyPath: path)
    }
    var elements = Array(array)
    guard !elements.isEmpty else { return .keep }
    if first { elements.removeFirst() } else { elements.removeLast() }
    return .replace(.array(BSONArray(elements)))
  case .pull, .pullAll:
    guard let current else { return .keep }
    guard case .array(let array) = current else {
      throw UpdateError(
        .typeMismatch,
        "Cannot apply \(operation.name) to a non-array value: the field '\(field)' is of type \(typeName(current))",
        keyPath: path)
    }
    let elements = Array(array)
    let kept: [BSON]
    if case .pull(let condition) = operation {
      var remaining: [BSON] = []
      for element in elements where try !pullMatches(condition, element, path: path) { remaining.append(element) }
      kept = remaining
    } else if case .pullAll(let values) = operation {
      kept = elements.filter { element in !values.contains { compareBSON($0, element) == 0 } }
    } else {
      kept = elements
    }
    return kept.count == elements.count ? .keep : .replace(.array(BSONArray(kept)))
  case .renameTo, .renameFrom:
    return .keep  // handled by UpdateState.rename
  }
}

/// Whether `$pull`'s condition takes the element out of the array.
/// - Throws: ``UpdateError/Kind/limit`` when a regular expression of the condition goes past its
///   limits on one of the element's strings (the ``UpdateError/queryError`` says which).
func pullMatches(_ condition: PullCondition, _ element: BSON, path: [String]) throws(UpdateError) -> Bool {
  do {
    switch condition {
    case .equal(let value): return compareBSON(value, element) == 0
    case .documents(let query):
      guard case .document(let document) = element else { return false }
      return try query.evaluate(document)
    case .wrapped(let query):
      return try query.evaluate(Document([(PullCondition.wrappedKey, element)]))
    }
  } catch {
    throw UpdateError(.limit, "$pull condition: \(error.message)", keyPath: path, queryError: error)
  }
}

/// Sorts `$push`'s array: a stable sort in MongoDB's order of values.
func sortElements(_ elements: inout [BSON], _ sort: PushSort) {
  let keyed = elements.enumerated().map { ($0.offset, $0.element) }
  let sorted = keyed.sorted { a, b in
    var order = 0
    switch sort {
    case .whole(let ascending):
      order = compareBSON(a.1, b.1)
      if !ascending { order = -order }
    case .fields(let fields):
      for field in fields {
        order = compareBSON(sortValue(a.1, field.path), sortValue(b.1, field.path))
        if !field.ascending { order = -order }
        if order != 0 { break }
      }
    }
    return order != 0 ? order < 0 : a.0 < b.0
  }
  elements = sorted.map(\.1)
}

/// The value a `$push` `$sort` field pattern sorts a document element by (null when missing).
func sortValue(_ element: BSON, _ path: String) -> BSON {
  guard case .document(let document) = element else { return .null }
  return document[path] ?? .null
}
