import ReefBSON

/// What mongodump records about a collection besides its documents: index specifications, the
/// collection UUID and the creation options, as in a `.metadata.json` file or an archive prelude.
///
/// ```swift
/// let metadata = try CollectionMetadata(json: Array(#"{"indexes":[],"uuid":"…"}"#.utf8))
/// for index in metadata.indexes { print(index["name"] ?? .null, index["key"] ?? .null) }
/// ```
public struct CollectionMetadata: Sendable {
  /// Index specifications in mongodump's form: `{v, key, name, unique?, sparse?, …}`, in file order.
  /// The `_id` index is listed like any other when the dump has it.
  public var indexes: [Document]
  /// The collection UUID as 32 lowercase hexadecimal digits, when known.
  public var uuid: String?
  /// Collection options (`capped`, `validator`, `collation`, …); empty for none.
  public var options: Document
  /// The whole metadata document as read, when this value was read from a dump; other keys
  /// (`type`, anything a newer mongodump adds) are kept from it when writing.
  public var raw: Document?
  /// The collection name recorded in the metadata (mongodump's `collectionName`), when known.
  public var collectionName: String?

  /// Creates metadata.
  public init(indexes: [Document] = [], uuid: String? = nil, options: Document = Document()) {
    self.indexes = indexes
    self.uuid = uuid
    self.options = options
  }

  /// Parses a `.metadata.json` file's text (Extended JSON, canonical or relaxed).
  ///
  /// Blank text is empty metadata (no indexes, no options).
  /// - Throws: the parser's errors (``BSONError/Kind/invalidJSON`` … with line and column), and
  ///   ``BSONError/Kind/invalidValue`` when `indexes` is not an array of documents, `options` not a
  ///   document or `uuid` not a string.
  public init(json: [UInt8]) throws(BSONError) {
    var parser = ExtendedJSONParser(bytes: json)
    guard let document = try parser.nextDocument() else {
      self.init()
      return
    }
    if try parser.nextDocument() != nil {
      throw BSONError(.invalidJSON, "expected one metadata document, found more", documentIndex: 1)
    }
    try self.init(document: document)
  }

  /// Reads metadata from its document form (the parsed `.metadata.json`).
  /// - Throws: ``BSONError/Kind/invalidValue`` for a field of the wrong type, with its key path.
  public init(document: Document) throws(BSONError) {
    self.init()
    raw = document
    switch document.value(forKey: "indexes") {
    case nil, .null?: break
    case .array(let array)?:
      for (i, value) in array.enumerated() {
        guard case .document(let index) = value else {
          throw BSONError(
            .invalidValue, "expected an index specification document, found \(value.type)",
            keyPath: ["indexes", String(i)])
        }
        indexes.append(index)
      }
    case let value?:
      throw BSONError(
        .invalidValue, "expected an array of index specifications, found \(value.type)", keyPath: ["indexes"])
    }
    switch document.value(forKey: "uuid") {
    case nil, .null?: break
    case .string(let text)?: uuid = text
    case let value?:
      throw BSONError(.invalidValue, "expected the collection UUID as a string, found \(value.type)", keyPath: ["uuid"])
    }
    switch document.value(forKey: "options") {
    case nil, .null?: break
    case .document(let value)?: options = value
    case let value?:
      throw BSONError(
        .invalidValue, "expected collection options as a document, found \(value.type)", keyPath: ["options"])
    }
    if case .string(let name)? = document.value(forKey: "collectionName") { collectionName = name }
  }

  /// The metadata as a document, keys in mongodump's order: `options` (only when not empty),
  /// `indexes`, `uuid` (when known), `collectionName` (when known), `type` (`"collection"` unless
  /// ``raw`` says otherwise), then any other keys of ``raw``.
  public var document: Document {
    var out = Document()
    if !options.isEmpty { out.append(.document(options), forKey: "options") }
    out.append(.array(BSONArray(indexes.map { BSON.document($0) })), forKey: "indexes")
    if let uuid { out.append(.string(uuid), forKey: "uuid") }
    if let collectionName { out.append(.string(collectionName), forKey: "collectionName") }
    out.append(raw?.value(forKey: "type") ?? .string("collection"), forKey: "type")
    if let raw {
      let known: Set<String> = ["options", "indexes", "uuid", "collectionName", "type"]
      for element in raw where !known.contains(element.key) { out.append(element.value, forKey: element.key) }
    }
    return out
  }

  /// What mongodump writes to `.metadata.json` (and into an archive's prelude): ``document`` as
  /// one line of canonical Extended JSON, such as
  /// `{"indexes":[{"v":{"$numberInt":"2"},"key":{"_id":{"$numberInt":"1"}},"name":"_id_"}],"uuid":"…","collectionName":"people","type":"collection"}`.
  /// mongorestore accepts it.
  public func json() -> [UInt8] {
    var out: [UInt8] = []
    document.appendExtendedJSON(to: &out, mode: .canonical)
    return out
  }
}

extension CollectionMetadata {
  /// A random version 4 UUID as 32 lowercase hexadecimal digits, the form mongodump writes.
  static func randomUUID() -> String {
    var generator = SystemRandomNumberGenerator()
    var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
    bytes[6] = bytes[6] & 0x0F | 0x40
    bytes[8] = bytes[8] & 0x3F | 0x80
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    for byte in bytes {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
  }
}
