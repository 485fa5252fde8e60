import CLibBSON
public import ReefBSON

extension Document {
  /// The document as Extended JSON written by libbson (`bson_as_canonical_extended_json` or
  /// `bson_as_relaxed_extended_json`), for comparing against Reef's own writer in tests and benchmarks.
  ///
  /// This is libbson's output verbatim, including where the installed libbson deviates from the
  /// Extended JSON v2 specification (libbson 1.23 prints doubles with `%.20g` and writes relaxed
  /// dates after year 9999 as ISO-8601 strings). Use ``ReefBSON/Document/extendedJSON(_:pretty:)``
  /// for spec-conforming output.
  /// - Returns: the text, or `nil` when libbson refuses to convert the document.
  /// - Complexity: O(n) in the number of bytes.
  public func libbsonExtendedJSON(_ mode: ExtendedJSONMode) -> String? {
    withBSONT { b in
      var length = 0
      let text: UnsafeMutablePointer<CChar>? =
        switch mode {
        case .canonical: bson_as_canonical_extended_json(OpaquePointer(b), &length)
        case .relaxed: bson_as_relaxed_extended_json(OpaquePointer(b), &length)
        }
      guard let text else { return nil }
      defer { bson_free(text) }
      return String(decoding: UnsafeRawBufferPointer(start: text, count: length), as: UTF8.self)
    }
  }

  /// Parses Extended JSON with libbson's parser (`bson_new_from_json`) and validates the result with
  /// Reef's validator.
  ///
  /// This is libbson's parser verbatim, for differential tests; applications should use
  /// ``ReefBSON/Document/init(extendedJSON:)``.
  /// - Throws: ``BSONError`` of kind ``BSONError/Kind/invalidJSON`` with libbson's message when libbson
  ///   cannot parse the text, or a validation error when the document it produced is not valid.
  /// - Complexity: O(n) in the length of the text.
  public init(libbsonJSON text: String) throws(BSONError) {
    var error = bson_error_t()
    var text = text
    let parsed = text.withUTF8 { utf8 -> OpaquePointer? in
      guard let start = utf8.baseAddress, !utf8.isEmpty else { return nil }
      return bson_new_from_json(start, utf8.count, &error)
    }
    guard let parsed else {
      let message = Swift.withUnsafeBytes(of: error.message) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      throw BSONError(.invalidJSON, "libbson could not parse the JSON: \(message.isEmpty ? "empty input" : message)")
    }
    defer { bson_destroy(parsed) }
    try self.init(copying: parsed)
  }
}
