import ReefBSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// How the values at the end of a path are handed to a test.
@usableFromInline
enum LeafExpansion {
  /// An array is offered whole and then element by element (MongoDB).
  case wholeAndElements
  /// An array offers its elements only (Realm lists).
  case elements
  /// Values are offered as they are (`$size`, `$elemMatch`, aggregates).
  case none
}

/// What a walk along a path saw.
@usableFromInline
struct PathWalk {
  /// Some value was found at the path.
  @usableFromInline var found = false
  /// The walk went through an array on the way (or expanded one at the end).
  @usableFromInline var throughArray = false
  /// A document on the way lacked the next field (MongoDB tests such a branch as null).
  @usableFromInline var missingBranch = false
  @inlinable init() {}
}

/// Walks `segments` from `value` and calls `visit` with every value found, until it returns
/// true. Returns whether `visit` stopped the walk.
///
/// Documents are entered by field name. An array is entered at the index a numeric segment
/// names and through each of its document elements (where the segment is a field name), as
/// MongoDB does. MongoDB's rules for numeric segments (`a.0`, `a.1.b`):
/// - an element reached by its index is offered as it is when the path ends there: an array
///   there is not expanded (`{"tags.0": "ssl"}` does not match `tags: [["ssl"], "x"]`);
/// - when the path goes on, an element reached by its index is entered as any value is: a
///   document by field name, an array by index and through its document elements; a scalar
///   yields nothing;
/// - a scalar found as a field of a document while the path goes on counts as a missing
///   branch (MongoDB tests it as null), where a scalar element of an array yields nothing.
@inlinable
func walk(
  _ value: RawValue, _ segments: ArraySlice<FieldPath.Segment>, _ expansion: LeafExpansion, _ state: inout PathWalk,
  _ visit: (RawValue) -> Bool
) -> Bool {
  guard let segment = segments.first else {
    state.found = true
    guard value.isArray, expansion != .none else { return visit(value) }
    state.throughArray = true
    if expansion == .wholeAndElements && visit(value) { return true }
    var elements = RawElements(value)
    while let element = elements.next() {
      if visit(element.value) { return true }
    }
    return false
  }
  let rest = segments.dropFirst()
  switch value.type {
  case 0x03:
    guard let child = value.field(segment.name) else {
      state.missingBranch = true
      return false
    }
    return walkField(child, rest, expansion, &state, visit)
  case 0x04:
    state.throughArray = true
    if let index = segment.index, let child = value.element(at: index) {
      if rest.isEmpty && expansion == .wholeAndElements {
        // MongoDB offers an element named by its index whole, even an array.
        state.found = true
        if visit(child) { return true }
      } else if walk(child, rest, expansion, &state, visit) {
        return true
      }
    }
    var elements = RawElements(value)
    while let element = elements.next() {
      guard element.value.isDocument else { continue }
      guard let child = element.value.field(segment.name) else {
        state.missingBranch = true
        continue
      }
      if walkField(child, rest, expansion, &state, visit) { return true }
    }
    return false
  default:
    return false
  }
}

/// `walk` from the value of a document's field: a scalar there with more of the path to go is
/// a missing branch, as a missing field is.
@inlinable
func walkField(
  _ child: RawValue, _ rest: ArraySlice<FieldPath.Segment>, _ expansion: LeafExpansion, _ state: inout PathWalk,
  _ visit: (RawValue) -> Bool
) -> Bool {
  if !rest.isEmpty && !child.isContainer {
    state.missingBranch = true
    return false
  }
  return walk(child, rest, expansion, &state, visit)
}

/// The value MongoDB tests in place of a missing field.
@usableFromInline let nullLiteral = Literal(.null)

// MARK: - Compiled nodes

/// A compiled query node: matches a document (or, in subqueries and `$elemMatch`, an element).
@usableFromInline
class Matcher: @unchecked Sendable {
  @usableFromInline func matches(_ root: RawValue) -> Bool { fatalError("abstract") }
}

final class ConstantMatcher: Matcher, @unchecked Sendable {
  let value: Bool
  init(_ value: Bool) { self.value = value }
  override func matches(_ root: RawValue) -> Bool { value }
}

