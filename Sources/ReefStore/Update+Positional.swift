import ReefBSON
import ReefQuery

// Positional update paths, as MongoDB has them: `$` (the array element the query matched),
// `$[]` (every element) and `$[<identifier>]` (the elements an array filter matches). A
// positional step is resolved against each document into concrete paths (`grades.$[]` into
// `grades.0`, `grades.1`, …), which the operators then update as they update any path.

/// A positional segment of an update path.
enum PositionalSegment: Equatable {
  /// `$`: the position of the array element the query matched.
  case matched
  /// `$[]`: every element of the array.
  case all
  /// `$[identifier]`: the elements that the array filter named `identifier` matches.
  case identifier(String)

  /// The positional segment `segment` is, or `nil` for a field name or an index. A segment that
  /// starts with `$[` but does not end with `]` (`$[i` in `a.$[i.j]`) is a field name, as in MongoDB.
  init?(_ segment: String) {
    if segment == "$" {
      self = .matched
      return
    }
    guard segment.utf8.count >= 3, segment.hasPrefix("$["), segment.hasSuffix("]") else { return nil }
    let identifier = segment.dropFirst(2).dropLast()
    self = identifier.isEmpty ? .all : .identifier(String(identifier))
  }

  /// Whether the segment stands for elements chosen by the update itself (`$[]`, `$[identifier]`)
  /// rather than by the query (`$`).
  var isArrayFilter: Bool { self != .matched }
}

/// Whether a path has a positional segment.
func isPositional(_ path: [String]) -> Bool { path.contains { PositionalSegment($0) != nil } }

/// Checks the positional segments of an update path as MongoDB does when it parses the update.
func checkPositionalSegments(_ path: [String], dotted: String) throws(UpdateError) {
  guard let first = path.first else { return }
  switch PositionalSegment(first) {
  case .matched?:
    throw UpdateError(
      .badPath, "Cannot have positional (i.e. '$') element in the first position in path '\(dotted)'", keyPath: path)
  case .all?, .identifier?:
    throw UpdateError(
      .badPath,
      "Cannot have array filter identifier (i.e. '$[<id>]') element in the first position in path '\(dotted)'",
      keyPath: path)
  case nil: break
  }
  if path.count(where: { $0 == "$" }) > 1 {
    throw UpdateError(.badPath, "Too many positional (i.e. '$') elements found in path '\(dotted)'", keyPath: path)
  }
}

// MARK: - Array filters

extension Update {
  /// Parses `arrayFilters`: one filter document per identifier, whose top-level field names all
  /// start with that identifier (`{"elem.grade": {"$gte": 85}}` is the filter of `elem`).
  static func parseArrayFilters(_ filters: [Document]) throws(UpdateError) -> [(name: String, query: Query)] {
    var parsed: [(name: String, query: Query)] = []
    var identifiers: Set<String> = []
    for (index, filter) in filters.enumerated() {
      let keyPath = ["arrayFilters", String(index)]
      func fail(_ message: String) -> UpdateError { UpdateError(.arrayFilter, message, keyPath: keyPath) }
      let query: Query
      do {
        query = try Query(filter: filter)
      } catch {
        throw UpdateError(
          .arrayFilter, "Error parsing array filter :: caused by :: \(error.message)", keyPath: keyPath + error.keyPath,
          queryError: error)
      }
      var names: [String] = []
      topLevelNames(filter, into: &names)
      guard let identifier = names.first else {
        throw fail("Cannot use an expression without a top-level field name in arrayFilters: \(filter)")
      }
      if let other = names.first(where: { $0 != identifier }) {
        throw fail(
          "Error parsing array filter :: caused by :: Expected a single top-level field name, found '\(identifier)' and '\(other)'"
        )
      }
      guard isValidIdentifier(identifier) else {
        throw fail(
          "Error parsing array filter :: caused by :: The top-level field name must be an alphanumeric string "
            + "beginning with a lowercase letter, found '\(identifier)'")
      }
      guard identifiers.insert(identifier).inserted else {
        throw fail("Found multiple array filters with the same top-level field name \(identifier)")
      }
      parsed.append((identifier, query))
    }
    return parsed
  }

