import Foundation
import ReefTestSupport
import Testing

@_spi(ReefInternal) @testable import ReefBSON

/// `DocumentValidator`, the reusable validator of the parallel scan: one instance, used for
/// document after document (valid ones, damaged ones, deep ones), answers exactly as
/// `Document.validatedLength(of:options:)` does, so an error does not leave frames behind.
@Suite struct DocumentValidatorTests {
  /// The verdict as the tools see it: a length, or the error's kind, offset, key path and message.
  static func verdict(_ body: () throws -> Int) -> String {
    do {
      return "length \(try body())"
    } catch let error as BSONError {
      return "\(error.kind) @\(error.offset ?? -1) \(error.keyPath): \(error.message)"
    } catch {
      return "\(error)"
    }
  }

  static func check(_ validator: DocumentValidator, _ bytes: [UInt8], _ name: String) {
    bytes.withUnsafeBytes { raw in
      let expected = verdict { try Document.validatedLength(of: raw, options: validator.options) }
      let found = verdict { try validator.validatedLength(of: raw) }
      #expect(found == expected, "\(name)")
    }
  }

  /// The key scan reads eight bytes at a time: it notes non-ASCII bytes of the key only, not
  /// those just after its zero (an int32 -1); it finds an invalid byte anywhere in a key of any
  /// length at its offset; a valid two-byte character that ends the key passes; a key without
  /// its zero before the document's terminator, in a buffer that ends with the document, fails.
  @Test func theKeyScanSeesExactlyTheKeysBytes() throws {
    let validator = DocumentValidator()
    func document(_ key: [UInt8], terminated: Bool = true) -> [UInt8] {
      let body: [UInt8] = [0x10] + key + (terminated ? [0] + le32(-1) : [])
      return le32(Int32(4 + body.count + 1)) + body + [0]
    }
    func error(_ bytes: [UInt8]) -> BSONError? {
      bytes.withUnsafeBytes { raw in
        do {
          _ = try validator.validatedLength(of: raw)
          return nil
        } catch {
          return error as? BSONError
        }
      }
    }
    for length in 1...20 {
      let key = [UInt8](repeating: UInt8(ascii: "k"), count: length)
      let plain = document(key)
      #expect(error(plain) == nil, "key of \(length) bytes")
      Self.check(validator, plain, "key of \(length) bytes")
      for position in 0..<length {
        var bad = key
        bad[position] = 0xFF
        let bytes = document(bad)
        let found = try #require(error(bytes), "0xFF at \(position) of \(length)")
        #expect(found.kind == .invalidUTF8, "0xFF at \(position) of \(length)")
        #expect(found.offset == 5 + position, "0xFF at \(position) of \(length)")
        Self.check(validator, bytes, "0xFF at \(position) of \(length)")
      }
      if length >= 2 {
        var accented = key
        accented[length - 2] = 0xC3
        accented[length - 1] = 0xA9
        #expect(error(document(accented)) == nil, "é ending a key of \(length) bytes")
        // Its lead byte alone, just before the zero: a sequence cut short.
        accented[length - 2] = UInt8(ascii: "k")
        accented[length - 1] = 0xC3
        let found = try #require(error(document(accented)), "a lone lead byte ending a key of \(length) bytes")
        #expect(found.kind == .invalidUTF8)
        #expect(found.offset == 5 + length - 1)
      }
      let unterminated = document(key, terminated: false)
      let found = try #require(error(unterminated), "an unterminated key of \(length) bytes")
      #expect(found.kind == .missingTerminator)
      #expect(found.offset == 5)
      Self.check(validator, unterminated, "an unterminated key of \(length) bytes")
    }
  }

  @Test func theCorpusCasesGetTheSameVerdictsFromOneValidator() throws {
    guard let directory = Corpus.directory else { return }
    let validator = DocumentValidator()
    var cases = 0
    var errors = 0
    for file in Corpus.files {
      let data = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + file))
      let suite = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
      for group in ["valid", "decodeErrors"] {
        for case let test as [String: Any] in suite[group] as? [Any] ?? [] {
          guard let hex = (test["canonical_bson"] ?? test["bson"]) as? String else { continue }
          let bytes = ReefTestSupport.bytes(hex: hex)
          Self.check(validator, bytes, "\(file): \(test["description"] ?? "?")")
          cases += 1
          if group == "decodeErrors" { errors += 1 }
        }
      }
    }
    #expect(cases > 400)
    #expect(errors >= 75)
  }

  /// Documents deeper than the validator's first frames, an error deep inside one (its key path
  /// names every level), then a small valid document: nothing of the deep one is left over.
  @Test func deepDocumentsAndErrorsInsideThemLeaveNothingBehind() throws {
    let validator = DocumentValidator(options: ValidationOptions(maximumDepth: 500))
    func nested(_ depth: Int, leaf: BSON) -> Document {
      var document: Document = ["leaf": leaf]
      for level in 0..<depth { document = ["l\(level % 7)": .document(document)] }
      return document
    }
    let deep = nested(300, leaf: .string("ok")).bytes
    var damaged = nested(200, leaf: .string("ok")).bytes
    // The leaf string's last byte before its terminator becomes an invalid UTF-8 byte.
    let leaf = try #require(damaged.lastIndex(of: UInt8(ascii: "k")))
    damaged[leaf] = 0xFF
    let small: Document = ["a": 1, "b": ["x", "y"]]
    for bytes in [deep, damaged, small.bytes, damaged, deep, small.bytes] {
      Self.check(validator, bytes, "\(bytes.count) bytes")
    }
    var thrown: BSONError?
    damaged.withUnsafeBytes { raw in
      do {
        _ = try validator.validatedLength(of: raw)
      } catch {
        thrown = error as? BSONError
      }
    }
    let error = try #require(thrown)
    #expect(error.keyPath.count == 201)
    #expect(error.keyPath.last == "leaf")
    let length = small.bytes.withUnsafeBytes { raw in try? validator.validatedLength(of: raw) }
    #expect(length == small.byteCount)
  }
}