final class AndMatcher: Matcher, @unchecked Sendable {
  let children: [Matcher]
  init(_ children: [Matcher]) { self.children = children }
  override func matches(_ root: RawValue) -> Bool {
    for child in children where !child.matches(root) { return false }
    return true
  }
}

final class OrMatcher: Matcher, @unchecked Sendable {
  let children: [Matcher]
  init(_ children: [Matcher]) { self.children = children }
  override func matches(_ root: RawValue) -> Bool {
    for child in children where child.matches(root) { return true }
    return false
  }
}

final class NotMatcher: Matcher, @unchecked Sendable {
  let child: Matcher
  init(_ child: Matcher) { self.child = child }
  override func matches(_ root: RawValue) -> Bool { !child.matches(root) }
}

/// A path and a value test under a quantifier.
@usableFromInline
final class PathMatcher: Matcher, @unchecked Sendable {
  @usableFromInline let segments: ArraySlice<FieldPath.Segment>
  @usableFromInline let test: CompiledTest
  @usableFromInline let quantifier: Quantifier

  /// Whether a missing field is tested as null (not for `$type`, which only sees stored values).
  @usableFromInline let missingIsNull: Bool
  /// Whether the test holds for null: the same for every document, so found once here.
  @usableFromInline let nullPasses: Bool

  init(_ path: FieldPath, _ test: CompiledTest, _ quantifier: Quantifier) {
    segments = path.segments[...]
    self.test = test
    self.quantifier = quantifier
    if case .type = test { missingIsNull = false } else { missingIsNull = true }
    nullPasses = test.test(nullLiteral.value)
  }

  @usableFromInline override func matches(_ root: RawValue) -> Bool {
    var state = PathWalk()
    switch quantifier {
    case .mongo:
      if walk(root, segments, .wholeAndElements, &state, { test.test($0) }) { return true }
      return missingIsNull && (!state.found || state.missingBranch) && nullPasses
    case .any:
      if walk(root, segments, .elements, &state, { test.test($0) }) { return true }
      return !state.found && !state.throughArray && nullPasses
    case .all:
      if walk(root, segments, .elements, &state, { !test.test($0) }) { return false }
      return state.found || state.throughArray || nullPasses
    case .none:
      if walk(root, segments, .elements, &state, { test.test($0) }) { return false }
      return state.found || state.throughArray || !nullPasses
    }
  }
}

final class ExistsMatcher: Matcher, @unchecked Sendable {
  let segments: ArraySlice<FieldPath.Segment>
  let exists: Bool
  init(_ path: FieldPath, _ exists: Bool) {
    segments = path.segments[...]
    self.exists = exists
  }
  override func matches(_ root: RawValue) -> Bool {
    var state = PathWalk()
    return walk(root, segments, .none, &state, { _ in true }) == exists
  }
}

final class SizeMatcher: Matcher, @unchecked Sendable {
  let segments: ArraySlice<FieldPath.Segment>
  let size: Int
  init(_ path: FieldPath, _ size: Int) {
    segments = path.segments[...]
    self.size = size
  }
  override func matches(_ root: RawValue) -> Bool {
    var state = PathWalk()
    return walk(root, segments, .none, &state, { $0.isArray && $0.elementCount == size })
  }
}

/// `$elemMatch`: an array at the path has an element that matches a query or passes tests.
final class ElementMatcher: Matcher, @unchecked Sendable {
  let segments: ArraySlice<FieldPath.Segment>
  let query: Matcher?
  let tests: [CompiledTest]
  init(_ path: FieldPath, query: Matcher?, tests: [CompiledTest]) {
    segments = path.segments[...]
    self.query = query
    self.tests = tests
  }
  override func matches(_ root: RawValue) -> Bool {
    var state = PathWalk()
    return walk(root, segments, .none, &state) { value in
      guard value.isArray else { return false }
      var elements = RawElements(value)
      while let element = elements.next() {
        if matchesElement(element.value) { return true }
      }
      return false
    }
  }

  /// Whether one element of the array passes.
  ///
  /// The query of the object form sees a document or an array element as a document (an
  /// array's fields are its indexes), as MongoDB does: `{b: 5}` matches the element `{b: 5}` but
  /// not `[{b: 5}]`, whose only field is `0`.
  func matchesElement(_ element: RawValue) -> Bool {
    if let query { return element.isContainer && query.matches(element.asDocument) }
    return tests.allSatisfy { $0.test(element) }
  }
}

