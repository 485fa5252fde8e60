import ReefBSON

/// A dotted path into a document: `address.city`, `addresses.0.city`.
///
/// Segments are kept as UTF-8 bytes so that matching compares them with element keys directly.
/// A segment made only of digits (without a leading zero, except `0` itself) can also index an
/// array.
public struct FieldPath: Hashable, Sendable, CustomStringConvertible {
  /// One step of a path.
  public struct Segment: Hashable, Sendable {
    /// The field name, as UTF-8 bytes.
    public let name: [UInt8]
    /// The array index this segment names, when it is a decimal number.
    public let index: Int?

    /// A segment with the given field name.
    public init(_ name: String) {
      self.name = Array(name.utf8)
      self.index = Segment.arrayIndex(self.name)
    }

    static func arrayIndex(_ bytes: [UInt8]) -> Int? {
      guard !bytes.isEmpty, bytes.count <= 9, bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
      if bytes.count > 1 && bytes[0] == 0x30 { return nil }
      return bytes.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }
  }

  /// The steps of the path, outermost first. An empty path names the value itself.
  public var segments: [Segment]

  /// A path from its dotted form; an empty string is the empty path.
  public init(_ dotted: String) {
    segments =
      dotted.isEmpty ? [] : dotted.split(separator: ".", omittingEmptySubsequences: false).map { Segment(String($0)) }
  }

  /// A path from its segments.
  public init(segments: [Segment]) { self.segments = segments }

  /// The path in dotted form.
  public var description: String {
    segments.map { String(decoding: $0.name, as: UTF8.self) }.joined(separator: ".")
  }

  /// This path followed by `other`.
  public func appending(_ other: FieldPath) -> FieldPath { FieldPath(segments: segments + other.segments) }
}

/// A comparison between a value found in a document and a literal.
public enum ComparisonOperator: String, Sendable {
  case equal = "=="
  case notEqual = "!="
  case less = "<"
  case lessOrEqual = "<="
  case greater = ">"
  case greaterOrEqual = ">="
}

/// Realm's string operators.
public enum StringOperator: String, Sendable {
  case equal = "=="
  case notEqual = "!="
  case beginsWith = "BEGINSWITH"
  case endsWith = "ENDSWITH"
  case contains = "CONTAINS"
  case like = "LIKE"
}

/// Realm's string comparison modifiers: `[c]`, `[d]`, `[cd]`.
public struct StringOptions: OptionSet, Hashable, Sendable {
  public let rawValue: UInt8
  public init(rawValue: UInt8) { self.rawValue = rawValue }
  /// `[c]`: ignore case.
  public static let caseInsensitive = StringOptions(rawValue: 1)
  /// `[d]`: ignore diacritics.
  public static let diacriticInsensitive = StringOptions(rawValue: 2)
}

/// A test of one value (a field's value, or one element of an array field).
public indirect enum ValueTest: Sendable {
  /// Compare with a literal in MongoDB's order. Values of a different canonical type never
  /// compare (type bracketing) except against MinKey and MaxKey; numbers compare exactly
  /// across int32, int64, double and Decimal128. `notEqual` is true for every value that is not
  /// equal, including values of other types.
  case compare(ComparisonOperator, BSON)
  /// Equal to one of the values; a regular expression among them matches strings.
  case `in`([BSON])
  /// A string or symbol that the regular expression matches, or an equal regular expression.
  case regex(pattern: String, options: String)
  /// A value whose BSON type is one of these (`$type`); `number` is the four numeric types.
  case type([BSONType])
  /// A number whose value, truncated to an integer, leaves `remainder` when divided by `divisor`.
  case mod(divisor: Int64, remainder: Int64)
  /// Realm's string operators on a string value.
  case string(StringOperator, String, StringOptions)
  /// Every test holds for the same value (`$elemMatch` on values, `BETWEEN`).
  case all([ValueTest])
  /// The value is an array with an element for which every test holds (a `$elemMatch` nested
  /// in the value form of another).
  case elementMatch([ValueTest])
  /// The value is an array with an element, a document or an array seen as a document (whose
  /// fields are its indexes), that matches the query: the object form of `$elemMatch` nested in
  /// the value form of another. An element that is not a document or an array never matches.
  case elementMatchQuery(QueryNode)
  /// Whether a value is there: `true` holds for every value the test is given, `false` for none
  /// (`$exists` in the value form of `$elemMatch`, whose array elements always exist).
  case exists(Bool)
  /// The value is an array of exactly this many elements (`$size` in the value form of
  /// `$elemMatch`).
  case size(Int)
  /// The test does not hold.
  case not(ValueTest)
  /// The value is a document with a field whose value passes the test: Realm's `@allValues`
  /// of a map (`ANY prices.@allValues > 10`).
  case anyFieldValue(ValueTest)
  /// The value is a document with a field whose name, as a string, passes the test: Realm's
  /// `@allKeys` of a map (`ANY prices.@allKeys == "tea"`).
  case anyFieldName(ValueTest)
}

