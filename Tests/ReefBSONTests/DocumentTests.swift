import ReefBSON
import ReefTestSupport
import Testing

@Suite("Document")
struct DocumentTests {
  let contact: Document = [
    "_id": .objectId(ObjectId("64b7f1a2c3d4e5f601234567")!),
    "name": "Nick Riviera",
    "address": ["street": "123 Fake St", "city": "Springfield", "postalCode": "90710"],
    "addresses": [["city": "Los Angeles"], ["city": "New York City"]],
    "tags": ["a", "b", 3],
  ]

  @Test func literalBuildsExpectedBytes() throws {
    let doc: Document = ["a": 1]
    #expect(doc.bytes == singleElementBytes(type: 0x10, value: le32(1)))
    let big: Document = ["a": 5_000_000_000]
    #expect(big.bytes == singleElementBytes(type: 0x12, value: le64(5_000_000_000)))
    #expect(Document().bytes == [5, 0, 0, 0, 0])
    #expect(Document().isEmpty)
  }

  @Test func iterationKeepsOrderAndTypes() {
    #expect(contact.keys == ["_id", "name", "address", "addresses", "tags"])
    #expect(contact.map(\.type) == [.objectId, .string, .document, .array, .array])
    #expect(contact.count == 5)
  }

  @Test func lookupByKeyAndDottedPath() {
    #expect(contact["name"] == "Nick Riviera")
    #expect(contact["address.city"] == "Springfield")
    #expect(contact["addresses.1.city"] == "New York City")
    #expect(contact["tags.2"] == 3)
    #expect(contact["address.missing"] == nil)
    #expect(contact["name.first"] == nil)
    #expect(contact["addresses.7.city"] == nil)
    #expect(contact["nope"] == nil)
  }

  @Test func nestedViewsShareBytes() throws {
    guard case .document(let address)? = contact["address"] else {
      Issue.record("address is not a document")
      return
    }
    #expect(address["city"] == "Springfield")
    #expect(address.keys == ["street", "city", "postalCode"])
    let copy = try Document(bytes: address.bytes)
    #expect(copy == address)
  }

  @Test func arrayView() {
    guard case .array(let tags)? = contact["tags"] else {
      Issue.record("tags is not an array")
      return
    }
    #expect(Array(tags) == ["a", "b", 3])
    #expect(tags.count == 3)
    #expect(tags[1] == "b")
    #expect(tags[3] == nil)
    #expect(tags[-1] == nil)
  }

