import CLibBSON
import ReefBSON
import ReefTestSupport
import Testing

@testable import ReefLibBSON

/// A generated BSON value. Containers are trees, so that Reef's builders and libbson's
/// `bson_append_*` functions can both build them element by element; every other value is a Reef value.
indirect enum Node: Sendable {
  case document([Field])
  case array([Node])
  case codeWithScope(code: String, scope: [Field])
  case scalar(BSON)

  /// The BSON type byte of the value.
  var typeByte: UInt8 {
    switch self {
    case .document: 0x03
    case .array: 0x04
    case .codeWithScope: 0x0F
    case .scalar(let value): value.type.rawValue
    }
  }

  /// The deepest nesting below this value, counting this value when it is a container.
  var depth: Int {
    switch self {
    case .document(let fields), .codeWithScope(_, let fields): 1 + (fields.map(\.value.depth).max() ?? 0)
    case .array(let items): 1 + (items.map(\.depth).max() ?? 0)
    case .scalar: 0
    }
  }
}

/// One key and value of a generated document.
struct Field: Sendable {
  var key: String
  var value: Node
}

/// The elements of an array as fields with the keys BSON requires ("0", "1", …).
func indexed(_ items: [Node]) -> [Field] {
  items.enumerated().map { Field(key: String($0.offset), value: $0.element) }
}

/// A generated top-level document.
struct GeneratedDocument: Sendable, CustomTestStringConvertible {
  var fields: [Field]

  /// The deepest nesting (0 when there is no embedded document).
  var depth: Int { fields.map(\.value.depth).max() ?? 0 }

  /// The document built with Reef's builders.
  var reef: Document { ReefBuild.document(fields) }

  var testDescription: String { "document (depth \(depth)) \(hexString(reef.bytes))" }
}

// MARK: - Building with Reef

/// Builds generated documents with Reef's `DocumentBuilder` and `ArrayBuilder`, alternating between
/// the typed `append` overloads, `append(_:_: BSON)`, the in-place nested builders and finished
/// `Document` values, so that every construction path is exercised.
enum ReefBuild {
  static func document(_ fields: [Field]) -> Document {
    var builder = DocumentBuilder()
    append(fields, to: &builder)
    return builder.document
  }

  static func append(_ fields: [Field], to builder: inout DocumentBuilder) {
    for (i, field) in fields.enumerated() { append(field.value, key: field.key, to: &builder, variant: i) }
  }

  static func append(_ node: Node, key: String, to builder: inout DocumentBuilder, variant: Int) {
    switch node {
    case .document(let fields):
      if variant % 4 == 3 {
        builder.append(key, document(fields))
      } else {
        builder.appendDocument(key) { append(fields, to: &$0) }
      }
    case .array(let items):
      if variant % 4 == 3 {
        builder.append(key, .array(BSONArray(items.map(value))))
      } else {
        builder.appendArray(key) { array in
          for (i, item) in items.enumerated() { append(item, to: &array, variant: i) }
        }
      }
    case .codeWithScope(let code, let scope):
      builder.append(key, .javascriptWithScope(JavaScriptWithScope(code: code, scope: document(scope))))
    case .scalar(let v):
      guard variant % 2 == 0 else { return builder.append(key, v) }
      switch v {
      case .string(let s): builder.append(key, s)
      case .int32(let x): builder.append(key, x)
      case .int64(let x): builder.append(key, x)
      case .double(let x): builder.append(key, x)
      case .bool(let x): builder.append(key, x)
      case .objectId(let x): builder.append(key, x)
      case .null: builder.appendNull(key)
      default: builder.append(key, v)
      }
    }
  }

  static func append(_ node: Node, to array: inout ArrayBuilder, variant: Int) {
    switch node {
    case .document(let fields) where variant % 3 != 2:
      array.appendDocument { append(fields, to: &$0) }
    case .array(let items) where variant % 3 != 2:
      array.appendArray { nested in
        for (i, item) in items.enumerated() { append(item, to: &nested, variant: i) }
      }
    default:
      array.append(value(node))
    }
  }

  static func value(_ node: Node) -> BSON {
    switch node {
    case .document(let fields): .document(document(fields))
    case .array(let items): .array(BSONArray(items.map(value)))
    case .codeWithScope(let code, let scope):
      .javascriptWithScope(JavaScriptWithScope(code: code, scope: document(scope)))
    case .scalar(let v): v
    }
  }
}

// MARK: - Building with libbson

