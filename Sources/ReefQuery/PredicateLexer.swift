import ReefBSON

/// One token of a Realm-style predicate string.
struct PredicateToken {
  enum Kind {
    /// An identifier or a dotted key path (`name`, `address.city`, `items.@sum.price`, `$x.name`).
    /// Keywords (`AND`, `ANY`, `BEGINSWITH`, …) are words too; the parser recognises them.
    case word
    /// A literal: string, number, date, `oid(…)`, `uuid(…)`, `B64"…"`.
    case value(BSON)
    /// An argument's place: `%@`, `%d`, `%f`, `%s`… (the next argument in order) or `$n` (the
    /// argument at index n).
    case argument(PredicateArgument)
    /// An operator or punctuation mark; ``PredicateToken/text`` holds it.
    case symbol
    /// `.@count` and the like after a closing parenthesis (`SUBQUERY(…).@count`): the name
    /// without `.@`.
    case aggregateSuffix(String)
    /// The end of the predicate.
    case end
  }

  var kind: Kind
  /// The token as written in the predicate.
  var text: String
  /// The 1-based column (in characters) of the token's first character.
  var column: Int
  /// Whether the word holds a key path given as an argument (`%K`): then ``text`` is that key
  /// path, and it is never a keyword (`%K` given `"and"` names a property `and`).
  var isSubstitutedKeyPath = false

  /// The upper-cased word when this token is a single-segment identifier that could be a
  /// keyword; `nil` otherwise.
  var keyword: String? {
    guard case .word = kind, !isSubstitutedKeyPath, !text.contains("."), !text.hasPrefix("$") else { return nil }
    return text.uppercased()
  }

  func isSymbol(_ s: String) -> Bool {
    if case .symbol = kind { return text == s }
    return false
  }

  var isEnd: Bool {
    if case .end = kind { return true }
    return false
  }

  /// How the token reads in an error message: `end of predicate`, or the token quoted.
  var described: String {
    switch kind {
    case .end: return "end of predicate"
    case .value(.string): return text
    default:
      let shown = text.count > 40 ? String(text.prefix(40)) + "…" : text
      return "'\(shown)'"
    }
  }
}

/// Where an argument placeholder takes its value, and what that value must be.
struct PredicateArgument {
  /// What a placeholder accepts, from its conversion character.
  enum Conversion {
    /// `%@` and `$n`: any value.
    case object
    /// `%d`, `%i`, `%o`, `%u`, `%x`, `%X` (with a length such as `%ld`, `%lld`, `%hd`, `%qd`,
    /// `%zd`): an integer or a Bool.
    case integer
    /// `%f`, `%F`, `%e`, `%E`, `%g`, `%G`, `%a`, `%A` (also `%lf`, `%Lf`): a number.
    case floatingPoint
    /// `%s`, `%S`: a string.
    case string
  }

  /// The 0-based index of the argument.
  var index: Int
  /// Whether the placeholder is a `%` one, numbered in order of appearance (`$n` names its
  /// index).
  var isSequential: Bool
  var conversion: Conversion
}

/// Splits a predicate string into ``PredicateToken``s; literal values are decoded here, so a
/// malformed string, number, date, ObjectId or UUID is reported at its own column.
///
/// `%` placeholders are numbered here, in order of appearance, and `%K` (a key path given as an
/// argument) is replaced by its argument, so that `%K.%K` and `address.%K` are one key path.
struct PredicateLexer {
  private let chars: [Character]
  private var index = 0
  /// The arguments, for `%K`.
  private let arguments: [BSON]
  /// The index of the argument that the next `%` placeholder takes.
  private var nextSequentialArgument = 0

  private init(_ text: String, arguments: [BSON]) {
    chars = Array(text)
    self.arguments = arguments
  }

  /// All tokens of `text`, ending with a `.end` token; `%K` takes its key path from `arguments`.
  /// - Complexity: O(n) in the length of `text`, plus the length of the key paths substituted.
  static func tokenize(_ text: String, arguments: [BSON] = []) throws(QueryError) -> [PredicateToken] {
    var lexer = PredicateLexer(text, arguments: arguments)
    var tokens: [PredicateToken] = []
    while true {
      let token = try lexer.next()
      tokens.append(token)
      if token.isEnd { return tokens }
    }
  }

  // MARK: Character classes

  static func isDigit(_ c: Character?) -> Bool {
    guard let c else { return false }
    return c >= "0" && c <= "9" && c.isASCII
  }

