import ReefBSON
import ReefQuery

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Chooses an index for a query and the key ranges to read from it.
///
/// An index on the first field of an equality, `$in` or range condition (at the top of the
/// query or inside its `$and`) narrows the documents read; the whole query is then tested on
/// each, so results are exactly those of a collection scan. Conditions the index cannot narrow
/// (negations, `$or`, regular expressions, array literals, MinKey/MaxKey, Realm's `ALL` and
/// `NONE`) leave the planner to scan the collection.
enum Planner {
  struct Plan {
    var index: IndexSpecification
    var ranges: [KeyRange]
  }

  /// One condition the planner can use.
  enum Bound {
    case equal(BSON)
    case `in`([BSON])
    case range(BSON, ComparisonOperator)

    var literals: [BSON] {
      switch self {
      case .equal(let value), .range(let value, _): [value]
      case .in(let values): values
      }
    }

    /// Better bounds read fewer keys: equality, then `$in`, then ranges.
    var preference: Int {
      switch self {
      case .equal: 0
      case .in: 1
      case .range: 2
      }
    }
  }

  static func plan(_ node: QueryNode, indexes: [IndexSpecification]) -> Plan? {
    var bounds: [(FieldPath, Bound)] = []
    collect(node, into: &bounds)
    var best: (IndexSpecification, Bound)?
    for (path, bound) in bounds {
      for index in indexes where index.keys[0].path == path && index.keys[0].ascending {
        if index.sparse && bound.literals.contains(where: isNull) { continue }
        if let current = best, current.1.preference <= bound.preference && !(index.unique && !current.0.unique) {
          continue
        }
        best = (index, bound)
      }
    }
    guard let (index, bound) = best else { return nil }
    switch bound {
    case .equal(let value): return Plan(index: index, ranges: [KeyRange(equal: value)])
    case .in(let values):
      let sorted = values.sorted { compareBSON($0, $1) < 0 }
      return Plan(index: index, ranges: sorted.map { KeyRange(equal: $0) })
    case .range(let value, let comparison): return Plan(index: index, ranges: [KeyRange(value, comparison)])
    }
  }

  /// The `_id` that an equality at the top of the query (or in its top-level `$and`) asks for.
  ///
  /// Equal values have identical key encodings, so the one document that can match is the one
  /// stored under that value's primary key: it is read directly instead of scanning.
  static func primaryKey(_ node: QueryNode) -> BSON? {
    switch node {
    case .and(let children):
      for child in children {
        if let id = primaryKey(child) { return id }
      }
      return nil
    case .match(let path, .compare(.equal, let value), let quantifier)
    where path == primaryPath && narrows(quantifier) && usable(value):
      return value
    default:
      return nil
    }
  }

  static let primaryPath = FieldPath("_id")

  /// The conditions of the query's top-level `$and` that an index can narrow.
  static func collect(_ node: QueryNode, into bounds: inout [(FieldPath, Bound)]) {
    switch node {
    case .and(let children):
      for child in children { collect(child, into: &bounds) }
    case .match(let path, .compare(let comparison, let value), let quantifier)
    where narrows(quantifier) && usable(value):
      switch comparison {
      case .equal: bounds.append((path, .equal(value)))
      case .notEqual: break
      default: if !isNull(value) { bounds.append((path, .range(value, comparison))) }
      }
    case .match(let path, .in(let values), let quantifier) where narrows(quantifier) && values.allSatisfy(usable):
      bounds.append((path, .in(values)))
    default:
      break
    }
  }

  /// Whether an index can narrow a test under `quantifier`: MongoDB's rule, and Realm's `ANY`
  /// (a Realm predicate's default, `address.city == %@`). `ANY` tests the values MongoDB's rule
  /// tests but a whole array, and tests null for a missing field only where MongoDB's rule does
  /// too, so its matches are among MongoDB's, which the index ranges hold; every candidate is
  /// then tested with the whole query. `ALL` and `NONE` hold for documents the index does not
  /// list (an empty list, a missing field).
  static func narrows(_ quantifier: Quantifier) -> Bool {
    switch quantifier {
    case .mongo, .any: true
    case .all, .none: false
    }
  }

  static func isNull(_ value: BSON) -> Bool { if case .null = value { true } else { false } }

  /// Literals whose matches all sit in one index range of their type.
  static func usable(_ value: BSON) -> Bool {
    switch value {
    case .array, .regex, .minKey, .maxKey, .undefined: false
    default: true
    }
  }
}

/// A range of an index's keys, by the value of their first component.
///
/// Keys are compared as bytes, never decoded: equal values encode identically, the encoding
/// preserves MongoDB's order, and every encoding delimits itself, so comparing a key's first
/// bytes with a value's encoding compares its first component with the value, and the key's
/// first byte tells its type.
struct KeyRange {
  enum Step {
    case take
    case skip
    case stop
  }

  /// Where reading starts.
  let start: [UInt8]
  /// The encoded bound and how keys relative to it are treated.
  private let bound: [UInt8]
  private let comparison: ComparisonOperator
  /// The rank byte of the bound's type: a range never leaves its type (type bracketing).
  private let rank: UInt8

  init(equal value: BSON) { self.init(value, .equal) }

  /// Whether the range holds the keys equal to one value.
  var isEquality: Bool { comparison == .equal }

  init(_ value: BSON, _ comparison: ComparisonOperator) {
    bound = KeyEncoding.encode([value])
    self.comparison = comparison
    rank = KeyEncoding.rankByte(value)
    switch comparison {
    case .less, .lessOrEqual: start = KeyEncoding.encode([minimum(ofTypeOf: value)])
    default: start = bound
    }
  }

  /// What to do with an index key.
  func step(_ key: UnsafeRawBufferPointer) -> Step {
    // Reading starts at or after the type's first key, so a key of another type is past the range.
    guard let tag = key.first, KeyEncoding.rankByte(ofTag: tag) == rank else { return .stop }
    let order = bound.withUnsafeBytes { bound in
      let common = min(key.count, bound.count)
      let difference = common == 0 ? 0 : memcmp(key.baseAddress!, bound.baseAddress!, common)
      if difference != 0 { return difference < 0 ? -1 : 1 }
      return key.count < bound.count ? -1 : 0
    }
    switch comparison {
    case .equal: return order == 0 ? .take : .stop
    case .greater: return order == 0 ? .skip : .take
    case .greaterOrEqual: return .take
    case .less: return order < 0 ? .take : .stop
    case .lessOrEqual: return order <= 0 ? .take : .stop
    case .notEqual: return .stop
    }
  }
}

/// The smallest value of a value's canonical type, where an index range of that type starts.
func minimum(ofTypeOf value: BSON) -> BSON {
  switch value {
  case .double, .int32, .int64, .decimal128: .double(.nan)
  case .string, .symbol: .string("")
  case .document: .document(Document())
  case .array: .array(BSONArray())
  case .binary: .binary(Binary(data: []))
  case .objectId: .objectId(ObjectId(bytes: [UInt8](repeating: 0, count: 12))!)
  case .bool: .bool(false)
  case .datetime: .datetime(BSONDateTime(millisecondsSinceEpoch: .min))
  case .timestamp: .timestamp(BSONTimestamp(timestamp: 0, increment: 0))
  case .regex: .regex(BSONRegularExpression(pattern: ""))
  default: value
  }
}
