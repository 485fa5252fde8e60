/// A Swift file as tokens, with the significant ones (code, not whitespace or comments) indexed
/// for the declaration parser, and the edits a rewrite makes to it.
struct SwiftSourceFile {
  /// The source's UTF-8 bytes.
  let bytes: [UInt8]
  /// Every token, in order: their ranges cover the source.
  let tokens: [SwiftToken]
  /// The indices in ``tokens`` of the significant tokens.
  let code: [Int]
  /// For each significant token, whether a newline comes between it and the previous one.
  let startsLine: [Bool]
  /// The edits made so far.
  private(set) var edits: [(range: Range<Int>, text: String)] = []

  init(_ source: String) throws(SwiftSourceError) {
    bytes = Array(source.utf8)
    tokens = try SwiftLexer.tokens(of: bytes)
    var code: [Int] = []
    var startsLine: [Bool] = []
    var sawNewline = true
    for (i, token) in tokens.enumerated() {
      if token.kind == .newline { sawNewline = true }
      // A block comment over several lines separates lines too.
      if token.kind == .blockComment && bytes[token.range].contains(0x0A) { sawNewline = true }
      guard token.isSignificant else { continue }
      code.append(i)
      startsLine.append(sawNewline)
      sawNewline = false
    }
    self.code = code
    self.startsLine = startsLine
  }

  /// The number of significant tokens.
  var count: Int { code.count }

  /// The significant token at `k`.
  func token(_ k: Int) -> SwiftToken { tokens[code[k]] }

  /// The text of the significant token at `k`; "" past the end.
  func text(_ k: Int) -> String {
    guard k >= 0 && k < code.count else { return "" }
    return String(decoding: bytes[tokens[code[k]].range], as: UTF8.self)
  }

  /// The text of a token.
  func text(of token: SwiftToken) -> String { String(decoding: bytes[token.range], as: UTF8.self) }

  /// Whether the significant token at `k` is the punctuation or identifier `text`.
  func `is`(_ k: Int, _ text: String) -> Bool {
    guard k >= 0 && k < code.count else { return false }
    let token = tokens[code[k]]
    guard token.range.count == text.utf8.count else { return false }
    return bytes[token.range].elementsEqual(text.utf8)
  }

  /// The 1-based line of the significant token at `k`.
  func line(_ k: Int) -> Int { k < code.count ? tokens[code[k]].line : (tokens.last?.line ?? 1) }

  /// The source text from the start of significant token `from` to the end of `through`.
  func text(from: Int, through: Int) -> String {
    guard from <= through else { return "" }
    let range = tokens[code[from]].range.lowerBound..<tokens[code[through]].range.upperBound
    return String(decoding: bytes[range], as: UTF8.self)
  }

  /// The byte offset where significant token `k` starts.
  func start(_ k: Int) -> Int { tokens[code[k]].range.lowerBound }

  /// The byte offset where significant token `k` ends.
  func end(_ k: Int) -> Int { tokens[code[k]].range.upperBound }

  /// The index of the significant token that closes the bracket opened at `k` (`(`, `[`, `{`
  /// or `<` of a generic argument list), or nil when it is not closed.
  func closing(_ k: Int) -> Int? {
    let pairs: [String: String] = ["(": ")", "[": "]", "{": "}", "<": ">"]
    guard let close = pairs[text(k)] else { return nil }
    let open = text(k)
    var depth = 0
    var j = k
    while j < count {
      if self.is(j, open) {
        depth += 1
      } else if self.is(j, close) && !(open == "<" && self.is(j - 1, "-") && end(j - 1) == start(j)) {
        depth -= 1
        if depth == 0 { return j }
      } else if open == "<" && (self.is(j, "{") || self.is(j, ";") || self.is(j, "=")) {
        return nil
      } else if open != "<", self.is(j, "(") || self.is(j, "[") || self.is(j, "{"), let inner = closing(j) {
        j = inner
      }
      j += 1
    }
    return nil
  }

  // MARK: Edits

  /// Replaces the bytes in `range` with `text`.
  mutating func replace(_ range: Range<Int>, with text: String) { edits.append((range, text)) }

  /// Replaces significant tokens `from` through `through` with `text`.
  mutating func replace(from: Int, through: Int, with text: String) {
    replace(start(from)..<end(through), with: text)
  }

  /// Deletes significant token `k` and the spaces after it (so that `@objc dynamic var`
  /// becomes `var`, not ` var`); when it is alone on its line, the whole line.
  mutating func delete(_ k: Int) { delete(from: k, through: k) }

  /// Deletes significant tokens `from` through `through` and the spaces after them; when they
  /// are alone on their line, the whole line.
  mutating func delete(from: Int, through: Int) {
    var end = self.end(through)
    while end < bytes.count, bytes[end] == 0x20 || bytes[end] == 0x09 { end += 1 }
    var start = self.start(from)
    if end < bytes.count, bytes[end] == 0x0A, let first = lineStart(before: start) {
      start = first
      end += 1
    }
    replace(start..<end, with: "")
  }

  /// Deletes significant tokens `from` through `through` as whole lines when nothing else is on
  /// their lines (indentation and the last line's break included); otherwise just their bytes.
  /// With `joiningBlankLines`, a blank line just before them goes too when a blank line or a
  /// line starting with `}` follows, so that no double blank line is left.
  mutating func deleteLines(from: Int, through: Int, joiningBlankLines: Bool = false) {
    var start = self.start(from)
    var end = self.end(through)
    var after = end
    while after < bytes.count, bytes[after] == 0x20 || bytes[after] == 0x09 || bytes[after] == 0x0D { after += 1 }
    if let first = lineStart(before: start), after == bytes.count || bytes[after] == 0x0A {
      start = first
      end = min(after + 1, bytes.count)
      if joiningBlankLines, start > 0, let previous = lineStart(before: start - 1), previous < start {
        // `previous` is where the line before begins when it holds only spaces (it is blank).
        var next = end
        while next < bytes.count, bytes[next] == 0x20 || bytes[next] == 0x09 || bytes[next] == 0x0D { next += 1 }
        if next == bytes.count || bytes[next] == 0x0A || bytes[next] == UInt8(ascii: "}") { start = previous }
      }
    }
    replace(start..<end, with: "")
  }

  /// The offset where the line of `offset` begins, when only spaces and tabs come before
  /// `offset` on it; nil otherwise.
  private func lineStart(before offset: Int) -> Int? {
    var i = offset
    while i > 0, bytes[i - 1] == 0x20 || bytes[i - 1] == 0x09 { i -= 1 }
    return i == 0 || bytes[i - 1] == 0x0A ? i : nil
  }

  /// The source with the edits applied, in order of position (an insertion before a
  /// replacement at the same offset); an edit that overlaps an earlier one is dropped.
  func rewritten() -> String {
    let ordered = edits.enumerated().sorted { a, b in
      let (x, y) = (a.element.range, b.element.range)
      if x.lowerBound != y.lowerBound { return x.lowerBound < y.lowerBound }
      if x.isEmpty != y.isEmpty { return x.isEmpty }
      return a.offset < b.offset
    }.map(\.element)
    var output: [UInt8] = []
    output.reserveCapacity(bytes.count)
    var position = 0
    for edit in ordered where edit.range.lowerBound >= position {
      output += bytes[position..<edit.range.lowerBound]
      output += edit.text.utf8
      position = edit.range.upperBound
    }
    output += bytes[position...]
    return String(decoding: output, as: UTF8.self)
  }
}