/// How the values found at a path are combined.
public enum Quantifier: Sendable {
  /// MongoDB's rule: the test holds for the value or, when it is an array, for the array itself
  /// or one of its elements; a missing field is tested as null.
  case mongo
  /// Realm's `ANY` (also the default through a list): the test holds for one value, where
  /// arrays contribute their elements. A missing field is tested as null unless the path went
  /// through a list.
  case any
  /// Realm's `ALL`: the test holds for every value (true for an empty list).
  case all
  /// Realm's `NONE`: the test holds for no value.
  case none
}

/// Realm's collection aggregates.
public enum Aggregate: String, Sendable {
  case count = "@count"
  case min = "@min"
  case max = "@max"
  case sum = "@sum"
  case avg = "@avg"
}

/// A compiled query, the common form of MongoDB filters and Realm predicates.
public indirect enum QueryNode: Sendable {
  /// Always true (`{}`, `TRUEPREDICATE`) or always false (`FALSEPREDICATE`, `$all: []`).
  case constant(Bool)
  case and([QueryNode])
  case or([QueryNode])
  case nor([QueryNode])
  case not(QueryNode)
  /// The values at the path pass the test under the quantifier.
  case match(FieldPath, ValueTest, Quantifier)
  /// `$exists`: whether any value is found at the path (null counts).
  case exists(FieldPath, Bool)
  /// `$size`: an array at the path has exactly this many elements.
  case size(FieldPath, Int)
  /// `$elemMatch` with a query: an array at the path has an element matching it, a document or
  /// an array seen as a document (whose fields are its indexes: `[{b: 5}]` has only `0`).
  case elementMatch(FieldPath, QueryNode)
  /// `$elemMatch` with operators: an array at the path has an element passing every test.
  case elementMatchValue(FieldPath, [ValueTest])
  /// A Realm aggregate over the list at `path` (`@min`, … of the values at `subpath` in each
  /// element when it is given), compared with a literal.
  case aggregate(FieldPath, Aggregate, subpath: FieldPath?, ComparisonOperator, BSON)
  /// `SUBQUERY(path, $x, query).@count <op> count`: how many elements of the list match `query`,
  /// whose paths start at the element (an empty path is the element itself).
  case subquery(FieldPath, QueryNode, ComparisonOperator, BSON)
}

/// One key of a sort: a path and a direction.
public struct SortKey: Hashable, Sendable {
  public var path: FieldPath
  public var ascending: Bool
  public init(_ path: FieldPath, ascending: Bool = true) {
    self.path = path
    self.ascending = ascending
  }

  /// A key from an element of a MongoDB sort or index key document: `1` ascending, `-1`
  /// descending (int32, int64 or double); nil for any other direction.
  public init?(_ path: String, direction: BSON) {
    switch direction {
    case .int32(1), .int64(1), .double(1): self.init(FieldPath(path), ascending: true)
    case .int32(-1), .int64(-1), .double(-1): self.init(FieldPath(path), ascending: false)
    default: return nil
    }
  }
}
