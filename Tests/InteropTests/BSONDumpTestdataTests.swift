import Foundation
import ReefBSON
import Testing

/// bsondump's own test inputs (mongodb/mongo-tools, `test/qa-tests/jstests/bson/testdata`), read
/// in place from `$REEF_SHARED_DIR/interop/bsondump-testdata` (default `../shared` beside the
/// package). Each broken file's damage was found by reading its bytes; the comments say what it is.
@Suite("bsondump test data")
struct BSONDumpTestdataTests {
  static let directory: URL? = {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    let shared =
      ProcessInfo.processInfo.environment["REEF_SHARED_DIR"].map { URL(fileURLWithPath: $0, relativeTo: root) }
      ?? root.appendingPathComponent("../shared")
    let directory = shared.appendingPathComponent("interop/bsondump-testdata").standardizedFileURL
    guard FileManager.default.fileExists(atPath: directory.appendingPathComponent("sample.bson").path) else {
      print("BSONDumpTestdataTests: skipped, no bsondump test data at \(directory.path)")
      return nil
    }
    return directory
  }()

  /// What reading a whole file gave: the documents, and the error that stopped it.
  struct Outcome {
    var documents: [Document]
    var error: BSONError?
  }

  static func read(_ name: String, options: ValidationOptions = .default) throws -> Outcome {
    let path = try #require(directory).appendingPathComponent(name).path
    var reader = try BSONStreamReader(path: path, options: options)
    var documents: [Document] = []
    var failure: BSONError?
    do throws(BSONError) {
      while let document = try reader.next() { documents.append(document) }
    } catch {
      failure = error
    }
    #expect(reader.documentsRead == documents.count)
    if failure == nil {
      let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
      #expect(reader.bytesRead == size, "\(name): a good file is read to its last byte")
    }
    return Outcome(documents: documents, error: failure)
  }

  // MARK: - Good files

