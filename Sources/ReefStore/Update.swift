import ReefBSON
import ReefQuery

/// A parsed MongoDB update document (`{$set: {"address.city": "Paris"}, $inc: {visits: 1}}`),
/// applied to documents with MongoDB 8.0's semantics.
///
/// Supported operators: `$set`, `$unset`, `$inc`, `$mul`, `$min`, `$max`, `$rename`, `$push`
/// (with `$each`, `$position`, `$slice` and `$sort`), `$pull` (a value or a condition),
/// `$pullAll`, `$addToSet` (with `$each`), `$pop`, `$currentDate` and `$setOnInsert`, on dotted
/// paths. A numeric path segment indexes an array.
///
/// Positional segments update array elements chosen when the update applies: `$` the element
/// the query matched (`{"grades.$": 82}`; see ``apply(to:isInsert:matching:)``), `$[]` every
/// element (`{"grades.$[]": 0}`), and `$[identifier]` the elements an array filter matches
/// (`{"grades.$[g].mean": 100}` with the array filter `{"g.grade": {"$gte": 85}}`). They nest
/// (`"grades.$[g].scores.$[s]"`) and work with every operator but `$rename`.
///
/// Fields are updated as MongoDB does: paths are applied in order of their components (names
/// lexicographically, numeric names numerically), existing fields keep their position, new
/// fields are appended to their document, and missing intermediate documents are created.
///
/// ```swift
/// let update = try Update(["$set": ["address.city": "Paris"], "$inc": ["visits": 1]])
/// let updated = try update.apply(to: ["_id": 1, "visits": 2])
/// // {"_id": 1, "visits": 3, "address": {"city": "Paris"}}
///
/// let raise = try Update(["$inc": ["grades.$[g].score": 5]], arrayFilters: [["g.score": ["$gte": 80]]])
/// let raised = try raise.apply(to: ["_id": 1, "grades": [["score": 85], ["score": 70]]])
/// // {"_id": 1, "grades": [{"score": 90}, {"score": 70}]}
/// ```
public struct Update: Sendable {
  /// The field updates, in the order MongoDB applies them.
  let steps: [UpdateStep]
  /// The array filters, by identifier.
  let arrayFilters: [String: Query]
  /// Whether a path has a positional segment, so that steps are resolved per document.
  let hasPositionalPaths: Bool
  /// Whether a path has `$`, so that applying needs the query's match.
  let usesMatchedPosition: Bool

