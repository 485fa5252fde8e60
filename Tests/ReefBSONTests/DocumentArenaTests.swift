@_spi(ReefInternal) import ReefBSON
import Testing

@Suite("DocumentArena")
struct DocumentArenaTests {
  @Test func copiesOutliveTheArenaAndTheSourceAcrossChunks() throws {
    var originals: [Document] = []
    for number in 0..<500 {
      var builder = DocumentBuilder()
      builder.append("_id", Int32(number))
      builder.append("name", String(repeating: "x", count: number % 37))
      builder.appendDocument("address") { address in address.append("city", "City \(number)") }
      originals.append(builder.document)
    }
    var large = DocumentBuilder()
    large.append("blob", String(repeating: "y", count: 600))
    originals.insert(large.document, at: 250)
    var copies: [Document] = []
    do {
      // Chunks of 1 KiB: the 500 small documents need many, and the large one (over a quarter
      // of a chunk) gets memory of its own.
      var arena = DocumentArena(chunkSize: 1024)
      for original in originals {
        var source = original.bytes
        copies.append(source.withUnsafeBytes { arena.copy(trusted: $0) })
        _ = source.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0xFF) }
      }
    }
    #expect(copies == originals)
    #expect(copies[1]["address.city"] == .string("City 1"))
    #expect(copies[250]["blob"] == .string(String(repeating: "y", count: 600)))
    #expect(copies.map(\.byteCount) == originals.map(\.byteCount))
    // Each copy is a whole document of its own: its bytes revalidate and re-encode unchanged.
    for copy in copies { #expect(try Document(bytes: copy.bytes) == copy) }
  }
}
