#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

// Reef's BSON types are Codable. With `BSONEncoder` and `BSONDecoder` they are written and read as
// themselves (an `ObjectId` is a BSON ObjectId, a `Document` an embedded document, a `BSON` value
// whatever type it holds). With other coders (JSONEncoder, PropertyListEncoder, …) they use a
// plain, documented fallback on each type's `encode(to:)`; round trips through those coders keep
// the value but not always the BSON type (see `BSON.encode(to:)`).

extension BSONDecoderImpl {
  /// Reads the current value as the BSON type `T` (for `init(from:)` called with this decoder).
  func decodeCurrent<T: BSONDecodingPrimitive>(_ type: T.Type) throws -> T {
    try T.decodeBSON(value, in: self, at: path)
  }

  /// The current value if it has BSON type `type`, else a type mismatch for `T`.
  func require<T>(_ type: BSONType, for _: T.Type, _ value: BSONValueRef, _ path: DecodingPath) throws {
    guard value.type == type.rawValue else { throw mismatch(T.self, type.codableName, value, path) }
  }
}

/// Throws when a C string (regex pattern or options) contains a zero byte, which BSON cannot store.
private func checkCString(_ s: String, _ what: String, _ path: CodingPathRef) throws {
  guard s.utf8.contains(0) else { return }
  throw EncodingError.invalidValue(
    s,
    EncodingError.Context(
      codingPath: path.codingPath, debugDescription: "a BSON regular expression \(what) cannot contain a zero byte"))
}

/// Parses a one- or two-digit hexadecimal binary subtype.
private func parseSubtype(_ text: String) -> UInt8? {
  let u = Array(text.utf8)
  guard u.count == 1 || u.count == 2 else { return nil }
  var v: UInt8 = 0
  for c in u {
    guard let d = hexValue(c) else { return nil }
    v = v << 4 | d
  }
  return v
}

// MARK: - Document and BSONArray

extension Document: BSONEncodingPrimitive, BSONDecodingPrimitive, Codable {
  func bsonEncoding(_ options: EncodingOptions, at path: CodingPathRef) throws -> PrimitiveEncoding {
    .value(.document(self))
  }

  static func decodeBSON(_ value: BSONValueRef, in decoder: BSONDecoderImpl, at path: DecodingPath) throws -> Document {
    try decoder.require(.document, for: Document.self, value, path)
    return decoder.document(value)
  }

  /// Encodes the document: as an embedded document with `BSONEncoder`; with other encoders as a
  /// keyed container whose values are encoded as ``BSON`` values (in the document's key order).
  public func encode(to encoder: any Encoder) throws {
    if let node = encoder as? EncodingNode { return try node.encodeSingle(self) }
    var container = encoder.container(keyedBy: BSONCodingKey.self)
    for element in self {
      try container.encode(element.value, forKey: BSONCodingKey(stringValue: element.key))
    }
  }

  /// Decodes a document: a view on the same bytes with `BSONDecoder`; with other decoders from a
  /// keyed container whose values decode as ``BSON`` values, in the order of the decoder's `allKeys`.
  ///
  /// - Throws: `DecodingError` for a value that is not a document, or a key containing a zero byte.
  public init(from decoder: any Decoder) throws {
    if let bson = BSONDecoderImpl.of(decoder) {
      self = try bson.decodeCurrent(Document.self)
      return
    }
    let container = try decoder.container(keyedBy: BSONCodingKey.self)
    var builder = DocumentBuilder()
    for key in container.allKeys {
      guard !key.stringValue.utf8.contains(0) else {
        throw DecodingError.dataCorruptedError(
          forKey: key, in: container, debugDescription: "BSON keys cannot contain a zero byte")
      }
      builder.append(key.stringValue, try container.decode(BSON.self, forKey: key))
    }
    self = builder.document
  }
}

