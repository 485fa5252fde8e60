import ReefBSON

/// Why a filter, predicate, sort or projection was rejected.
///
/// The message says what was expected and what was found. Predicate errors carry the 1-based
/// column of the offending token; filter errors carry the key path inside the filter document.
/// Switch on ``kind`` to handle a class of error; the set of kinds may grow, so a `switch` needs a
/// `default:`.
public struct QueryError: Error, Hashable, Sendable, CustomStringConvertible {
  /// A stable classification of a query error that callers can switch on.
  ///
  /// The set of kinds may grow; a caller can add its own with
  /// `extension QueryError.Kind { static let mine = QueryError.Kind(rawValue: "mine") }`.
  public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The kind's stable name.
    public let rawValue: String
    /// Creates a kind with a stable name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The kind's name.
    public var description: String { rawValue }

    /// A predicate string that does not parse: an unexpected token, an unclosed parenthesis or
    /// string, a malformed literal.
    public static let syntax = Kind(rawValue: "syntax")
    /// An operator, modifier or aggregate that neither MongoDB nor Realm defines (`$foo`, `@foo`).
    public static let unknownOperator = Kind(rawValue: "unknownOperator")
    /// An operator's argument of the wrong type or shape (`$in` without an array, `$mod` by 0, a
    /// string operator given a number).
    public static let badValue = Kind(rawValue: "badValue")
    /// A MongoDB or Realm feature that Reef does not implement (`$where`, `%c`, comparing two key
    /// paths).
    public static let unsupported = Kind(rawValue: "unsupported")
    /// A regular expression that does not compile, or options that are not i, m, s, x, u.
    public static let regex = Kind(rawValue: "regex")
    /// A field path that cannot be used: empty, with an empty segment, or starting with `$`.
    public static let badPath = Kind(rawValue: "badPath")
    /// Parts of a query that contradict each other: inclusion and exclusion in one projection, two
    /// projection paths that collide, regex options set twice.
    public static let conflict = Kind(rawValue: "conflict")
    /// A predicate argument (`$0`, `%@`, `%K`) that was not given, or one its specifier does not
    /// accept (`%K` a key path string, `%d` an integer or a Bool, `%f` a number, `%s` a string).
    public static let argument = Kind(rawValue: "argument")
    /// A query over one of Reef's limits: nesting depth, a sort's memory without disk use, a
    /// regular expression's length or nesting of groups.
    public static let limit = Kind(rawValue: "limit")
    /// A regular expression that went past its match, depth or memory limit on some string (it
    /// backtracks exponentially, as `^(a|aa)+b$` does): the query ends with this error.
    public static let regexLimit = Kind(rawValue: "regexLimit")
    /// A document that a sort cannot order (the query ends with this error): two sort keys whose
    /// paths reach two different arrays ("parallel arrays", as MongoDB reports), or a numeric path
    /// segment that names both an array's position and a field of its documents.
    public static let sortKey = Kind(rawValue: "sortKey")
    /// A filter that is not a valid BSON document (see ``QueryError/bsonError``).
    public static let invalidDocument = Kind(rawValue: "invalidDocument")
  }

  /// What kind of error this is.
  public var kind: Kind
  /// What went wrong.
  public var message: String
  /// For predicate strings: the 1-based column (in characters) where the problem starts.
  public var column: Int?
  /// For filter, sort and projection documents: the keys leading to the problem.
  public var keyPath: [String]
  /// The BSON error behind a ``Kind/invalidDocument`` error, when there is one.
  public var bsonError: BSONError?

  /// Creates an error of a kind, with a message and where it is.
  /// - Parameters:
  ///   - kind: the class of error.
  ///   - message: what was expected and what was found.
  ///   - column: for predicate strings, the 1-based column of the problem.
  ///   - keyPath: for documents, the keys leading to the problem.
  ///   - bsonError: the BSON error behind this one, if any.
  public init(
    _ kind: Kind, _ message: String, column: Int? = nil, keyPath: [String] = [], bsonError: BSONError? = nil
  ) {
    self.kind = kind
    self.message = message
    self.column = column
    self.keyPath = keyPath
    self.bsonError = bsonError
  }

  /// The message, then the column or the key path.
  public var description: String {
    var text = message
    if let column { text += " (at column \(column))" }
    if !keyPath.isEmpty { text += " (at \(BSONError.printableKeyPath(keyPath)))" }
    return text
  }
}