  static func isHexDigit(_ c: Character) -> Bool { c.isASCII && c.isHexDigit }

  static func isIdentifierStart(_ c: Character?) -> Bool {
    guard let c else { return false }
    return c.isLetter || c == "_"
  }

  static func isIdentifierContinue(_ c: Character?) -> Bool {
    guard let c else { return false }
    return c.isLetter || c == "_" || isDigit(c)
  }

  private func peek(_ offset: Int = 0) -> Character? {
    let i = index + offset
    return i < chars.count ? chars[i] : nil
  }

  private func text(from start: Int) -> String { String(chars[start..<index]) }

  private func error(_ kind: QueryError.Kind, _ message: String, at start: Int) -> QueryError {
    QueryError(kind, message, column: start + 1)
  }

  // MARK: Tokens

  private mutating func next() throws(QueryError) -> PredicateToken {
    while let c = peek(), c.isWhitespace { index += 1 }
    let start = index
    guard let c = peek() else { return PredicateToken(kind: .end, text: "", column: chars.count + 1) }

    if c == "'" || c == "\"" { return try string(quote: c) }
    if Self.isDigit(c) { return try numberOrDate() }
    if (c == "-" || c == "+") && (Self.isDigit(peek(1)) || (peek(1) == "." && Self.isDigit(peek(2)))) {
      return try numberOrDate()
    }
    if c == "." && Self.isDigit(peek(1)) { return try numberOrDate() }
    if c == "." && peek(1) == "@" && Self.isIdentifierStart(peek(2)) {
      index += 2
      while Self.isIdentifierContinue(peek()) { index += 1 }
      let name = String(chars[(start + 2)..<index])
      return PredicateToken(kind: .aggregateSuffix(name), text: text(from: start), column: start + 1)
    }
    if c == "T", let token = try timestamp() { return token }
    if Self.isIdentifierStart(c) || (c == "$" && Self.isIdentifierStart(peek(1))) || (c == "%" && peek(1) == "K") {
      return try word()
    }
    if c == "$" {
      index += 1
      guard Self.isDigit(peek()) else {
        throw error(
          .syntax, "expected an argument number or a variable name after '$' but found \(describeNext())", at: start)
      }
      while Self.isDigit(peek()) { index += 1 }
      let written = text(from: start)
      guard let n = Int(written.dropFirst()) else {
        throw error(.argument, "argument '\(written)' is out of range", at: start)
      }
      let argument = PredicateArgument(index: n, isSequential: false, conversion: .object)
      return PredicateToken(kind: .argument(argument), text: written, column: start + 1)
    }
    if c == "%" { return try formatSpecifier() }
    return try symbol()
  }

  private func describeNext() -> String {
    guard let c = peek() else { return "end of predicate" }
    return "'\(c)'"
  }

  private mutating func symbol() throws(QueryError) -> PredicateToken {
    let start = index
    let c = chars[index]
    let two: String? = peek(1).map { String(c) + String($0) }
    let twoCharacter: Set<String> = ["==", "=<", "=>", "!=", "<>", "<=", ">=", "&&", "||"]
    let symbolText: String
    if let two, twoCharacter.contains(two) {
      symbolText = two
    } else if "=!<>(){},[]".contains(c) {
      symbolText = String(c)
    } else if c == "&" || c == "|" {
      throw error(.syntax, "expected '\(c)\(c)' but found '\(c)' followed by \(describe(peek(1)))", at: start)
    } else {
      throw error(.syntax, "unexpected character '\(c)'", at: start)
    }
    index += symbolText.count
    return PredicateToken(kind: .symbol, text: symbolText, column: start + 1)
  }

  private func describe(_ c: Character?) -> String { c.map { "'\($0)'" } ?? "end of predicate" }

