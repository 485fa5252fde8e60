import ReefBSON

/// A `ValueTest` ready to run on raw values: literals held as BSON bytes, regular expressions
/// compiled, string patterns folded.
@usableFromInline
indirect enum CompiledTest: @unchecked Sendable {
  case compare(ComparisonOperator, Literal)
  case `in`([Literal], [RegexTest])
  case regex(RegexTest)
  case type(Set<UInt8>)
  case mod(divisor: Int64, remainder: Int64)
  case string(StringPattern)
  case all([CompiledTest])
  case elementMatch([CompiledTest])
  case elementMatchQuery(Matcher)
  case exists(Bool)
  case size(Int)
  case not(CompiledTest)
  case anyFieldValue(CompiledTest)
  case anyFieldName(CompiledTest)

  @inlinable func test(_ value: RawValue) -> Bool {
    switch self {
    case .compare(let comparison, let literal):
      return CompiledTest.compare(comparison, value, literal.value)
    case .in(let literals, let regexes):
      for literal in literals where CompiledTest.compare(.equal, value, literal.value) { return true }
      for regex in regexes where regex.test(value) { return true }
      return false
    case .regex(let regex):
      return regex.test(value)
    case .type(let types):
      return types.contains(value.type)
    case .mod(let divisor, let remainder):
      guard let integer = CompiledTest.truncatedInteger(value) else { return false }
      let (result, overflow) = integer.remainderReportingOverflow(dividingBy: divisor)
      return (overflow ? 0 : result) == remainder
    case .string(let pattern):
      return pattern.test(value)
    case .all(let tests):
      for test in tests where !test.test(value) { return false }
      return true
    case .elementMatch(let tests):
      guard value.isArray else { return false }
      var elements = RawElements(value)
      while let element = elements.next() {
        if tests.allSatisfy({ $0.test(element.value) }) { return true }
      }
      return false
    case .elementMatchQuery(let query):
      guard value.isArray else { return false }
      var elements = RawElements(value)
      while let element = elements.next() {
        if element.value.isContainer && query.matches(element.value.asDocument) { return true }
      }
      return false
    case .exists(let exists):
      return exists
    case .size(let size):
      return value.isArray && value.elementCount == size
    case .not(let test):
      return !test.test(value)
    case .anyFieldValue(let test):
      guard value.isDocument else { return false }
      var fields = RawElements(value)
      while let field = fields.next() {
        if test.test(field.value) { return true }
      }
      return false
    case .anyFieldName(let test):
      guard value.isDocument else { return false }
      return CompiledTest.anyFieldName(of: value, passes: test)
    }
  }

  /// Whether a field name of `document`, as a BSON string, passes `test`.
  @usableFromInline static func anyFieldName(of document: RawValue, passes test: CompiledTest) -> Bool {
    var fields = RawElements(document)
    while let field = fields.next() {
      let name = String(decoding: UnsafeRawBufferPointer(start: field.key, count: field.keyLength), as: UTF8.self)
      let literal = Literal(.string(name))
      if withExtendedLifetime(literal, { test.test(literal.value) }) { return true }
    }
    return false
  }

  /// MongoDB's comparison of a found value with a literal: same canonical type only (type
  /// bracketing) unless the literal is MinKey or MaxKey; NaN equals only NaN and is neither
  /// less nor greater than any number.
  @inlinable static func compare(_ comparison: ComparisonOperator, _ value: RawValue, _ literal: RawValue) -> Bool {
    let rankValue = canonicalRank(value.type)
    let rankLiteral = canonicalRank(literal.type)
    if rankValue != rankLiteral {
      if comparison == .notEqual { return true }
      guard literal.type == 0xFF || literal.type == 0x7F else { return false }
      return holds(comparison, rankValue < rankLiteral ? -1 : 1)
    }
    if rankValue == numberRank {
      let nanValue = isNaN(value)
      let nanLiteral = isNaN(literal)
      if nanValue || nanLiteral {
        let both = nanValue && nanLiteral
        switch comparison {
        case .equal, .lessOrEqual, .greaterOrEqual: return both
        case .notEqual: return !both
        case .less, .greater: return false
        }
      }
    }
    return holds(comparison, compareValues(value, literal, rank: rankValue))
  }

  @inlinable static func holds(_ comparison: ComparisonOperator, _ order: Int) -> Bool {
    switch comparison {
    case .equal: order == 0
    case .notEqual: order != 0
    case .less: order < 0
    case .lessOrEqual: order <= 0
    case .greater: order > 0
    case .greaterOrEqual: order >= 0
    }
  }

  /// A number truncated toward zero, for `$mod`; nil for other types, NaN, infinities and
  /// values outside Int64.
  @usableFromInline static func truncatedInteger(_ value: RawValue) -> Int64? {
    let double: Double
    switch value.type {
    case 0x10: return Int64(value.int32())
    case 0x12: return value.int64()
    case 0x01: double = value.double
    case 0x13:
      guard let parsed = Double(value.decimal128.description) else { return nil }
      double = parsed
    default: return nil
    }
    guard double.isFinite, double > -9_223_372_036_854_775_809.0, double < 9_223_372_036_854_775_808.0 else {
      return nil
    }
    return Int64(double.rounded(.towardZero))
  }
}

