import ReefBSON
import ReefTestSupport
import Testing

/// The Extended JSON writer: exact text in both modes, compact and pretty.
@Suite struct ExtendedJSONWriterTests {
  let oid = ObjectId("57e193d7a9cc81b4027498b5")!

  @Test func compactCanonicalAndRelaxed() throws {
    let doc: Document = ["a": 1, "b": .int64(2), "c": 1.5, "d": "x", "e": true, "f": nil]
    #expect(
      doc.extendedJSON(.canonical)
        == #"{"a":{"$numberInt":"1"},"b":{"$numberLong":"2"},"c":{"$numberDouble":"1.5"},"d":"x","e":true,"f":null}"#)
    #expect(doc.extendedJSON(.relaxed) == #"{"a":1,"b":2,"c":1.5,"d":"x","e":true,"f":null}"#)
    #expect(doc.description == doc.extendedJSON(.relaxed))
    #expect(doc.debugDescription == doc.extendedJSON(.canonical))
  }

  @Test func everyType() throws {
    var scopeBuilder = DocumentBuilder()
    scopeBuilder.append("x", Int32(1))
    let doc = Document([
      ("double", .double(-1.0)),
      ("string", .string("s")),
      ("doc", .document(["k": "v"])),
      ("array", .array([1, 2])),
      ("binary", .binary(Binary(subtype: .userDefined, data: [1, 2, 3, 4, 5]))),
      ("undefined", .undefined),
      ("oid", .objectId(oid)),
      ("bool", .bool(false)),
      ("date", .datetime(BSONDateTime(millisecondsSinceEpoch: 1_356_351_330_501))),
      ("null", .null),
      ("regex", .regex(BSONRegularExpression(pattern: "a/b", options: "xi"))),
      ("pointer", .dbPointer(DBPointer(ref: "db.c", id: oid))),
      ("code", .javascript("f()")),
      ("symbol", .symbol("sym")),
      ("scoped", .javascriptWithScope(JavaScriptWithScope(code: "g()", scope: scopeBuilder.document))),
      ("int32", .int32(-7)),
      ("timestamp", .timestamp(BSONTimestamp(timestamp: 42, increment: 1))),
      ("int64", .int64(Int64.min)),
      ("min", .minKey),
      ("max", .maxKey),
    ])
    let expected =
      #"{"double":{"$numberDouble":"-1.0"},"string":"s","doc":{"k":"v"},"#
      + #""array":[{"$numberInt":"1"},{"$numberInt":"2"}],"binary":{"$binary":{"base64":"AQIDBAU=","subType":"80"}},"#
      + #""undefined":{"$undefined":true},"oid":{"$oid":"57e193d7a9cc81b4027498b5"},"bool":false,"#
      + #""date":{"$date":{"$numberLong":"1356351330501"}},"null":null,"#
      + #""regex":{"$regularExpression":{"pattern":"a/b","options":"ix"}},"#
      + #""pointer":{"$dbPointer":{"$ref":"db.c","$id":{"$oid":"57e193d7a9cc81b4027498b5"}}},"#
      + #""code":{"$code":"f()"},"symbol":{"$symbol":"sym"},"#
      + #""scoped":{"$code":"g()","$scope":{"x":{"$numberInt":"1"}}},"int32":{"$numberInt":"-7"},"#
      + #""timestamp":{"$timestamp":{"t":42,"i":1}},"int64":{"$numberLong":"-9223372036854775808"},"#
      + #""min":{"$minKey":1},"max":{"$maxKey":1}}"#
    #expect(doc.extendedJSON(.canonical) == expected)
    // Parsing the canonical text gives the same bytes back.
    #expect(try Document(extendedJSON: expected) == doc)
  }