  @Test func pathLookupFindsKeysOfEveryLengthAndScript() throws {
    // Keys are scanned eight bytes at a time, with a shortcut that non-ASCII bytes must not fool;
    // regular expressions are skipped the same way. Every key must still be found, in order.
    var pairs: [(String, BSON)] = []
    for length in 1...20 {
      pairs.append((String(repeating: "k", count: length - 1) + "\(length % 10)", .int32(Int32(length))))
    }
    let unusual = [
      "cl\u{e9}", "\u{444}\u{430}\u{439}\u{43b}", "\u{65e5}\u{672c}\u{8a9e}\u{30ad}\u{30fc}", "\u{80}x", "x\u{1F600}y",
    ]
    for (i, key) in unusual.enumerated() {
      pairs.append((key, .string("v\(i)")))
      pairs.append(("re\(i)", .regex(BSONRegularExpression(pattern: "^\(key).*$", options: "i"))))
    }
    pairs.append(("nested", .document(["\u{e9}t\u{e9}": ["list": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]]])))
    let doc = try Document(bytes: Document(pairs).bytes)
    for (key, value) in pairs where !key.contains(".") {
      #expect(doc[key] == value, "key \(String(reflecting: key))")
      #expect(doc.element(atPath: key)?.equals(value) == true, "key \(String(reflecting: key))")
    }
    #expect(doc["nested.\u{e9}t\u{e9}.list.11"] == 12)
    #expect(doc["nested.\u{e9}t\u{e9}.list.12"] == nil)
    #expect(doc["cl\u{e9}x"] == nil)
    #expect(doc["\u{80}"] == nil)
  }

  @Test func pathLookupTellsApartKeysThatDifferInOneByte() throws {
    // Same length, same first byte: the key compare must look at every byte.
    for length in 2...20 {
      var pairs: [(String, BSON)] = []
      for position in 1..<length {
        var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
        bytes[position] = UInt8(ascii: "b")
        pairs.append((String(decoding: bytes, as: UTF8.self), .int32(Int32(position))))
      }
      let doc = Document(pairs)
      for (key, value) in pairs {
        #expect(doc[key] == value, "\(key)")
      }
      #expect(doc[String(repeating: "a", count: length)] == nil)
    }
  }

  @Test func pathLookupFindsKeysNearTheEndOfSmallDocuments() throws {
    // The last few bytes before a document's terminator are scanned as one shifted word.
    for length in 0...12 {
      let key = String(repeating: "z", count: length)
      for last: BSON in [.null, .bool(true), .int32(3), .string("")] {
        let inner = Document([(key, last)])
        let doc = try Document(bytes: Document([("a", .int32(1)), ("d", .document(inner)), (key, last)]).bytes)
        #expect(doc.element(forKey: key)?.equals(last) == true, "key of length \(length), \(last)")
        #expect(inner.element(forKey: key)?.equals(last) == true, "alone, key of length \(length), \(last)")
        if length > 0 { #expect(doc["d.\(key)"] == last, "nested key of length \(length), \(last)") }
        #expect(doc.element(forKey: key + "z") == nil)
      }
    }
  }

  @Test func elementEqualsAgreesWithDecodedEquality() throws {
    let id = ObjectId("64b7f1a2c3d4e5f601234567")!
    let values: [BSON] = [
      .double(1.5), .double(-0.0), .double(0.0), .double(.nan), .string(""), .string("abc"), .string("caf\u{e9}"),
      .string("cafe\u{301}"), .string("K"), .string("\u{212A}"), .document(["a": 1]), .document([:]),
      .array([1, "x"]), .array([]), .binary(Binary(data: [1, 2])), .undefined, .objectId(id),
      .objectId(ObjectId("64b7f1a2c3d4e5f601234568")!), .bool(true), .bool(false),
      .datetime(BSONDateTime(millisecondsSinceEpoch: -5)), .null,
      .regex(BSONRegularExpression(pattern: "a", options: "i")), .dbPointer(DBPointer(ref: "db.c", id: id)),
      .javascript("f()"), .symbol("abc"), .javascriptWithScope(JavaScriptWithScope(code: "x", scope: ["y": 1])),
      .int32(7), .int32(-7), .timestamp(BSONTimestamp(timestamp: 1, increment: 2)),
      .timestamp(BSONTimestamp(timestamp: 2, increment: 1)), .int64(7), .decimal128(Decimal128(high: 1, low: 2)),
      .decimal128(Decimal128(high: 2, low: 1)), .minKey, .maxKey,
    ]
    let doc = Document(values.enumerated().map { ("v\($0.offset)", $0.element) })
    for element in doc {
      for value in values {
        #expect(
          element.equals(value) == (element.value == value),
          "\(element.key) (\(element.value)) against \(value)")
      }
    }
    // Canonically equivalent strings are equal as Swift strings, so equals says so too.
    #expect(doc.element(atPath: "v6")?.equals("cafe\u{301}") == true)
    #expect(doc.element(atPath: "v9")?.equals("\u{212A}") == true)
    #expect(doc.element(atPath: "v8")?.equals("k") == false)
  }

  @Test func keyWithDotIsReachableByExactKey() {
    let doc: Document = ["a.b": 1, "a": ["b": 2]]
    #expect(doc.value(forKey: "a.b") == 1)
    #expect(doc["a.b"] == 2)
  }

  @Test func mutation() {
    var doc: Document = ["a": 1, "b": 2]
    doc.append("x", forKey: "c")
    #expect(doc.keys == ["a", "b", "c"])
    doc.set(.bool(true), forKey: "b")
    #expect(doc.keys == ["a", "b", "c"])
    #expect(doc["b"] == true)
    doc.insert(.null, forKey: "first", at: 0)
    #expect(doc.keys == ["first", "a", "b", "c"])
    #expect(doc.removeValue(forKey: "a") == 1)
    #expect(doc.removeValue(forKey: "a") == nil)
    doc[key: "c"] = nil
    #expect(doc.keys == ["first", "b"])
    doc[key: "z"] = 9
    #expect(doc == ["first": nil, "b": true, "z": 9])
  }

  @Test func builderNestedInPlace() throws {
    var builder = DocumentBuilder()
    builder.append("name", "Ada")
    builder.appendDocument("address") { address in
      address.append("city", "London")
      address.appendArray("lines") { lines in
        lines.append("1 Main St")
        lines.appendDocument { $0.append("flat", 2) }
      }
    }
    builder.append("n", Int64(7))
    let built = builder.document
    let literal: Document = [
      "name": "Ada", "address": ["city": "London", "lines": ["1 Main St", ["flat": 2]]], "n": .int64(7),
    ]
    #expect(built == literal)
    // The builder's output is valid BSON by the validator's standards.
    #expect(try Document(bytes: built.bytes) == literal)
  }

  @Test func documentsFromABuilderNeverChangeWhenItGoesOn() throws {
    var builder = DocumentBuilder(capacity: 16)
    builder.append("a", Int32(1))
    let first = builder.document
    let firstBytes = first.bytes
    for i in 0..<100 { builder.append("k\(i)", "value \(i)") }
    let second = builder.document
    #expect(first.bytes == firstBytes, "the first document must not see later appends")
    #expect(first == ["a": 1])
    #expect(second.count == 101)
    #expect(try Document(bytes: second.bytes) == second)
    var copy = builder
    copy.append("only-in-copy", true)
    #expect(builder.document.count == 101, "builders are values")
    #expect(copy.document.count == 102)
  }

  @Test func everyTypeRoundTripsThroughBytes() throws {
    let scope: Document = ["x": 1]
    let values: [BSON] = [
      .double(-0.0), .double(.nan), .double(Double(bitPattern: 0x7FF0_0000_0000_0001)), .double(.leastNonzeroMagnitude),
      .string("h\u{e9}llo \u{1F600}\0x"), .document(["a": 1]), .array([1, "two"]),
      .binary(Binary(subtype: .generic, data: [1, 2, 3])), .binary(Binary(subtype: .binaryOld, data: [9, 9])),
      .binary(Binary(subtype: .uuid, data: Array(0..<16))), .undefined, .objectId(ObjectId()), .bool(true),
      .datetime(BSONDateTime(millisecondsSinceEpoch: .min)), .datetime(BSONDateTime(millisecondsSinceEpoch: .max)),
      .null, .regex(BSONRegularExpression(pattern: "^a.*b$", options: "mi")),
      .dbPointer(DBPointer(ref: "db.coll", id: ObjectId("0123456789abcdef01234567")!)), .javascript("f()"),
      .symbol("sym"), .javascriptWithScope(JavaScriptWithScope(code: "x", scope: scope)), .int32(.min),
      .timestamp(BSONTimestamp(timestamp: .max, increment: 1)), .int64(.max),
      .decimal128(Decimal128(high: 0x3040_0000_0000_0000, low: 1)), .minKey, .maxKey,
    ]
    for (i, value) in values.enumerated() {
      let doc = Document([("v\(i)", value)])
      let reread = try Document(bytes: doc.bytes)
      #expect(reread["v\(i)"] == value, "value \(i) (\(value.type)) did not round-trip")
      #expect(reread["v\(i)"]?.type == value.type)
    }
  }

  @Test func regexOptionsAreSortedWhenBuilt() {
    #expect(BSONRegularExpression(pattern: "a", options: "xsmi").options == "imsx")
  }

  @Test func equalityIsExact() {
    #expect(BSON.double(0.0) != BSON.double(-0.0))
    #expect(BSON.double(.nan) == BSON.double(.nan))
    #expect(BSON.int32(1) != BSON.int64(1))
    let a: Document = ["a": 1, "b": 2]
    let b: Document = ["b": 2, "a": 1]
    #expect(a != b, "key order is significant, as in MongoDB")
  }

  @Test func keyWithZeroByteIsAPrecondition() async {
    await #expect(processExitsWith: .failure) {
      var builder = DocumentBuilder()
      builder.append("a\0b", 1)
    }
    // Keys are checked word by word while they are copied: a zero in the last byte of a long key.
    await #expect(processExitsWith: .failure) {
      var builder = DocumentBuilder()
      builder.appendDocument("abcdefghijklmnopq\0") { $0.appendNull("x") }
    }
  }

  @Test func keysOfEveryShortLengthAreCopiedExactly() throws {
    // The key copy works in 1-, 4- and 8-byte pieces that overlap; every length up to 40.
    var builder = DocumentBuilder(capacity: 16)
    var expected: [(String, BSON)] = []
    for length in 0...40 {
      let key = String((0..<length).map { Character(UnicodeScalar(UInt8(0x41 + ($0 * 7 + length) % 26))) })
      builder.append(key, Int32(length))
      expected.append((key, .int32(Int32(length))))
    }
    let built = builder.document
    #expect(try Document(bytes: built.bytes) == built)
    #expect(built == Document(expected))
    #expect(built.map(\.key) == expected.map(\.0))
  }

  @Test func throwingNestedBuildKeepsTheDocumentValid() throws {
    struct Stop: Error {}
    var builder = DocumentBuilder()
    #expect(throws: Stop.self) {
      try builder.appendDocument("d") { d throws(Stop) in
        d.append("a", Int32(1))
        throw Stop()
      }
    }
    #expect(throws: Stop.self) {
      try builder.appendArray("list") { list throws(Stop) in
        list.append(.int32(2))
        throw Stop()
      }
    }
    builder.append("after", true)
    let built = builder.document
    #expect(try Document(bytes: built.bytes) == ["d": ["a": 1], "list": [2], "after": true])
  }
}

