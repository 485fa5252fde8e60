import ReefBSON
import ReefQuery

/// Why an update document was rejected, or why it cannot apply to a document.
///
/// The message follows MongoDB's wording where MongoDB has one (so that it can be searched for),
/// and names the field and the types found; ``keyPath`` holds the components of the field's path.
/// Switch on ``kind`` to handle a class of error; the set of kinds may grow, so a `switch` needs a
/// `default:`.
public struct UpdateError: Error, Hashable, Sendable, CustomStringConvertible {
  /// A stable classification of an update error that callers can switch on.
  ///
  /// The set of kinds may grow; a caller can add its own with
  /// `extension UpdateError.Kind { static let mine = UpdateError.Kind(rawValue: "mine") }`.
  public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The kind's stable name.
    public let rawValue: String
    /// Creates a kind with a stable name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The kind's name.
    public var description: String { rawValue }

    /// An update that is not a document of operators: empty, a field without an operator, or an
    /// operator whose argument is not a document of fields.
    public static let malformed = Kind(rawValue: "malformed")
    /// An update operator, or a clause of one (`$push`'s `$each`, `$slice`…), that MongoDB does
    /// not define.
    public static let unknownOperator = Kind(rawValue: "unknownOperator")
    /// An operator's argument of the wrong type or shape (`$inc` with a string, `$pop` with 2,
    /// a `$pull` condition that does not compile).
    public static let badValue = Kind(rawValue: "badValue")
    /// An update path that is empty or has an empty field name, a positional segment first or
    /// `$` twice; a positional path in `$rename`.
    public static let badPath = Kind(rawValue: "badPath")
    /// Two paths of one update that overlap (`a` and `a.b`).
    public static let conflictingPaths = Kind(rawValue: "conflictingPaths")
    /// An update that would change a document's `_id`.
    public static let immutableField = Kind(rawValue: "immutableField")
    /// A path that cannot be created or followed in the document: it goes through a value that is
    /// not a document or an array, a `$rename` through an array, or an array that `$[]` or
    /// `$[identifier]` names is missing or is not an array.
    public static let pathNotViable = Kind(rawValue: "pathNotViable")
    /// An operator applied to a stored value of the wrong type (`$inc` on a string, `$push` on a
    /// number).
    public static let typeMismatch = Kind(rawValue: "typeMismatch")
    /// An arithmetic result (`$inc`, `$mul`) that does not fit the stored value's type.
    public static let overflow = Kind(rawValue: "overflow")
    /// An update over one of MongoDB's limits (padding an array by more than it allows), or a
    /// `$pull` condition's regular expression past its match limits (see ``UpdateError/queryError``).
    public static let limit = Kind(rawValue: "limit")
    /// An `arrayFilters` entry that does not parse, has no top-level field name or several, or
    /// repeats another's; a `$[identifier]` without an array filter; an array filter that no
    /// path uses.
    public static let arrayFilter = Kind(rawValue: "arrayFilter")
    /// A MongoDB feature that Reef does not implement.
    public static let unsupported = Kind(rawValue: "unsupported")
  }

  /// What kind of error this is.
  public var kind: Kind
  /// What went wrong.
  public var message: String
  /// The components of the update path the problem is about (`["a", "b"]` for `"a.b"`), or empty.
  public var keyPath: [String]
  /// The query error behind a `$pull` condition that does not compile or whose regular expression
  /// went past its limits, when there is one.
  public var queryError: QueryError?

  /// Creates an error.
  /// - Parameters:
  ///   - kind: the class of error.
  ///   - message: what went wrong, in MongoDB's words where it has some.
  ///   - keyPath: the components of the update path the problem is about.
  ///   - queryError: the query error behind this one, if any.
  public init(_ kind: Kind, _ message: String, keyPath: [String] = [], queryError: QueryError? = nil) {
    self.kind = kind
    self.message = message
    self.keyPath = keyPath
    self.queryError = queryError
  }

  /// The message, followed by the path when there is one.
  public var description: String {
    keyPath.isEmpty ? message : "\(message) (at \(BSONError.printableKeyPath(keyPath)))"
  }
}
