import ReefBSON

/// Plain JSON (no Extended JSON wrappers) for a document of strings, numbers, booleans, nulls,
/// documents and arrays: the JSON side of the Codable comparison, made from the same data.
/// Keys in `skipping` are left out at the top level.
public func plainJSON(_ document: Document, skipping: Set<String> = []) -> [UInt8] {
  var out = [UInt8]()
  writeObject(document, skipping: skipping, to: &out)
  return out
}

/// The document without the top-level keys in `skipping`.
public func removingKeys(_ skipping: Set<String>, from document: Document) -> Document {
  var builder = DocumentBuilder(capacity: document.byteCount)
  for element in document where !skipping.contains(element.key) {
    builder.append(element.key, element.value)
  }
  return builder.document
}

private func writeObject(_ document: Document, skipping: Set<String>, to out: inout [UInt8]) {
  out.append(UInt8(ascii: "{"))
  var first = true
  for element in document where !skipping.contains(element.key) {
    if !first { out.append(UInt8(ascii: ",")) }
    first = false
    writeString(element.key, to: &out)
    out.append(UInt8(ascii: ":"))
    writeValue(element.value, to: &out)
  }
  out.append(UInt8(ascii: "}"))
}

private func writeValue(_ value: BSON, to out: inout [UInt8]) {
  switch value {
  case .string(let s): writeString(s, to: &out)
  case .int32(let v): out.append(contentsOf: String(v).utf8)
  case .int64(let v): out.append(contentsOf: String(v).utf8)
  case .double(let v): out.append(contentsOf: (v.isFinite ? v.description : "null").utf8)
  case .bool(let v): out.append(contentsOf: (v ? "true" : "false").utf8)
  case .null: out.append(contentsOf: "null".utf8)
  case .document(let d): writeObject(d, skipping: [], to: &out)
  case .array(let a):
    out.append(UInt8(ascii: "["))
    var first = true
    for element in a {
      if !first { out.append(UInt8(ascii: ",")) }
      first = false
      writeValue(element, to: &out)
    }
    out.append(UInt8(ascii: "]"))
  default:
    preconditionFailure("plainJSON: no plain JSON form for \(value.type)")
  }
}

private func writeString(_ s: String, to out: inout [UInt8]) {
  out.append(UInt8(ascii: "\""))
  for byte in s.utf8 {
    switch byte {
    case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
    case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
    case 0..<0x20:
      let hex = Array("0123456789abcdef".utf8)
      out.append(contentsOf: #"\u00"#.utf8)
      out.append(hex[Int(byte >> 4)])
      out.append(hex[Int(byte & 15)])
    default: out.append(byte)
    }
  }
  out.append(UInt8(ascii: "\""))
}

/// The document with its `_id` element moved to the front, as pymongo (which wrote the datasets'
/// .bson files) orders top-level documents.
public func idFirst(_ document: Document) -> Document {
  guard let id = document.element(forKey: "_id") else { return document }
  var builder = DocumentBuilder(capacity: document.byteCount)
  builder.append("_id", id.value)
  for element in document where element.key != "_id" {
    builder.append(element.key, element.value)
  }
  return builder.document
}