  /// Parses an update document of operators, with the array filters of its `$[identifier]`
  /// segments.
  ///
  /// - Parameters:
  ///   - document: the update: a document of operators.
  ///   - arrayFilters: one filter per identifier that the update's paths use, as MongoDB's
  ///     `arrayFilters` option: `{"elem.grade": {"$gte": 85}}` chooses the elements of
  ///     `$[elem]` whose field `grade` is at least 85, `{"elem": 0}` the elements equal to 0.
  ///     The filter tests each element as the field `elem` of a document.
  /// - Throws: ``UpdateError`` for an empty update, a field without an operator, an unknown
  ///   operator, an operator whose argument is not a document, an empty path, conflicting paths
  ///   (`"Updating the path 'a.b' would create a conflict at 'a'"`, also for `a.$[]` beside
  ///   `a.0`), arguments of the wrong type (`$inc` with a string, `$pop` with 2, …), a
  ///   positional segment first in a path or `$` twice, a positional `$rename`, and
  ///   (``UpdateError/Kind/arrayFilter``) an array filter that does not parse, has no or
  ///   several top-level names, or repeats one, an identifier without a filter and a filter
  ///   that no path uses.
  /// - Complexity: O(*n*²) in the number of paths (conflicts are checked pairwise).
  public init(_ document: Document, arrayFilters: [Document] = []) throws(UpdateError) {
    let filters = try Update.parseArrayFilters(arrayFilters)
    guard !document.isEmpty else {
      throw UpdateError(.malformed, "Update document requires atomic operators; it is empty")
    }
    var steps: [UpdateStep] = []
    var paths: [[String]] = []
    for element in document {
      let name = element.key
      guard name.hasPrefix("$") else {
        throw UpdateError(
          .malformed,
          "Update document requires atomic operators; found field '\(name)' without an operator", keyPath: [name])
      }
      guard let kind = UpdateOperator(rawValue: name) else {
        throw UpdateError(
          .unknownOperator,
          "Unknown modifier: \(name). Expected a valid update modifier or pipeline-style update specified as an array",
          keyPath: [name])
      }
      guard case .document(let fields) = element.value else {
        throw UpdateError(
          .malformed,
          "Modifiers operate on fields but we found type \(typeName(element.value)) instead. For example: "
            + "{$mod: {<field>: ...}} not {\(name): \(element.value.extendedJSON())}", keyPath: [name])
      }
      for field in fields {
        let path = try parsePath(field.key)
        let operation = try UpdateOperation.parse(kind, field.value, path: path)
        if case .renameTo(let target) = operation {
          // MongoDB keys a rename by its target; both paths count for conflicts.
          try register(path, in: &paths)
          try register(target, in: &paths)
          steps.append(UpdateStep(path: target, operation: .renameFrom(path)))
        } else {
          try register(path, in: &paths)
          steps.append(UpdateStep(path: path, operation: operation))
        }
      }
    }
    // No path is a prefix of another, so this is the depth-first order of MongoDB's update tree.
    steps.sort { comparePaths($0.path, $1.path) < 0 }
    let byName = Dictionary(uniqueKeysWithValues: filters)
    var used: Set<String> = []
    for path in paths {
      for case .identifier(let name)? in path.map(PositionalSegment.init) {
        guard byName[name] != nil else {
          throw UpdateError(
            .arrayFilter,
            "No array filter found for identifier '\(name)' in path '\(path.joined(separator: "."))'", keyPath: path)
        }
        used.insert(name)
      }
    }
    for (index, (name, _)) in filters.enumerated() where !used.contains(name) {
      throw UpdateError(
        .arrayFilter, "The array filter for identifier '\(name)' was not used in the update \(document)",
        keyPath: ["arrayFilters", String(index)])
    }
    self.steps = steps
    self.arrayFilters = byName
    hasPositionalPaths = paths.contains(where: isPositional)
    usesMatchedPosition = paths.contains { $0.contains("$") }
  }
}

/// One field's update: a path and what to do there.
struct UpdateStep: Sendable {
  var path: [String]
  var operation: UpdateOperation
}

/// The update operators, by name.
enum UpdateOperator: String, Sendable {
  case set = "$set"
  case unset = "$unset"
  case inc = "$inc"
  case mul = "$mul"
  case min = "$min"
  case max = "$max"
  case rename = "$rename"
  case push = "$push"
  case pull = "$pull"
  case pullAll = "$pullAll"
  case addToSet = "$addToSet"
  case pop = "$pop"
  case currentDate = "$currentDate"
  case setOnInsert = "$setOnInsert"
}

/// What `$push` inserts and how it orders and trims the array afterwards.
struct PushSpec: Sendable {
  var values: [BSON]
  var position: Int?
  var slice: Int?
  var sort: PushSort?
}

/// `$push`'s `$sort`: whole elements, or by fields of document elements.
enum PushSort: Sendable {
  case whole(ascending: Bool)
  case fields([(path: String, ascending: Bool)])
}

/// Which array elements `$pull` removes.
enum PullCondition: Sendable {
  /// Elements equal to the value (MongoDB's order, so `1 == 1.0`; documents compare field by field, in order).
  case equal(BSON)
  /// Document elements matching a query (`{$pull: {items: {qty: {$lt: 2}}}}`).
  case documents(Query)
  /// Any element matching a condition on the element itself (`{$pull: {scores: {$gte: 6}}}`),
  /// tested as the field `wrappedKey` of a one-field document.
  case wrapped(Query)

  static let wrappedKey = "v"
}

/// One operator applied to one path.
enum UpdateOperation: Sendable {
  case set(BSON)
  case setOnInsert(BSON)
  case unset
  case inc(BSON)
  case mul(BSON)
  case min(BSON)
  case max(BSON)
  /// `$rename` as parsed, with the target path; it becomes a step at the target with `renameFrom`.
  case renameTo([String])
  /// `$rename` in a step: the source path (the step's path is the target, as MongoDB keys it).
  case renameFrom([String])
  case push(PushSpec)
  case addToSet([BSON])
  case pop(first: Bool)
  case pull(PullCondition)
  case pullAll([BSON])
  case currentDate(timestamp: Bool)