  @Test(arguments: [
    (1.0, "1.0"), (-1.0, "-1.0"), (0.0, "0.0"), (-0.0, "-0.0"), (0.1, "0.1"), (42.42, "42.42"),
    (1e300, "1.0E+300"), (1e-7, "1.0E-7"), (1.5e-5, "1.5E-5"), (1.2345678921232e18, "1.2345678921232E+18"),
    (1e15, "1000000000000000.0"), (1e16, "1.0E+16"), (Double.leastNonzeroMagnitude, "5.0E-324"),
    (1.7976931348623157e308, "1.7976931348623157E+308"), (0.30000000000000004, "0.30000000000000004"),
  ])
  func doubles(value: Double, text: String) throws {
    let doc: Document = ["d": .double(value)]
    #expect(doc.extendedJSON(.relaxed) == #"{"d":\#(text)}"#)
    #expect(doc.extendedJSON(.canonical) == #"{"d":{"$numberDouble":"\#(text)"}}"#)
    // The text reads back to the same bits, as a double, in both modes.
    #expect(try Document(extendedJSON: doc.extendedJSON(.relaxed)) == doc)
    #expect(try Document(extendedJSON: doc.extendedJSON(.canonical)) == doc)
  }

  @Test func nonFiniteDoubles() throws {
    let doc: Document = ["a": .double(.infinity), "b": .double(-.infinity), "c": .double(.nan)]
    let expected = #"{"a":{"$numberDouble":"Infinity"},"b":{"$numberDouble":"-Infinity"},"c":{"$numberDouble":"NaN"}}"#
    #expect(doc.extendedJSON(.relaxed) == expected)
    #expect(doc.extendedJSON(.canonical) == expected)
  }

  @Test func integersAtTheirLimits() throws {
    let doc: Document = [
      "a": .int32(.min), "b": .int32(.max), "c": .int64(.min), "d": .int64(.max), "e": .int32(0), "f": .int64(-10),
    ]
    #expect(
      doc.extendedJSON(.relaxed)
        == #"{"a":-2147483648,"b":2147483647,"c":-9223372036854775808,"d":9223372036854775807,"e":0,"f":-10}"#)
  }

  @Test func datesInBothModes() throws {
    func json(_ ms: Int64, _ mode: ExtendedJSONMode) -> String {
      let doc: Document = ["d": .datetime(BSONDateTime(millisecondsSinceEpoch: ms))]
      return doc.extendedJSON(mode)
    }
    #expect(json(0, .relaxed) == #"{"d":{"$date":"1970-01-01T00:00:00Z"}}"#)
    #expect(json(1_356_351_330_001, .relaxed) == #"{"d":{"$date":"2012-12-24T12:15:30.001Z"}}"#)
    #expect(json(253_402_300_799_999, .relaxed) == #"{"d":{"$date":"9999-12-31T23:59:59.999Z"}}"#)
    #expect(json(253_402_300_800_000, .relaxed) == #"{"d":{"$date":{"$numberLong":"253402300800000"}}}"#)
    #expect(json(-1, .relaxed) == #"{"d":{"$date":{"$numberLong":"-1"}}}"#)
    #expect(json(0, .canonical) == #"{"d":{"$date":{"$numberLong":"0"}}}"#)
  }

  @Test func stringEscapes() throws {
    let text = "quote\" backslash\\ tab\t newline\n nul\u{0} bell\u{7} del\u{7F} é ☆ 😀 /"
    let doc: Document = ["k\"ey": .string(text)]
    #expect(
      doc.extendedJSON()
        == #"{"k\"ey":"quote\" backslash\\ tab\t newline\n nul\u0000 bell\u0007 del"# + "\u{7F} é ☆ 😀 /\"}")
    #expect(try Document(extendedJSON: doc.extendedJSON()) == doc)
  }

  @Test func longStringsEscapeAtEveryPosition() throws {
    // The writer and parser scan eight bytes at a time: put the special byte at each offset.
    for length in [1, 7, 8, 9, 15, 16, 17, 40] {
      for at in 0..<length {
        for special in ["\"", "\\", "\n", "\u{1F}", "é"] {
          var chars = Array(repeating: "a", count: length)
          chars[at] = special
          let doc: Document = ["s": .string(chars.joined())]
          let json = doc.extendedJSON()
          #expect(try Document(extendedJSON: json) == doc, "length \(length), \(special) at \(at): \(json)")
        }
      }
    }
  }