/// Builds generated documents with libbson's `bson_append_*` functions.
///
/// libbson's API limits what it can express, and the generator stays inside those limits:
/// `bson_append_code`, `bson_append_code_with_scope` and `bson_append_dbpointer` take C strings, so
/// JavaScript code and DBPointer namespaces never contain U+0000 (strings and symbols, which take a
/// length, do); `bson_append_regex` sorts the options and drops letters other than "ilmsux", so
/// generated options are sorted subsets of those letters.
enum LibBSONBuild {
  static func bytes(_ fields: [Field]) -> [UInt8] {
    let b = bson_new()!
    defer { bson_destroy(b) }
    append(fields, to: b)
    let length = Int(UnsafePointer<bson_t>(b).pointee.len)
    return Array(UnsafeRawBufferPointer(start: bson_get_data(b), count: length))
  }

  static func append(_ fields: [Field], to b: OpaquePointer) {
    for field in fields { append(field.value, key: field.key, to: b) }
  }

  static func append(_ node: Node, key: String, to b: OpaquePointer) {
    let ok = key.withCString { k -> Bool in
      let kl = Int32(key.utf8.count)
      switch node {
      case .document(let fields):
        return withLibBSONScratch(bson_t.self) { child in
          guard bson_append_document_begin(b, k, kl, OpaquePointer(child)) else { return false }
          append(fields, to: OpaquePointer(child))
          return bson_append_document_end(b, OpaquePointer(child))
        }
      case .array(let items):
        return withLibBSONScratch(bson_t.self) { child in
          guard bson_append_array_begin(b, k, kl, OpaquePointer(child)) else { return false }
          append(indexed(items), to: OpaquePointer(child))
          return bson_append_array_end(b, OpaquePointer(child))
        }
      case .codeWithScope(let code, let scope):
        let s = bson_new()!
        defer { bson_destroy(s) }
        append(scope, to: s)
        return bson_append_code_with_scope(b, k, kl, code, s)
      case .scalar(let v):
        return scalar(v, key: k, keyLength: kl, to: b)
      }
    }
    precondition(ok, "libbson refused to append \(String(reflecting: key))")
  }

  static func scalar(_ v: BSON, key k: UnsafePointer<CChar>, keyLength kl: Int32, to b: OpaquePointer) -> Bool {
    switch v {
    case .double(let d): return bson_append_double(b, k, kl, d)
    case .string(let s): return withLength(s) { bson_append_utf8(b, k, kl, $0, $1) }
    case .symbol(let s): return withLength(s) { bson_append_symbol(b, k, kl, $0, $1) }
    case .javascript(let code): return bson_append_code(b, k, kl, code)
    case .document(let d): return d.withBSONT { bson_append_document(b, k, kl, OpaquePointer($0)) }
    case .array(let a): return a.document.withBSONT { bson_append_array(b, k, kl, OpaquePointer($0)) }
    case .javascriptWithScope(let c):
      return c.scope.withBSONT { bson_append_code_with_scope(b, k, kl, c.code, OpaquePointer($0)) }
    case .binary(let bin):
      let data = bin.data.isEmpty ? [0] : bin.data  // never hand libbson a NULL buffer
      return data.withUnsafeBufferPointer { p in
        bson_append_binary(
          b, k, kl, bson_subtype_t(rawValue: UInt32(bin.subtype.rawValue)), p.baseAddress, UInt32(bin.data.count))
      }
    case .undefined: return bson_append_undefined(b, k, kl)
    case .objectId(let id):
      var oid = LibBSONBuild.oid(id)
      return bson_append_oid(b, k, kl, &oid)
    case .bool(let x): return bson_append_bool(b, k, kl, x)
    case .datetime(let d): return bson_append_date_time(b, k, kl, d.millisecondsSinceEpoch)
    case .null: return bson_append_null(b, k, kl)
    case .regex(let r): return bson_append_regex(b, k, kl, r.pattern, r.options)
    case .dbPointer(let p):
      var oid = LibBSONBuild.oid(p.id)
      return bson_append_dbpointer(b, k, kl, p.ref, &oid)
    case .int32(let x): return bson_append_int32(b, k, kl, x)
    case .timestamp(let t): return bson_append_timestamp(b, k, kl, t.timestamp, t.increment)
    case .int64(let x): return bson_append_int64(b, k, kl, x)
    case .decimal128(let d):
      var dec = bson_decimal128_t(low: d.low, high: d.high)
      return bson_append_decimal128(b, k, kl, &dec)
    case .minKey: return bson_append_minkey(b, k, kl)
    case .maxKey: return bson_append_maxkey(b, k, kl)
    }
  }

