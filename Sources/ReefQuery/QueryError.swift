import ReefBSON

/// Why a filter, predicate, sort or projection was rejected.
///
/// The message says what was expected and what was found. Predicate errors carry the 1-based
/// column of the offending token; filter errors carry the key path inside the filter document.
public struct QueryError: Error, Hashable, Sendable, CustomStringConvertible {
  /// What went wrong.
  public var message: String
  /// For predicate strings: the 1-based column (in characters) where the problem starts.
  public var column: Int?
  /// For filter, sort and projection documents: the keys leading to the problem.
  public var keyPath: [String]

  public init(_ message: String, column: Int? = nil, keyPath: [String] = []) {
    self.message = message
    self.column = column
    self.keyPath = keyPath
  }

  public var description: String {
    var text = message
    if let column { text += " (at column \(column))" }
    if !keyPath.isEmpty { text += " (at \(keyPath.joined(separator: ".")))" }
    return text
  }
}
