#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// The parser's errors: what was expected and found, with the offset, line, column and key path
// (computed only when an error is thrown).

extension ExtendedJSONReader {
  /// Describes the byte at `i` for a message: `'x'`, `byte 0xNN` or `the end of the input`.
  func describeByte(at i: Int) -> String {
    guard i < end else { return "the end of the input" }
    let b = input[i]
    if b >= 0x21 && b < 0x7F { return "'\(Character(Unicode.Scalar(b)))'" }
    return "byte 0x\(hex(b))"
  }

  /// Describes the JSON value starting at `i`: `a string`, `a number`, `an object`, ….
  func describeValue(at i: Int) -> String {
    guard i < end else { return "the end of the input" }
    switch input[i] {
    case UInt8(ascii: "\""): return "a string"
    case UInt8(ascii: "{"): return "an object"
    case UInt8(ascii: "["): return "an array"
    case UInt8(ascii: "t"): return "true"
    case UInt8(ascii: "f"): return "false"
    case UInt8(ascii: "n"): return "null"
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return "a number"
    default: return describeByte(at: i)
    }
  }

  /// An error at input position `at`, with the line, column and key path filled in.
  @inline(never)
  mutating func error(_ kind: BSONError.Kind, _ message: String, at position: Int) -> BSONError {
    let (line, column) = ExtendedJSONReader.lineAndColumn(input, upTo: min(position, end))
    var keyPath: [String] = []
    for entry in path where entry != Int.min {
      keyPath.append(entry < 0 ? String(-entry - 1) : keyText(at: entry))
    }
    return BSONError(
      kind, message, offset: position, keyPath: keyPath, documentIndex: documentIndex, line: line, column: column)
  }

  /// The key whose string token starts at `position`, decoded leniently (for messages only).
  func keyText(at position: Int) -> String {
    var copy = self
    copy.out = ExtendedJSONBuffer(capacity: 64)
    defer { copy.out.release() }
    copy.pos = position
    copy.path = []
    _ = try? copy.stringContents()
    return String(decoding: UnsafeBufferPointer(start: copy.out.base, count: copy.out.count), as: UTF8.self)
  }

  /// The one-based line and column (in bytes) of `position`.
  static func lineAndColumn(_ input: UnsafePointer<UInt8>, upTo position: Int) -> (Int, Int) {
    var line = 1
    var lineStart = 0
    var i = 0
    while i < position {
      guard let nl = memchr(input + i, 0x0A, position &- i) else { break }
      line &+= 1
      i = UnsafeRawPointer(nl) - UnsafeRawPointer(input) &+ 1
      lineStart = i
    }
    return (line, position &- lineStart &+ 1)
  }

  @inline(never)
  func hex16(_ v: UInt16) -> String {
    let s = String(v, radix: 16, uppercase: true)
    return String(repeating: "0", count: 4 - s.count) + s
  }
}
