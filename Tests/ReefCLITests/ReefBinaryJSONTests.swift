import Foundation
import ReefBSON
import Testing

/// Runs the built `reef` on the paths that produce or parse Extended JSON.
@Suite("reef binary: Extended JSON paths")
struct ReefBinaryJSONTests {
  /// Three documents and the same as relaxed Extended JSON written by hand.
  static let documents: [Document] = [
    ["_id": 1, "name": "Ada", "tags": ["x", "y"]],
    ["_id": 2, "name": "Grace", "address": ["city": "Arlington"]],
    ["_id": 3, "pi": 3.25, "ok": true, "none": nil],
  ]

  @Test("dump prints one relaxed document per line")
  func dump() throws {
    let dir = try TemporaryDirectory()
    let path = try dir.write("people.bson", stream(Self.documents))
    let result = try reef("dump", path)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr.isEmpty)
    #expect(result.stdoutLines.map(String.init) == Self.documents.map { $0.extendedJSON(.relaxed) })
    #expect(result.stdout.contains("\"name\":\"Ada\"") || result.stdout.contains("\"name\": \"Ada\""))
  }

  @Test("dump --format canonical and --pretty")
  func dumpFormats() throws {
    let dir = try TemporaryDirectory()
    let path = try dir.write("people.bson", stream(Self.documents))
    let canonical = try reef("dump", "--format", "canonical", path)
    #expect(canonical.status == 0)
    #expect(canonical.stdoutLines.map(String.init) == Self.documents.map { $0.extendedJSON(.canonical) })
    #expect(canonical.stdout.contains("$numberInt"))
    let pretty = try reef("dump", "--pretty", path)
    #expect(pretty.status == 0)
    let expected = Self.documents.map { $0.extendedJSON(.relaxed, pretty: true) + "\n" }.joined()
    #expect(pretty.stdout == expected)
    #expect(pretty.stdoutLines.count > Self.documents.count)
  }

  @Test("dump prints the documents before a bad one, then the error, and exits 1")
  func dumpPartial() throws {
    let dir = try TemporaryDirectory()
    let documents = sampleDocuments(count: 5)
    let bytes = stream(documents)
    let start = documents[0..<3].reduce(0) { $0 + $1.byteCount }
    let path = try dir.write("partial.bson", Array(bytes[0..<(start + 7)]))
    let result = try reef("dump", path)
    #expect(result.status == 1)
    #expect(result.stdoutLines.map(String.init) == documents[0..<3].map { $0.extendedJSON() })
    #expect(result.stderr.hasPrefix("reef: error: \(path): truncated at document 3, byte offset \(start): "))
  }

  @Test("dump reads gzip from a .gz file and from standard input")
  func dumpGzip() throws {
    let dir = try TemporaryDirectory()
    let documents = sampleDocuments(count: 2000)
    let path = try dir.write("people.bson.gz", try gzipped(stream(documents), in: dir))
    let expected = documents.map { $0.extendedJSON() + "\n" }.joined()
    let fromFile = try reef("dump", path)
    #expect(fromFile.status == 0)
    #expect(fromFile.stdout == expected)
    let fromStdin = try reef("dump", stdin: path)
    #expect(fromStdin.status == 0)
    #expect(fromStdin.stdout == expected)
  }

  @Test(
    "convert reads JSON lines, a JSON array and pretty documents",
    arguments: [
      """
      {"_id": 1, "name": "Ada", "tags": ["x", "y"]}
      {"_id": 2, "name": "Grace", "address": {"city": "Arlington"}}
      {"_id": 3, "pi": 3.25, "ok": true, "none": null}

      """,
      """
      [{"_id": 1, "name": "Ada", "tags": ["x", "y"]},
       {"_id": 2, "name": "Grace", "address": {"city": "Arlington"}},
       {"_id": {"$numberInt": "3"}, "pi": {"$numberDouble": "3.25"}, "ok": true, "none": null}]
      """,
      """
        {
          "_id": 1,
          "name": "Ada",
          "tags": ["x", "y"]
        }
        {
          "_id": 2, "name": "Grace",
          "address": {
            "city": "Arlington"
          }
        }
        {"_id": 3, "pi": 3.25, "ok": true, "none": null}
      """,
    ])
  func convertJSONToBSON(text: String) throws {
    let dir = try TemporaryDirectory()
    let input = try dir.write("in.json", text: text)
    let result = try reef("convert", input, "--to", "bson")
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdoutBytes == stream(Self.documents))
  }

  @Test("convert round trip: BSON to canonical JSON (gzip) to BSON")
  func roundTrip() throws {
    let dir = try TemporaryDirectory()
    let documents = sampleDocuments(count: 300)
    let input = try dir.write("in.bson", stream(documents))
    let toJSON = try reef("convert", input, "--to", "canonical", "-o", dir.path("mid.json.gz"))
    #expect(toJSON.status == 0, "\(toJSON.stderr)")
    #expect(try dir.read("mid.json.gz").starts(with: [0x1F, 0x8B]))
    let toBSON = try reef("convert", dir.path("mid.json.gz"), "--to", "bson", "-o", dir.path("out.bson"))
    #expect(toBSON.status == 0, "\(toBSON.stderr)")
    #expect(try dir.read("out.bson") == stream(documents))
    // And relaxed JSON lines from standard input.
    let relaxed = try reef("convert", "--to", "relaxed", stdin: input)
    #expect(relaxed.stdout == documents.map { $0.extendedJSON(.relaxed) + "\n" }.joined())
  }

  @Test("convert of bad JSON exits 1 with the line and column")
  func convertBadJSON() throws {
    let dir = try TemporaryDirectory()
    let input = try dir.write("bad.json", text: "{\"a\": 1}\n{\"b\": tru}\n")
    let result = try reef("convert", input, "--to", "bson", "-o", dir.path("out.bson"))
    #expect(result.status == 1)
    #expect(result.stderr.hasPrefix("reef: error: \(input): "))
    #expect(result.stderr.contains("line 2, column"))
    #expect(try dir.read("out.bson") == (["a": 1] as Document).bytes)
  }

  @Test("convert applies a stricter --max-depth to JSON input")
  func convertJSONDepth() throws {
    let dir = try TemporaryDirectory()
    let input = try dir.write("deep.json", text: "{\"a\": 1}\n{\"a\": {\"b\": {\"c\": 1}}}\n")
    let strict = try reef("convert", input, "--to", "relaxed", "--max-depth", "1")
    #expect(strict.status == 1)
    #expect(strict.stdout == "{\"a\":1}\n")
    #expect(strict.stderr.contains("depthLimitExceeded at document 1"))
    let lenient = try reef("convert", input, "--to", "relaxed", "--max-depth", "2")
    #expect(lenient.status == 0)
    #expect(lenient.stdoutLines.count == 2)
  }
}
