import CPCRE2
import ReefBSON

/// A compiled regular expression: matches strings and symbols, and equals the same regex value.
///
/// Patterns are PCRE2's, as in MongoDB: compiled once per query with UTF-8 always on (option `u`
/// is accepted and changes nothing), `i`, `m`, `s` and `x` as PCRE2's caseless, multiline, dotall
/// and extended options, and PCRE2's just-in-time compiler where the processor has one. Strings
/// are matched on their UTF-8 bytes in place; a string that is not valid UTF-8 matches only where
/// its valid parts do. Matching is bounded by ``RegexLimits``: a string on which the pattern
/// backtracks past a limit does not match, and the error is left for ``Query/evaluate(_:)`` to
/// throw.
@usableFromInline
final class RegexTest: @unchecked Sendable {
  /// The compiled pattern; PCRE2's compiled code is read-only once compiled (and JIT-compiled),
  /// so threads share it.
  let code: OpaquePointer
  let pattern: String
  let literal: Literal

  /// Options MongoDB accepts: i, m, s, x and u (always on).
  static let validOptions: Set<Character> = ["i", "m", "s", "x", "u"]

  init(pattern: String, options: String) throws(QueryError) {
    for option in options where !RegexTest.validOptions.contains(option) {
      throw QueryError(.regex, "invalid regular expression option '\(option)': expected some of i, m, s, x, u")
    }
    try RegexLimits.check(pattern)
    var flags = UInt32(PCRE2_UTF) | UInt32(PCRE2_MATCH_INVALID_UTF)
    if options.contains("i") { flags |= UInt32(PCRE2_CASELESS) }
    if options.contains("m") { flags |= UInt32(PCRE2_MULTILINE) }
    if options.contains("s") { flags |= UInt32(PCRE2_DOTALL) }
    if options.contains("x") { flags |= UInt32(PCRE2_EXTENDED) }
    guard let context = pcre2_compile_context_create_8(nil) else {
      throw QueryError(.regex, "cannot compile /\(pattern)/: out of memory")
    }
    defer { pcre2_compile_context_free_8(context) }
    pcre2_set_parens_nest_limit_8(context, UInt32(RegexLimits.nesting))
    var errorCode: Int32 = 0
    var errorOffset = 0
    var utf8 = pattern
    let compiled = utf8.withUTF8 { bytes in
      // An empty pattern may have no address; PCRE2 10.42 needs one even for 0 bytes.
      pcre2_compile_8(bytes.baseAddress ?? RegexScratch.empty, bytes.count, flags, &errorCode, &errorOffset, context)
    }
    guard let code = compiled else {
      throw QueryError(
        .regex,
        "invalid regular expression /\(pattern)/: \(RegexTest.message(errorCode)) at byte \(errorOffset) of the pattern"
      )
    }
    if RegexLimits.jit {
      // A pattern that the JIT cannot compile (too large for it) runs in the interpreter.
      _ = pcre2_jit_compile_8(code, UInt32(PCRE2_JIT_COMPLETE))
    }
    self.code = code
    self.pattern = pattern
    literal = Literal(.regex(BSONRegularExpression(pattern: pattern, options: String(options.sorted()))))
  }

  deinit { pcre2_code_free_8(code) }

  @usableFromInline func test(_ value: RawValue) -> Bool {
    switch value.type {
    case 0x02, 0x0E:
      return matches(value.stringBytes)
    case 0x0B:
      return compareValues(value, literal.value) == 0
    default:
      return false
    }
  }

  /// Whether the pattern matches somewhere in `subject` (UTF-8 bytes, checked by PCRE2 as it
  /// goes). Past a limit, records the error in this thread's scratch and returns false.
  func matches(_ subject: UnsafeRawBufferPointer) -> Bool {
    let scratch = RegexScratch.current
    pcre2_set_match_limit_8(scratch.matchContext, RegexLimits.matchSteps(forLength: subject.count))
    // An empty buffer may have no base address; PCRE2 needs a pointer even for 0 bytes. Safe: the
    // bytes are only read, as bytes, for the duration of the call, and PCRE2 reads no further than
    // `subject.count` (it is given the length, never looks for a terminator).
    let start = subject.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? RegexScratch.empty
    let result = pcre2_match_8(code, start, subject.count, 0, 0, scratch.matchData, scratch.matchContext)
    if result >= 0 { return true }  // 0: a match, with more captures than the match data holds
    if result == PCRE2_ERROR_NOMATCH || result == PCRE2_ERROR_PARTIAL { return false }
    scratch.record(limitError(result, subjectLength: subject.count))
    return false
  }

  /// The error for a failed match: a limit passed, or (never expected) another PCRE2 error.
  @inline(never)
  func limitError(_ result: Int32, subjectLength: Int) -> QueryError {
    let limit: String
    switch result {
    case PCRE2_ERROR_MATCHLIMIT:
      limit = "its match limit (\(RegexLimits.matchSteps(forLength: subjectLength)) backtracking steps)"
    case PCRE2_ERROR_DEPTHLIMIT: limit = "its depth limit (\(RegexLimits.depth) nested backtracking points)"
    case PCRE2_ERROR_HEAPLIMIT: limit = "its memory limit (\(RegexLimits.heapKiB) KiB)"
    case PCRE2_ERROR_JIT_STACKLIMIT: limit = "its stack limit (\(RegexLimits.jitStackBytes) bytes)"
    default: limit = "what PCRE2 can match (\(RegexTest.message(result)))"
    }
    return QueryError(
      .regexLimit,
      "regular expression /\(pattern)/ went past \(limit) on a string of \(subjectLength) bytes: "
        + "the pattern backtracks too much (nested or overlapping repetitions such as (a+)+ or (a|aa)+); rewrite it")
  }

  /// PCRE2's text for an error code.
  static func message(_ code: Int32) -> String {
    var buffer = [UInt8](repeating: 0, count: 256)
    let count = pcre2_get_error_message_8(code, &buffer, buffer.count)
    guard count > 0 else { return "PCRE2 error \(code)" }
    return String(decoding: buffer[..<Int(count)], as: UTF8.self)
  }
}
