/// One token of Swift source, as `reef port` reads it: its kind, where its bytes lie in the
/// source, and its line.
///
/// The lexer keeps every byte: whitespace, newlines and comments are tokens too, so that the
/// source is the concatenation of its tokens and a rewrite can change some tokens and leave
/// every other byte as it was.
public struct SwiftToken: Sendable, Equatable {
  /// What a token is.
  public enum Kind: Sendable, Equatable {
    /// A name or a keyword (`var`, `Object`, `` `default` ``, `$0`).
    case identifier
    /// An attribute's name with its `@` (`@objc`, `@Persisted`); its arguments are tokens of their own.
    case attribute
    /// A `#` keyword (`#if`, `#selector`).
    case pound
    /// A number literal.
    case number
    /// A string literal of any form (`"a"`, `#"a"#`, `"""…"""`), or a regex literal `#/…/#`.
    case string
    /// One punctuation or operator character (`{`, `:`, `.`, `-`, `>`).
    case punctuation
    /// A `//` comment, without its newline.
    case lineComment
    /// A `/* … */` comment (nested ones included).
    case blockComment
    /// Spaces, tabs and carriage returns.
    case whitespace
    /// One line feed.
    case newline
  }

  /// What the token is.
  public var kind: Kind
  /// Where its bytes lie in the source (UTF-8 offsets).
  public var range: Range<Int>
  /// The 1-based line of its first byte.
  public var line: Int
  /// For a string literal with interpolations (`"\(x)"`): the tokens of the code inside them,
  /// in order (a literal inside an interpolation brings its own).
  public var interpolated: [SwiftToken] = []

  /// Whether the token is code that a rewrite reads (not whitespace, a newline or a comment).
  public var isSignificant: Bool {
    switch kind {
    case .whitespace, .newline, .lineComment, .blockComment: false
    default: true
    }
  }
}

/// Why Swift source could not be read.
public struct SwiftSourceError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The 1-based line where the problem starts.
  public var line: Int
  /// What is wrong.
  public var message: String

  /// Creates an error at `line`.
  public init(line: Int, _ message: String) {
    self.line = line
    self.message = message
  }

  /// `line N: message`.
  public var description: String { "line \(line): \(message)" }
}