  /// Calls `body` with the string's UTF-8 (embedded NULs included) and its length.
  static func withLength(_ s: String, _ body: (UnsafePointer<CChar>, Int32) -> Bool) -> Bool {
    s.withCString { body($0, Int32(s.utf8.count)) }
  }

  static func oid(_ id: ObjectId) -> bson_oid_t {
    var oid = bson_oid_t()
    withUnsafeMutableBytes(of: &oid.bytes) { $0.copyBytes(from: id.byteArray) }
    return oid
  }
}

// MARK: - Comparing

/// Exact equality of values: strings compare as UTF-8 bytes (Swift's `==` on strings uses canonical
/// equivalence, which would hide a changed byte), everything else as `BSON.==` (bit patterns for doubles).
func identical(_ a: BSON, _ b: BSON) -> Bool {
  switch (a, b) {
  case (.string(let x), .string(let y)), (.symbol(let x), .symbol(let y)), (.javascript(let x), .javascript(let y)):
    return x.utf8.elementsEqual(y.utf8)
  case (.regex(let x), .regex(let y)):
    return x.pattern.utf8.elementsEqual(y.pattern.utf8) && x.options.utf8.elementsEqual(y.options.utf8)
  case (.dbPointer(let x), .dbPointer(let y)):
    return x.ref.utf8.elementsEqual(y.ref.utf8) && x.id == y.id
  default:
    return a == b
  }
}

/// Compares a Reef document, decoded by Reef, with the fields it was built from; returns the first
/// difference.
func difference(reef doc: Document, _ fields: [Field], path: String = "$") -> String? {
  var it = doc.makeIterator()
  for field in fields {
    let here = path + "." + field.key
    guard let e = it.next() else { return "\(here): Reef's iteration ended early" }
    let keyMatches = e.withUnsafeKeyBytes { $0.elementsEqual(field.key.utf8) }
    guard keyMatches else { return "\(here): Reef read the key \(String(reflecting: e.key))" }
    guard e.type.rawValue == field.value.typeByte else { return "\(here): Reef read type \(e.type)" }
    switch (field.value, e.value) {
    case (.document(let f), .document(let d)):
      if let diff = difference(reef: d, f, path: here) { return diff }
    case (.array(let items), .array(let a)):
      if let diff = difference(reef: a.document, indexed(items), path: here) { return diff }
      guard Array(a).count == items.count else { return "\(here): BSONArray has \(Array(a).count) elements" }
    case (.codeWithScope(let code, let scope), .javascriptWithScope(let c)):
      guard c.code.utf8.elementsEqual(code.utf8) else { return "\(here): Reef read code \(String(reflecting: c.code))" }
      if let diff = difference(reef: c.scope, scope, path: here + ".$scope") { return diff }
    case (.scalar(let expected), let actual):
      guard identical(expected, actual) else { return "\(here): Reef read \(actual), expected \(expected)" }
    case (_, let actual):
      return "\(here): Reef read \(actual)"
    }
  }
  if let extra = it.next() { return "\(path): Reef read an extra element \(String(reflecting: extra.key))" }
  return nil
}

/// Compares what libbson's iterator reads from a document with the fields it was built from;
/// `iter` must be freshly initialised on the document. Returns the first difference.
func difference(libbson iter: UnsafeMutablePointer<bson_iter_t>, _ fields: [Field], path: String = "$") -> String? {
  let it = OpaquePointer(iter)
  for field in fields {
    let here = path + "." + field.key
    guard bson_iter_next(it) else { return "\(here): bson_iter_next stopped (err_off \(iter.pointee.err_off))" }
    let key = bson_iter_key(it)!
    guard UnsafeRawBufferPointer(start: key, count: strlen(key)).elementsEqual(field.key.utf8) else {
      return "\(here): libbson read the key \(String(reflecting: String(cString: key)))"
    }
    let type = UInt8(bson_iter_type(it).rawValue)
    guard type == field.value.typeByte else { return "\(here): libbson read type 0x\(String(type, radix: 16))" }
    var diff: String?
    switch field.value {
    case .document(let f):
      diff = withLibBSONScratch(bson_iter_t.self) { child in
        bson_iter_recurse(it, OpaquePointer(child)) ? difference(libbson: child, f, path: here) : "\(here): no recurse"
      }
    case .array(let items):
      diff = withLibBSONScratch(bson_iter_t.self) { child in
        bson_iter_recurse(it, OpaquePointer(child))
          ? difference(libbson: child, indexed(items), path: here) : "\(here): no recurse"
      }
    case .codeWithScope(let code, let scope):
      var codeLength: UInt32 = 0
      var scopeLength: UInt32 = 0
      var scopeData: UnsafePointer<UInt8>?
      let c = bson_iter_codewscope(it, &codeLength, &scopeLength, &scopeData)!
      guard UnsafeRawBufferPointer(start: c, count: Int(codeLength)).elementsEqual(code.utf8) else {
        return "\(here): libbson read different code"
      }
      diff = withLibBSONScratch(bson_iter_t.self) { child in
        bson_iter_init_from_data(OpaquePointer(child), scopeData, Int(scopeLength))
          ? difference(libbson: child, scope, path: here + ".$scope") : "\(here): scope rejected"
      }
    case .scalar(let expected):
      let actual = libbsonScalar(it)
      if !identical(expected, actual) { diff = "\(here): libbson read \(actual), expected \(expected)" }
    }
    if let diff { return diff }
  }
  if bson_iter_next(it) { return "\(path): libbson read an extra element" }
  if iter.pointee.err_off != 0 { return "\(path): libbson stopped with err_off \(iter.pointee.err_off)" }
  return nil
}