  /// An array filter's identifier: a lowercase ASCII letter, then ASCII letters and digits.
  static func isValidIdentifier(_ name: String) -> Bool {
    guard let first = name.utf8.first, first >= 0x61 && first <= 0x7A else { return false }
    return name.utf8.allSatisfy {
      ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A)
    }
  }
}

/// The first components of a filter's field names, through `$and`, `$or` and `$nor`.
private func topLevelNames(_ filter: Document, into names: inout [String]) {
  for element in filter {
    let key = element.key
    if key.hasPrefix("$") {
      guard key == "$and" || key == "$or" || key == "$nor", case .array(let clauses) = element.value else { continue }
      for case .document(let clause) in clauses { topLevelNames(clause, into: &names) }
      continue
    }
    let name = key.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? key
    names.append(name)
  }
}

// MARK: - Resolving positional paths

/// A step whose positional segments were replaced by indexes, with the path as the update wrote it.
struct ResolvedStep {
  var step: UpdateStep
  var original: [String]
}

extension Update {
  /// The steps to apply to `document`: positional paths replaced by every concrete path they
  /// stand for in it, in MongoDB's order of application.
  ///
  /// - Parameters:
  ///   - matched: the array index the query matched (`$`), if it matched one.
  /// - Throws: ``UpdateError`` when `$` has no match, an array that `$[]` or `$[identifier]`
  ///   names is missing or is not an array, or two concrete paths overlap.
  func resolvedSteps(in document: Document, isInsert: Bool, matched: () throws(UpdateError) -> String?)
    throws(UpdateError) -> [UpdateStep]
  {
    var resolved: [ResolvedStep] = []
    var matchedIndex: String??
    for step in steps {
      if case .setOnInsert = step.operation, !isInsert { continue }
      guard isPositional(step.path) else {
        resolved.append(ResolvedStep(step: step, original: step.path))
        continue
      }
      var path = step.path
      if let position = path.firstIndex(of: "$") {
        if matchedIndex == nil { matchedIndex = .some(try matched()) }
        guard let index = matchedIndex!, !isInsert else {
          throw UpdateError(
            .badValue,
            "The positional operator did not find the match needed from the query: the update path "
              + "'\(step.path.joined(separator: "."))' uses '$'", keyPath: step.path)
        }
        path[position] = index
      }
      var concrete: [[String]] = []
      try expand(path, in: document, into: &concrete)
      for path in concrete {
        resolved.append(ResolvedStep(step: UpdateStep(path: path, operation: step.operation), original: step.path))
      }
    }
    // One step's concrete paths are distinct, of one length and already in order (elements are
    // taken in index order); paths from several steps can overlap and interleave.
    guard resolvedFromSeveralSteps(resolved) else { return resolved.map(\.step) }
    try checkConflicts(resolved)
    resolved.sort { comparePaths($0.step.path, $1.step.path) < 0 }
    return resolved.map(\.step)
  }

  /// Whether the resolved steps come from more than one step of the update.
  private func resolvedFromSeveralSteps(_ resolved: [ResolvedStep]) -> Bool {
    guard let first = resolved.first else { return false }
    return resolved.contains { $0.original != first.original }
  }