  /// Whether the operator creates the field (and missing intermediate documents) when it is absent.
  /// The others do nothing on a missing or unreachable path.
  var createsPath: Bool {
    switch self {
    case .unset, .pop, .pull, .pullAll: false
    default: true
    }
  }

  /// The operator's name, for messages.
  var name: String {
    switch self {
    case .set: "$set"
    case .setOnInsert: "$setOnInsert"
    case .unset: "$unset"
    case .inc: "$inc"
    case .mul: "$mul"
    case .min: "$min"
    case .max: "$max"
    case .renameTo, .renameFrom: "$rename"
    case .push: "$push"
    case .addToSet: "$addToSet"
    case .pop: "$pop"
    case .pull: "$pull"
    case .pullAll: "$pullAll"
    case .currentDate: "$currentDate"
    }
  }

  static func parse(_ kind: UpdateOperator, _ value: BSON, path: [String]) throws(UpdateError) -> UpdateOperation {
    let field = path.joined(separator: ".")
    func fail(_ kind: UpdateError.Kind, _ message: String) -> UpdateError { UpdateError(kind, message, keyPath: path) }
    switch kind {
    case .set: return .set(value)
    case .setOnInsert: return .setOnInsert(value)
    case .unset: return .unset
    case .inc, .mul:
      guard isNumeric(value) else {
        let verb = kind == .inc ? "increment" : "multiply"
        throw fail(.badValue, "Cannot \(verb) with non-numeric argument: {\(field): \(value.extendedJSON())}")
      }
      return kind == .inc ? .inc(value) : .mul(value)
    case .min: return .min(value)
    case .max: return .max(value)
    case .rename:
      if isPositional(path) { throw fail(.badPath, "The source field for $rename may not be dynamic: \(field)") }
      guard case .string(let target) = value else {
        throw fail(.badValue, "The 'to' field for $rename must be a string: \(field): \(value.extendedJSON())")
      }
      let targetPath = try parsePath(target)
      if isPositional(targetPath) {
        throw fail(.badPath, "The destination field for $rename may not be dynamic: \(target)")
      }
      if targetPath == path {
        throw fail(.badValue, "The source and target field for $rename must differ: \(field): \(value.extendedJSON())")
      }
      if targetPath.starts(with: path) || path.starts(with: targetPath) {
        throw fail(
          .badValue,
          "The source and target field for $rename must not be on the same path: \(field): \(value.extendedJSON())")
      }
      return .renameTo(targetPath)
    case .push: return .push(try parsePush(value, path: path))
    case .addToSet:
      if case .document(let spec) = value, let first = firstElement(spec), first.key == "$each" {
        guard case .array(let values) = first.value else {
          throw fail(
            .badValue, "The argument to $each in $addToSet must be an array but it was of type \(typeName(first.value))"
          )
        }
        guard spec.count == 1 else {
          throw fail(.badValue, "Found unexpected fields after $each in $addToSet: \(spec)")
        }
        return .addToSet(Array(values))
      }
      return .addToSet([value])
    case .pop:
      guard isNumeric(value) else { throw fail(.badValue, "Expected a number in: \(field): \(value.extendedJSON())") }
      let order = compareBSON(value, .int32(0))
      guard compareBSON(value, .int32(1)) == 0 || compareBSON(value, .int32(-1)) == 0 else {
        throw fail(.badValue, "$pop expects 1 or -1, found: \(value.extendedJSON())")
      }
      return .pop(first: order < 0)
    case .pull: return .pull(try parsePull(value, path: path))
    case .pullAll:
      guard case .array(let values) = value else {
        throw fail(.badValue, "$pullAll requires an array argument but was given a \(typeName(value))")
      }
      return .pullAll(Array(values))
    case .currentDate:
      switch value {
      case .bool: return .currentDate(timestamp: false)
      case .document(let spec):
        guard spec.count == 1, case .string(let type)? = spec.value(forKey: "$type") else {
          throw fail(
            .badValue,
            "Unrecognized $currentDate option: \(spec); use a boolean (true) or a $type expression ({$type: 'timestamp/date'})"
          )
        }
        guard type == "date" || type == "timestamp" else {
          throw fail(.badValue, "The '$type' string field is required to be 'date' or 'timestamp': \(field): \(spec)")
        }
        return .currentDate(timestamp: type == "timestamp")
      default:
        throw fail(
          .badValue,
          "\(field) is not valid type for $currentDate. Please use a boolean ('true') or a $type expression ({$type: 'timestamp/date'})."
        )
      }
    }
  }