  @Test func binaryForms() throws {
    let old: Document = ["x": .binary(Binary(subtype: .binaryOld, data: [0xFF, 0xFF]))]
    #expect(old.extendedJSON() == #"{"x":{"$binary":{"base64":"//8=","subType":"02"}}}"#)
    #expect(hexString(old.bytes) == "13000000057800060000000202000000FFFF00")
    for (data, base64) in [([UInt8](), ""), ([1], "AQ=="), ([1, 2], "AQI="), ([1, 2, 3], "AQID")] {
      let doc: Document = ["x": .binary(Binary(subtype: .init(rawValue: 0x8A), data: data))]
      #expect(doc.extendedJSON() == #"{"x":{"$binary":{"base64":"\#(base64)","subType":"8a"}}}"#)
    }
  }

  @Test func regexOptionsAreSorted() throws {
    // Stored out of order (as old data may be), written in order.
    let bytes = bytes(hex: "100000000B6100616263006D69780000")
    let doc = try Document(bytes: bytes)
    #expect(doc.extendedJSON() == #"{"a":{"$regularExpression":{"pattern":"abc","options":"imx"}}}"#)
  }

  @Test func pretty() throws {
    let doc: Document = [
      "a": 1, "b": ["c": [1, 2], "e": [:], "f": []], "_id": .objectId(oid),
      "t": .timestamp(BSONTimestamp(timestamp: 1, increment: 2)),
    ]
    let expected = """
      {
        "a": 1,
        "b": {
          "c": [
            1,
            2
          ],
          "e": {},
          "f": []
        },
        "_id": {"$oid": "57e193d7a9cc81b4027498b5"},
        "t": {"$timestamp": {"t": 1, "i": 2}}
      }
      """
    #expect(doc.extendedJSON(.relaxed, pretty: true) == expected)
    #expect(Document().extendedJSON(pretty: true) == "{}")
  }

  @Test func prettyCodeWithScope() throws {
    let doc: Document = ["f": .javascriptWithScope(JavaScriptWithScope(code: "x", scope: ["y": 1]))]
    let expected = """
      {
        "f": {
          "$code": "x",
          "$scope": {
            "y": {"$numberInt": "1"}
          }
        }
      }
      """
    #expect(doc.extendedJSON(.canonical, pretty: true) == expected)
    #expect(try Document(extendedJSON: expected) == doc)
  }

  @Test func appendKeepsWhatIsThere() throws {
    var out = Array("x=".utf8)
    let doc: Document = ["a": 1]
    doc.appendExtendedJSON(to: &out, mode: .canonical)
    #expect(String(decoding: out, as: UTF8.self) == #"x={"a":{"$numberInt":"1"}}"#)
  }
}

/// The Extended JSON parser: values, wrappers, legacy forms, and errors with their positions.
@Suite struct ExtendedJSONParserTests {
  func parse(_ text: String) throws -> Document { try Document(extendedJSON: text) }

