/// The declarations of a Swift file that `reef port` rewrites: types with their inheritance
/// and members, properties with their attributes, modifiers, type and initial value, and
/// functions with their bodies. Positions are indices of significant tokens in a
/// ``SwiftSourceFile``.
///
/// It is a declaration-level reader, not a Swift parser: statements and expressions are
/// passed over by their brackets and lines, and what it does not recognise is kept as
/// ``SwiftMember/Kind/other``.
struct SwiftMember {
  /// An attribute: `@name` and its parenthesized arguments.
  struct Attribute {
    /// The index of the `@name` token.
    var index: Int
    /// The name with its `@`.
    var name: String
    /// The index of the `)` closing its arguments, if it has any.
    var argumentsEnd: Int?
    /// The index of its last token.
    var last: Int { argumentsEnd ?? index }
  }

  /// A modifier (`public`, `dynamic`, `private(set)`).
  struct Modifier {
    /// The index of its keyword.
    var index: Int
    /// The keyword.
    var name: String
    /// The index of its last token (the `)` of `private(set)`).
    var last: Int
  }

  /// A `var` or `let`.
  struct Variable {
    /// Whether it is a `let`.
    var isLet: Bool
    /// The index of its name, nil for a tuple pattern.
    var name: Int?
    /// The indices of its type annotation (after the colon), if any.
    var type: ClosedRange<Int>?
    /// The index of its `=`, if it has an initial value.
    var equals: Int?
    /// The indices of its initial value, if any.
    var initializer: ClosedRange<Int>?
    /// The indices of its `{ … }` accessor or observer block, if any.
    var accessors: ClosedRange<Int>?
    /// Whether the block computes the value (`get`, or a bare body) rather than observes it.
    var isComputed: Bool
    /// Whether more bindings follow a comma (`var a = 0, b = 1`).
    var hasMoreBindings: Bool
  }

  /// A function (`func`), with its body.
  struct Function {
    /// The index of its name.
    var name: Int
    /// The indices of its `{ … }` body, if it has one.
    var body: ClosedRange<Int>?
  }

  /// A type (`class`, `struct`, `enum`, `extension`, `protocol`, `actor`).
  struct TypeDeclaration {
    /// `class`, `struct`, `enum`, `extension`, `protocol` or `actor`.
    var keyword: String
    /// The index of its name.
    var name: Int
    /// The indices of each inherited type (or protocol) in its inheritance clause.
    var inherited: [ClosedRange<Int>]
    /// The indices of its `{ … }` body.
    var body: ClosedRange<Int>?
    /// Its members.
    var members: [SwiftMember]
  }

  /// What the member declares.
  enum Kind {
    case variable(Variable)
    case function(Function)
    case type(TypeDeclaration)
    /// Anything else: an initializer, a case, an import, a statement.
    case other
  }

  /// The index of its first token (its first attribute or modifier).
  var first: Int
  /// The index of its last token.
  var last: Int
  /// Its attributes, in order.
  var attributes: [Attribute]
  /// Its modifiers, in order.
  var modifiers: [Modifier]
  /// The index of its keyword (`var`, `func`, `class`), when it has one.
  var keyword: Int?
  /// What it declares.
  var kind: Kind

  /// Whether it has the modifier `name`.
  func has(modifier name: String) -> Bool { modifiers.contains { $0.name == name } }

  /// The attribute named `name` (with its `@`), if present.
  func attribute(_ name: String) -> Attribute? { attributes.first { $0.name == name } }
}

/// Reads the members of a Swift file or of a type's body.
struct SwiftDeclarationReader {
  let file: SwiftSourceFile

  static let modifiers: Set<String> = [
    "public", "private", "fileprivate", "internal", "open", "package", "final", "override", "static", "dynamic",
    "lazy", "weak", "unowned", "required", "convenience", "nonisolated", "mutating", "nonmutating", "optional",
    "indirect", "prefix", "postfix", "infix", "distributed", "isolated", "consuming", "borrowing", "__consuming",
  ]
  static let typeKeywords: Set<String> = ["class", "struct", "enum", "protocol", "extension", "actor"]
  static let declarationKeywords: Set<String> = [
    "var", "let", "func", "init", "deinit", "subscript", "typealias", "associatedtype", "case", "import", "operator",
    "precedencegroup", "macro",
  ]

  /// The members from index `from` up to, not including, `to`.
  func members(from: Int, to: Int) -> [SwiftMember] {
    var members: [SwiftMember] = []
    var k = from
    while k < to {
      if file.is(k, ";") {
        k += 1
        continue
      }
      let member = self.member(at: k, end: to)
      members.append(member)
      k = max(member.last + 1, k + 1)
    }
    return members
  }

