import Foundation
import ReefBSON
import ReefLibBSON
import ReefTestSupport
import Testing

/// Checks libbson's Extended JSON against the BSON corpus (the spec's own expected output), after the
/// libbson normalisations in ``ExtendedJSONNormalization``: with those two (doubles compared by value,
/// relaxed dates after 9999), libbson 1.23 matches all of the corpus, so the differential Extended JSON
/// tests need to normalise nothing more.
@Suite struct LibBSONCorpusTests {
  struct Case: CustomTestStringConvertible, Sendable {
    var file: String
    var description: String
    var canonicalBSON: String
    var canonicalJSON: String
    var relaxedJSON: String?
    var lossy: Bool
    var testDescription: String { "\(file): \(description)" }
  }

  static let cases: [Case] = {
    let dir =
      getenvString("BSON_CORPUS_DIR") ?? sharedDirectory("the BSON corpus").map { $0 + "/bson-corpus" } ?? ""
    guard let files = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return [] }
    var out: [Case] = []
    for file in files.sorted() where file.hasSuffix(".json") {
      guard let data = FileManager.default.contents(atPath: dir + "/" + file),
        let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
        let valid = json["valid"] as? [[String: Any]]
      else { continue }
      for v in valid {
        guard let bson = v["canonical_bson"] as? String, let cej = v["canonical_extjson"] as? String else { continue }
        out.append(
          Case(
            file: file, description: v["description"] as? String ?? "?", canonicalBSON: bson, canonicalJSON: cej,
            relaxedJSON: v["relaxed_extjson"] as? String, lossy: v["lossy"] as? Bool ?? false))
      }
    }
    return out
  }()

  @Test func corpusIsPresent() {
    if Self.cases.isEmpty { print("BSON corpus not found (BSON_CORPUS_DIR / REEF_SHARED_DIR); skipping") }
  }

  @Test(arguments: cases)
  func libbsonMatchesTheCorpus(_ c: Case) throws {
    let doc = try Document(bytes: bytes(hex: c.canonicalBSON))
    for (mode, expectedText) in [(ExtendedJSONMode.canonical, c.canonicalJSON), (.relaxed, c.relaxedJSON)] {
      guard let expectedText else { continue }
      let key = "\(c.file): \(c.description) (\(mode))"
      let actualText = try #require(doc.libbsonExtendedJSON(mode), "libbson refused \(key)")
      let expected = ExtendedJSONNormalization.conforming(try ParsedJSON(parsing: expectedText))
      let actual = ExtendedJSONNormalization.libbson(try ParsedJSON(parsing: actualText))
      let difference = actual.firstDifference(from: expected)
      #expect(difference == nil, "\(key): \(difference ?? "")\nlibbson: \(actualText)\ncorpus:  \(expectedText)")
    }
  }
}