  /// Adds to `paths` the concrete paths that `path` (whose `$` is already replaced) stands for in
  /// `document`. Iterative, so a long path cannot exhaust the stack.
  private func expand(_ path: [String], in document: Document, into paths: inout [[String]]) throws(UpdateError) {
    // The position of the last array-filter segment: past it, the path is followed as it is.
    let last = path.lastIndex { PositionalSegment($0)?.isArrayFilter == true } ?? -1
    var work: [(depth: Int, value: BSON, prefix: [String])] = [(0, .document(document), [])]
    while let item = work.popLast() {
      var depth = item.depth
      var value = item.value
      var prefix = item.prefix
      while depth <= last {
        let segment = path[depth]
        if let positional = PositionalSegment(segment) {
          guard case .array(let array) = value else {
            throw UpdateError(
              .pathNotViable,
              "Cannot apply array updates to non-array element \(prefix.last ?? ""): \(value.extendedJSON()): "
                + "the path '\(prefix.joined(separator: "."))' holds a value of type \(typeName(value))",
              keyPath: path)
          }
          var chosen: [(Int, BSON)] = []
          for (index, element) in array.enumerated() {
            if case .identifier(let name) = positional {
              guard try elementMatches(name, element, path: path) else { continue }
            }
            chosen.append((index, element))
          }
          // Pushed in reverse, so that the last in, first out work list resolves them in index
          // order: one step's concrete paths come out sorted, and are not sorted again.
          for (index, element) in chosen.reversed() {
            work.append((depth + 1, element, prefix + [String(index)]))
          }
          break
        }
        let child: BSON?
        switch value {
        case .document(let fields): child = fields.value(forKey: segment)
        case .array(let elements): child = UpdateState.arrayIndex(segment).flatMap { elements[$0] }
        default: child = nil  // a scalar has no fields: the array is missing, as MongoDB reports it
        }
        guard let child else {
          let array = path[..<path[depth...].firstIndex { PositionalSegment($0)?.isArrayFilter == true }!]
          throw UpdateError(
            .pathNotViable,
            "The path '\((prefix + array[depth...]).joined(separator: "."))' must exist in the document in order to "
              + "apply array updates.", keyPath: path)
        }
        prefix.append(segment)
        value = child
        depth += 1
      }
      if depth > last { paths.append(prefix + path[depth...]) }
    }
  }

  /// Whether the array filter `identifier` matches `element`, tested as the field `identifier`
  /// of a one-field document (so `{"i.b": 0}` tests the element's field `b`).
  private func elementMatches(_ identifier: String, _ element: BSON, path: [String]) throws(UpdateError) -> Bool {
    guard let filter = arrayFilters[identifier] else { return false }  // checked when parsed
    do {
      return try filter.evaluate(Document([(identifier, element)]))
    } catch {
      throw UpdateError(.limit, "array filter '\(identifier)': \(error.message)", keyPath: path, queryError: error)
    }
  }

  /// Throws when two resolved paths are equal or one is a prefix of the other (two identifiers
  /// that both match one element, or `$` resolved to an index that the update also names).
  private func checkConflicts(_ resolved: [ResolvedStep]) throws(UpdateError) {
    guard resolved.count > 1 else { return }
    // Keys join segments with NUL, which no BSON field name contains.
    var owner: [String: Int] = [:]
    owner.reserveCapacity(resolved.count)
    for (index, item) in resolved.enumerated() {
      let key = item.step.path.joined(separator: "\u{0}")
      if let other = owner[key] { throw conflict(resolved[other], item) }
      owner[key] = index
    }
    for item in resolved where item.step.path.count > 1 {
      var key = ""
      for segment in item.step.path.dropLast() {
        if !key.isEmpty { key.append("\u{0}") }
        key.append(segment)
        if let other = owner[key] { throw conflict(resolved[other], item) }
      }
    }
  }

  /// The error for two overlapping resolved paths, where MongoDB reports it: the concrete path
  /// up to the last segment where the two update paths differ, then the rest as written.
  private func conflict(_ shorter: ResolvedStep, _ longer: ResolvedStep) -> UpdateError {
    let common = min(shorter.original.count, longer.original.count)
    let last = (0..<common).last { shorter.original[$0] != longer.original[$0] } ?? (common - 1)
    let shown = shorter.step.path.prefix(last + 1) + shorter.original.dropFirst(last + 1)
    return UpdateError(
      .conflictingPaths,
      "Update created a conflict at '\(shown.joined(separator: "."))': the update paths "
        + "'\(shorter.original.joined(separator: "."))' and '\(longer.original.joined(separator: "."))' "
        + "both update it", keyPath: Array(shown))
  }
}
