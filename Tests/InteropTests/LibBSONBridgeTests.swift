import CLibBSON
import Foundation
import ReefBSON
import ReefLibBSON
import ReefTestSupport
import Testing

/// The `ReefLibBSON` bridge: zero-copy views, copies both ways, ownership, and the JSON helpers.
@Suite struct LibBSONBridgeTests {
  let sample: Document = ["name": "Ada", "n": 42, "pi": 3.5, "tags": ["a", "b"], "address": ["city": "London"]]

  @Test func withBSONTIsAZeroCopyView() {
    sample.withUnsafeBytes { raw in
      sample.withBSONT { bson in
        #expect(UnsafeRawPointer(bson_get_data(OpaquePointer(bson))) == raw.baseAddress)
        #expect(Int(bson.pointee.len) == raw.count)
        #expect(bson_count_keys(OpaquePointer(bson)) == 5)
      }
    }
  }

  @Test func withBSONTOnANestedView() throws {
    guard case .document(let address) = sample["address"] else {
      Issue.record("no address")
      return
    }
    let keys = address.withBSONT { bson in bson_count_keys(OpaquePointer(bson)) }
    #expect(keys == 1)
    #expect(try address.withBSONT { try Document(copying: $0) } == address)
  }

  @Test func copyingFromLibbsonValidates() throws {
    let b = bson_new()!
    defer { bson_destroy(b) }
    // (No C calls inside #expect: the macro evaluates arguments in closures, which would end the
    // lifetime of the implicit String-to-pointer conversions before the call.)
    var ok = bson_append_utf8(b, "name", -1, "Ada", -1)
    ok = ok && bson_append_int32(b, "n", -1, 42)
    #expect(ok)
    let doc = try Document(copying: b)
    #expect(doc["name"] == "Ada" && doc["n"] == 42)
    #expect(try Document(copying: UnsafePointer<bson_t>(b)) == doc)

    // libbson appends any bytes as a string; Reef's validator refuses invalid UTF-8.
    let bad: [CChar] = [CChar(bitPattern: 0xE9), 0]
    ok = bson_append_utf8(b, "bad", -1, bad, 1)
    #expect(ok)
    #expect(throws: BSONError.self) { try Document(copying: b) }
    do {
      _ = try Document(copying: b)
    } catch {
      #expect(error.kind == .invalidUTF8 && error.keyPath == ["bad"])
    }
  }

  @Test func makeBSONTIsAnOwnedCopy() throws {
    let copy = sample.makeBSONT()
    defer { bson_destroy(OpaquePointer(copy)) }
    sample.withUnsafeBytes { raw in
      #expect(UnsafeRawPointer(bson_get_data(OpaquePointer(copy))) != raw.baseAddress)
    }
    #expect(try Document(copying: copy) == sample)
    let appended = bson_append_bool(OpaquePointer(copy), "extra", -1, true)  // a heap bson_t is mutable
    #expect(appended)
    #expect(try Document(copying: copy)["extra"] == true)
  }

  @Test func libBSONDocumentOwnsItsCopy() throws {
    let owned = LibBSONDocument(sample)
    #expect(owned.byteCount == sample.byteCount)
    #expect(try owned.document() == sample)
    let second = sample.withBSONT { LibBSONDocument(copying: $0) }
    #expect(try second.document() == sample)
    let appended = owned.withBSONT { bson_append_null(OpaquePointer($0), "z", -1) }
    #expect(appended)
    #expect(try owned.document()["z"] == .null)
    #expect(try second.document()["z"] == nil)
  }

  @Test func libbsonExtendedJSON() throws {
    let doc: Document = ["n": 1, "d": .datetime(BSONDateTime(millisecondsSinceEpoch: 0))]
    let canonical = try #require(doc.libbsonExtendedJSON(.canonical))
    let relaxed = try #require(doc.libbsonExtendedJSON(.relaxed))
    #expect(canonical == #"{ "n" : { "$numberInt" : "1" }, "d" : { "$date" : { "$numberLong" : "0" } } }"#)
    #expect(relaxed == #"{ "n" : 1, "d" : { "$date" : "1970-01-01T00:00:00Z" } }"#)
  }

  @Test func libbsonJSONParser() throws {
    let doc = try Document(libbsonJSON: #"{"a": {"$numberLong": "5"}, "b": [true, null]}"#)
    #expect(doc["a"] == .int64(5))
    #expect(doc["b.1"] == .null)
    for bad in ["", "{", #"{"a": {"$numberLong": 5}}"#] {
      #expect {
        try Document(libbsonJSON: bad)
      } throws: { ($0 as? BSONError)?.kind == .invalidJSON }
    }
  }
}

/// ``LibBSONVerdict`` against the BSON corpus and against the gaps of libbson 1.23 that it closes.
@Suite struct LibBSONVerdictTests {
  struct CorpusCase: CustomTestStringConvertible, Sendable {
    var name: String
    var hex: String
    var expectValid: Bool
    var degenerateArray: Bool
    var testDescription: String { name }
  }

