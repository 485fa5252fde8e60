/// An error from reading, validating, parsing or writing BSON and Extended JSON.
///
/// Every error says what was expected and what was found (``message``), and where: the byte
/// offset in the document or stream, the key path inside the document, the index of the document
/// in a stream, and for JSON input the line and column. Switch on ``kind`` to handle a class of
/// error; the set of kinds may grow.
public struct BSONError: Error, Hashable, Sendable, CustomStringConvertible {
  /// A stable classification of the error that callers can switch on.
  public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// The input ended before the value that was being read.
    public static let truncated = Kind(rawValue: "truncated")
    /// A length prefix is impossible (negative, too small, or past the enclosing document).
    public static let invalidLength = Kind(rawValue: "invalidLength")
    /// A document, string or C string is not terminated by a zero byte where it must be.
    public static let missingTerminator = Kind(rawValue: "missingTerminator")
    /// A type byte the BSON specification does not define.
    public static let unknownType = Kind(rawValue: "unknownType")
    /// A key or string is not valid UTF-8 (overlong form, surrogate, truncated sequence, stray byte).
    public static let invalidUTF8 = Kind(rawValue: "invalidUTF8")
    /// A string value or key contains a zero byte where the format forbids it.
    public static let embeddedNull = Kind(rawValue: "embeddedNull")
    /// A boolean byte other than 0 or 1.
    public static let invalidBoolean = Kind(rawValue: "invalidBoolean")
    /// An array key that is not the decimal index of the element ("0", "1", …).
    public static let invalidArrayKey = Kind(rawValue: "invalidArrayKey")
    /// Documents nested deeper than the configured limit.
    public static let depthLimitExceeded = Kind(rawValue: "depthLimitExceeded")
    /// A document larger than the configured size limit.
    public static let sizeLimitExceeded = Kind(rawValue: "sizeLimitExceeded")
    /// Bytes left over after the last document where none may be.
    public static let trailingBytes = Kind(rawValue: "trailingBytes")
    /// A value whose bytes are well formed but whose content is not allowed (e.g. a binary
    /// subtype 2 whose inner length disagrees, a regex option that is out of order).
    public static let invalidValue = Kind(rawValue: "invalidValue")
    /// Extended JSON or JSON text that does not parse.
    public static let invalidJSON = Kind(rawValue: "invalidJSON")
    /// Well-formed JSON that is not valid Extended JSON (a `$`-wrapper with wrong keys or values).
    public static let invalidExtendedJSON = Kind(rawValue: "invalidExtendedJSON")
    /// A key that may not be used here (e.g. a BSON key containing a zero byte).
    public static let invalidKey = Kind(rawValue: "invalidKey")
    /// Reading or writing a file or stream failed.
    public static let io = Kind(rawValue: "io")
  }

  /// What kind of error this is.
  public var kind: Kind
  /// What was expected and what was found, in words.
  public var message: String
  /// The byte offset of the problem, from the start of the document (or of the stream when
  /// ``documentIndex`` is set).
  public var offset: Int?
  /// The keys from the top-level document down to the offending element.
  public var keyPath: [String]
  /// The zero-based index of the document in a stream of concatenated documents.
  public var documentIndex: Int?
  /// One-based line in JSON input.
  public var line: Int?
  /// One-based column (in bytes) in JSON input.
  public var column: Int?

  /// Creates an error.
  public init(
    _ kind: Kind, _ message: String, offset: Int? = nil, keyPath: [String] = [], documentIndex: Int? = nil,
    line: Int? = nil, column: Int? = nil
  ) {
    self.kind = kind
    self.message = message
    self.offset = offset
    self.keyPath = keyPath
    self.documentIndex = documentIndex
    self.line = line
    self.column = column
  }

  /// The key path joined with dots, or `nil` when the error is not inside a document.
  public var dottedKeyPath: String? { keyPath.isEmpty ? nil : keyPath.joined(separator: ".") }

  public var description: String {
    var parts: [String] = []
    if let documentIndex { parts.append("document \(documentIndex)") }
    if let offset { parts.append("byte offset \(offset)") }
    if let line { parts.append("line \(line)" + (column.map { ", column \($0)" } ?? "")) }
    if !keyPath.isEmpty { parts.append("key path '\(Self.printableKeyPath(keyPath))'") }
    let location = parts.isEmpty ? "" : " at " + parts.joined(separator: ", ")
    return "\(kind)\(location): \(message)"
  }
}

extension BSONError {
  /// `keys` joined with dots, for a message printed to a terminal: control characters (C0, DEL
  /// and C1) and backslashes are escaped as Extended JSON output escapes them (`\n`, `\t`,
  /// `\u001b`, `\\`), so that a key read from the data cannot drive the terminal.
  public static func printableKeyPath(_ keys: [String]) -> String {
    var text = ""
    for (i, key) in keys.enumerated() {
      if i > 0 { text += "." }
      for scalar in key.unicodeScalars {
        switch scalar.value {
        case 0x5C: text += "\\\\"
        case 0x0A: text += "\\n"
        case 0x0D: text += "\\r"
        case 0x09: text += "\\t"
        case 0x08: text += "\\b"
        case 0x0C: text += "\\f"
        case 0..<0x20, 0x7F..<0xA0:
          let hex = String(scalar.value, radix: 16)
          text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: text.unicodeScalars.append(scalar)
        }
      }
    }
    return text
  }
}