extension BSONArray: BSONEncodingPrimitive, BSONDecodingPrimitive, Codable {
  func bsonEncoding(_ options: EncodingOptions, at path: CodingPathRef) throws -> PrimitiveEncoding {
    .value(.array(self))
  }

  static func decodeBSON(_ value: BSONValueRef, in decoder: BSONDecoderImpl, at path: DecodingPath) throws -> BSONArray
  {
    try decoder.require(.array, for: BSONArray.self, value, path)
    return BSONArray(decoder.document(value))
  }

  /// Encodes the array: as a BSON array with `BSONEncoder`; with other encoders as an unkeyed
  /// container of ``BSON`` values.
  public func encode(to encoder: any Encoder) throws {
    if let node = encoder as? EncodingNode { return try node.encodeSingle(self) }
    var container = encoder.unkeyedContainer()
    for value in self { try container.encode(value) }
  }

  /// Decodes an array: a view on the same bytes with `BSONDecoder`; with other decoders from an
  /// unkeyed container of ``BSON`` values.
  public init(from decoder: any Decoder) throws {
    if let bson = BSONDecoderImpl.of(decoder) {
      self = try bson.decodeCurrent(BSONArray.self)
      return
    }
    var container = try decoder.unkeyedContainer()
    var builder = ArrayBuilder()
    while !container.isAtEnd { builder.append(try container.decode(BSON.self)) }
    self = builder.array
  }
}

// MARK: - BSON

extension BSON: BSONEncodingPrimitive, BSONDecodingPrimitive, Codable {
  func bsonEncoding(_ options: EncodingOptions, at path: CodingPathRef) throws -> PrimitiveEncoding {
    if case .regex(let regex) = self {
      try checkCString(regex.pattern, "pattern", path)
      try checkCString(regex.options, "options", path)
    }
    return .value(self)
  }

  static func decodeBSON(_ value: BSONValueRef, in decoder: BSONDecoderImpl, at path: DecodingPath) throws -> BSON {
    decoder.bson(value)
  }

  private enum BoundaryKey: String, CodingKey {
    case minKey = "$minKey"
    case maxKey = "$maxKey"
  }

  /// Encodes the value: as itself with `BSONEncoder`. With other encoders as the nearest plain
  /// value: double, string, bool, int32 and int64 as those Swift types; null and undefined as
  /// nil; JavaScript code and symbols as strings; documents and arrays as containers; the other
  /// types with their own fallbacks (an ObjectId as its hex string, a datetime as int64
  /// milliseconds, …); min and max keys as `{"$minKey": 1}` and `{"$maxKey": 1}`.
  public func encode(to encoder: any Encoder) throws {
    if let node = encoder as? EncodingNode { return try node.encodeSingle(self) }
    switch self {
    case .document(let document): return try document.encode(to: encoder)
    case .array(let array): return try array.encode(to: encoder)
    case .binary(let binary): return try binary.encode(to: encoder)
    case .objectId(let id): return try id.encode(to: encoder)
    case .datetime(let datetime): return try datetime.encode(to: encoder)
    case .regex(let regex): return try regex.encode(to: encoder)
    case .dbPointer(let pointer): return try pointer.encode(to: encoder)
    case .javascriptWithScope(let code): return try code.encode(to: encoder)
    case .timestamp(let timestamp): return try timestamp.encode(to: encoder)
    case .decimal128(let decimal): return try decimal.encode(to: encoder)
    case .minKey, .maxKey:
      var container = encoder.container(keyedBy: BoundaryKey.self)
      try container.encode(1, forKey: self == .minKey ? .minKey : .maxKey)
      return
    default: break
    }
    var container = encoder.singleValueContainer()
    switch self {
    case .double(let d): try container.encode(d)
    case .string(let s), .javascript(let s), .symbol(let s): try container.encode(s)
    case .bool(let b): try container.encode(b)
    case .int32(let i): try container.encode(i)
    case .int64(let i): try container.encode(i)
    default: try container.encodeNil()
    }
  }