  @Test("all_in_one_doc.bson: one document with every non-deprecated type", .enabled(if: directory != nil))
  func allInOneDocument() throws {
    let outcome = try Self.read("all_in_one_doc.bson")
    #expect(outcome.error == nil)
    let document = try #require(outcome.documents.first)
    #expect(outcome.documents.count == 1)
    #expect(document.byteCount == 335)
    #expect(
      document.keys == [
        "double", "string", "doc", "arr", "binary", "oid", "bool", "date", "code", "ts", "int32", "int64", "dec",
        "minkey", "maxkey", "regex", "symbol", "undefined", "dbpointer", "null",
      ])
    #expect(document["double"] == .double(2))
    #expect(document["string"] == .string("hi"))
    #expect(document["doc.x"] == .int32(1))
    #expect(document["arr.1"] == .int32(2))
    #expect(document["int64"] == .int64(6))
    #expect(document["date"]?.type == .datetime)
    #expect(document["code"]?.type == .javascriptWithScope)
    #expect(document["dec"]?.type == .decimal128)
    #expect(document["dbpointer"]?.type == .dbPointer)
    #expect(document["null"] == .null)
  }

  @Test("all_types.bson: twenty documents, one per type", .enabled(if: directory != nil))
  func allTypes() throws {
    let outcome = try Self.read("all_types.bson")
    #expect(outcome.error == nil)
    #expect(outcome.documents.count == 20)
    // Each document is {_id, type, ex}; the file's "js_scope" example is plain JavaScript (0x0D)
    // and its second "max" is an int64, as the bytes say.
    let expected: [(String, BSONType)] = [
      ("binary", .binary), ("date", .datetime), ("timestamp", .timestamp), ("regex", .regex), ("oid", .objectId),
      ("undefined", .undefined), ("min", .minKey), ("max", .maxKey), ("max", .int64), ("dbpointer", .dbPointer),
      ("doc", .document), ("array", .array), ("js", .javascript), ("js_scope", .javascript), ("null", .null),
      ("true", .bool), ("false", .bool), ("string", .string), ("int", .double), ("float", .double),
    ]
    for (document, (name, type)) in zip(outcome.documents, expected) {
      #expect(document.keys == ["_id", "type", "ex"])
      #expect(document["type"] == .string(name))
      #expect(document["ex"]?.type == type, "\(name)")
    }
  }

  @Test("deep_nested.bson: 500 levels, over the limit of 100, readable when allowed", .enabled(if: directory != nil))
  func deepNested() throws {
    // bsondump prints this file (its test expects exit code 0); Reef's default limit is MongoDB's
    // documented 100 levels, so with defaults the reader refuses it at the 101st embedded document.
    let strict = try Self.read("deep_nested.bson")
    #expect(strict.documents.isEmpty)
    let error = try #require(strict.error)
    #expect(error.kind == .depthLimitExceeded)
    #expect(error.documentIndex == 0)
    // After the 4-byte length and the 17-byte _id element, each level is `03 "sub" 00` and the
    // embedded document's 4-byte length (9 bytes): the 101st embedded document starts at
    // 4 + 17 + 100 * 9 + 5 = 926. Its key path is 101 times "sub".
    #expect(error.offset == 926)
    #expect(error.keyPath == Array(repeating: "sub", count: 101))

    let lenient = try Self.read("deep_nested.bson", options: ValidationOptions(maximumDepth: 1000))
    #expect(lenient.error == nil)
    let document = try #require(lenient.documents.first)
    #expect(lenient.documents.count == 1)
    #expect(document.byteCount == 5022)
    let path = Array(repeating: "sub", count: 500).joined(separator: ".")
    #expect(document[path]?.type == .document)
    #expect(document[path + ".sub"] == nil)
  }

  @Test("sample.bson: the four documents of sample.json", .enabled(if: directory != nil))
  func sample() throws {
    let outcome = try Self.read("sample.bson")
    #expect(outcome.error == nil)
    #expect(outcome.documents.count == 4)
    #expect(outcome.documents.map(\.byteCount) == [82, 82, 48, 71])
    #expect(outcome.documents[3]["c.key"] == .string("value"))
    // sample.json holds the same documents as canonical Extended JSON, one per line.
    let jsonURL = try #require(Self.directory).appendingPathComponent("sample.json")
    let json = try String(contentsOf: jsonURL, encoding: .utf8)
    var parser = ExtendedJSONParser(json)
    var expected: [Document] = []
    while let document = try parser.nextDocument() { expected.append(document) }
    #expect(outcome.documents == expected)
  }

  // MARK: - Broken files

  @Test("bad_cstring.bson: a key whose terminator was overwritten", .enabled(if: directory != nil))
  func badCString() throws {
    // sample.bson with byte 0x22 changed from 00 to 01: the key "b" of the string at 0x20 runs
    // on as "b\u{1}\u{E}" into the string's length, and ends at its first zero byte (0x24). The
    // string length is then read from "00 00 49 20" ("\0\0I "), 541,655,040 bytes.
    let outcome = try Self.read("bad_cstring.bson")
    #expect(outcome.documents.isEmpty)
    let error = try #require(outcome.error)
    #expect(error.kind == .invalidLength)
    #expect(error.documentIndex == 0)
    #expect(error.offset == 0x25)
    #expect(error.keyPath == ["b\u{1}\u{E}"])
  }

  @Test(
    "onDamagedDocument: bad_type.bson and bad_cstring.bson give their three good documents",
    .enabled(if: directory != nil))
  func skippingReader() throws {
    for name in ["bad_type.bson", "bad_cstring.bson"] {
      let path = try #require(Self.directory).appendingPathComponent(name).path
      var reader = try BSONStreamReader(path: path)
      final class Errors { var list: [BSONError] = [] }
      let errors = Errors()
      reader.onDamagedDocument = { errors.list.append($0) }
      var documents: [Document] = []
      while let document = try reader.next() { documents.append(document) }
      #expect(documents.map(\.byteCount) == [82, 48, 71], "\(name)")
      #expect(errors.list.map(\.documentIndex) == [0], "\(name)")
      #expect(errors.list.map(\.offset) == [name == "bad_type.bson" ? 0x15 : 0x25], "\(name)")
      #expect(reader.documentsSkipped == 1)
      #expect(reader.documentsRead == 4)
      #expect(reader.bytesRead == 283)
    }
  }

  @Test("bad_type.bson: an undefined type byte", .enabled(if: directory != nil))
  func badType() throws {
    // sample.bson with the type byte of field "a" (offset 0x15, after the 17-byte _id element)
    // changed from 01 (double) to AA.
    let outcome = try Self.read("bad_type.bson")
    #expect(outcome.documents.isEmpty)
    let error = try #require(outcome.error)
    #expect(error.kind == .unknownType)
    #expect(error.documentIndex == 0)
    #expect(error.offset == 0x15)
    #expect(error.keyPath == ["a"])
  }

  @Test("broken_array.bson: an array key out of sequence", .enabled(if: directory != nil))
  func brokenArray() throws {
    // all_types.bson with one byte changed at 0x275: document 11 (the "array" example, at 561)
    // has array keys "0", "1", "9", "3".
    let outcome = try Self.read("broken_array.bson")
    #expect(outcome.documents.count == 11)
    let error = try #require(outcome.error)
    #expect(error.kind == .invalidArrayKey)
    #expect(error.documentIndex == 11)
    #expect(error.offset == 0x275)
    #expect(error.keyPath == ["ex", "9"])
  }

  @Test("invalid_field_name.bson: valid BSON, then a stray newline", .enabled(if: directory != nil))
  func invalidFieldName() throws {
    // sample.bson with document 1's "_id" renamed "a.d". A dot in a field name is valid BSON
    // (MongoDB's restriction on field names is a server rule, not a BSON one), so all four
    // documents read. But the file also ends with one extra byte, 0A (a newline): a fifth
    // document that is cut off inside its length prefix.
    let outcome = try Self.read("invalid_field_name.bson")
    #expect(outcome.documents.count == 4)
    #expect(outcome.documents[1].keys == ["a.d", "a", "b", "c", "d"])
    #expect(outcome.documents[1].value(forKey: "a.d")?.type == .objectId)
    let error = try #require(outcome.error)
    #expect(error.kind == .truncated)
    #expect(error.documentIndex == 4)
    #expect(error.offset == 283)
  }

  @Test("partial_file.bson: cut off inside the third document", .enabled(if: directory != nil))
  func partialFile() throws {
    // The first 177 bytes of sample.bson: document 2 starts at 164 and says it has 48 bytes,
    // but only 13 follow.
    let outcome = try Self.read("partial_file.bson")
    #expect(outcome.documents.count == 2)
    let error = try #require(outcome.error)
    #expect(error.kind == .truncated)
    #expect(error.documentIndex == 2)
    #expect(error.offset == 164)
  }

  @Test("random_bytes.bson: noise whose first four bytes claim 1.6 GB", .enabled(if: directory != nil))
  func randomBytes() throws {
    // 20 2B E1 60 is a length of 1,625,369,376: over the 16 MiB + 16 KiB limit.
    let outcome = try Self.read("random_bytes.bson")
    #expect(outcome.documents.isEmpty)
    let error = try #require(outcome.error)
    #expect(error.kind == .sizeLimitExceeded)
    #expect(error.documentIndex == 0)
    #expect(error.offset == 0)
    // Without a size limit the claim is checked against the file, which ends after 1,024 bytes
    // (and the reader does not allocate what the length claims).
    let unlimited = try Self.read("random_bytes.bson", options: ValidationOptions(maximumSize: Int(Int32.max)))
    #expect(unlimited.error?.kind == .truncated)
    #expect(unlimited.error?.documentIndex == 0)
    #expect(unlimited.error?.offset == 0)
  }
}
