import ReefBSON

/// A MongoDB namespace: a database name and a collection name, written `database.collection`.
///
/// Dump sources that name databases (an archive, a dump directory) give namespaces with both
/// parts; a single `.bson` or Extended JSON file gives one with an empty ``database``, whose
/// ``dotted`` form is the collection name alone. Reef stores a namespace in the collection named
/// ``dotted``, and export splits a Reef collection name at its first dot, so names survive a round
/// trip.
public struct Namespace: Hashable, Sendable, CustomStringConvertible {
  /// The database name; empty when the source does not name one.
  public var database: String
  /// The collection name. It may contain dots (`system.users`).
  public var collection: String

  /// Creates a namespace from its two parts.
  public init(database: String, collection: String) {
    self.database = database
    self.collection = collection
  }

  /// Splits `database.collection` at its first dot, as MongoDB does (`admin.system.users` is the
  /// collection `system.users` in the database `admin`).
  ///
  /// Returns `nil` when there is no dot or either part is empty.
  public init?(_ dotted: String) {
    guard let dot = dotted.utf8.firstIndex(of: UInt8(ascii: ".")) else { return nil }
    let database = String(dotted[..<dot])
    let collection = String(dotted[dotted.index(after: dot)...])
    guard !database.isEmpty, !collection.isEmpty else { return nil }
    self.init(database: database, collection: collection)
  }

  /// `database.collection`, or the collection name alone when ``database`` is empty.
  public var dotted: String { database.isEmpty ? collection : database + "." + collection }

  /// The same as ``dotted``.
  public var description: String { dotted }
}

/// Selects namespaces with mongorestore's `--nsInclude` and `--nsExclude` patterns.
///
/// A pattern is matched against the whole ``Namespace/dotted`` name. `*` matches any run of
/// characters, dots included (`test.*` matches `test.users` and `test.system.js`); `\*` and `\\`
/// stand for a literal asterisk and backslash. A namespace matches the filter when it matches an
/// include pattern (or there are none) and no exclude pattern.
///
/// ```swift
/// let filter = try NamespaceFilter(include: ["shop.*"], exclude: ["shop.audit*"])
/// filter.matches(Namespace(database: "shop", collection: "orders"))  // true
/// ```
public struct NamespaceFilter: Sendable {
  private let include: [Pattern]
  private let exclude: [Pattern]

  /// Compiles include and exclude patterns.
  /// - Throws: ``BSONError/Kind/invalidValue`` for an empty pattern or one ending in a lone `\`.
  public init(include: [String] = [], exclude: [String] = []) throws(BSONError) {
    var included: [Pattern] = []
    for pattern in include { included.append(try Pattern(pattern)) }
    var excluded: [Pattern] = []
    for pattern in exclude { excluded.append(try Pattern(pattern)) }
    self.include = included
    self.exclude = excluded
  }

  /// Whether `namespace` is selected.
  /// - Complexity: O(p × n) for p pattern bytes and a name of n bytes.
  public func matches(_ namespace: Namespace) -> Bool {
    let name = Array(namespace.dotted.utf8)
    if !include.isEmpty, !include.contains(where: { $0.matches(name) }) { return false }
    return !exclude.contains { $0.matches(name) }
  }

  /// A compiled pattern: literal byte runs separated by wildcards.
  struct Pattern: Sendable {
    enum Token: Sendable, Equatable {
      case literal(UInt8)
      case any
    }
    let tokens: [Token]

    init(_ text: String) throws(BSONError) {
      guard !text.isEmpty else { throw BSONError(.invalidValue, "expected a namespace pattern, found an empty string") }
      var tokens: [Token] = []
      var escaped = false
      for byte in text.utf8 {
        if escaped {
          tokens.append(.literal(byte))
          escaped = false
        } else if byte == UInt8(ascii: "\\") {
          escaped = true
        } else if byte == UInt8(ascii: "*") {
          if tokens.last != .any { tokens.append(.any) }
        } else {
          tokens.append(.literal(byte))
        }
      }
      guard !escaped else {
        throw BSONError(
          .invalidValue, "namespace pattern '\(text)' ends with a lone '\\'; write '\\\\' for a backslash")
      }
      self.tokens = tokens
    }

    /// Wildcard matching with backtracking to the last `*` (linear for patterns with one `*`).
    func matches(_ name: [UInt8]) -> Bool {
      var t = 0
      var n = 0
      var starToken = -1
      var starName = 0
      while n < name.count {
        if t < tokens.count, case .literal(let byte) = tokens[t], byte == name[n] {
          t += 1
          n += 1
        } else if t < tokens.count, tokens[t] == .any {
          starToken = t
          starName = n
          t += 1
        } else if starToken >= 0 {
          t = starToken + 1
          starName += 1
          n = starName
        } else {
          return false
        }
      }
      while t < tokens.count, tokens[t] == .any { t += 1 }
      return t == tokens.count
    }
  }
}