  /// Whether `class` at `k` is a modifier (`class func`, `class var`) rather than a type.
  private func classIsModifier(_ k: Int) -> Bool {
    let next = file.text(k + 1)
    return Self.modifiers.contains(next) || Self.declarationKeywords.contains(next) || next == "class"
  }

  private func member(at start: Int, end: Int) -> SwiftMember {
    var k = start
    var attributes: [SwiftMember.Attribute] = []
    var modifiers: [SwiftMember.Modifier] = []
    if file.token(k).kind == .pound {
      // `#if os(Linux)`, `#endif`: the directive's line.
      return SwiftMember(
        first: start, last: lineEnd(from: k, end: end), attributes: [], modifiers: [], keyword: nil, kind: .other)
    }
    while k < end, file.token(k).kind == .attribute {
      var attribute = SwiftMember.Attribute(index: k, name: file.text(k), argumentsEnd: nil)
      if file.is(k + 1, "("), !file.startsLine[k + 1], let close = file.closing(k + 1), close < end {
        attribute.argumentsEnd = close
      }
      attributes.append(attribute)
      k = attribute.last + 1
    }
    while k < end {
      let word = file.text(k)
      guard Self.modifiers.contains(word) || (word == "class" && classIsModifier(k)) else { break }
      var modifier = SwiftMember.Modifier(index: k, name: word, last: k)
      if file.is(k + 1, "("), !file.startsLine[k + 1], let close = file.closing(k + 1), close < end {
        modifier.last = close
      }
      modifiers.append(modifier)
      k = modifier.last + 1
    }
    guard k < end else {
      return SwiftMember(
        first: start, last: end - 1, attributes: attributes, modifiers: modifiers, keyword: nil, kind: .other)
    }
    let keyword = file.text(k)
    var member = SwiftMember(
      first: start, last: k, attributes: attributes, modifiers: modifiers, keyword: k, kind: .other)
    switch keyword {
    case "var", "let":
      let (variable, last) = self.variable(at: k, end: end)
      member.kind = .variable(variable)
      member.last = last
    case "func":
      let body = self.body(after: k + 1, end: end)
      member.kind = .function(SwiftMember.Function(name: k + 1, body: body))
      member.last = body?.upperBound ?? lineEnd(from: k, end: end)
    case "init", "deinit", "subscript":
      let body = self.body(after: k + 1, end: end)
      member.last = body?.upperBound ?? lineEnd(from: k, end: end)
    case _ where Self.typeKeywords.contains(keyword) && k + 1 < end:
      let type = self.type(at: k, end: end)
      member.kind = .type(type)
      member.last = type.body?.upperBound ?? lineEnd(from: k, end: end)
    default:
      member.keyword = Self.declarationKeywords.contains(keyword) ? k : nil
      member.last = statementEnd(from: k, end: end)
    }
    return member
  }

  /// The last index of the line that `k` is on (brackets opened on it are followed).
  private func lineEnd(from k: Int, end: Int) -> Int {
    var j = k
    while j + 1 < end && !file.startsLine[j + 1] {
      j += 1
      if file.is(j, "(") || file.is(j, "[") || file.is(j, "{"), let close = file.closing(j), close < end { j = close }
    }
    return j
  }

  /// The last index of a statement starting at `k`: up to the next line (or `;`) outside
  /// brackets, continuing over lines that go on with `.member` or an operator.
  private func statementEnd(from k: Int, end: Int) -> Int {
    var j = k
    while true {
      if file.is(j, "(") || file.is(j, "[") || file.is(j, "{"), let close = file.closing(j), close < end { j = close }
      guard j + 1 < end, !file.is(j + 1, ";"), !file.is(j + 1, "}") else { return j }
      if file.startsLine[j + 1] && !continues(after: j) { return j }
      j += 1
    }
  }

  /// Whether the expression goes on over the line break after `j`.
  private func continues(after j: Int) -> Bool {
    let operators: Set<String> = ["=", "+", "-", "*", "/", "%", "&", "|", "^", "<", ">", "?", ":", "!", "~", "."]
    let previous = file.text(j)
    let next = file.text(j + 1)
    if file.token(j).kind == .punctuation, operators.contains(previous), previous != "!" && previous != "?" {
      return true
    }
    if file.token(j + 1).kind == .punctuation, operators.contains(next), next != "!" { return true }
    return false
  }

  /// The `{ … }` body after a signature starting at `k`: the first `{` outside brackets before
  /// the signature's line ends without one.
  private func body(after k: Int, end: Int) -> ClosedRange<Int>? {
    var j = k
    while j < end {
      if file.is(j, "{") {
        guard let close = file.closing(j), close < end else { return nil }
        return j...close
      }
      if file.is(j, "(") || file.is(j, "["), let close = file.closing(j), close < end {
        j = close + 1
        continue
      }
      if j > k && file.startsLine[j] && startsDeclaration(j) { return nil }
      j += 1
    }
    return nil
  }