  /// Decodes a value: any BSON type as itself with `BSONDecoder`. With other decoders, the first
  /// of these that fits: nil (null), bool, int32, int64, double, string, a keyed container (a
  /// document, or a min or max key) and an unkeyed container (an array).
  public init(from decoder: any Decoder) throws {
    if let bson = BSONDecoderImpl.of(decoder) {
      self = try bson.decodeCurrent(BSON.self)
      return
    }
    if let container = try? decoder.singleValueContainer() {
      if container.decodeNil() {
        self = .null
        return
      }
      if let b = try? container.decode(Bool.self) {
        self = .bool(b)
        return
      }
      if let i = try? container.decode(Int32.self) {
        self = .int32(i)
        return
      }
      if let i = try? container.decode(Int64.self) {
        self = .int64(i)
        return
      }
      if let d = try? container.decode(Double.self) {
        self = .double(d)
        return
      }
      if let s = try? container.decode(String.self) {
        self = .string(s)
        return
      }
    }
    if let keyed = try? decoder.container(keyedBy: BoundaryKey.self), keyed.allKeys.count == 1,
      (try? keyed.decode(Int.self, forKey: keyed.allKeys[0])) == 1
    {
      self = keyed.allKeys[0] == .minKey ? .minKey : .maxKey
      return
    }
    if (try? decoder.container(keyedBy: BSONCodingKey.self)) != nil {
      self = .document(try Document(from: decoder))
      return
    }
    if (try? decoder.unkeyedContainer()) != nil {
      self = .array(try BSONArray(from: decoder))
      return
    }
    throw DecodingError.dataCorrupted(
      DecodingError.Context(
        codingPath: decoder.codingPath,
        debugDescription: "Expected a null, bool, number, string, keyed or unkeyed value for a BSON value"))
  }
}

// MARK: - Scalars

extension ObjectId: BSONEncodingPrimitive, BSONDecodingPrimitive, Codable {
  func bsonEncoding(_ options: EncodingOptions, at path: CodingPathRef) throws -> PrimitiveEncoding {
    .value(.objectId(self))
  }

  static func decodeBSON(_ value: BSONValueRef, in decoder: BSONDecoderImpl, at path: DecodingPath) throws -> ObjectId {
    try decoder.require(.objectId, for: ObjectId.self, value, path)
    return ObjectId(reading: decoder.pointer(value))
  }

  /// Encodes the ObjectId: as a BSON ObjectId with `BSONEncoder`, as its 24 hexadecimal digits otherwise.
  public func encode(to encoder: any Encoder) throws {
    if let node = encoder as? EncodingNode { return try node.encodeSingle(self) }
    var container = encoder.singleValueContainer()
    try container.encode(hex)
  }

  /// Decodes an ObjectId: from a BSON ObjectId with `BSONDecoder`, from 24 hexadecimal digits otherwise.
  public init(from decoder: any Decoder) throws {
    if let bson = BSONDecoderImpl.of(decoder) {
      self = try bson.decodeCurrent(ObjectId.self)
      return
    }
    let container = try decoder.singleValueContainer()
    let text = try container.decode(String.self)
    guard let id = ObjectId(text) else {
      throw DecodingError.dataCorruptedError(
        in: container,
        debugDescription: "Expected 24 hexadecimal digits for an ObjectId, found \(String(reflecting: text))")
    }
    self = id
  }
}

extension Decimal128: BSONEncodingPrimitive, BSONDecodingPrimitive, Codable {
  func bsonEncoding(_ options: EncodingOptions, at path: CodingPathRef) throws -> PrimitiveEncoding {
    .value(.decimal128(self))
  }

  static func decodeBSON(_ value: BSONValueRef, in decoder: BSONDecoderImpl, at path: DecodingPath) throws
    -> Decimal128
  {
    try decoder.require(.decimal128, for: Decimal128.self, value, path)
    return Decimal128(reading: decoder.pointer(value))
  }