@Suite("ObjectId")
struct ObjectIdTests {
  @Test func hexRoundTrip() throws {
    let id = try #require(ObjectId("64B7F1A2c3d4e5f601234567"))
    #expect(id.hex == "64b7f1a2c3d4e5f601234567")
    #expect(id.timestamp == 0x64B7_F1A2)
    #expect(ObjectId("64b7f1a2c3d4e5f60123456") == nil)
    #expect(ObjectId("64b7f1a2c3d4e5f60123456g") == nil)
  }

  @Test func generationFollowsTheSpec() {
    let a = ObjectId(timestamp: 0x0102_0304)
    let b = ObjectId(timestamp: 0x0102_0304)
    #expect(Array(a.byteArray[0..<4]) == [1, 2, 3, 4])
    #expect(a.byteArray[4..<9] == b.byteArray[4..<9], "the 5 random bytes are per process")
    let counterA = Int(a.byteArray[9]) << 16 | Int(a.byteArray[10]) << 8 | Int(a.byteArray[11])
    let counterB = Int(b.byteArray[9]) << 16 | Int(b.byteArray[10]) << 8 | Int(b.byteArray[11])
    #expect((counterA + 1) & 0xFF_FFFF == counterB, "the counter increments")
    #expect(a < b || counterB == 0)
    let now = ObjectId()
    #expect(now.timestamp > 1_700_000_000)
  }
}

