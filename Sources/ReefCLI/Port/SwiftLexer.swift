/// Splits Swift source into ``SwiftToken``s, keeping every byte: string literals of every form
/// (with their interpolations lexed as code), raw strings, multi-line strings, nested comments,
/// attributes and `#` keywords.
///
/// It reads what declaration-level rewrites need and no more: operators are one token per
/// character, keywords are identifiers, and a bare regex literal (`/a+/`) is read as operators
/// (write `#/a+/#` where it holds a quote).
public struct SwiftLexer {
  private let bytes: [UInt8]
  private var index = 0
  private var line = 1

  /// Tokenizes `source`.
  /// - Throws: ``SwiftSourceError`` for a string literal or block comment that does not end,
  ///   or an interpolation that is not closed.
  /// - Complexity: O(n) in the length of the source.
  public static func tokens(of source: String) throws(SwiftSourceError) -> [SwiftToken] {
    var lexer = SwiftLexer(bytes: Array(source.utf8))
    return try lexer.lex(closing: false)
  }

  /// Tokenizes UTF-8 bytes; ranges are offsets into them.
  /// - Throws: as ``tokens(of:)``.
  public static func tokens(of bytes: [UInt8]) throws(SwiftSourceError) -> [SwiftToken] {
    var lexer = SwiftLexer(bytes: bytes)
    return try lexer.lex(closing: false)
  }

  private init(bytes: [UInt8]) { self.bytes = bytes }

  private func byte(_ offset: Int = 0) -> UInt8? {
    let i = index + offset
    return i < bytes.count ? bytes[i] : nil
  }

  /// Lexes until the end, or, when `closing`, until the `)` that closes an interpolation
  /// (consumed, not returned).
  private mutating func lex(closing: Bool) throws(SwiftSourceError) -> [SwiftToken] {
    var tokens: [SwiftToken] = []
    var depth = 0
    let startLine = line
    while let c = byte() {
      let start = index
      let startLine = line
      var kind = SwiftToken.Kind.punctuation
      var interpolated: [SwiftToken] = []
      switch c {
      case 0x0A:
        index += 1
        line += 1
        kind = .newline
      case 0x20, 0x09, 0x0D, 0x0C, 0x0B:
        while let b = byte(), b == 0x20 || b == 0x09 || b == 0x0D || b == 0x0C || b == 0x0B { index += 1 }
        kind = .whitespace
      case UInt8(ascii: "/") where byte(1) == UInt8(ascii: "/"):
        while let b = byte(), b != 0x0A { index += 1 }
        kind = .lineComment
      case UInt8(ascii: "/") where byte(1) == UInt8(ascii: "*"):
        try skipBlockComment()
        kind = .blockComment
      case UInt8(ascii: "\""):
        interpolated = try lexString(hashes: 0)
        kind = .string
      case UInt8(ascii: "#"):
        var hashes = 0
        while byte(hashes) == UInt8(ascii: "#") { hashes += 1 }
        if byte(hashes) == UInt8(ascii: "\"") {
          index += hashes
          interpolated = try lexString(hashes: hashes)
          kind = .string
        } else if byte(hashes) == UInt8(ascii: "/") {
          index += hashes
          try skipRegex(hashes: hashes)
          kind = .string
        } else if hashes == 1, let next = byte(1), Self.isIdentifierHead(next) {
          index += 1
          skipIdentifierBody()
          kind = .pound
        } else {
          index += 1
        }
      case UInt8(ascii: "@") where byte(1).map(Self.isIdentifierHead) ?? false:
        index += 1
        skipIdentifierBody()
        kind = .attribute
      case UInt8(ascii: "`"):
        index += 1
        while let b = byte(), b != UInt8(ascii: "`"), b != 0x0A { index += 1 }
        if byte() == UInt8(ascii: "`") { index += 1 }
        kind = .identifier
      case UInt8(ascii: "$"):
        index += 1
        skipIdentifierBody()
        kind = .identifier
      case UInt8(ascii: "0")...UInt8(ascii: "9"):
        skipNumber()
        kind = .number
      default:
        if Self.isIdentifierHead(c) {
          skipIdentifierBody()
          kind = .identifier
        } else {
          index += 1
          if closing {
            if c == UInt8(ascii: "(") { depth += 1 }
            if c == UInt8(ascii: ")") {
              if depth == 0 { return tokens }
              depth -= 1
            }
          }
        }
      }
      tokens.append(SwiftToken(kind: kind, range: start..<index, line: startLine, interpolated: interpolated))
    }
    if closing { throw SwiftSourceError(line: startLine, "an interpolation \\( is not closed") }
    return tokens
  }

