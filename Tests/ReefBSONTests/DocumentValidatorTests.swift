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
