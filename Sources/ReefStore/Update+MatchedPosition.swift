import ReefBSON
import ReefQuery

/// Finds which array element a query matched, for the positional `$` of an update: MongoDB's
/// "elemMatchKey".
///
/// A condition on a path that goes through an array (`{"grades": {"$gte": 85}}`,
/// `{"grades.grade": 85}`, `{"grades": {"$elemMatch": …}}`) matches through one element of the
/// first array on its path; `$` stands for that element's index. Under `$and` the last condition
/// (in the filter's order) that matched through an array gives the position, under `$or` the
/// first clause that matches; negations (`$ne`, `$nin`, `$not`, `$nor`), `$exists`, `$size`, and
/// matches of a whole array or of a missing field give none.
struct MatchedPositionFinder {
  private indirect enum Node {
    case none
    case and([Node])
    /// Each clause with its own query, to find the first that matches.
    case or([(Query, Node)])
    /// A test of the values at `path`: the whole array at its end and each of its elements.
    case values(path: [String], test: Query)
    /// `$elemMatch` at `path`: the first element of the array there that matches.
    case elements(path: [String], test: Query)
  }

  private let root: Node

  /// The key under which a value is tested (`{v: [value]}` offers `value` as it is).
  private static let key = "v"

  init(_ query: Query) throws(UpdateError) {
    do {
      root = try MatchedPositionFinder.node(query.node)
    } catch {
      throw UpdateError(.badValue, "The query cannot locate the positional match: \(error.message)", queryError: error)
    }
  }

  private static func node(_ node: QueryNode) throws(QueryError) -> Node {
    let value = FieldPath(key)
    switch node {
    case .and(let children):
      return .and(try children.map { (child) throws(QueryError) in try MatchedPositionFinder.node(child) })
    case .or(let children):
      return .or(
        try children.map { (child) throws(QueryError) in (try Query(child), try MatchedPositionFinder.node(child)) })
    case .match(let path, let test, _):
      return .values(path: strings(path), test: try Query(.match(value, test, .any)))
    case .elementMatch(let path, let query):
      return .elements(path: strings(path), test: try Query(.elementMatch(value, query)))
    case .elementMatchValue(let path, let tests):
      return .elements(path: strings(path), test: try Query(.elementMatchValue(value, tests)))
    default:
      return .none
    }
  }

  private static func strings(_ path: FieldPath) -> [String] {
    path.segments.map { String(decoding: $0.name, as: UTF8.self) }
  }

  /// The index of the array element through which the query matched `document`, as a field name
  /// (`"2"`), or `nil` when it matched through none.
  func position(in document: Document) throws(UpdateError) -> String? {
    do {
      return try MatchedPositionFinder.position(root, in: document)
    } catch {
      throw UpdateError(.limit, "The query's positional match: \(error.message)", queryError: error)
    }
  }

  private static func position(_ node: Node, in document: Document) throws(QueryError) -> String? {
    switch node {
    case .none:
      return nil
    case .and(let children):
      var found: String?
      for child in children {
        if let position = try position(child, in: document) { found = position }
      }
      return found
    case .or(let clauses):
      for (query, child) in clauses where try query.evaluate(document) {
        return try position(child, in: document)
      }
      return nil
    case .values(let path, let test):
      return try search(.document(document), path[...], offset: nil, wholeArrays: true) { (value) throws(QueryError) in
        try test.evaluate(Document([(key, .array(BSONArray([value])))]))
      }
    case .elements(let path, let test):
      return try search(.document(document), path[...], offset: nil, wholeArrays: false) {
        (value) throws(QueryError) -> Bool in
        guard case .array(let array) = value else { return false }
        for element in array where try test.evaluate(Document([(key, .array(BSONArray([element])))])) {
          return true
        }
        return false
      } elementIndex: { (value) throws(QueryError) -> String? in
        guard case .array(let array) = value else { return nil }
        for (index, element) in array.enumerated()
        where try test.evaluate(Document([(key, .array(BSONArray([element])))])) {
          return String(index)
        }
        return nil
      }
    }
  }

  /// Walks `path` from `value` as MongoDB's matcher does (into the field of documents, into the
  /// indexed element and the document elements of arrays) and returns the position of the first
  /// value that passes `test`: the index in the first array the walk went through, or the index
  /// of the passing element in an array at the end of the path. `.some(nil)` stands for a match
  /// without a position; `nil` for no match.
  ///
  /// Recursion is bounded by the length of the path.
  private static func search(
    _ value: BSON, _ path: ArraySlice<String>, offset: String?, wholeArrays: Bool,
    _ test: (BSON) throws(QueryError) -> Bool,
    elementIndex: ((BSON) throws(QueryError) -> String?)? = nil
  ) throws(QueryError) -> String? {
    let found = try find(value, path, offset: offset, wholeArrays: wholeArrays, test, elementIndex: elementIndex)
    return found.flatMap { $0 }
  }

  private static func find(
    _ value: BSON, _ path: ArraySlice<String>, offset: String?, wholeArrays: Bool,
    _ test: (BSON) throws(QueryError) -> Bool,
    elementIndex: ((BSON) throws(QueryError) -> String?)?
  ) throws(QueryError) -> String?? {
    guard let segment = path.first else {
      if let elementIndex {
        // `$elemMatch`: the array itself is tested; the position is the matching element's.
        guard try test(value) else { return nil }
        if let offset { return .some(offset) }
        return .some(try elementIndex(value))
      }
      if case .array(let array) = value, wholeArrays {
        for (index, element) in array.enumerated() where try test(element) { return .some(offset ?? String(index)) }
      }
      return try test(value) ? .some(offset) : nil
    }
    let rest = path.dropFirst()
    switch value {
    case .document(let document):
      guard let child = document.value(forKey: segment) else { return nil }
      return try find(child, rest, offset: offset, wholeArrays: wholeArrays, test, elementIndex: elementIndex)
    case .array(let array):
      let elements = Array(array)
      if let index = UpdateState.arrayIndex(segment), index < elements.count,
        let found = try find(
          elements[index], rest, offset: offset, wholeArrays: wholeArrays, test, elementIndex: elementIndex)
      {
        return found
      }
      for (index, element) in elements.enumerated() {
        guard case .document(let document) = element, let child = document.value(forKey: segment) else { continue }
        if let found = try find(
          child, rest, offset: offset ?? String(index), wholeArrays: wholeArrays, test, elementIndex: elementIndex)
        {
          return found
        }
      }
      return nil
    default:
      return nil
    }
  }
}