  /// An identifier or key path, whose segments may be `%K` (a key path given as an argument);
  /// `oid(…)`, `uuid(…)` and `B64"…"` literals start like words.
  private mutating func word() throws(QueryError) -> PredicateToken {
    let start = index
    var path: String
    var substituted = false
    if peek() == "%" {
      path = try substitutedKeyPath()
      substituted = true
    } else {
      index += 1  // the first letter, `_` or `$`
      while Self.isIdentifierContinue(peek()) { index += 1 }
      path = text(from: start)
      let lower = path.lowercased()
      if (lower == "oid" || lower == "uuid") && peek() == "(" { return try functionLiteral(lower, start: start) }
      if path == "B64" && peek() == "\"" { return try base64(start: start) }
    }
    // Further segments: `.name`, `.0`, `.@count`, `.%K`.
    while peek() == "." {
      let segmentStart = index + 1
      if Self.isIdentifierContinue(peek(1)) {
        index += 1
        while Self.isIdentifierContinue(peek()) { index += 1 }
        path += "." + text(from: segmentStart)
      } else if peek(1) == "@" && Self.isIdentifierStart(peek(2)) {
        index += 2
        while Self.isIdentifierContinue(peek()) { index += 1 }
        path += "." + text(from: segmentStart)
      } else if peek(1) == "%" && peek(2) == "K" {
        index += 1
        path += "." + (try substitutedKeyPath())
        substituted = true
      } else {
        break
      }
    }
    return PredicateToken(kind: .word, text: path, column: start + 1, isSubstitutedKeyPath: substituted)
  }

  /// The key path that the `%K` at the current position stands for: the next argument in order,
  /// which must be a string of names separated by `.`.
  private mutating func substitutedKeyPath() throws(QueryError) -> String {
    let start = index
    index += 2  // "%K"
    let number = nextSequentialArgument
    nextSequentialArgument += 1
    guard number < arguments.count else {
      throw error(
        .argument, "no argument for '%K' number \(number + 1): \(arguments.count) argument(s) were given", at: start)
    }
    guard case .string(let path) = arguments[number] else {
      throw error(
        .argument,
        "the argument for '%K' number \(number + 1) must be a string naming a key path but is "
          + PredicateParser.typeName(arguments[number]), at: start)
    }
    let segments = path.split(separator: ".", omittingEmptySubsequences: false)
    guard segments.allSatisfy({ !$0.isEmpty }), !path.hasPrefix("$") else {
      throw error(
        .argument,
        "the argument for '%K' number \(number + 1) is \(path.debugDescription), which is not a key path: "
          + "expected names separated by '.'", at: start)
    }
    return path
  }

  /// A `%` placeholder other than `%K`: `%@`, or a printf-style specifier (`%d`, `%ld`, `%f`,
  /// `%s`…), which takes the next argument in order and says what it must be.
  private mutating func formatSpecifier() throws(QueryError) -> PredicateToken {
    let start = index
    index += 1  // "%"
    if peek() == "%" {
      throw error(
        .syntax, "'%%' stands for a percent sign, which a predicate can hold only inside a quoted string ('50%')",
        at: start)
    }
    if let c = peek(), Self.isDigit(c) || "-+ #.*'".contains(c) {
      while let c = peek(), !c.isLetter, c != "@" { index += 1 }
      if peek() != nil { index += 1 }
      throw error(
        .syntax,
        "'\(text(from: start))': flags, widths and precisions are not supported in a predicate's format specifiers "
          + "(an argument is substituted as a value); write the specifier alone, as '%d' or '%f'", at: start)
    }
    var length = ""
    while let c = peek(), "hlqLztj".contains(c), length.count < 2 {
      length.append(c)
      index += 1
    }
    let conversionCharacter = peek()
    if conversionCharacter != nil { index += 1 }
    let written = text(from: start)
    let conversion: PredicateArgument.Conversion?
    switch conversionCharacter {
    case "@" where length.isEmpty: conversion = .object
    case "d", "i", "o", "u", "x", "X":
      conversion = ["", "h", "hh", "l", "ll", "q", "z", "t", "j"].contains(length) ? .integer : nil
    case "f", "F", "e", "E", "g", "G", "a", "A":
      conversion = ["", "l", "L"].contains(length) ? .floatingPoint : nil
    case "s", "S": conversion = length.isEmpty ? .string : nil
    case "c", "C", "p", "n":
      throw error(
        .unsupported,
        "'\(written)' is not supported in a predicate; give the value as a String or a number with '%@'", at: start)
    default: conversion = nil
    }
    guard let conversion else {
      throw error(
        .syntax,
        "expected a format specifier (%@, %K, %d, %i, %u, %ld, %lld, %f, %lf, %g, %s) but found '\(written)'",
        at: start)
    }
    let number = nextSequentialArgument
    nextSequentialArgument += 1
    let argument = PredicateArgument(index: number, isSequential: true, conversion: conversion)
    return PredicateToken(kind: .argument(argument), text: written, column: start + 1)
  }

  // MARK: Strings