  static func isIdentifierHead(_ c: UInt8) -> Bool {
    (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
      || c == UInt8(ascii: "_") || c >= 0x80
  }

  static func isIdentifierBody(_ c: UInt8) -> Bool {
    isIdentifierHead(c) || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9"))
  }

  private mutating func skipIdentifierBody() {
    while let b = byte(), Self.isIdentifierBody(b) { index += 1 }
  }

  /// Digits, letters and underscores (`0x1F`, `1_000`), a fraction only when a digit follows
  /// the dot (`1...5` is a range), and a sign after an exponent.
  private mutating func skipNumber() {
    while let b = byte() {
      if Self.isIdentifierBody(b) {
        index += 1
        if b == UInt8(ascii: "e") || b == UInt8(ascii: "E") || b == UInt8(ascii: "p") || b == UInt8(ascii: "P"),
          let sign = byte(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-")
        {
          index += 1
        }
      } else if b == UInt8(ascii: "."), let next = byte(1), next >= UInt8(ascii: "0"), next <= UInt8(ascii: "9") {
        index += 1
      } else {
        return
      }
    }
  }

  private mutating func skipBlockComment() throws(SwiftSourceError) {
    let startLine = line
    var depth = 0
    while let b = byte() {
      if b == UInt8(ascii: "/") && byte(1) == UInt8(ascii: "*") {
        depth += 1
        index += 2
      } else if b == UInt8(ascii: "*") && byte(1) == UInt8(ascii: "/") {
        depth -= 1
        index += 2
        if depth == 0 { return }
      } else {
        if b == 0x0A { line += 1 }
        index += 1
      }
    }
    throw SwiftSourceError(line: startLine, "a /* comment does not end")
  }

  /// Whether `hashes` `#` follow at `offset`.
  private func hashesFollow(_ hashes: Int, at offset: Int) -> Bool {
    for k in 0..<hashes where byte(offset + k) != UInt8(ascii: "#") { return false }
    return true
  }

  /// Lexes a string literal from its first quote (its leading `#`s consumed), returning the
  /// tokens of its interpolations.
  private mutating func lexString(hashes: Int) throws(SwiftSourceError) -> [SwiftToken] {
    let startLine = line
    let multiline = byte(1) == UInt8(ascii: "\"") && byte(2) == UInt8(ascii: "\"")
    index += multiline ? 3 : 1
    var interpolated: [SwiftToken] = []
    while let b = byte() {
      if b == 0x0A {
        guard multiline else { break }
        line += 1
        index += 1
      } else if b == UInt8(ascii: "\\") && hashesFollow(hashes, at: 1) {
        index += 1 + hashes
        guard let escaped = byte() else { break }
        if escaped == UInt8(ascii: "(") {
          index += 1
          interpolated += try lex(closing: true)
        } else {
          if escaped == 0x0A { line += 1 }
          index += 1
        }
      } else if b == UInt8(ascii: "\"") {
        let quotes = multiline ? 3 : 1
        if (!multiline || (byte(1) == UInt8(ascii: "\"") && byte(2) == UInt8(ascii: "\"")))
          && hashesFollow(hashes, at: quotes)
        {
          index += quotes + hashes
          return interpolated
        }
        index += 1
      } else {
        index += 1
      }
    }
    throw SwiftSourceError(
      line: startLine, multiline ? "a multi-line string \"\"\" does not end" : "a string does not end")
  }

  /// Skips a regex literal `#/…/#` from its `/` (its `#`s consumed).
  private mutating func skipRegex(hashes: Int) throws(SwiftSourceError) {
    let startLine = line
    index += 1
    while let b = byte() {
      if b == 0x0A { line += 1 }
      if b == UInt8(ascii: "\\") {
        index += 2
        continue
      }
      index += 1
      if b == UInt8(ascii: "/") && hashesFollow(hashes, at: 0) {
        index += hashes
        return
      }
    }
    throw SwiftSourceError(line: startLine, "a regex literal #/ does not end")
  }
}
