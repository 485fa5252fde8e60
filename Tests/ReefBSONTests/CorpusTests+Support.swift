import Foundation
import ReefBSON
import Synchronization

/// Loading the BSON corpus and comparing Extended JSON texts as JSON values.
enum Corpus {
  /// The 31 files of the corpus; a test checks that the directory holds exactly these.
  static let files = [
    "array.json", "binary.json", "boolean.json", "code.json", "code_w_scope.json", "datetime.json",
    "dbpointer.json", "dbref.json", "decimal128-1.json", "decimal128-2.json", "decimal128-3.json",
    "decimal128-4.json", "decimal128-5.json", "decimal128-6.json", "decimal128-7.json", "document.json",
    "double.json", "int32.json", "int64.json", "maxkey.json", "minkey.json", "multi-type-deprecated.json",
    "multi-type.json", "null.json", "oid.json", "regex.json", "string.json", "symbol.json", "timestamp.json",
    "top.json", "undefined.json",
  ]

  /// The number of cases (valid, decodeErrors and parseErrors) in the whole corpus.
  static let expectedCaseCount = 983

  /// The corpus directory from `BSON_CORPUS_DIR`, or `nil` (after printing why, once) when it is
  /// not set or does not exist.
  static let directory: String? = {
    guard let dir = ProcessInfo.processInfo.environment["BSON_CORPUS_DIR"], !dir.isEmpty else {
      print("BSON_CORPUS_DIR not set; skipping corpus")
      return nil
    }
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDirectory), isDirectory.boolValue else {
      print("BSON_CORPUS_DIR (\(dir)) not found; skipping corpus")
      return nil
    }
    return dir
  }()

  /// Cases executed and files finished so far, across the parallel per-file tests.
  static let tally = Mutex<(cases: Int, files: Int)>((0, 0))

  /// Parses JSON text with Foundation (fragments allowed), or `nil`.
  static func parse(_ text: String) -> Any? {
    try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
  }

  /// Whether two JSON texts hold the same value: objects compare as unordered key sets, numbers by
  /// value (booleans are not numbers), strings by their characters.
  static func sameJSON(_ a: String, _ b: String) -> Bool {
    guard let x = parse(a), let y = parse(b) else { return false }
    return same(x, y)
  }

  static func same(_ x: Any, _ y: Any) -> Bool {
    switch (x, y) {
    case let (x as [String: Any], y as [String: Any]):
      guard x.count == y.count else { return false }
      for (key, value) in x {
        guard let other = y[key], same(value, other) else { return false }
      }
      return true
    case let (x as [Any], y as [Any]):
      return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
    case let (x as NSNumber, y as NSNumber):
      return sameNumber(x, y)
    case let (x as String, y as String):
      return x == y
    case (is NSNull, is NSNull):
      return true
    default:
      return false
    }
  }

  static func sameNumber(_ x: NSNumber, _ y: NSNumber) -> Bool {
    let xBool = isBool(x)
    let yBool = isBool(y)
    if xBool || yBool { return xBool && yBool && x.boolValue == y.boolValue }
    if let dx = x as? NSDecimalNumber, let dy = y as? NSDecimalNumber { return dx.decimalValue == dy.decimalValue }
    if isInteger(x) && isInteger(y) { return x.int64Value == y.int64Value }
    return x.doubleValue == y.doubleValue
  }

  static func isBool(_ n: NSNumber) -> Bool { String(cString: n.objCType) == "c" }

  static func isInteger(_ n: NSNumber) -> Bool {
    !(n is NSDecimalNumber) && "qilsQILS".contains(String(cString: n.objCType))
  }
}