  static let corpus: [CorpusCase] = {
    let dir =
      getenvString("BSON_CORPUS_DIR") ?? sharedDirectory("the BSON corpus").map { $0 + "/bson-corpus" } ?? ""
    guard let files = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return [] }
    var out: [CorpusCase] = []
    for file in files.sorted() where file.hasSuffix(".json") {
      guard let data = FileManager.default.contents(atPath: dir + "/" + file),
        let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
      else { continue }
      for v in json["valid"] as? [[String: Any]] ?? [] {
        let name = "\(file): \(v["description"] as? String ?? "?")"
        if let hex = v["canonical_bson"] as? String {
          out.append(CorpusCase(name: name, hex: hex, expectValid: true, degenerateArray: false))
        }
        if let hex = v["degenerate_bson"] as? String {
          out.append(
            CorpusCase(name: name + " (degenerate)", hex: hex, expectValid: true, degenerateArray: file == "array.json")
          )
        }
      }
      for v in json["decodeErrors"] as? [[String: Any]] ?? [] {
        guard let hex = v["bson"] as? String else { continue }
        out.append(
          CorpusCase(
            name: "\(file): \(v["description"] as? String ?? "?")", hex: hex, expectValid: false, degenerateArray: false
          ))
      }
    }
    return out
  }()

  @Test(arguments: corpus)
  func verdictMatchesTheCorpus(_ c: CorpusCase) {
    let verdict = LibBSONVerdict(checking: bytes(hex: c.hex))
    #expect(verdict.isValid == c.expectValid, "\(verdict)")
    if c.expectValid {
      let kinds = Set(verdict.leniencies.map(\.kind))
      #expect(kinds == (c.degenerateArray ? [.arrayKeyNotIndex] : []), "\(verdict)")
    }
  }

  /// Inputs that libbson 1.23's `bson_validate` accepts (DESIGN.md) and the oracle rejects.
  @Test(arguments: [
    // {"a": "\xE9"}: invalid UTF-8 in a string value.
    ("0E00000002610002000000E90000", LibBSONVerdict.Reason.stringUTF8),
    // {"a": "\xED\xA0\x80"}: a UTF-16 surrogate encoded in UTF-8.
    ("1000000002610004000000EDA0800000", .stringUTF8),
    // {"a": Code("\xE9")} and {"a": Symbol("\xE9")}.
    ("0E0000000D610002000000E90000", .stringUTF8),
    ("0E0000000E610002000000E90000", .stringUTF8),
    // {"a": DBPointer("\xE9", …)}.
    ("1A0000000C610002000000E90056E1FC72E0C917E9C471416100", .stringUTF8),
    // {"a": CodeWithScope("abc", {"x": 1}), "b": "\xE9"}: bson_validate stops at code with scope.
    ("290000000F61001800000004000000616263000C000000107800010000000002620002000000E90000", .stringUTF8),
    // {"a": CodeWithScope("abc", {"b": "\xE9"})}: the scope is checked.
    ("220000000F61001A00000004000000616263000E00000002620002000000E9000000", .stringUTF8),
    // {"a": {"b": null}} whose embedded document ends in 0x01 instead of 0x00.
    ("10000000036100080000000A62000100", .nestedEnvelope),
  ])
  func closesLibbsonGaps(hex: String, reason: LibBSONVerdict.Reason) {
    let verdict = LibBSONVerdict(checking: bytes(hex: hex))
    #expect(verdict.reason == reason, "\(verdict)")
    #expect(verdict.bsonValidateAccepted == true, "bson_validate alone rejects \(hex)")
    #expect(throws: BSONError.self) { try Document(bytes: bytes(hex: hex)) }
  }

  @Test func recordsLeniencies() {
    let overlong = LibBSONVerdict(checking: bytes(hex: "0F00000002610003000000C0800000"))
    #expect(overlong.isValid && overlong.leniencies == [.init(.overlongNull, offset: 11)])
    let arrayKey = LibBSONVerdict(checking: bytes(hex: "140000000461000C0000001031000A0000000000"))
    #expect(arrayKey.isValid && arrayKey.leniencies == [.init(.arrayKeyNotIndex, offset: 12)])
    var deep = [UInt8]([5, 0, 0, 0, 0])
    for _ in 0..<101 { deep = singleElementBytes(type: 0x03, value: deep) }
    let tooDeep = LibBSONVerdict(checking: deep)
    #expect(tooDeep.isValid && tooDeep.maximumDepth == 101)
    #expect(tooDeep.leniencies.map(\.kind) == [.deeperThanMongoDBLimit])
    // Far deeper: the oracle stops at its own recursion limit instead of overflowing the stack.
    for _ in 0..<2_000 { deep = singleElementBytes(type: 0x03, value: deep) }
    #expect(LibBSONVerdict(checking: deep).reason == .oracleRecursionLimit)
  }
}