@Suite("ISO8601")
struct ISO8601Tests {
  @Test func formatAndParse() {
    #expect(ISO8601.format(milliseconds: 0) == "1970-01-01T00:00:00Z")
    #expect(ISO8601.format(milliseconds: 1_704_189_600_123) == "2024-01-02T10:00:00.123Z")
    #expect(ISO8601.format(milliseconds: -1) == "1969-12-31T23:59:59.999Z")
    #expect(ISO8601.format(milliseconds: 253_402_300_800_000) == nil, "year 10000")
    #expect(ISO8601.parse("2024-01-02T10:00:00.123Z") == 1_704_189_600_123)
    #expect(ISO8601.parse("2024-01-02T12:00:00+02:00") == 1_704_189_600_000)
    #expect(ISO8601.parse("2024-01-02T05:00:00-0500") == 1_704_189_600_000)
    #expect(ISO8601.parse("1960-02-29T00:00:00Z") == -310_521_600_000)
    #expect(ISO8601.parse("2024-13-02T10:00:00Z") == nil)
    #expect(ISO8601.parse("2024-01-02") == nil)
    #expect(ISO8601.parse("2024-01-02T10:00:00") == nil, "a zone is required")
  }

  @Test func roundTripsOverFourCenturies() {
    var ms: Int64 = -2_208_988_800_000  // 1900
    while ms < 10_000_000_000_000 {
      let s = ISO8601.format(milliseconds: ms)!
      #expect(ISO8601.parse(s) == ms, "\(s)")
      ms += 86_400_000 * 37 + 3_600_001
    }
  }
}

@Suite struct DocumentCopyTests {
  @Test func copiedOwnsItsBytes() throws {
    var bytes: [UInt8] = try Document(extendedJSON: #"{"a": "x", "b": [1, 2]}"#).bytes
    let copy = try bytes.withUnsafeBytes { raw in try Document(bytesNoCopy: raw, owner: nil).copied() }
    _ = bytes.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) }
    #expect(copy == (try Document(extendedJSON: #"{"a": "x", "b": [1, 2]}"#)))
    #expect(copy["b.1"] == .int32(2))
  }
}