  /// Whether a declaration could begin at `j` (an attribute, a modifier or a keyword).
  private func startsDeclaration(_ j: Int) -> Bool {
    let word = file.text(j)
    return file.token(j).kind == .attribute || file.token(j).kind == .pound || Self.modifiers.contains(word)
      || Self.declarationKeywords.contains(word) || Self.typeKeywords.contains(word) || file.is(j, "}")
  }

  private func type(at k: Int, end: Int) -> SwiftMember.TypeDeclaration {
    var declaration = SwiftMember.TypeDeclaration(
      keyword: file.text(k), name: k + 1, inherited: [], body: nil, members: [])
    var j = k + 2
    if file.is(j, "<"), let close = file.closing(j) { j = close + 1 }
    if file.is(j, ":") {
      j += 1
      var itemStart = j
      while j < end && !file.is(j, "{") && !file.is(j, "where") {
        if file.is(j, "<") || file.is(j, "("), let close = file.closing(j) {
          j = close + 1
          continue
        }
        if file.is(j, ",") {
          if itemStart < j { declaration.inherited.append(itemStart...(j - 1)) }
          itemStart = j + 1
        }
        j += 1
      }
      if itemStart < j { declaration.inherited.append(itemStart...(j - 1)) }
    }
    declaration.body = body(after: j, end: end)
    if let body = declaration.body {
      declaration.members = members(from: body.lowerBound + 1, to: body.upperBound)
    }
    return declaration
  }

  private func variable(at k: Int, end: Int) -> (SwiftMember.Variable, Int) {
    var variable = SwiftMember.Variable(
      isLet: file.is(k, "let"), name: nil, type: nil, equals: nil, initializer: nil, accessors: nil,
      isComputed: false, hasMoreBindings: false)
    guard k + 1 < end, file.token(k + 1).kind == .identifier else {
      return (variable, statementEnd(from: k, end: end))
    }
    variable.name = k + 1
    var j = k + 2
    if file.is(j, ":") {
      let typeStart = j + 1
      j = typeStart
      while j < end && !file.is(j, "=") && !file.is(j, "{") && !file.is(j, ",") && !file.is(j, ";")
        && !file.is(j, "}") && !(j > typeStart && file.startsLine[j])
      {
        if file.is(j, "<") || file.is(j, "(") || file.is(j, "["), let close = file.closing(j), close < end {
          j = close
        }
        j += 1
      }
      if j > typeStart { variable.type = typeStart...(j - 1) }
    }
    var last = j - 1
    if file.is(j, "=") && j + 1 < end {
      variable.equals = j
      let valueStart = j + 1
      var v = valueStart
      while true {
        if file.is(v, "(") || file.is(v, "["), let close = file.closing(v), close < end {
          v = close
        } else if isGenericArgumentList(v), let close = file.closing(v), close < end {
          v = close
        } else if file.is(v, "{") {
          if isObserverBlock(v) { break }
          if let close = file.closing(v), close < end { v = close }
        }
        guard v + 1 < end, !file.is(v + 1, ",") && !file.is(v + 1, ";") && !file.is(v + 1, "}") else { break }
        if file.is(v + 1, "{") && isObserverBlock(v + 1) { break }
        if file.startsLine[v + 1] && !continues(after: v) { break }
        v += 1
      }
      if file.is(v, "{") && isObserverBlock(v) { v -= 1 }
      variable.initializer = valueStart...v
      last = v
    }
    j = last + 1
    if j < end, file.is(j, "{"), !file.startsLine[j], let close = file.closing(j), close < end {
      variable.accessors = j...close
      variable.isComputed = !isObserverBlock(j)
      last = close
      j = close + 1
    }
    if j < end, file.is(j, ",") {
      variable.hasMoreBindings = true
      last = statementEnd(from: j, end: end)
    }
    return (variable, last)
  }

  /// Whether the `<` at `k` opens generic arguments (`List<Int>`, `Map<String, Int>`): it
  /// follows a name with no space.
  private func isGenericArgumentList(_ k: Int) -> Bool {
    file.is(k, "<") && k > 0 && file.token(k - 1).kind == .identifier && file.end(k - 1) == file.start(k)
  }

  /// Whether the `{` at `k` opens `willSet`/`didSet` observers.
  private func isObserverBlock(_ k: Int) -> Bool {
    file.is(k + 1, "willSet") || file.is(k + 1, "didSet")
  }
}