  /// Encodes the value: as a BSON Decimal128 with `BSONEncoder`, as its string form otherwise.
  public func encode(to encoder: any Encoder) throws {
    if let node = encoder as? EncodingNode { return try node.encodeSingle(self) }
    var container = encoder.singleValueContainer()
    try container.encode(description)
  }

  /// Decodes a value: from a BSON Decimal128 with `BSONDecoder`, from its string form otherwise.
  public init(from decoder: any Decoder) throws {
    if let bson = BSONDecoderImpl.of(decoder) {
      self = try bson.decodeCurrent(Decimal128.self)
      return
    }
    let container = try decoder.singleValueContainer()
    let text = try container.decode(String.self)
    guard let value = Decimal128(text) else {
      throw DecodingError.dataCorruptedError(
        in: container, debugDescription: "Expected a Decimal128 string, found \(String(reflecting: text))")
    }
    self = value
  }
}

extension BSONDateTime: BSONEncodingPrimitive, BSONDecodingPrimitive, Codable {
  func bsonEncoding(_ options: EncodingOptions, at path: CodingPathRef) throws -> PrimitiveEncoding {
    .value(.datetime(self))
  }

  static func decodeBSON(_ value: BSONValueRef, in decoder: BSONDecoderImpl, at path: DecodingPath) throws
    -> BSONDateTime
  {
    try decoder.require(.datetime, for: BSONDateTime.self, value, path)
    return BSONDateTime(millisecondsSinceEpoch: decoder.pointer(value).int64LE(0))
  }

  /// Encodes the datetime: as a BSON datetime with `BSONEncoder`, as int64 milliseconds since the
  /// Unix epoch otherwise.
  public func encode(to encoder: any Encoder) throws {
    if let node = encoder as? EncodingNode { return try node.encodeSingle(self) }
    var container = encoder.singleValueContainer()
    try container.encode(millisecondsSinceEpoch)
  }

  /// Decodes a datetime: from a BSON datetime with `BSONDecoder`, from int64 milliseconds otherwise.
  public init(from decoder: any Decoder) throws {
    if let bson = BSONDecoderImpl.of(decoder) {
      self = try bson.decodeCurrent(BSONDateTime.self)
      return
    }
    self.init(millisecondsSinceEpoch: try decoder.singleValueContainer().decode(Int64.self))
  }
}

extension BSONTimestamp: BSONEncodingPrimitive, BSONDecodingPrimitive, Codable {
  private enum CodingKeys: String, CodingKey {
    case timestamp = "t"
    case increment = "i"
  }

  func bsonEncoding(_ options: EncodingOptions, at path: CodingPathRef) throws -> PrimitiveEncoding {
    .value(.timestamp(self))
  }

  static func decodeBSON(_ value: BSONValueRef, in decoder: BSONDecoderImpl, at path: DecodingPath) throws
    -> BSONTimestamp
  {
    try decoder.require(.timestamp, for: BSONTimestamp.self, value, path)
    let v = decoder.pointer(value).uint64LE(0)
    return BSONTimestamp(timestamp: UInt32(truncatingIfNeeded: v >> 32), increment: UInt32(truncatingIfNeeded: v))
  }

  /// Encodes the timestamp: as a BSON timestamp with `BSONEncoder`, as `{"t": seconds, "i": increment}` otherwise.
  public func encode(to encoder: any Encoder) throws {
    if let node = encoder as? EncodingNode { return try node.encodeSingle(self) }
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(timestamp, forKey: .timestamp)
    try container.encode(increment, forKey: .increment)
  }

