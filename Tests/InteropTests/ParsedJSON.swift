import Foundation

/// A JSON value as Foundation's `JSONSerialization` parses it, in a form that compares exactly:
/// numbers keep their kind (integer or non-integer, per the Extended JSON grammar) and exact value,
/// strings and keys compare as UTF-8 bytes (not by canonical equivalence).
indirect enum ParsedJSON: Equatable, CustomStringConvertible {
  case null
  case bool(Bool)
  /// A JSON number without fraction or exponent, as decimal digits.
  case integer(String)
  /// A JSON number with a fraction or exponent, as the bit pattern of the double it denotes.
  case double(UInt64)
  case string([UInt8])
  case array([ParsedJSON])
  case object([[UInt8]: ParsedJSON])

  /// Parses `text` with `JSONSerialization`.
  ///
  /// Numbers do not go through Foundation: on Linux it returns `NSDecimalNumber` for some of them,
  /// whose `stringValue` drops the exponent (so "-7.789419568830036E+58" reads back as an integer)
  /// and whose `doubleValue` is not correctly rounded. Each number token is therefore rewritten, before
  /// parsing, as `{"\u0000number": "<token>"}` (no real key contains U+0000, which BSON keys cannot
  /// hold) and read exactly afterwards: its kind from the JSON grammar, its value with Swift's
  /// correctly rounded `Double(_:)` or `Int64(_:)`.
  init(parsing text: String) throws {
    let marked = try Self.markingNumbers(in: Array(text.utf8))
    self = try Self(foundation: JSONSerialization.jsonObject(with: Data(marked), options: [.fragmentsAllowed]))
  }

  static let numberMarker = "\u{0}number"

  /// Rewrites every number token outside strings as `{"\u0000number":"<token>"}`.
  static func markingNumbers(in text: [UInt8]) throws -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(text.count + text.count / 4)
    var i = 0
    var inString = false
    while i < text.count {
      let c = text[i]
      if inString {
        out.append(c)
        if c == UInt8(ascii: "\\"), i + 1 < text.count {
          out.append(text[i + 1])
          i += 1
        } else if c == UInt8(ascii: "\"") {
          inString = false
        }
        i += 1
      } else if c == UInt8(ascii: "-") || (c >= 48 && c <= 57) {
        var j = i
        while j < text.count, "+-.eE0123456789".utf8.contains(text[j]) { j += 1 }
        let token = String(decoding: text[i..<j], as: UTF8.self)
        guard isJSONNumber(token) else { throw Unexpected(description: "not a JSON number: \(token)") }
        out += Array(#"{"\u0000number":""#.utf8) + text[i..<j] + Array(#""}"#.utf8)
        i = j
      } else {
        if c == UInt8(ascii: "\"") { inString = true }
        out.append(c)
        i += 1
      }
    }
    return out
  }

  /// Whether `s` matches the JSON number grammar (RFC 8259 section 6).
  static func isJSONNumber(_ s: String) -> Bool {
    var u = Substring(s).utf8[...]
    func digits() -> Int {
      let n = u.prefix { $0 >= 48 && $0 <= 57 }.count
      u = u.dropFirst(n)
      return n
    }
    if u.first == UInt8(ascii: "-") { u = u.dropFirst() }
    if u.first == UInt8(ascii: "0") {
      u = u.dropFirst()
    } else if digits() == 0 {
      return false
    }
    if u.first == UInt8(ascii: ".") {
      u = u.dropFirst()
      guard digits() > 0 else { return false }
    }
    if let e = u.first, e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
      u = u.dropFirst()
      if let sign = u.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { u = u.dropFirst() }
      guard digits() > 0 else { return false }
    }
    return u.isEmpty
  }

  /// A number from its (grammatical) token.
  init(numberToken token: String) throws {
    if token.contains(where: { ".eE".contains($0) }) {
      guard let d = Double(token) else { throw Unexpected(description: "unreadable number \(token)") }
      self = .double(d.bitPattern)
    } else {
      self = .integer(Int64(token).map(String.init) ?? token)
    }
  }

  struct Unexpected: Error, CustomStringConvertible {
    var description: String
  }

  init(foundation value: Any) throws {
    switch value {
    case is NSNull: self = .null
    case let s as String: self = .string(Array(s.utf8))
    case let a as [Any]: self = .array(try a.map(Self.init(foundation:)))
    case let d as [String: Any]:
      if d.count == 1, let token = d[Self.numberMarker] as? String {
        self = try Self(numberToken: token)
        return
      }
      var object: [[UInt8]: ParsedJSON] = [:]
      for (k, v) in d { object[Array(k.utf8)] = try Self(foundation: v) }
      self = .object(object)
    case let n as NSNumber:
      // Only true and false reach here: numbers were marked before parsing.
      guard String(cString: n.objCType) == "c" else { throw Unexpected(description: "unmarked number \(n)") }
      self = .bool(n.boolValue)
    default:
      throw Unexpected(description: "unexpected value from JSONSerialization: \(type(of: value))")
    }
  }

  /// The member `key` of an object.
  subscript(key: String) -> ParsedJSON? {
    guard case .object(let o) = self else { return nil }
    return o[Array(key.utf8)]
  }

  /// The only key of a one-member object.
  var singleKey: String? {
    guard case .object(let o) = self, o.count == 1 else { return nil }
    return String(decoding: o.keys.first!, as: UTF8.self)
  }

  var text: String? {
    guard case .string(let s) = self else { return nil }
    return String(decoding: s, as: UTF8.self)
  }

  var description: String {
    switch self {
    case .null: "null"
    case .bool(let b): "\(b)"
    case .integer(let digits): digits
    case .double(let bits): "\(Double(bitPattern: bits))(0x\(String(bits, radix: 16)))"
    case .string(let s): String(reflecting: String(decoding: s, as: UTF8.self))
    case .array(let a): "[" + a.map(\.description).joined(separator: ", ") + "]"
    case .object(let o):
      "{"
        + o.sorted { $0.key.lexicographicallyPrecedes($1.key) }
        .map { "\(String(reflecting: String(decoding: $0.key, as: UTF8.self))): \($0.value)" }
        .joined(separator: ", ") + "}"
    }
  }

  /// Rewrites every value bottom-up with `transform`.
  func rewritten(_ transform: (ParsedJSON) -> ParsedJSON) -> ParsedJSON {
    switch self {
    case .array(let a): transform(.array(a.map { $0.rewritten(transform) }))
    case .object(let o): transform(.object(o.mapValues { $0.rewritten(transform) }))
    default: transform(self)
    }
  }

  /// The first place where `self` and `other` differ, as a path and the two values.
  func firstDifference(from other: ParsedJSON, path: String = "$") -> String? {
    switch (self, other) {
    case (.array(let a), .array(let b)):
      guard a.count == b.count else { return "\(path): \(a.count) elements vs \(b.count)" }
      for (i, (x, y)) in zip(a, b).enumerated() {
        if let d = x.firstDifference(from: y, path: "\(path)[\(i)]") { return d }
      }
      return nil
    case (.object(let a), .object(let b)):
      for key in Set(a.keys).union(b.keys).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
        let name = String(reflecting: String(decoding: key, as: UTF8.self))
        guard let x = a[key], let y = b[key] else {
          return "\(path).\(name): only in \(a[key] == nil ? "the second" : "the first")"
        }
        if let d = x.firstDifference(from: y, path: "\(path).\(name)") { return d }
      }
      return nil
    default:
      return self == other ? nil : "\(path): \(self) vs \(other)"
    }
  }
}