/// The scalar value libbson's iterator is on, as a Reef value.
func libbsonScalar(_ it: OpaquePointer) -> BSON {
  func text(_ p: UnsafePointer<CChar>, _ n: UInt32) -> String {
    String(decoding: UnsafeRawBufferPointer(start: p, count: Int(n)), as: UTF8.self)
  }
  func objectId(_ p: UnsafePointer<bson_oid_t>) -> ObjectId {
    ObjectId(bytes: withUnsafeBytes(of: p.pointee.bytes) { Array($0) })!
  }
  var n: UInt32 = 0
  switch bson_iter_type(it) {
  case BSON_TYPE_DOUBLE: return .double(bson_iter_double(it))
  case BSON_TYPE_UTF8: return .string(text(bson_iter_utf8(it, &n)!, n))
  case BSON_TYPE_BINARY:
    var subtype = bson_subtype_t(rawValue: 0)
    var data: UnsafePointer<UInt8>?
    bson_iter_binary(it, &subtype, &n, &data)
    let bytes = Array(UnsafeBufferPointer(start: data, count: Int(n)))
    return .binary(Binary(subtype: .init(rawValue: UInt8(subtype.rawValue)), data: bytes))
  case BSON_TYPE_UNDEFINED: return .undefined
  case BSON_TYPE_OID: return .objectId(objectId(bson_iter_oid(it)!))
  case BSON_TYPE_BOOL: return .bool(bson_iter_bool(it))
  case BSON_TYPE_DATE_TIME: return .datetime(BSONDateTime(millisecondsSinceEpoch: bson_iter_date_time(it)))
  case BSON_TYPE_NULL: return .null
  case BSON_TYPE_REGEX:
    var options: UnsafePointer<CChar>?
    let pattern = String(cString: bson_iter_regex(it, &options)!)
    var regex = BSONRegularExpression(pattern: pattern)
    regex.options = String(cString: options!)  // as stored, unsorted
    return .regex(regex)
  case BSON_TYPE_DBPOINTER:
    var ref: UnsafePointer<CChar>?
    var oid: UnsafePointer<bson_oid_t>?
    bson_iter_dbpointer(it, &n, &ref, &oid)
    return .dbPointer(DBPointer(ref: text(ref!, n), id: objectId(oid!)))
  case BSON_TYPE_CODE: return .javascript(text(bson_iter_code(it, &n)!, n))
  case BSON_TYPE_SYMBOL: return .symbol(text(bson_iter_symbol(it, &n)!, n))
  case BSON_TYPE_INT32: return .int32(bson_iter_int32(it))
  case BSON_TYPE_TIMESTAMP:
    var t: UInt32 = 0
    var i: UInt32 = 0
    bson_iter_timestamp(it, &t, &i)
    return .timestamp(BSONTimestamp(timestamp: t, increment: i))
  case BSON_TYPE_INT64: return .int64(bson_iter_int64(it))
  case BSON_TYPE_DECIMAL128:
    var dec = bson_decimal128_t()
    _ = bson_iter_decimal128(it, &dec)
    return .decimal128(Decimal128(high: dec.high, low: dec.low))
  case BSON_TYPE_MINKEY: return .minKey
  case BSON_TYPE_MAXKEY: return .maxKey
  default: return .string("<unexpected type \(bson_iter_type(it).rawValue)>")
  }
}
