import ReefCLI
import Testing

/// `reef port`'s Swift tokenizer: every byte kept, string literals of every form read whole
/// (their interpolations as code), comments nested, attributes and `#` keywords.
@Suite("reef port: the Swift tokenizer")
struct SwiftLexerTests {
  static func text(_ source: String, _ token: SwiftToken) -> String {
    String(decoding: Array(source.utf8)[token.range], as: UTF8.self)
  }

  /// The significant tokens' texts.
  static func code(_ source: String) throws -> [String] {
    try SwiftLexer.tokens(of: source).filter(\.isSignificant).map { text(source, $0) }
  }

  static let sample = ###"""
    @objc(Dog) dynamic var name = "a \"quoted\" \(f(")")) name" // "not a string
    let raw = #"a "raw" \(not) \#(yes)"# /* outer /* inner */ still */ let x = 1...5
    let block = """
      "nested" quotes and \(interpolated + """
        inner
        """) text
      """
    let rawBlock = ##"""
      """# not the end
      """##
    #if os(Linux)
    let regex = #/a"b/#, n = 0x1F + 1e-5, `default` = $0
    #endif
    """###

  @Test("the tokens cover the source byte for byte")
  func tokensCoverTheSource() throws {
    let tokens = try SwiftLexer.tokens(of: Self.sample)
    var offset = 0
    for token in tokens {
      #expect(token.range.lowerBound == offset)
      offset = token.range.upperBound
    }
    #expect(offset == Self.sample.utf8.count)
    #expect(tokens.map { Self.text(Self.sample, $0) }.joined() == Self.sample)
  }

  @Test("string literals of every form are one token each")
  func stringLiterals() throws {
    let strings = try SwiftLexer.tokens(of: Self.sample).filter { $0.kind == .string }.map {
      Self.text(Self.sample, $0)
    }
    #expect(strings.count == 5)
    #expect(strings[0] == #""a \"quoted\" \(f(")")) name""#)
    #expect(strings[1] == ##"#"a "raw" \(not) \#(yes)"#"##)
    #expect(strings[2].hasPrefix("\"\"\"\n") && strings[2].hasSuffix("text\n  \"\"\""))
    #expect(strings[3].hasPrefix("##\"\"\"") && strings[3].hasSuffix("\"\"\"##"))
    #expect(strings[4] == ##"#/a"b/#"##)
  }

  @Test("interpolations are lexed as code; a raw string's only with its #")
  func interpolations() throws {
    let tokens = try SwiftLexer.tokens(of: Self.sample).filter { $0.kind == .string }
    let code = tokens.map { $0.interpolated.filter(\.isSignificant).map { Self.text(Self.sample, $0) } }
    #expect(code[0] == ["f", "(", #"")""#, ")"])
    #expect(code[1] == ["yes"])
    #expect(code[2].first == "interpolated" && code[2].count == 3)
    #expect(code[3].isEmpty)
  }

  @Test("comments nest, and a quote in a comment is no string")
  func comments() throws {
    let tokens = try SwiftLexer.tokens(of: Self.sample)
    let comments = tokens.filter { $0.kind == .lineComment || $0.kind == .blockComment }.map {
      Self.text(Self.sample, $0)
    }
    #expect(comments == [#"// "not a string"#, "/* outer /* inner */ still */"])
  }

  @Test("attributes, # keywords, numbers, backquoted and $ names")
  func otherTokens() throws {
    let tokens = try SwiftLexer.tokens(of: Self.sample).filter(\.isSignificant)
    let texts = tokens.map { Self.text(Self.sample, $0) }
    #expect(tokens.first?.kind == .attribute && texts.first == "@objc")
    #expect(texts.prefix(6) == ["@objc", "(", "Dog", ")", "dynamic", "var"])
    #expect(tokens.filter { $0.kind == .pound }.map { Self.text(Self.sample, $0) } == ["#if", "#endif"])
    #expect(tokens.filter { $0.kind == .number }.map { Self.text(Self.sample, $0) } == ["1", "5", "0x1F", "1e-5"])
    #expect(texts.contains("...") == false && texts.contains("."))
    #expect(texts.contains("`default`") && texts.contains("$0"))
  }

  @Test("lines are counted through multi-line strings and comments")
  func lines() throws {
    let tokens = try SwiftLexer.tokens(of: Self.sample).filter(\.isSignificant)
    let texts = tokens.map { Self.text(Self.sample, $0) }
    #expect(tokens[texts.firstIndex(of: "rawBlock")!].line == 8)
    #expect(tokens[texts.firstIndex(of: "#if")!].line == 11)
    #expect(tokens[texts.firstIndex(of: "regex")!].line == 12)
  }

  @Test("a literal or comment that does not end is an error at its first line")
  func unterminated() {
    let cases: [(String, Int, String)] = [
      ("let a = 1\nlet s = \"open\nlet b = 2", 2, "a string does not end"),
      ("/* one\n/* two */\nstill open", 1, "a /* comment does not end"),
      ("let x = 0\n\nlet s = \"\"\"\n text", 3, "a multi-line string \"\"\" does not end"),
      ("let s = \"\\(f(x\"", 1, "a string does not end"),
      ("let s = #\"open\"", 1, "a string does not end"),
      ("let r = #/open", 1, "a regex literal #/ does not end"),
    ]
    for (source, line, message) in cases {
      #expect(throws: SwiftSourceError(line: line, message), "\(source)") { try SwiftLexer.tokens(of: source) }
    }
  }
}