  static func parsePush(_ value: BSON, path: [String]) throws(UpdateError) -> PushSpec {
    guard case .document(let spec) = value, spec.element(forKey: "$each") != nil else {
      return PushSpec(values: [value])
    }
    func fail(_ kind: UpdateError.Kind, _ message: String) -> UpdateError { UpdateError(kind, message, keyPath: path) }
    var push = PushSpec(values: [])
    for clause in spec {
      switch clause.key {
      case "$each":
        guard case .array(let values) = clause.value else {
          throw fail(
            .badValue, "The argument to $each in $push must be an array but it was of type: \(typeName(clause.value))")
        }
        push.values = Array(values)
      case "$slice":
        guard let slice = integerValue(clause.value) else {
          throw fail(
            .badValue, "The value for $slice must be an integer value but was given type: \(typeName(clause.value))")
        }
        push.slice = slice
      case "$position":
        guard let position = integerValue(clause.value) else {
          throw fail(
            .badValue, "The value for $position must be an integer value, not of type: \(typeName(clause.value))")
        }
        push.position = position
      case "$sort":
        push.sort = try parsePushSort(clause.value, path: path)
      default:
        throw fail(.unknownOperator, "Unrecognized clause in $push: \(clause.key)")
      }
    }
    return push
  }

  static func parsePushSort(_ value: BSON, path: [String]) throws(UpdateError) -> PushSort {
    func direction(_ value: BSON) -> Bool? {
      guard isNumeric(value) else { return nil }
      if compareBSON(value, .int32(1)) == 0 { return true }
      if compareBSON(value, .int32(-1)) == 0 { return false }
      return nil
    }
    if let ascending = direction(value) { return .whole(ascending: ascending) }
    guard case .document(let pattern) = value, !pattern.isEmpty else {
      throw UpdateError(
        .badValue,
        "The $sort is invalid: use 1/-1 to sort the whole element, or {field:1/-1} to sort embedded fields",
        keyPath: path)
    }
    var fields: [(path: String, ascending: Bool)] = []
    for element in pattern {
      guard let ascending = direction(element.value) else {
        throw UpdateError(.badValue, "The $sort element value must be either 1 or -1", keyPath: path)
      }
      guard !element.key.isEmpty, !element.key.hasPrefix("$"),
        !element.key.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty)
      else {
        throw UpdateError(
          .badValue, "The $sort field is a dotted field but has an empty part: \(element.key)", keyPath: path)
      }
      fields.append((element.key, ascending))
    }
    return .fields(fields)
  }

  /// The operators that make `{$pull: {a: {<operator>: …}}}` a condition on the elements
  /// themselves rather than a query on document elements.
  static let elementOperators: Set<String> = [
    "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$all", "$exists", "$mod", "$type", "$regex",
    "$options", "$elemMatch", "$size", "$not", "$bitsAllSet", "$bitsAllClear", "$bitsAnySet", "$bitsAnyClear",
    "$geoWithin", "$geoIntersects", "$near", "$nearSphere", "$within",
  ]

  static func parsePull(_ value: BSON, path: [String]) throws(UpdateError) -> PullCondition {
    do throws(QueryError) {
      switch value {
      case .document(let condition):
        if let first = firstElement(condition), elementOperators.contains(first.key) {
          return .wrapped(try Query(filter: Document([(PullCondition.wrappedKey, value)])))
        }
        return .documents(try Query(filter: condition))
      case .regex:
        return .wrapped(try Query(filter: Document([(PullCondition.wrappedKey, value)])))
      default:
        return .equal(value)
      }
    } catch {
      throw UpdateError(
        .badValue, "Invalid $pull condition: \(error.message)", keyPath: path + error.keyPath, queryError: error)
    }
  }
}

