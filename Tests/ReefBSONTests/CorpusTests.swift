import Foundation
import ReefTestSupport
import Testing

@testable import ReefBSON

/// The MongoDB BSON corpus (`BSON_CORPUS_DIR`): every valid, decodeErrors and parseErrors case of
/// all 31 files, one test per file so that a failure names its file, and every expectation names
/// its case.
@Suite struct CorpusTests {
  @Test(arguments: Corpus.files)
  func corpusFile(_ file: String) throws {
    guard let dir = Corpus.directory else { return }
    var executed = 0
    defer {
      let total = Corpus.tally.withLock { tally -> (cases: Int, files: Int) in
        tally.cases += executed
        tally.files += 1
        return tally
      }
      // The last file to finish checks the whole corpus ran.
      if total.files == Corpus.files.count {
        print("BSON corpus: ran \(total.cases) cases from \(total.files) files")
        #expect(
          total.cases == Corpus.expectedCaseCount,
          "expected \(Corpus.expectedCaseCount) corpus cases to run, ran \(total.cases)")
      }
    }
    let data = try Data(contentsOf: URL(fileURLWithPath: dir + "/" + file))
    let suite = try #require(
      try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(file): expected a JSON object")
    let bsonType = suite["bson_type"] as? String ?? ""
    for case let test as [String: Any] in suite["valid"] as? [Any] ?? [] {
      runValid(test, name: "\(file): \(test["description"] as? String ?? "?")")
      executed += 1
    }
    for case let test as [String: Any] in suite["decodeErrors"] as? [Any] ?? [] {
      runDecodeError(test, name: "\(file): \(test["description"] as? String ?? "?")")
      executed += 1
    }
    for case let test as [String: Any] in suite["parseErrors"] as? [Any] ?? [] {
      runParseError(test, bsonType: bsonType, name: "\(file): \(test["description"] as? String ?? "?")")
      executed += 1
    }
  }

  @Test func corpusDirectoryHoldsTheKnownFiles() throws {
    guard let dir = Corpus.directory else { return }
    let present = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".json") }.sorted()
    #expect(present == Corpus.files.sorted(), "expected the corpus files \(Corpus.files), found \(present)")
  }

  // MARK: - Valid cases

  /// Runs the corpus spec's assertions for a codec with a native representation (`Document`).
  func runValid(_ test: [String: Any], name: String) {
    let lossy = test["lossy"] as? Bool ?? false
    guard let cbHex = test["canonical_bson"] as? String, let cEJ = test["canonical_extjson"] as? String else {
      Issue.record("\(name): expected canonical_bson and canonical_extjson")
      return
    }
    let cB = bytes(hex: cbHex)
    let rEJ = test["relaxed_extjson"] as? String

    // cB → native → cB, cEJ, rEJ.
    do {
      let document = try Document(bytes: cB)
      #expect(hexString(document.bytes) == hexString(cB), "\(name): native_to_bson(bson_to_native(cB)) = cB")
      let rebuilt = Document(document.map { ($0.key, $0.value) })
      #expect(hexString(rebuilt.bytes) == hexString(cB), "\(name): BSON values re-encoded = cB")
      expectJSON(document.extendedJSON(.canonical), cEJ, "\(name): native_to_canonical_extended_json(cB) = cEJ")
      if let rEJ {
        expectJSON(document.extendedJSON(.relaxed), rEJ, "\(name): native_to_relaxed_extended_json(cB) = rEJ")
      }
    } catch {
      Issue.record("\(name): expected canonical_bson to decode, got \(error)")
    }

    // cEJ → native → cEJ, cB.
    parse(cEJ, name: "\(name): cEJ") { document in
      expectJSON(
        document.extendedJSON(.canonical), cEJ, "\(name): native_to_canonical_extended_json(json_to_native(cEJ)) = cEJ")
      if !lossy {
        #expect(hexString(document.bytes) == hexString(cB), "\(name): native_to_bson(json_to_native(cEJ)) = cB")
      }
    }

    // dB → native → cB (through canonical Extended JSON, since the native form keeps its bytes), cEJ, rEJ.
    if let dbHex = test["degenerate_bson"] as? String {
      do {
        let document = try degenerateDocument(bytes(hex: dbHex), name: name)
        let canonical = document.extendedJSON(.canonical)
        expectJSON(canonical, cEJ, "\(name): bson_to_canonical_extended_json(dB) = cEJ")
        if let rEJ {
          expectJSON(document.extendedJSON(.relaxed), rEJ, "\(name): bson_to_relaxed_extended_json(dB) = rEJ")
        }
        parse(canonical, name: "\(name): canonical Extended JSON of dB") { normalized in
          #expect(hexString(normalized.bytes) == hexString(cB), "\(name): dB → native → bson = cB")
        }
      } catch {
        Issue.record("\(name): expected degenerate_bson to decode, got \(error)")
      }
    }

    // dEJ → native → cEJ, cB.
    if let dEJ = test["degenerate_extjson"] as? String {
      parse(dEJ, name: "\(name): dEJ") { document in
        expectJSON(
          document.extendedJSON(.canonical), cEJ,
          "\(name): native_to_canonical_extended_json(json_to_native(dEJ)) = cEJ")
        if !lossy {
          #expect(hexString(document.bytes) == hexString(cB), "\(name): native_to_bson(json_to_native(dEJ)) = cB")
        }
      }
    }

    // rEJ → native → rEJ.
    if let rEJ {
      parse(rEJ, name: "\(name): rEJ") { document in
        expectJSON(
          document.extendedJSON(.relaxed), rEJ, "\(name): native_to_relaxed_extended_json(json_to_native(rEJ)) = rEJ")
      }
    }

    // Deprecated types: the converted forms must agree with each other too.
    if let cvHex = test["converted_bson"] as? String, let cvEJ = test["converted_extjson"] as? String {
      let cvB = bytes(hex: cvHex)
      do {
        let document = try Document(bytes: cvB)
        expectJSON(document.extendedJSON(.canonical), cvEJ, "\(name): canonical Extended JSON of converted_bson")
      } catch {
        Issue.record("\(name): expected converted_bson to decode, got \(error)")
      }
      parse(cvEJ, name: "\(name): converted_extjson") { document in
        #expect(
          hexString(document.bytes) == hexString(cvB), "\(name): json_to_bson(converted_extjson) = converted_bson")
      }
    }
  }

  /// Reads degenerate BSON. Reef's default validation rejects array keys out of sequence (the BSON
  /// spec says array keys are "0", "1", … in order); the corpus counts such arrays as degenerate but
  /// readable, so exactly those (rejected by default with `invalidArrayKey`) are read again with
  /// `checksArrayKeys: false`.
  func degenerateDocument(_ dB: [UInt8], name: String) throws -> Document {
    let result = Result { () throws(BSONError) -> Document in try Document(bytes: dB) }
    guard case .failure(let error) = result, error.kind == .invalidArrayKey else { return try result.get() }
    return try Document(bytes: dB, options: ValidationOptions(checksArrayKeys: false))
  }

  /// Parses Extended JSON and runs `body`, or records the parse error under `name`.
  func parse(_ text: String, name: String, _ body: (Document) -> Void) {
    do {
      body(try Document(extendedJSON: text))
    } catch {
      Issue.record("\(name): expected to parse \(text), got \(error)")
    }
  }

  func expectJSON(_ actual: String, _ expected: String, _ name: String) {
    #expect(Corpus.sameJSON(actual, expected), "\(name)\n  expected: \(expected)\n  actual:   \(actual)")
  }

  // MARK: - Error cases

  func runDecodeError(_ test: [String: Any], name: String) {
    guard let hex = test["bson"] as? String else {
      Issue.record("\(name): expected a bson field")
      return
    }
    #expect(throws: BSONError.self, "\(name): expected a decode error") { try Document(bytes: bytes(hex: hex)) }
  }

  func runParseError(_ test: [String: Any], bsonType: String, name: String) {
    guard let text = test["string"] as? String else {
      Issue.record("\(name): expected a string field")
      return
    }
    if bsonType == "0x13" {
      #expect(Decimal128(text) == nil, "\(name): expected Decimal128(\"\(text)\") to fail")
      return
    }
    // The input is valid JSON, so the error is Extended JSON's.
    #expect(Corpus.parse(text) != nil, "\(name): expected plain JSON to accept \(text)")
    #expect(throws: BSONError.self, "\(name): expected a parse error for \(text)") {
      try Document(extendedJSON: text)
    }
  }
}
