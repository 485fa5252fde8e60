import CPCRE2

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The bounds on a regular expression: what a pattern may be before it is compiled, and how much
/// work matching one string may take. A pathological pattern (`^(a|aa)+b$`, `(a+)+b`) on a
/// string it almost matches backtracks exponentially; past these limits the query ends with a
/// ``QueryError/Kind/regexLimit`` error, in milliseconds, instead of running for hours.
enum RegexLimits {
  /// The longest pattern, in UTF-8 bytes: MongoDB's own (`kMaxPatternSize`).
  static let patternBytes = 32_764
  /// The deepest nesting of groups (PCRE2's default, which MongoDB keeps).
  static let nesting = 250
  /// PCRE2's match limit for a string of `length` bytes: how many backtracking points its matcher
  /// may start, 1,000,000 or 8 per byte of a longer string. A pattern that backtracks
  /// exponentially reaches it within milliseconds (with the JIT) on a short string; a pattern that
  /// scans a string of megabytes once (`^a.*b.*c`) needs a few steps per byte, and has them.
  static func matchSteps(forLength length: Int) -> UInt32 {
    UInt32(clamping: max(1_000_000, length.multipliedReportingOverflow(by: 8).partialValue))
  }
  /// PCRE2's depth limit: the interpreter's nested backtracking points (the JIT has its stack).
  static let depth: UInt32 = 1_000_000
  /// PCRE2's heap limit for the interpreter's backtracking frames, in KiB.
  static let heapKiB: UInt32 = 65_536
  /// The largest stack the JIT-compiled code may use, per thread (reserved, used as needed).
  static let jitStackBytes = 8 << 20
  /// Whether PCRE2 compiles patterns to machine code here.
  static let jit = reef_pcre2_jit_available() != 0

  /// Throws for a pattern too long, too deeply nested or with a NUL byte, before PCRE2 compiles
  /// it (PCRE2 checks the nesting too; this scan says which limit, in Reef's words).
  static func check(_ pattern: String) throws(QueryError) {
    let bytes = pattern.utf8
    if bytes.count > patternBytes {
      throw QueryError(
        .limit,
        "regular expression of \(bytes.count) bytes is too long: at most \(patternBytes) (MongoDB's limit); "
          + "it starts /\(pattern.prefix(40))…/")
    }
    if bytes.contains(0) {
      throw QueryError(.regex, "regular expression /\(pattern)/ contains a NUL byte")
    }
    // The depth of groups outside character classes, escapes skipped. A rough count (a `(` inside
    // `\Q…\E` counts): PCRE2's own limit is the exact one.
    var depth = 0
    var deepest = 0
    var escaped = false
    var inClass = false
    var classStart = false
    for byte in bytes {
      if escaped {
        escaped = false
        classStart = false
        continue
      }
      switch byte {
      case UInt8(ascii: "\\"): escaped = true
      case UInt8(ascii: "[") where !inClass:
        inClass = true
        classStart = true
        continue
      case UInt8(ascii: "]") where inClass && !classStart: inClass = false
      case UInt8(ascii: "^") where classStart: continue
      case UInt8(ascii: "(") where !inClass:
        depth += 1
        deepest = max(deepest, depth)
      case UInt8(ascii: ")") where !inClass: depth = max(0, depth - 1)
      default: break
      }
      classStart = false
    }
    if deepest > nesting {
      throw QueryError(
        .limit,
        "regular expression nests groups \(deepest) deep: at most \(nesting); it starts /\(pattern.prefix(40))…/")
    }
  }
}

/// What one thread needs to run compiled patterns: PCRE2's match data (its backtracking frames
/// are kept between matches), a match context with the limits and a JIT stack, and the first
/// limit error of the current evaluation. Compiled patterns are shared between threads; these
/// cannot be, so each thread has its own, made on its first match and freed when it ends.
final class RegexScratch {
  let matchData: OpaquePointer
  let matchContext: OpaquePointer
  let jitStack: OpaquePointer?
  /// The first limit passed since ``take()``.
  private(set) var failure: QueryError?

  /// A byte for the start of an empty subject.
  nonisolated(unsafe) static let empty: UnsafePointer<UInt8> = {
    let byte = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
    byte.initialize(to: 0)
    return UnsafePointer(byte)
  }()

  private init() {
    // One pair of offsets: a test asks only whether there is a match.
    guard let matchData = pcre2_match_data_create_8(1, nil), let matchContext = pcre2_match_context_create_8(nil)
    else { fatalError("out of memory for PCRE2's match data") }
    self.matchData = matchData
    self.matchContext = matchContext
    pcre2_set_depth_limit_8(matchContext, RegexLimits.depth)
    pcre2_set_heap_limit_8(matchContext, RegexLimits.heapKiB)
    jitStack = RegexLimits.jit ? pcre2_jit_stack_create_8(32 * 1024, RegexLimits.jitStackBytes, nil) : nil
    if let jitStack { pcre2_jit_stack_assign_8(matchContext, nil, UnsafeMutableRawPointer(jitStack)) }
  }

  deinit {
    pcre2_match_data_free_8(matchData)
    pcre2_match_context_free_8(matchContext)
    if let jitStack { pcre2_jit_stack_free_8(jitStack) }
  }

  /// Keeps the first limit error of an evaluation.
  func record(_ error: QueryError) {
    if failure == nil { failure = error }
  }

  /// The limit error recorded since the last call, if any; clears it.
  func take() -> QueryError? {
    defer { failure = nil }
    return failure
  }

  /// This thread's scratch.
  static var current: RegexScratch {
    if let stored = pthread_getspecific(key) {
      return Unmanaged<RegexScratch>.fromOpaque(stored).takeUnretainedValue()
    }
    let scratch = RegexScratch()
    // Released by the key's destructor when the thread ends.
    pthread_setspecific(key, Unmanaged.passRetained(scratch).toOpaque())
    return scratch
  }

  /// The key of the thread-specific scratch; its destructor releases a thread's scratch.
  private static let key: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key) { stored in
      #if canImport(Glibc)
        guard let stored else { return }
      #endif
      Unmanaged<RegexScratch>.fromOpaque(stored).release()
    }
    precondition(status == 0, "cannot create the thread-specific key for PCRE2's match data: \(status)")
    return key
  }()
}
