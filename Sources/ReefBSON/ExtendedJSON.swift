// API skeleton for Extended JSON v2; the implementation is in progress (issue 2).

/// The two output forms of Extended JSON v2.
public enum ExtendedJSONMode: String, Sendable, CaseIterable {
  /// Type-preserving: every number and date wrapped (`{"$numberInt": "1"}`).
  case canonical
  /// Human-friendly: plain JSON numbers where lossless, ISO-8601 dates for years 1970-9999.
  case relaxed
}

extension Document {
  /// The document as Extended JSON v2 text, keys in document order.
  /// - Parameters:
  ///   - mode: canonical or relaxed.
  ///   - pretty: indented over several lines instead of one line.
  public func extendedJSON(_ mode: ExtendedJSONMode = .relaxed, pretty: Bool = false) -> String {
    var out = [UInt8]()
    appendExtendedJSON(to: &out, mode: mode, pretty: pretty)
    return String(decoding: out, as: UTF8.self)
  }

  /// Appends the document as Extended JSON v2 UTF-8 to `out` (no trailing newline).
  public func appendExtendedJSON(to out: inout [UInt8], mode: ExtendedJSONMode = .relaxed, pretty: Bool = false) {
    fatalError("Extended JSON writer not written yet")
  }

  /// Parses one Extended JSON v2 document (canonical, relaxed or legacy forms), keeping key order.
  /// - Throws: ``BSONError`` with line, column and key path.
  public init(extendedJSON text: String) throws(BSONError) {
    var parser = ExtendedJSONParser(text)
    guard let doc = try parser.nextDocument() else {
      throw BSONError(.invalidJSON, "expected a JSON object, found the end of the input", line: 1, column: 1)
    }
    guard try parser.nextDocument() == nil else {
      throw BSONError(.invalidJSON, "expected the end of the input after the document", line: parser.line, column: parser.column)
    }
    self = doc
  }
}

/// Reads a sequence of Extended JSON documents from UTF-8 text: one per line, a JSON array of
/// documents, or pretty-printed documents one after another.
public struct ExtendedJSONParser {
  /// The one-based line of the next unread byte.
  public private(set) var line = 1
  /// The one-based column of the next unread byte.
  public private(set) var column = 1

  /// Creates a parser over UTF-8 bytes.
  public init(bytes: [UInt8]) {}

  /// Creates a parser over a string.
  public init(_ text: String) { self.init(bytes: Array(text.utf8)) }

  /// The next document, or `nil` at the end of the input.
  /// - Throws: ``BSONError`` (``BSONError/Kind/invalidJSON`` or ``BSONError/Kind/invalidExtendedJSON``)
  ///   with line, column and key path; the document index is set when the input holds several.
  public mutating func nextDocument() throws(BSONError) -> Document? {
    fatalError("Extended JSON parser not written yet")
  }
}

extension Document: CustomStringConvertible, CustomDebugStringConvertible {
  /// Relaxed Extended JSON.
  public var description: String { extendedJSON(.relaxed) }
  /// Canonical Extended JSON.
  public var debugDescription: String { extendedJSON(.canonical) }
}
