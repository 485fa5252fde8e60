import ReefBSON
import ReefTestSupport
import Testing

@Suite("Validation")
struct ValidationTests {
  /// Expects `bytes` to be rejected with `kind` at `offset` (and key path, when given).
  func expectInvalid(
    _ bytes: [UInt8], _ kind: BSONError.Kind, offset: Int, keyPath: [String] = [],
    options: ValidationOptions = .default, sourceLocation: SourceLocation = #_sourceLocation
  ) {
    do {
      let doc = try Document(bytes: bytes, options: options)
      Issue.record(
        "accepted invalid bytes \(hexString(bytes)) as \(doc.bytes.count) bytes", sourceLocation: sourceLocation)
    } catch {
      #expect(error.kind == kind, "\(error)", sourceLocation: sourceLocation)
      #expect(error.offset == offset, "\(error)", sourceLocation: sourceLocation)
      #expect(error.keyPath == keyPath, "\(error)", sourceLocation: sourceLocation)
      #expect(!error.message.isEmpty, sourceLocation: sourceLocation)
    }
  }

  @Test func lengthsAndTerminators() {
    expectInvalid([], .truncated, offset: 0)
    expectInvalid([5, 0, 0], .truncated, offset: 0)
    expectInvalid([4, 0, 0, 0, 0], .invalidLength, offset: 0)
    expectInvalid([6, 0, 0, 0, 0], .invalidLength, offset: 0)
    expectInvalid([5, 0, 0, 0, 1], .missingTerminator, offset: 4)
    expectInvalid([5, 0, 0, 0, 0, 0], .trailingBytes, offset: 5)
  }

  @Test func strings() {
    // Length says 3 but the string is "ab\0": fine. Length 0 and negative lengths are errors.
    expectInvalid(singleElementBytes(type: 2, value: le32(0) + [0]), .invalidLength, offset: 7, keyPath: ["a"])
    expectInvalid(singleElementBytes(type: 2, value: le32(-1) + [0]), .invalidLength, offset: 7, keyPath: ["a"])
    expectInvalid(
      singleElementBytes(type: 2, value: le32(3) + [0x61, 0x62, 0x63]), .missingTerminator, offset: 13, keyPath: ["a"])
    expectInvalid(singleElementBytes(type: 2, value: le32(99) + [0x61, 0]), .invalidLength, offset: 7, keyPath: ["a"])
  }