/// Realm's string operators with their `[c]`/`[d]` options.
@usableFromInline
struct StringPattern: @unchecked Sendable {
  let operation: StringOperator
  let options: StringOptions
  /// The pattern's UTF-8 bytes, folded by the options.
  let needle: [UInt8]
  /// For LIKE: the folded pattern as scalars.
  let likePattern: [Unicode.Scalar]

  init(_ operation: StringOperator, _ pattern: String, _ options: StringOptions) {
    self.operation = operation
    self.options = options
    let folded = fold(pattern, options)
    needle = Array(folded.utf8)
    likePattern = Array(folded.unicodeScalars)
  }

  @usableFromInline func test(_ value: RawValue) -> Bool {
    guard value.type == 0x02 || value.type == 0x0E else { return operation == .notEqual }
    let raw = value.stringBytes
    if options.isEmpty && operation != .like { return test(bytes: raw) }
    let folded = fold(String(decoding: raw, as: UTF8.self), options)
    if operation == .like { return like(Array(folded.unicodeScalars)[...], likePattern[...]) }
    return Array(folded.utf8).withUnsafeBytes { test(bytes: $0) }
  }

  private func test(bytes: UnsafeRawBufferPointer) -> Bool {
    switch operation {
    case .equal: return bytes.elementsEqual(needle)
    case .notEqual: return !bytes.elementsEqual(needle)
    case .beginsWith: return bytes.count >= needle.count && bytes.prefix(needle.count).elementsEqual(needle)
    case .endsWith: return bytes.count >= needle.count && bytes.suffix(needle.count).elementsEqual(needle)
    case .contains:
      if needle.isEmpty { return true }
      guard bytes.count >= needle.count else { return false }
      for start in 0...(bytes.count - needle.count)
      where bytes[start] == needle[0] && bytes[start..<(start + needle.count)].elementsEqual(needle) {
        return true
      }
      return false
    case .like:
      return like(Array(String(decoding: bytes, as: UTF8.self).unicodeScalars)[...], likePattern[...])
    }
  }
}

/// Glob matching for LIKE: `*` is any run of characters, `?` exactly one.
///
/// Not a regular expression on purpose: this matcher backtracks only to the last `*`, so its cost
/// is at most the string's length times the pattern's, whatever the pattern. Translated to PCRE2
/// (`^.*a.*a.*b\z`), a pattern with many stars backtracks polynomially in their number and would
/// end a query with a match-limit error where this answers at once.
private func like(_ text: ArraySlice<Unicode.Scalar>, _ pattern: ArraySlice<Unicode.Scalar>) -> Bool {
  var textIndex = text.startIndex
  var patternIndex = pattern.startIndex
  var starPattern: Int?
  var starText = 0
  while textIndex < text.endIndex {
    if patternIndex < pattern.endIndex && (pattern[patternIndex] == "?" || pattern[patternIndex] == text[textIndex]) {
      textIndex += 1
      patternIndex += 1
    } else if patternIndex < pattern.endIndex && pattern[patternIndex] == "*" {
      starPattern = patternIndex
      starText = textIndex
      patternIndex += 1
    } else if let star = starPattern {
      patternIndex = star + 1
      starText += 1
      textIndex = starText
    } else {
      return false
    }
  }
  while patternIndex < pattern.endIndex && pattern[patternIndex] == "*" { patternIndex += 1 }
  return patternIndex == pattern.endIndex
}

/// Folds a string for `[c]` (lower case) and `[d]` (letters without their diacritics).
func fold(_ string: String, _ options: StringOptions) -> String {
  guard !options.isEmpty else { return string }
  var scalars = String.UnicodeScalarView()
  for scalar in string.unicodeScalars {
    var base = [scalar]
    if options.contains(.diacriticInsensitive) {
      if scalar.properties.generalCategory == .nonspacingMark { continue }
      if !scalar.isASCII, let letter = baseLetter(scalar) { base = [letter] }
    }
    for scalar in base {
      if options.contains(.caseInsensitive) {
        scalars.append(contentsOf: scalar.properties.lowercaseMapping.unicodeScalars)
      } else {
        scalars.append(scalar)
      }
    }
  }
  return String(scalars)
}

/// The base letter of a precomposed Latin letter with diacritics ("LATIN SMALL LETTER E WITH
/// ACUTE" is "e"), from the scalar's Unicode name.
private func baseLetter(_ scalar: Unicode.Scalar) -> Unicode.Scalar? {
  guard let name = scalar.properties.name, name.contains(" WITH ") else { return nil }
  for (prefix, lower) in [("LATIN SMALL LETTER ", true), ("LATIN CAPITAL LETTER ", false)] where name.hasPrefix(prefix)
  {
    let rest = name.dropFirst(prefix.count)
    guard let space = rest.firstIndex(of: " "), rest.distance(from: rest.startIndex, to: space) == 1,
      let letter = rest.first?.unicodeScalars.first
    else { return nil }
    return lower ? letter.properties.lowercaseMapping.unicodeScalars.first : letter
  }
  return nil
}