  /// Decodes a timestamp: from a BSON timestamp with `BSONDecoder`, from `{"t": …, "i": …}` otherwise.
  public init(from decoder: any Decoder) throws {
    if let bson = BSONDecoderImpl.of(decoder) {
      self = try bson.decodeCurrent(BSONTimestamp.self)
      return
    }
    let container = try decoder.container(keyedBy: CodingKeys.self)
    self.init(
      timestamp: try container.decode(UInt32.self, forKey: .timestamp),
      increment: try container.decode(UInt32.self, forKey: .increment))
  }
}

extension Binary: BSONEncodingPrimitive, BSONDecodingPrimitive, Codable {
  private enum CodingKeys: String, CodingKey {
    case base64
    case subtype = "subType"
  }

  func bsonEncoding(_ options: EncodingOptions, at path: CodingPathRef) throws -> PrimitiveEncoding {
    .value(.binary(self))
  }

  static func decodeBSON(_ value: BSONValueRef, in decoder: BSONDecoderImpl, at path: DecodingPath) throws -> Binary {
    guard case .binary(let binary) = decoder.bson(value) else {
      throw decoder.mismatch(Binary.self, "binary", value, path)
    }
    return binary
  }

  /// Encodes the binary: as a BSON binary with `BSONEncoder`; otherwise as Extended JSON's
  /// `{"base64": "…", "subType": "04"}` (the subtype in two hexadecimal digits).
  public func encode(to encoder: any Encoder) throws {
    if let node = encoder as? EncodingNode { return try node.encodeSingle(self) }
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(Data(data).base64EncodedString(), forKey: .base64)
    let sub = subtype.rawValue
    try container.encode(
      String(decoding: [ExtendedJSONWriter.hexDigit(sub >> 4), ExtendedJSONWriter.hexDigit(sub & 15)], as: UTF8.self),
      forKey: .subtype)
  }

  /// Decodes a binary: from a BSON binary with `BSONDecoder`, from `{"base64": …, "subType": …}` otherwise.
  public init(from decoder: any Decoder) throws {
    if let bson = BSONDecoderImpl.of(decoder) {
      self = try bson.decodeCurrent(Binary.self)
      return
    }
    let container = try decoder.container(keyedBy: CodingKeys.self)
    let text = try container.decode(String.self, forKey: .base64)
    guard let data = Data(base64Encoded: text) else {
      throw DecodingError.dataCorruptedError(
        forKey: .base64, in: container, debugDescription: "Expected Base64, found \(String(reflecting: text))")
    }
    let subtypeText = try container.decode(String.self, forKey: .subtype)
    guard let subtype = parseSubtype(subtypeText) else {
      throw DecodingError.dataCorruptedError(
        forKey: .subtype, in: container,
        debugDescription:
          "Expected a binary subtype of one or two hexadecimal digits, found \(String(reflecting: subtypeText))")
    }
    self.init(subtype: Subtype(rawValue: subtype), data: [UInt8](data))
  }
}

extension BSONRegularExpression: BSONEncodingPrimitive, BSONDecodingPrimitive, Codable {
  private enum CodingKeys: String, CodingKey {
    case pattern
    case options
  }

  func bsonEncoding(_ options: EncodingOptions, at path: CodingPathRef) throws -> PrimitiveEncoding {
    try checkCString(pattern, "pattern", path)
    try checkCString(self.options, "options", path)
    return .value(.regex(self))
  }

  static func decodeBSON(_ value: BSONValueRef, in decoder: BSONDecoderImpl, at path: DecodingPath) throws
    -> BSONRegularExpression
  {
    guard case .regex(let regex) = decoder.bson(value) else {
      throw decoder.mismatch(BSONRegularExpression.self, "regex", value, path)
    }
    return regex
  }

  /// Encodes the regular expression: as a BSON regex with `BSONEncoder`, as `{"pattern": …, "options": …}` otherwise.
  ///
  /// - Throws: `EncodingError.invalidValue` with `BSONEncoder` when the pattern or options contain a zero byte.
  public func encode(to encoder: any Encoder) throws {
    if let node = encoder as? EncodingNode { return try node.encodeSingle(self) }
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(pattern, forKey: .pattern)
    try container.encode(options, forKey: .options)
  }