/// Splits and checks an update path.
func parsePath(_ dotted: String) throws(UpdateError) -> [String] {
  guard !dotted.isEmpty else { throw UpdateError(.badPath, "An empty update path is not valid.") }
  let path = dotted.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
  if path.contains(where: \.isEmpty) {
    throw UpdateError(
      .badPath,
      "The update path '\(dotted)' contains an empty field name, which is not allowed.", keyPath: path)
  }
  try checkPositionalSegments(path, dotted: dotted)
  return path
}

/// Adds `path` to the paths an update touches, or throws when it overlaps one of them, or when
/// one of them goes on from a common parent with `$[]` or `$[identifier]` and the other with a
/// field name, an index or `$` (MongoDB cannot update an array both ways at once).
private func register(_ path: [String], in paths: inout [[String]]) throws(UpdateError) {
  for other in paths {
    let common = min(other.count, path.count)
    var shared = 0
    while shared < common && other[shared] == path[shared] { shared += 1 }
    let conflict: ArraySlice<String>
    if shared == common {
      conflict = path.prefix(common)
    } else if shared > 0,
      (PositionalSegment(other[shared])?.isArrayFilter == true)
        != (PositionalSegment(path[shared])?.isArrayFilter == true)
    {
      conflict = path.prefix(shared)
    } else {
      continue
    }
    throw UpdateError(
      .conflictingPaths,
      "Updating the path '\(path.joined(separator: "."))' would create a conflict at '\(conflict.joined(separator: "."))'",
      keyPath: path)
  }
  paths.append(path)
}

/// Compares paths component by component, as MongoDB orders the fields of an update: names that
/// are both unsigned integers compare numerically, others by their UTF-8 bytes.
func comparePaths(_ a: [String], _ b: [String]) -> Int {
  for (x, y) in zip(a, b) {
    let order = compareFieldNames(x, y)
    if order != 0 { return order }
  }
  return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
}

func compareFieldNames(_ a: String, _ b: String) -> Int {
  if a == b { return 0 }
  let digitsA = a.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
  let digitsB = b.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
  if digitsA && digitsB {
    let trimmedA = a.drop { $0 == "0" }
    let trimmedB = b.drop { $0 == "0" }
    if trimmedA.utf8.count != trimmedB.utf8.count { return trimmedA.utf8.count < trimmedB.utf8.count ? -1 : 1 }
    if trimmedA != trimmedB { return trimmedA.utf8.lexicographicallyPrecedes(trimmedB.utf8) ? -1 : 1 }
  }
  return a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1
}

/// A document's first element, or `nil` when it is empty.
func firstElement(_ document: Document) -> Document.Element? {
  var iterator = document.makeIterator()
  return iterator.next()
}

/// Whether a value is one of the four numeric types.
func isNumeric(_ value: BSON) -> Bool {
  switch value {
  case .int32, .int64, .double, .decimal128: true
  default: false
  }
}

/// An integral numeric value as an `Int`, or `nil`.
func integerValue(_ value: BSON) -> Int? {
  switch value {
  case .int32(let n): Int(n)
  case .int64(let n): Int(exactly: n)
  case .double(let d): Int(exactly: d)
  default: nil
  }
}

/// MongoDB's name for a value's type (`int`, `long`, `double`, `decimal`, `string`, `object`, …).
func typeName(_ value: BSON) -> String {
  switch value {
  case .double: "double"
  case .string: "string"
  case .document: "object"
  case .array: "array"
  case .binary: "binData"
  case .undefined: "undefined"
  case .objectId: "objectId"
  case .bool: "bool"
  case .datetime: "date"
  case .null: "null"
  case .regex: "regex"
  case .dbPointer: "dbPointer"
  case .javascript: "javascript"
  case .symbol: "symbol"
  case .javascriptWithScope: "javascriptWithScope"
  case .int32: "int"
  case .timestamp: "timestamp"
  case .int64: "long"
  case .decimal128: "decimal"
  case .minKey: "minKey"
  case .maxKey: "maxKey"
  }
}