/// The lists found at a path: the arrays at its end (Realm's list properties).
private func lists(at segments: ArraySlice<FieldPath.Segment>, in root: RawValue) -> [RawValue] {
  var state = PathWalk()
  var found: [RawValue] = []
  _ = walk(root, segments, .none, &state) { value in
    if value.isArray { found.append(value) }
    return false
  }
  return found
}

/// `SUBQUERY(list, $x, query).@count <op> n`.
final class SubqueryMatcher: Matcher, @unchecked Sendable {
  let segments: ArraySlice<FieldPath.Segment>
  let query: Matcher
  let comparison: CompiledTest
  init(_ path: FieldPath, _ query: Matcher, _ comparison: CompiledTest) {
    segments = path.segments[...]
    self.query = query
    self.comparison = comparison
  }
  override func matches(_ root: RawValue) -> Bool {
    var count: Int64 = 0
    for list in lists(at: segments, in: root) {
      var elements = RawElements(list)
      while let element = elements.next() {
        if query.matches(element.value) { count += 1 }
      }
    }
    return comparison.test(int64: count)
  }
}

/// `list.@count`, `list.@min`, `items.@sum.price`, … compared with a literal.
final class AggregateMatcher: Matcher, @unchecked Sendable {
  let segments: ArraySlice<FieldPath.Segment>
  let aggregate: Aggregate
  let subpath: ArraySlice<FieldPath.Segment>
  let comparison: CompiledTest
  init(_ path: FieldPath, _ aggregate: Aggregate, _ subpath: FieldPath?, _ comparison: CompiledTest) {
    segments = path.segments[...]
    self.aggregate = aggregate
    self.subpath = (subpath?.segments ?? [])[...]
    self.comparison = comparison
  }

  override func matches(_ root: RawValue) -> Bool {
    let lists = lists(at: segments, in: root)
    /// The values at `subpath` in the lists' elements, without nulls and undefined.
    func values() -> [RawValue] {
      var values: [RawValue] = []
      for list in lists {
        var elements = RawElements(list)
        while let element = elements.next() {
          var state = PathWalk()
          _ = walk(element.value, subpath, .none, &state) { value in
            if value.type != 0x0A && value.type != 0x06 { values.append(value) }
            return false
          }
        }
      }
      return values
    }
    // The result is tested where it lies (a value of the document) or in place (a count, a sum,
    // an average), so no document is built for it.
    switch aggregate {
    case .count:
      return comparison.test(int64: Int64(lists.reduce(0) { $0 + $1.elementCount }))
    case .min, .max:
      var best: RawValue?
      for value in values() {
        guard let current = best else {
          best = value
          continue
        }
        let order = compareValues(value, current)
        if (aggregate == .min && order < 0) || (aggregate == .max && order > 0) { best = value }
      }
      return comparison.test(best ?? nullLiteral.value)
    case .sum, .avg:
      let numbers = values().filter { isNumber($0.type) }
      var integerSum: Int64 = 0
      var integral = true
      var doubleSum = 0.0
      for number in numbers {
        switch Number(number) {
        case .integer(let value):
          doubleSum += Double(value)
          if integral {
            let (sum, overflow) = integerSum.addingReportingOverflow(value)
            if overflow { integral = false } else { integerSum = sum }
          }
        case .double(let value):
          doubleSum += value
          integral = false
        case .decimal(let value):
          doubleSum += Double(value.description) ?? .nan
          integral = false
        }
      }
      if aggregate == .avg {
        if numbers.isEmpty { return comparison.test(nullLiteral.value) }
        return comparison.test(double: doubleSum / Double(numbers.count))
      }
      return integral ? comparison.test(int64: integerSum) : comparison.test(double: doubleSum)
    }
  }
}

extension CompiledTest {
  /// The test on an int64 (the count of a list or of a subquery's matches, a sum), read in place.
  func test(int64 value: Int64) -> Bool {
    withUnsafeBytes(of: value.littleEndian) { test(RawValue(type: 0x12, pointer: $0.baseAddress!)) }
  }