  private mutating func string(quote: Character) throws(QueryError) -> PredicateToken {
    let start = index
    index += 1
    var value = ""
    while true {
      guard let c = peek() else {
        throw error(.syntax, "unterminated string: expected a closing \(quote) but found end of predicate", at: start)
      }
      index += 1
      if c == quote { break }
      guard c == "\\" else {
        value.append(c)
        continue
      }
      let escapeStart = index - 1
      guard let e = peek() else {
        throw error(.syntax, "unterminated string: expected a closing \(quote) but found end of predicate", at: start)
      }
      index += 1
      switch e {
      case "\\", "'", "\"", "/": value.append(e)
      case "n": value.append("\n")
      case "t": value.append("\t")
      case "r": value.append("\r")
      case "b": value.append("\u{08}")
      case "f": value.append("\u{0C}")
      case "0": value.append("\u{00}")
      case "u":
        var code: UInt32 = 0
        for _ in 0..<4 {
          guard let h = peek(), Self.isHexDigit(h), let digit = h.hexDigitValue else {
            throw error(
              .syntax, "expected four hexadecimal digits after '\\u' but found \(describeNext())", at: escapeStart)
          }
          code = code * 16 + UInt32(digit)
          index += 1
        }
        guard let scalar = Unicode.Scalar(code) else {
          throw error(.syntax, "'\\u\(String(code, radix: 16))' is not a Unicode scalar value", at: escapeStart)
        }
        value.unicodeScalars.append(scalar)
      default:
        throw error(
          .syntax,
          "unknown escape '\\\(e)' in string; expected one of \\\\ \\' \\\" \\n \\t \\r \\b \\f \\0 \\uXXXX",
          at: escapeStart)
      }
    }
    return PredicateToken(kind: .value(.string(value)), text: text(from: start), column: start + 1)
  }

  // MARK: Numbers and dates

  private mutating func numberOrDate() throws(QueryError) -> PredicateToken {
    let start = index
    // `2024-01-02@…`: digits then '-' then a digit is only ever a date (there is no arithmetic).
    if Self.isDigit(peek()) {
      var j = index
      while j < chars.count && Self.isDigit(chars[j]) { j += 1 }
      if j < chars.count, chars[j] == "-", Self.isDigit(j + 1 < chars.count ? chars[j + 1] : nil) {
        return try date()
      }
    }
    if peek() == "-" || peek() == "+" { index += 1 }
    if peek() == "0" && (peek(1) == "x" || peek(1) == "X") {
      index += 2
      let digitsStart = index
      while let h = peek(), Self.isHexDigit(h) { index += 1 }
      let digits = String(chars[digitsStart..<index])
      try checkNumberEnd(start)
      guard !digits.isEmpty, let magnitude = UInt64(digits, radix: 16) else {
        throw error(.syntax, "expected hexadecimal digits after '0x' in '\(text(from: start))'", at: start)
      }
      let negative = chars[start] == "-"
      let value: Int64? =
        negative
        ? (magnitude <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil)
        : Int64(exactly: magnitude)
      guard let value else {
        throw error(.syntax, "the integer '\(text(from: start))' does not fit in 64 bits", at: start)
      }
      return PredicateToken(kind: .value(.int64(value)), text: text(from: start), column: start + 1)
    }
    var isInteger = true
    while Self.isDigit(peek()) { index += 1 }
    if peek() == "." && Self.isDigit(peek(1)) {
      isInteger = false
      index += 1
      while Self.isDigit(peek()) { index += 1 }
    }
    if peek() == "e" || peek() == "E" {
      let signed = peek(1) == "-" || peek(1) == "+"
      if Self.isDigit(peek(signed ? 2 : 1)) {
        isInteger = false
        index += signed ? 2 : 1
        while Self.isDigit(peek()) { index += 1 }
      }
    }
    try checkNumberEnd(start)
    let written = text(from: start)
    if isInteger {
      guard let value = Int64(written) else {
        throw error(.syntax, "the integer '\(written)' does not fit in 64 bits", at: start)
      }
      return PredicateToken(kind: .value(.int64(value)), text: written, column: start + 1)
    }
    guard let value = Double(written) else { throw error(.syntax, "malformed number '\(written)'", at: start) }
    return PredicateToken(kind: .value(.double(value)), text: written, column: start + 1)
  }

  /// A number must not run into letters (`5abc`, `0x1g`).
  private func checkNumberEnd(_ start: Int) throws(QueryError) {
    if Self.isIdentifierContinue(peek()) {
      throw error(.syntax, "unexpected '\(peek()!)' after the number '\(text(from: start))'", at: index)
    }
  }