  @Test func utf8() {
    let cases: [(String, [UInt8])] = [
      ("overlong slash", [0xC0, 0xAF]), ("overlong 3-byte", [0xE0, 0x80, 0xAF]), ("surrogate", [0xED, 0xA0, 0x80]),
      ("above U+10FFFF", [0xF4, 0x90, 0x80, 0x80]), ("truncated", [0xE2, 0x98]), ("stray continuation", [0x80]),
      ("0xFF", [0xFF]),
    ]
    for (name, bad) in cases {
      let value = le32(Int32(bad.count + 2)) + [0x41] + bad + [0]
      do {
        _ = try Document(bytes: singleElementBytes(type: 2, value: value))
        Issue.record("accepted \(name)")
      } catch {
        #expect(error.kind == .invalidUTF8, "\(name): \(error)")
        #expect(error.offset == 12, "\(name): the first bad byte follows 'A' at offset 12: \(error)")
      }
    }
    // Valid multi-byte sequences, including 4-byte ones, pass.
    let good = Array("é☆😀".utf8)
    #expect(throws: Never.self) {
      try Document(bytes: singleElementBytes(type: 2, value: le32(Int32(good.count + 1)) + good + [0]))
    }
    // Keys are checked too.
    expectInvalid(
      singleElementBytes(type: 0x0A, key: "\u{0}", value: []).replacing([0x0A, 0], with: [0x0A, 0xFF, 0]), .invalidUTF8,
      offset: 5)
    // Checking can be turned off.
    #expect(throws: Never.self) {
      try Document(bytes: singleElementBytes(type: 2, value: le32(2) + [0xFF, 0]), options: .init(checksUTF8: false))
    }
  }

  @Test func booleansTypesAndArrays() {
    expectInvalid(singleElementBytes(type: 8, value: [2]), .invalidBoolean, offset: 7, keyPath: ["a"])
    expectInvalid(singleElementBytes(type: 0x14, value: []), .unknownType, offset: 4, keyPath: ["a"])
    let badArray = singleElementBytes(type: 4, value: singleElementBytes(type: 0x10, key: "1", value: le32(5)))
    expectInvalid(badArray, .invalidArrayKey, offset: 12, keyPath: ["a", "1"])
  }

  @Test func nestedErrorsCarryTheKeyPath() {
    let inner = singleElementBytes(type: 8, key: "flag", value: [7])
    let middle = singleElementBytes(type: 3, key: "b", value: inner)
    let outer = singleElementBytes(type: 3, key: "a", value: middle)
    expectInvalid(outer, .invalidBoolean, offset: 7 + 7 + 10, keyPath: ["a", "b", "flag"])
  }

  @Test func depthLimit() throws {
    func nested(_ depth: Int) -> Document {
      var doc: Document = ["leaf": 1]
      for _ in 0..<depth { doc = ["d": .document(doc)] }
      return doc
    }
    #expect(throws: Never.self) { try Document(bytes: nested(100).bytes) }
    #expect(throws: BSONError.self) { try Document(bytes: nested(101).bytes) }
    do {
      _ = try Document(bytes: nested(5).bytes, options: .init(maximumDepth: 3))
      Issue.record("depth 5 accepted with a limit of 3")
    } catch {
      #expect(error.kind == .depthLimitExceeded)
      #expect(error.keyPath == ["d", "d", "d", "d"])
    }
  }

  @Test func sizeLimit() {
    let doc: Document = ["s": .string(String(repeating: "x", count: 1000))]
    expectInvalid(doc.bytes, .sizeLimitExceeded, offset: 0, options: .init(maximumSize: 100))
  }

  @Test func codeWithScopeLengthsMustAgree() {
    let scope: [UInt8] = [5, 0, 0, 0, 0]
    let code = le32(2) + [0x78, 0]
    let good = le32(Int32(4 + code.count + scope.count)) + code + scope
    #expect(throws: Never.self) { try Document(bytes: singleElementBytes(type: 0x0F, value: good)) }
    let tooLong = le32(Int32(4 + code.count + scope.count + 1)) + code + scope + [0]
    expectInvalid(singleElementBytes(type: 0x0F, value: tooLong), .invalidLength, offset: 7, keyPath: ["a"])
  }

  @Test func oldBinaryInnerLength() {
    let good = le32(6) + [2] + le32(2) + [1, 2]
    #expect(throws: Never.self) { try Document(bytes: singleElementBytes(type: 5, value: good)) }
    let bad = le32(6) + [2] + le32(3) + [1, 2]
    expectInvalid(singleElementBytes(type: 5, value: bad), .invalidLength, offset: 12, keyPath: ["a"])
  }

  @Test func errorDescriptionSaysWhereAndWhat() {
    let error = BSONError(
      .invalidBoolean, "expected 0 or 1, found 0x02", offset: 7, keyPath: ["a", "b"], documentIndex: 3)
    #expect(
      error.description == "invalidBoolean at document 3, byte offset 7, key path 'a.b': expected 0 or 1, found 0x02")
  }

  @Test func neverReadsPastTheEndOnRandomBytes() {
    var rng = SystemRandomNumberGenerator()
    let base: Document = ["a": 1, "b": ["c": "text", "d": [1.5, true]], "e": .binary(Binary(data: [1, 2, 3]))]
    for _ in 0..<5000 {
      var bytes = base.bytes
      for _ in 0..<Int.random(in: 1...4, using: &rng) {
        bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
      }
      if Bool.random(using: &rng) { bytes.removeLast(Int.random(in: 0..<bytes.count, using: &rng)) }
      if let doc = try? Document(bytes: bytes) {
        // Whatever validated must be fully walkable, and rebuilding it from its values must give
        // the same bytes (so the walk read every element where the validator found it).
        let rebuilt = Document(doc.map { ($0.key, $0.value) })
        #expect(rebuilt.bytes == bytes, "mutant \(hexString(bytes)) re-encodes differently")
        _ = doc["b.d.1"]
      }
    }
  }
}
