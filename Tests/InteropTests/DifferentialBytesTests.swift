import CLibBSON
import PropertyBased
import ReefBSON
import ReefTestSupport
import Testing

@testable import ReefLibBSON

/// Property (a): Reef's builders and libbson's `bson_append_*` produce the same bytes for the same
/// structure, and Reef and libbson read those bytes back as the same keys, types and values.
@Suite struct DifferentialBytesTests {
  static let documentCount = 10_000 * soakScale

  @Test func reefAndLibbsonBuildIdenticalBytesAndReadTheSameValues() async {
    var checked = 0
    var deepest = 0
    var totalBytes = 0
    var typesSeen = Set<UInt8>()
    await propertyCheck(count: Self.documentCount, input: DocumentGenerator().generator) { generated in
      checked += 1
      deepest = max(deepest, generated.depth)
      let reef = generated.reef
      let libbson = LibBSONBuild.bytes(generated.fields)
      let reefBytes = reef.bytes
      totalBytes += reefBytes.count
      guard reefBytes == libbson else {
        let at =
          zip(reefBytes, libbson).enumerated().first { $0.element.0 != $0.element.1 }?.offset
          ?? min(reefBytes.count, libbson.count)
        Issue.record(
          """
          Reef and libbson built different bytes (first difference at byte \(at))
          Reef:    \(hexString(reefBytes))
          libbson: \(hexString(libbson))
          """)
        return
      }
      collectTypes(generated.fields, into: &typesSeen)

      // Reef accepts its own output, and the libbson oracle agrees it is valid and clean.
      let verdict = LibBSONVerdict(checking: reefBytes)
      #expect(verdict.isValid && verdict.leniencies.isEmpty, "oracle: \(verdict)\n\(hexString(reefBytes))")
      do {
        let validated = try Document(bytes: reefBytes)
        #expect(validated == reef)
      } catch {
        Issue.record("Reef rejects its own output: \(error)\n\(hexString(reefBytes))")
      }

      // Reef's decoding and libbson's iteration (through the zero-copy view) read the generated values.
      if let diff = difference(reef: reef, generated.fields) {
        Issue.record("Reef decoding: \(diff)\n\(hexString(reefBytes))")
      }
      let libbsonDiff = reef.withBSONT { bson in
        withLibBSONScratch(bson_iter_t.self) { iter -> String? in
          guard bson_iter_init(OpaquePointer(iter), OpaquePointer(bson)) else { return "bson_iter_init failed" }
          return difference(libbson: iter, generated.fields)
        }
      }
      if let libbsonDiff { Issue.record("libbson iteration: \(libbsonDiff)\n\(hexString(reefBytes))") }
    }
    print(
      "DifferentialBytesTests: \(checked) documents, \(totalBytes) bytes, deepest nesting \(deepest),",
      "\(typesSeen.count) types")
    // Every BSON type occurred (19 scalar types + document, array, code with scope = 21).
    #expect(typesSeen.count == 21, "types seen: \(typesSeen.sorted())")
  }
}

func collectTypes(_ fields: [Field], into seen: inout Set<UInt8>) {
  func visit(_ node: Node) {
    seen.insert(node.typeByte)
    switch node {
    case .document(let f), .codeWithScope(_, let f): f.forEach { visit($0.value) }
    case .array(let items): items.forEach(visit)
    case .scalar: break
    }
  }
  fields.forEach { visit($0.value) }
}