  /// Reads 1…`maxDigits` decimal digits.
  private mutating func digits(max maxDigits: Int) -> Int64? {
    var value: Int64 = 0
    var count = 0
    while count < maxDigits, let c = peek(), Self.isDigit(c), let d = c.wholeNumberValue {
      value = value * 10 + Int64(d)
      count += 1
      index += 1
    }
    return count == 0 ? nil : value
  }

  private mutating func expect(_ c: Character) -> Bool {
    guard peek() == c else { return false }
    index += 1
    return true
  }

  /// `YYYY-MM-DD@HH:MM:SS` with an optional `:NANOSECONDS`; `T` may stand for `@`. UTC.
  private mutating func date() throws(QueryError) -> PredicateToken {
    let start = index
    func malformed(_ lexer: PredicateLexer) -> QueryError {
      var end = start
      while end < lexer.chars.count,
        Self.isIdentifierContinue(lexer.chars[end]) || "-:@".contains(lexer.chars[end])
      {
        end += 1
      }
      let found = String(lexer.chars[start..<end])
      return lexer.error(
        .syntax,
        "malformed date '\(found)': expected YYYY-MM-DD@HH:MM:SS with optional :NANOSECONDS", at: start)
    }
    guard let year = digits(max: 4), expect("-"), let month = digits(max: 2), expect("-"),
      let day = digits(max: 2), expect("@") || expect("T"),
      let hour = digits(max: 2), expect(":"), let minute = digits(max: 2), expect(":"),
      let second = digits(max: 2)
    else { throw malformed(self) }
    var nanoseconds: Int64 = 0
    if peek() == ":" {
      index += 1
      guard let n = digits(max: 9) else { throw malformed(self) }
      nanoseconds = n
    }
    guard !Self.isIdentifierContinue(peek()), peek() != ":", peek() != "-" else { throw malformed(self) }
    guard (1...12).contains(month), day >= 1, day <= Self.daysIn(month: month, year: year) else {
      throw error(
        .syntax, "'\(text(from: start))' is not a valid date: there is no day \(day) in month \(month)", at: start)
    }
    guard hour < 24, minute < 60, second < 60 else {
      throw error(
        .syntax,
        "'\(text(from: start))' is not a valid time: expected hours 0-23, minutes and seconds 0-59", at: start)
    }
    let seconds = Self.days(year: year, month: month, day: day) * 86400 + hour * 3600 + minute * 60 + second
    let milliseconds = seconds * 1000 + nanoseconds / 1_000_000
    return PredicateToken(
      kind: .value(.datetime(BSONDateTime(millisecondsSinceEpoch: milliseconds))), text: text(from: start),
      column: start + 1)
  }