  /// The test on a double (a sum or an average), read in place.
  func test(double value: Double) -> Bool {
    withUnsafeBytes(of: value.bitPattern.littleEndian) { test(RawValue(type: 0x01, pointer: $0.baseAddress!)) }
  }
}

/// The common case made fast: `{path: value}` (MongoDB's equality) where the value is a string or
/// an integer and no segment of the path is numeric.
///
/// Walks the bytes with the path's keys held in raw memory, so a test retains nothing and calls
/// no closures; arrays of documents on the way and arrays at the end are traversed as in
/// `PathMatcher`, which it agrees with on every document.
final class EqualityMatcher: Matcher, @unchecked Sendable {
  /// The path's keys, one after another, and where each starts and ends.
  let keyBytes: UnsafeMutableRawPointer
  let keyStarts: [Int]
  let keyCount: Int
  /// The literal: its type and value bytes (for strings, the UTF-8 bytes without the zero).
  let literalType: UInt8
  let literalBytes: UnsafeMutableRawPointer
  let literalCount: Int
  let literal: Literal

  /// A matcher for `path == value`, or nil when the fast path does not apply.
  init?(_ path: FieldPath, _ value: BSON) {
    guard !path.segments.isEmpty, path.segments.allSatisfy({ $0.index == nil && !$0.name.isEmpty }) else { return nil }
    let bytes: [UInt8]
    switch value {
    case .string(let string): bytes = Array(string.utf8)
    case .int32(let number): bytes = withUnsafeBytes(of: number.littleEndian) { Array($0) }
    case .int64(let number): bytes = withUnsafeBytes(of: number.littleEndian) { Array($0) }
    default: return nil
    }
    literal = Literal(value)
    literalType = value.type.rawValue
    literalCount = bytes.count
    literalBytes = .allocate(byteCount: max(1, bytes.count), alignment: 8)
    literalBytes.copyMemory(from: bytes, byteCount: bytes.count)
    var starts: [Int] = [0]
    for segment in path.segments { starts.append(starts.last! + segment.name.count) }
    keyStarts = starts
    keyCount = path.segments.count
    keyBytes = .allocate(byteCount: max(1, starts.last!), alignment: 8)
    keyBytes.copyMemory(from: path.segments.flatMap(\.name), byteCount: starts.last!)
  }

  deinit {
    keyBytes.deallocate()
    literalBytes.deallocate()
  }

  override func matches(_ root: RawValue) -> Bool { matches(root, level: 0) }

  private func matches(_ value: RawValue, level: Int) -> Bool {
    var current = value
    var level = level
    while level < keyCount {
      switch current.type {
      case 0x03:
        guard let child = field(of: current, level: level) else { return false }
        current = child
        level += 1
      case 0x04:
        // Into each document element, as MongoDB does.
        var elements = RawElements(current)
        while let element = elements.next() {
          guard element.value.type == 0x03, let child = field(of: element.value, level: level) else { continue }
          if matches(child, level: level + 1) { return true }
        }
        return false
      default:
        return false
      }
    }
    guard current.type == 0x04 else { return equals(current) }
    var elements = RawElements(current)
    while let element = elements.next() {
      if equals(element.value) { return true }
    }
    return false
  }

  /// The value of the key at `level` in a document.
  @inline(__always)
  private func field(of document: RawValue, level: Int) -> RawValue? {
    document.field(
      UnsafeRawBufferPointer(start: keyBytes + keyStarts[level], count: keyStarts[level + 1] - keyStarts[level]))
  }

  @inline(__always)
  private func equals(_ value: RawValue) -> Bool {
    if value.type == literalType {
      if literalType == 0x02 {
        return Int(value.int32()) - 1 == literalCount && memcmp(value.pointer + 4, literalBytes, literalCount) == 0
      }
      return memcmp(value.pointer, literalBytes, literalCount) == 0
    }
    switch value.type {
    case 0x0E: return literalType == 0x02 && CompiledTest.compare(.equal, value, literal.value)
    case 0x01, 0x10, 0x12, 0x13: return literalType != 0x02 && CompiledTest.compare(.equal, value, literal.value)
    default: return false
    }
  }
}