  /// Decodes a regular expression: from a BSON regex with `BSONDecoder`, from `{"pattern": …, "options": …}`
  /// otherwise (the options are sorted, as BSON requires).
  public init(from decoder: any Decoder) throws {
    if let bson = BSONDecoderImpl.of(decoder) {
      self = try bson.decodeCurrent(BSONRegularExpression.self)
      return
    }
    let container = try decoder.container(keyedBy: CodingKeys.self)
    self.init(
      pattern: try container.decode(String.self, forKey: .pattern),
      options: try container.decode(String.self, forKey: .options))
  }
}

extension DBPointer: BSONEncodingPrimitive, BSONDecodingPrimitive, Codable {
  private enum CodingKeys: String, CodingKey {
    case ref
    case id
  }

  func bsonEncoding(_ options: EncodingOptions, at path: CodingPathRef) throws -> PrimitiveEncoding {
    .value(.dbPointer(self))
  }

  static func decodeBSON(_ value: BSONValueRef, in decoder: BSONDecoderImpl, at path: DecodingPath) throws -> DBPointer
  {
    guard case .dbPointer(let pointer) = decoder.bson(value) else {
      throw decoder.mismatch(DBPointer.self, "dbPointer", value, path)
    }
    return pointer
  }

  /// Encodes the pointer: as a BSON DBPointer with `BSONEncoder`, as `{"ref": …, "id": "<hex>"}` otherwise.
  public func encode(to encoder: any Encoder) throws {
    if let node = encoder as? EncodingNode { return try node.encodeSingle(self) }
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(ref, forKey: .ref)
    try container.encode(id, forKey: .id)
  }

  /// Decodes a pointer: from a BSON DBPointer with `BSONDecoder`, from `{"ref": …, "id": …}` otherwise.
  public init(from decoder: any Decoder) throws {
    if let bson = BSONDecoderImpl.of(decoder) {
      self = try bson.decodeCurrent(DBPointer.self)
      return
    }
    let container = try decoder.container(keyedBy: CodingKeys.self)
    self.init(
      ref: try container.decode(String.self, forKey: .ref), id: try container.decode(ObjectId.self, forKey: .id))
  }
}

extension JavaScriptWithScope: BSONEncodingPrimitive, BSONDecodingPrimitive, Codable {
  private enum CodingKeys: String, CodingKey {
    case code
    case scope
  }

  func bsonEncoding(_ options: EncodingOptions, at path: CodingPathRef) throws -> PrimitiveEncoding {
    .value(.javascriptWithScope(self))
  }

  static func decodeBSON(_ value: BSONValueRef, in decoder: BSONDecoderImpl, at path: DecodingPath) throws
    -> JavaScriptWithScope
  {
    guard case .javascriptWithScope(let code) = decoder.bson(value) else {
      throw decoder.mismatch(JavaScriptWithScope.self, "javascriptWithScope", value, path)
    }
    return code
  }

  /// Encodes the code: as BSON code with scope with `BSONEncoder`, as `{"code": …, "scope": {…}}` otherwise.
  public func encode(to encoder: any Encoder) throws {
    if let node = encoder as? EncodingNode { return try node.encodeSingle(self) }
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(code, forKey: .code)
    try container.encode(scope, forKey: .scope)
  }

  /// Decodes code with scope: from its BSON type with `BSONDecoder`, from `{"code": …, "scope": …}` otherwise.
  public init(from decoder: any Decoder) throws {
    if let bson = BSONDecoderImpl.of(decoder) {
      self = try bson.decodeCurrent(JavaScriptWithScope.self)
      return
    }
    let container = try decoder.container(keyedBy: CodingKeys.self)
    self.init(
      code: try container.decode(String.self, forKey: .code), scope: try container.decode(Document.self, forKey: .scope)
    )
  }
}