  /// `T<seconds>:<nanoseconds>` since the epoch, either part possibly negative; `nil` (and
  /// nothing consumed) when the text is not of that form, so that `T1` stays an identifier.
  private mutating func timestamp() throws(QueryError) -> PredicateToken? {
    let start = index
    var j = index + 1
    func signedDigits() -> Bool {
      if j < chars.count && chars[j] == "-" { j += 1 }
      let digitsStart = j
      while j < chars.count && Self.isDigit(chars[j]) { j += 1 }
      return j > digitsStart
    }
    guard signedDigits(), j < chars.count, chars[j] == ":" else { return nil }
    let secondsEnd = j
    j += 1
    guard signedDigits(), !Self.isIdentifierContinue(j < chars.count ? chars[j] : nil) else { return nil }
    index = j
    let written = text(from: start)
    guard let seconds = Int64(String(chars[(start + 1)..<secondsEnd])),
      let nanoseconds = Int64(String(chars[(secondsEnd + 1)..<j])), nanoseconds.magnitude < 1_000_000_000
    else {
      throw error(
        .syntax, "malformed timestamp '\(written)': expected T<seconds>:<nanoseconds below 1000000000>", at: start)
    }
    let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1000)
    let (milliseconds, overflow2) = scaled.addingReportingOverflow(nanoseconds / 1_000_000)
    guard !overflow, !overflow2 else { throw error(.syntax, "the timestamp '\(written)' is out of range", at: start) }
    return PredicateToken(
      kind: .value(.datetime(BSONDateTime(millisecondsSinceEpoch: milliseconds))), text: written,
      column: start + 1)
  }

  static func isLeap(_ year: Int64) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

  static func daysIn(month: Int64, year: Int64) -> Int64 {
    switch month {
    case 2: isLeap(year) ? 29 : 28
    case 4, 6, 9, 11: 30
    default: 31
    }
  }

  /// Days since 1970-01-01 of a proleptic Gregorian date (years 0…9999 here).
  static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yoe = y - era * 400
    let doy = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
    return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468
  }

  // MARK: oid(…), uuid(…), B64"…"

  private mutating func functionLiteral(_ name: String, start: Int) throws(QueryError) -> PredicateToken {
    index += 1  // "("
    let contentStart = index
    while let c = peek(), c != ")" { index += 1 }
    guard peek() == ")" else {
      throw error(.syntax, "expected ')' to close '\(name)(' but found end of predicate", at: start)
    }
    var content = chars[contentStart..<index]
    while let c = content.first, c.isWhitespace { content.removeFirst() }
    while let c = content.last, c.isWhitespace { content.removeLast() }
    index += 1
    let written = text(from: start)
    if name == "oid" {
      guard content.count == 24, content.allSatisfy(Self.isHexDigit), let id = ObjectId(String(content)) else {
        throw error(.syntax, "malformed ObjectId '\(written)': expected 24 hexadecimal digits in oid(…)", at: start)
      }
      return PredicateToken(kind: .value(.objectId(id)), text: written, column: start + 1)
    }
    guard let bytes = Self.uuidBytes(String(content)) else {
      throw error(
        .syntax,
        "malformed UUID '\(written)': expected uuid(xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx) with hexadecimal digits",
        at: start)
    }
    return PredicateToken(kind: .value(.binary(Binary(subtype: .uuid, data: bytes))), text: written, column: start + 1)
  }

  /// The 16 bytes of `8-4-4-4-12` hexadecimal text.
  static func uuidBytes(_ text: String) -> [UInt8]? {
    let groups = text.split(separator: "-", omittingEmptySubsequences: false)
    guard groups.map(\.count) == [8, 4, 4, 4, 12] else { return nil }
    let hex = Array(groups.joined())
    guard hex.allSatisfy(isHexDigit) else { return nil }
    var bytes: [UInt8] = []
    var i = 0
    while i < hex.count {
      guard let high = hex[i].hexDigitValue, let low = hex[i + 1].hexDigitValue else { return nil }
      bytes.append(UInt8(high * 16 + low))
      i += 2
    }
    return bytes
  }

  private mutating func base64(start: Int) throws(QueryError) -> PredicateToken {
    index += 1  // the opening quote
    let contentStart = index
    while let c = peek(), c != "\"" { index += 1 }
    guard peek() == "\"" else {
      throw error(.syntax, "unterminated B64 literal: expected a closing \" but found end of predicate", at: start)
    }
    let content = String(chars[contentStart..<index])
    index += 1
    guard let bytes = Self.decodeBase64(content) else {
      throw error(.syntax, "malformed base64 in '\(text(from: start))'", at: start)
    }
    return PredicateToken(kind: .value(.binary(Binary(data: bytes))), text: text(from: start), column: start + 1)
  }

  /// Standard base64 with `=` padding; `nil` when malformed.
  static func decodeBase64(_ text: String) -> [UInt8]? {
    let utf8 = Array(text.utf8)
    guard utf8.count % 4 == 0 else { return nil }
    var out: [UInt8] = []
    var i = 0
    while i < utf8.count {
      var quad: UInt32 = 0
      var padding = 0
      for k in 0..<4 {
        let c = utf8[i + k]
        let v: UInt32
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): v = UInt32(c - UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): v = UInt32(c - UInt8(ascii: "a")) + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): v = UInt32(c - UInt8(ascii: "0")) + 52
        case UInt8(ascii: "+"): v = 62
        case UInt8(ascii: "/"): v = 63
        case UInt8(ascii: "="):
          // Padding only in the last two places of the last group.
          guard i + 4 == utf8.count, k >= 2 else { return nil }
          v = 0
          padding += 1
        default: return nil
        }
        if padding > 0 && c != UInt8(ascii: "=") { return nil }
        quad = quad << 6 | v
      }
      out.append(UInt8(truncatingIfNeeded: quad >> 16))
      if padding < 2 { out.append(UInt8(truncatingIfNeeded: quad >> 8)) }
      if padding < 1 { out.append(UInt8(truncatingIfNeeded: quad)) }
      i += 4
    }
    return out
  }
}