  /// The error parsing `text` throws (a failed expectation when it parses).
  func failure(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> BSONError? {
    do {
      let doc = try Document(extendedJSON: text)
      Issue.record("expected \(text) to fail, parsed \(doc)", sourceLocation: sourceLocation)
      return nil
    } catch {
      return error
    }
  }

  @Test func relaxedNumbers() throws {
    let doc = try parse(
      #"{"a": 1, "b": -2147483648, "c": 2147483648, "d": -9223372036854775808, "e": 9223372036854775808, "#
        + #""f": 1.5, "g": 1e2, "h": -0, "i": -0.0, "j": 0.000001, "k": 123456789012345678901234567890}"#)
    #expect(doc["a"] == .int32(1))
    #expect(doc["b"] == .int32(.min))
    #expect(doc["c"] == .int64(2_147_483_648))
    #expect(doc["d"] == .int64(.min))
    #expect(doc["e"] == .double(9_223_372_036_854_775_808))
    #expect(doc["f"] == .double(1.5))
    #expect(doc["g"] == .double(100))
    #expect(doc["h"] == .int32(0))
    #expect(doc["i"] == .double(-0.0))
    #expect(doc["j"] == .double(0.000001))
    #expect(doc["k"] == .double(Double("123456789012345678901234567890")!))
  }

  @Test(arguments: [
    "0.1", "3.141592653589793", "2.2250738585072014e-308", "4.9e-324", "1.7976931348623157e308", "123456789.123456789",
    "9007199254740993", "0.30000000000000004", "1e22", "1e23", "8.41e21", "-1.5E-10",
  ])
  func doublesAreCorrectlyRounded(text: String) throws {
    let doc = try parse(#"{"d": \#(text)}"#)
    let expected: BSON = Int64(text).map { .int64($0) } ?? .double(Double(text)!)
    #expect(doc["d"] == expected, "\(text)")
  }

  @Test func keyOrderAndNesting() throws {
    let doc = try parse(#"{"z": 1, "a": {"y": [true, false, null, "s"], "b": {}}, "m": []}"#)
    #expect(doc.keys == ["z", "a", "m"])
    #expect(doc.extendedJSON() == #"{"z":1,"a":{"y":[true,false,null,"s"],"b":{}},"m":[]}"#)
  }

  @Test func stringEscapesAndUnicode() throws {
    let doc = try parse(#"{"s": "\"\\\/\b\f\n\r\t\u00e9\u2606\ud83d\ude00 é"}"#)
    #expect(doc["s"] == .string("\"\\/\u{8}\u{C}\n\r\té☆😀 é"))
  }

  @Test func canonicalWrappers() throws {
    let doc = try parse(
      #"""
      {"oid": {"$oid": "57E193D7A9CC81B4027498B5"}, "sym": {"$symbol": "s"}, "i": {"$numberInt": "-5"},
       "l": {"$numberLong": "9223372036854775807"}, "d": {"$numberDouble": "-0.0"}, "inf": {"$numberDouble": "-Infinity"},
       "bin": {"$binary": {"subType": "2", "base64": "//8="}}, "code": {"$code": "c"},
       "cws": {"$scope": {"x": {"$numberLong": "1"}}, "$code": "c"}, "ts": {"$timestamp": {"i": 2, "t": 4294967295}},
       "re": {"$regularExpression": {"options": "mi", "pattern": "^a"}},
       "ptr": {"$dbPointer": {"$id": {"$oid": "57e193d7a9cc81b4027498b5"}, "$ref": "n"}},
       "date": {"$date": {"$numberLong": "-1"}}, "min": {"$minKey": 1}, "max": {"$maxKey": 1},
       "u": {"$undefined": true}, "uuid": {"$uuid": "73ffd264-44b3-4c69-90e8-e7d1dfc035d4"}}
      """#)
    let oid = ObjectId("57e193d7a9cc81b4027498b5")!
    #expect(doc["oid"] == .objectId(oid))
    #expect(doc["sym"] == .symbol("s"))
    #expect(doc["i"] == .int32(-5))
    #expect(doc["l"] == .int64(.max))
    #expect(doc["d"] == .double(-0.0))
    #expect(doc["inf"] == .double(-.infinity))
    #expect(doc["bin"] == .binary(Binary(subtype: .binaryOld, data: [0xFF, 0xFF])))
    #expect(doc["code"] == .javascript("c"))
    #expect(doc["cws"] == .javascriptWithScope(JavaScriptWithScope(code: "c", scope: ["x": .int64(1)])))
    #expect(doc["ts"] == .timestamp(BSONTimestamp(timestamp: .max, increment: 2)))
    #expect(doc["re"] == .regex(BSONRegularExpression(pattern: "^a", options: "im")))
    #expect(doc["ptr"] == .dbPointer(DBPointer(ref: "n", id: oid)))
    #expect(doc["date"] == .datetime(BSONDateTime(millisecondsSinceEpoch: -1)))
    #expect(doc["min"] == .minKey)
    #expect(doc["max"] == .maxKey)
    #expect(doc["u"] == .undefined)
    #expect(
      doc["uuid"] == .binary(Binary(subtype: .uuid, data: bytes(hex: "73FFD26444B34C6990E8E7D1DFC035D4"))))
    // The bytes are valid BSON.
    #expect(throws: Never.self) { try Document(bytes: doc.bytes) }
  }

  @Test func legacyForms() throws {
    let doc = try parse(
      #"""
      {"re": {"$options": "xi", "$regex": "a+"}, "re2": {"$regex": "b"}, "bin": {"$type": "80", "$binary": "AQID"},
       "date": {"$date": "2012-12-24T12:15:30.501Z"}, "date2": {"$date": "1970-01-01T01:00:00+01:00"},
       "uuid": {"$uuid": "73ffd26444b34c6990e8e7d1dfc035d4"}}
      """#)
    #expect(doc["re"] == .regex(BSONRegularExpression(pattern: "a+", options: "ix")))
    #expect(doc["re2"] == .regex(BSONRegularExpression(pattern: "b")))
    #expect(doc["bin"] == .binary(Binary(subtype: .userDefined, data: [1, 2, 3])))
    #expect(doc["date"] == .datetime(BSONDateTime(millisecondsSinceEpoch: 1_356_351_330_501)))
    #expect(doc["date2"] == .datetime(BSONDateTime(millisecondsSinceEpoch: 0)))
    #expect(doc["uuid"]?.type == .binary)
  }

  @Test func dollarKeysThatAreNotWrappers() throws {
    // Query operators and DBRefs stay documents; the top-level object never is a wrapper.
    let doc = try parse(
      #"""
      {"$oid": "top", "q": {"$type": "string"}, "n": {"$type": 2}, "r": {"$regex": {"$regularExpression":
       {"pattern": "p", "options": ""}}, "$options": "ix"}, "ref": {"$ref": "c", "$id": {"$oid": "57e193d7a9cc81b4027498b5"}},
       "gt": {"$gt": 5, "$lt": {"$numberLong": "9"}}, "opt": {"$options": "i"}}
      """#)
    #expect(doc["$oid"] == .string("top"))
    #expect(doc["q.$type"] == .string("string"))
    #expect(doc["n.$type"] == .int32(2))
    #expect(doc["r.$regex"] == .regex(BSONRegularExpression(pattern: "p")))
    #expect(doc["r.$options"] == .string("ix"))
    #expect(doc["ref.$ref"] == .string("c"))
    #expect(doc["ref.$id"]?.type == .objectId)
    #expect(doc["gt.$lt"] == .int64(9))
    #expect(doc["opt.$options"] == .string("i"))
  }

  @Test(arguments: [
    (#"{"a": {"$oid": "57e193d7a9cc81b4027498b"}}"#, "24 hexadecimal digits"),
    (#"{"a": {"$numberInt": "2147483648"}}"#, "a 32-bit integer"),
    (#"{"a": {"$numberInt": "1.0"}}"#, "a 32-bit integer"),
    (#"{"a": {"$numberLong": 1}}"#, "found a number"),
    (#"{"a": {"$numberDouble": "1.0.0"}}"#, "a decimal number"),
    (#"{"a": {"$binary": {"base64": "A===", "subType": "00"}}}"#, "base64"),
    (#"{"a": {"$binary": {"base64": "", "subType": "100"}}}"#, "hexadecimal"),
    (#"{"a": {"$date": 42}}"#, "ISO-8601"),
    (#"{"a": {"$date": "yesterday"}}"#, "ISO-8601"),
    (#"{"a": {"$timestamp": {"t": -1, "i": 0}}}"#, "an integer from 0"),
    (#"{"a": {"$timestamp": {"t": 4294967296, "i": 0}}}"#, "an integer from 0"),
    (#"{"a": {"$timestamp": {"t": 1}}}"#, "missing \"i\""),
    (#"{"a": {"$minKey": 2}}"#, "the number 1"),
    (#"{"a": {"$undefined": false}}"#, "true"),
    (#"{"a": {"$scope": {}}}"#, "found no \"$code\""),
    (#"{"a": {"$oid": "57e193d7a9cc81b4027498b5", "$oid": "57e193d7a9cc81b4027498b5"}}"#, "repeated key"),
    (#"{"a": {"b": 1, "$numberInt": "1"}}"#, "only as the first key"),
    (#"{"a": {"$numberInt": "1", "b": 1}}"#, "found the key \"b\""),
    (#"{"a": {"$regularExpression": {"pattern": "a", "options": "i", "x": 1}}}"#, "found the key \"x\""),
    (#"{"a": {"$regex": "a", "$options": 1}}"#, "a string"),
    (#"{"a": {"$uuid": "73ffd264-44b3-4c69-90e8-e7d1dfc035d"}}"#, "UUID"),
  ])
  func malformedWrappers(text: String, message: String) throws {
    let error = try #require(failure(text))
    #expect(error.kind == .invalidExtendedJSON, "\(text): \(error)")
    #expect(error.message.contains(message), "\(text): \(error.message)")
    #expect(error.keyPath == ["a"], "\(text): \(error)")
  }

  @Test func zeroBytesWhereBSONCannotHoldThem() throws {
    #expect(failure(#"{"a\u0000": 1}"#)?.kind == .invalidKey)
    #expect(failure(#"{"a": {"b\u0000": 1}}"#)?.keyPath == ["a"])
    #expect(failure(#"{"a": {"$regularExpression": {"pattern": "\u0000", "options": ""}}}"#) != nil)
    #expect(failure(#"{"a": {"$regex": "x", "$options": "\u0000"}}"#) != nil)
    // In string values a zero is fine.
    #expect(try parse(#"{"a": "x\u0000y"}"#)["a"] == .string("x\u{0}y"))
  }

  @Test func nonASCIIRegexOptionsStayUTF8() throws {
    // Found by fuzzing: sorting the options byte by byte split "ÿ" into invalid UTF-8.
    let doc = try parse(#"{"a": {"$regularExpression": {"pattern": "p", "options": "miÿ"}}}"#)
    #expect(doc["a"] == .regex(BSONRegularExpression(pattern: "p", options: "miÿ")))
    #expect(throws: Never.self) { try Document(bytes: doc.bytes) }
    #expect(doc.extendedJSON() == #"{"a":{"$regularExpression":{"pattern":"p","options":"imÿ"}}}"#)
  }

  @Test func errorPositions() throws {
    let text = """
      {
        "a": {
          "b": [1, 2, tru]
        }
      }
      """
    let error = try #require(failure(text))
    #expect(error.kind == .invalidJSON)
    #expect(error.line == 3)
    #expect(error.column == 17)
    #expect(error.keyPath == ["a", "b", "2"])
    #expect(error.offset == 27)
    #expect(error.message == "expected true, found 't'")
    #expect(error.documentIndex == nil)
  }

  @Test(arguments: [
    ("", 1, 1, "expected a JSON object ('{'), found the end of the input"),
    ("[]", 1, 1, "expected a JSON object ('{'), found '['"),
    ("{\"a\" 1}", 1, 6, "expected ':' after the key, found '1'"),
    ("{\"a\": 1,}", 1, 9, "expected a key string, found '}'"),
    ("{\"a\": 1} x", 1, 10, "expected the end of the input after the document, found 'x'"),
    ("{\n\"a\": 01}", 2, 6, "expected a JSON number, found '0'"),
    ("{\"a\": [1 2]}", 1, 10, "expected ',' or ']' after an array element, found '2'"),
    ("{\"a\": \"x", 1, 7, "expected a closing '\"' for the string, found the end of the input"),
    ("{\"a\": \"\\x\"}", 1, 8, "expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u, found 'x'"),
    ("{\"a\": \"\t\"}", 1, 8, "expected a printable character or an escape in a string, found control character 0x09"),
    ("{\"a\": -}", 1, 7, "expected a JSON number, found '-'"),
    ("{\"a\": 1.}", 1, 7, "expected a JSON number, found '1'"),
    ("{\"a\": NaN}", 1, 7, "expected a value, found 'N'"),
  ])
  func syntaxErrors(text: String, line: Int, column: Int, message: String) throws {
    let error = try #require(failure(text))
    #expect(error.kind == .invalidJSON, "\(text)")
    #expect(error.line == line, "\(text): \(error)")
    #expect(error.column == column, "\(text): \(error)")
    #expect(error.message == message, "\(text)")
  }

  @Test func surrogatesAndUTF8() throws {
    #expect(failure(#"{"a": "\ud83d"}"#)?.kind == .invalidUTF8)
    #expect(failure(#"{"a": "\ud83dx"}"#)?.kind == .invalidUTF8)
    #expect(failure(#"{"a": "\ude00"}"#)?.kind == .invalidUTF8)
    for bad: [UInt8] in [[0xC3], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xFF]] {
      var parser = ExtendedJSONParser(bytes: Array(#"{"a": "x"#.utf8) + bad + Array(#""}"#.utf8))
      #expect(throws: BSONError.self, "\(bad)") { try parser.nextDocument() }
    }
  }

  @Test func nestingLimit() throws {
    func nested(_ n: Int) -> String {
      "{\"a\": " + String(repeating: "[", count: n) + String(repeating: "]", count: n) + "}"
    }
    #expect(try parse(nested(100))["a"] != nil)
    let error = try #require(failure(nested(101)))
    #expect(error.kind == .depthLimitExceeded)
    #expect(error.keyPath.count == 101)
    // Deep enough to overflow a recursive parser without a limit.
    #expect(failure(nested(100_000))?.kind == .depthLimitExceeded)
    #expect(failure("{\"a\": {\"$regex\": " + String(repeating: "[", count: 100_000) + "}}") != nil)
  }
}

/// Reading several documents: JSON Lines, an array, or pretty documents one after another.
@Suite struct ExtendedJSONStreamTests {
  func all(_ text: String) throws -> [Document] {
    var parser = ExtendedJSONParser(text)
    var docs: [Document] = []
    while let doc = try parser.nextDocument() { docs.append(doc) }
    #expect(try parser.nextDocument() == nil)
    return docs
  }

  @Test func jsonLines() throws {
    let docs = try all("{\"a\": 1}\n{\"a\": 2}\r\n\n{\"a\": {\"$numberLong\": \"3\"}}\n")
    #expect(docs.map { $0["a"] } == [.int32(1), .int32(2), .int64(3)])
  }

  @Test func arrayOfDocuments() throws {
    let docs = try all(" [ {\"a\": 1} ,\n {\"a\": 2} ] \n")
    #expect(docs.count == 2)
    #expect(try all("[]").isEmpty)
    #expect(try all("  \n").isEmpty)
    #expect(try all("").isEmpty)
  }

  @Test func prettyDocumentsOneAfterAnother() throws {
    let a: Document = ["a": ["b": [1, 2]]]
    let b: Document = ["c": "d"]
    let text = a.extendedJSON(.canonical, pretty: true) + "\n" + b.extendedJSON(.canonical, pretty: true)
    #expect(try all(text) == [a, b])
    #expect(try all("\u{FEFF}{}{}") == [Document(), Document()])
  }

  @Test func errorsCarryTheDocumentIndex() throws {
    var parser = ExtendedJSONParser("{\"a\": 1}\n{\"a\": 2}\n{\"a\": {\"$numberInt\": 3}}\n")
    #expect(try parser.nextDocument() != nil)
    #expect(parser.line == 1 && parser.column == 9)
    #expect(try parser.nextDocument() != nil)
    #expect(parser.line == 2 && parser.column == 9)
    do {
      _ = try parser.nextDocument()
      Issue.record("expected an error")
    } catch {
      #expect(error.documentIndex == 2)
      #expect(error.line == 3)
      #expect(error.column == 22)
      #expect(error.offset == 39)
      #expect(error.keyPath == ["a"])
      // The parser stays failed.
      #expect(throws: error) { try parser.nextDocument() }
    }
  }

  @Test func arrayErrors() throws {
    var parser = ExtendedJSONParser("[{}, 1]")
    #expect(try parser.nextDocument() == Document())
    #expect(throws: BSONError.self) { try parser.nextDocument() }
    var trailing = ExtendedJSONParser("[{}] {}")
    #expect(try trailing.nextDocument() == Document())
    #expect(throws: BSONError.self) { try trailing.nextDocument() }
    var unclosed = ExtendedJSONParser("[{}")
    #expect(try unclosed.nextDocument() == Document())
    #expect(throws: BSONError.self) { try unclosed.nextDocument() }
  }
}
