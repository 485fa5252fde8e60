import Foundation
import ReefBSON
import ReefTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `ExtendedJSONStreamReader` and `DocumentStreamFormat`: every form mongoexport writes, documents
/// across read chunks, exact error positions, and hostile input.
@Suite struct ExtendedJSONStreamReaderTests {
  /// Writes `bytes` to a fresh file and returns a reader over it (and the directory, to remove).
  func reader(_ bytes: [UInt8], options: ValidationOptions = .default) throws -> ExtendedJSONStreamReader {
    let directory = makeTemporaryDirectory("reef-ejson-stream")
    defer { removeTree(directory) }
    let path = directory + "/input.json"
    let file = fopen(path, "wb")!
    _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
    fclose(file)
    // The file stays readable through the open descriptor after the directory is removed.
    return try ExtendedJSONStreamReader(path: path, options: options)
  }

  func reader(_ text: String, options: ValidationOptions = .default) throws -> ExtendedJSONStreamReader {
    try reader(Array(text.utf8), options: options)
  }

  /// Every document of `reader`, as relaxed Extended JSON.
  func all(_ reader: inout ExtendedJSONStreamReader) throws -> [String] {
    var out: [String] = []
    while let document = try reader.next() { out.append(document.extendedJSON(.relaxed)) }
    return out
  }

  /// The error the reader throws after its good documents, which must be `documents`.
  func failure(_ text: String, documents: Int, options: ValidationOptions = .default) throws -> BSONError {
    var r = try reader(text, options: options)
    for i in 0..<documents { #expect(try r.next() != nil, "document \(i)") }
    do {
      let document = try r.next()
      Issue.record("expected an error, read \(String(describing: document))")
      return BSONError(.invalidValue, "no error")
    } catch {
      // After an error, the reader keeps throwing it.
      #expect(throws: error) { try r.next() }
      return error
    }
  }

  @Test("lines, arrays, pretty documents, a byte-order mark and blanks all read the same documents")
  func forms() throws {
    let expected = [#"{"a":1}"#, #"{"b":[true,null],"c":{"d":"x"}}"#]
    let inputs: [(String, DocumentStreamFormat)] = [
      ("{\"a\": 1}\n{\"b\": [true, null], \"c\": {\"d\": \"x\"}}\n", .extendedJSONSequence),
      ("{\"a\":1}{\"b\":[true,null],\"c\":{\"d\":\"x\"}}", .extendedJSONSequence),
      ("[{\"a\": 1},\n{\"b\": [true, null], \"c\": {\"d\": \"x\"}}]\n", .extendedJSONArray),
      ("\r\n\t [ {\"a\":1} , {\"b\":[true,null],\"c\":{\"d\":\"x\"}} ] \n", .extendedJSONArray),
      ("{\n  \"a\": 1\n}\n{\n  \"b\": [\n    true,\n    null\n  ],\n  \"c\": {\"d\": \"x\"}\n}", .extendedJSONSequence),
    ]
    for (text, form) in inputs {
      for bom in [false, true] {
        var r = try reader((bom ? [0xEF, 0xBB, 0xBF] : []) + Array(text.utf8))
        #expect(r.form == nil)
        #expect(try all(&r) == expected, "\(text)")
        #expect(r.form == form, "\(text)")
        #expect(r.documentsRead == 2)
        #expect(r.bytesRead == text.utf8.count + (bom ? 3 : 0), "\(text)")
        #expect(try r.next() == nil)
      }
    }
    for empty in ["", "  \n\n ", "[]", " [ \n ] \n"] {
      var r = try reader(empty)
      #expect(try all(&r).isEmpty, "\(empty)")
    }
  }

  @Test("format detection: BSON by a zero byte in its length, JSON after a byte-order mark or blanks")
  func detection() throws {
    let directory = makeTemporaryDirectory("reef-detect")
    defer { removeTree(directory) }
    var serial = 0
    func detect(_ bytes: [UInt8]) throws -> DocumentStreamFormat {
      serial += 1
      let path = directory + "/\(serial)"
      let file = fopen(path, "wb")!
      _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
      fclose(file)
      let source = try ByteSource(path: path)
      defer { source.close() }
      let format = try DocumentStreamFormat.detect(source)
      // Nothing was consumed.
      var first = [UInt8](repeating: 0, count: bytes.count + 1)
      var got = 0
      while true {
        let n = try first.withUnsafeMutableBytes { raw in
          try source.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[got...]))
        }
        if n == 0 { break }
        got += n
      }
      #expect(Array(first[0..<got]) == bytes)
      return format
    }
    let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
    #expect(try detect([]) == .bson)
    #expect(try detect(bom) == .extendedJSONSequence)
    #expect(try detect(bom + Array(" \n[{}]".utf8)) == .extendedJSONArray)
    #expect(try detect(bom + Array("{}".utf8)) == .extendedJSONSequence)
    // EF BB BF 00 is the length of a 12 MB document.
    #expect(try detect(bom + [0x00, 0x02]) == .bson)
    #expect(try detect(Array("\t\r\n [".utf8)) == .extendedJSONArray)
    #expect(try detect(Array(repeating: UInt8(ascii: " "), count: 70_000) + Array("[]".utf8)) == .extendedJSONSequence)
    #expect(try detect(Array(repeating: UInt8(ascii: " "), count: 60_000) + Array("[]".utf8)) == .extendedJSONArray)
    // The smallest document, a 32-byte one (0x20 is a space) and a 123-byte one (0x7B is '{').
    #expect(try detect([5, 0, 0, 0, 0]) == .bson)
    #expect(try detect([0x20, 0, 0, 0, 0x10, 0x61, 0]) == .bson)
    #expect(try detect([0x7B, 0, 0, 0, 0x02]) == .bson)
    // A truncated length is BSON (its reader reports it); so is a damaged type byte.
    #expect(try detect([0x7B, 0]) == .bson)
    #expect(try detect([0x7B, 0, 0, 0, 0x55]) == .bson)
    // A document over 16 MiB, when the limit allows it: a type byte follows its length.
    let large: [UInt8] = [0x00, 0x00, 0x00, 0x02, 0x10]
    #expect(try detect(large) == .bson)
    // Text is JSON, whatever it holds: its reader says what it found.
    #expect(try detect(Array("hello".utf8)) == .extendedJSONSequence)
  }

  @Test("documents much larger than a read chunk, and strings that cross chunks, read exactly")
  func acrossChunks() throws {
    var text = ""
    var expected: [Document] = []
    var generator = SplitMix64(seed: 14)
    for i in 0..<300 {
      // Escapes, brackets and braces inside strings, multi-byte UTF-8, and some long strings.
      let length = i % 23 == 5 ? 200_000 + Int(generator.next() % 1000) : Int(generator.next() % 500)
      let unit = ["a", "\\\"", "\\\\", "{", "]", "é", "😀", "\\n", "\\u00e9", " "][i % 10]
      let value = String(repeating: unit, count: length / max(1, unit.utf8.count))
      let line = "{\"_id\": \(i), \"s\": \"\(value)\", \"n\": [{\"x\": \"}\"}, [\"[\"]]}"
      expected.append(try Document(extendedJSON: line))
      text += i % 3 == 0 ? line + "\n" : i % 3 == 1 ? line + "\r\n  " : line
    }
    // An escape, then 0 to 19 plain characters before the closing quote: the scan's eight-byte
    // steps must not start on the escaped character.
    for plain in 0..<20 {
      let a = String(repeating: "a", count: plain)
      let line = #"{"e": "\n"# + a + #"", "k": "}", "q": "\"\\"# + a + #""}"#
      expected.append(try Document(extendedJSON: line))
      text += line
    }
    var r = try reader(text)
    var got: [Document] = []
    while let document = try r.next() { got.append(document) }
    #expect(got.count == expected.count)
    for (i, (a, b)) in zip(got, expected).enumerated() { #expect(a.bytes == b.bytes, "document \(i)") }
    #expect(r.bytesRead == text.utf8.count)
  }

  @Test("a syntax error names the document index, line, column and stream offset")
  func syntaxErrorPosition() throws {
    let e = try failure("{\"a\":1}\n{\"a\":2}\n{\"a\": tru}\n", documents: 2)
    #expect(e.kind == .invalidJSON)
    #expect(e.message == "expected true, found 't'")
    #expect(e.documentIndex == 2)
    #expect(e.line == 3)
    #expect(e.column == 7)
    #expect(e.offset == 22)
    #expect(e.keyPath == ["a"])

    // Inside a pretty-printed document that starts mid-line.
    let pretty = try failure("{\"a\":1} {\n  \"b\": 1,\n  \"c\": [1, x]\n}", documents: 1)
    #expect(pretty.message == "expected a value, found 'x'")
    #expect(pretty.documentIndex == 1)
    #expect(pretty.line == 3)
    #expect(pretty.column == 12)
    #expect(pretty.offset == 31)
    #expect(pretty.keyPath == ["c", "1"])

    // On the first line of a document that does not start the line.
    let sameLine = try failure("{\"a\":1} {\"b\": -}", documents: 1)
    #expect(sameLine.line == 1)
    #expect(sameLine.column == 15)
    #expect(sameLine.offset == 14)
  }

  @Test("errors between documents: what was expected and where")
  func structureErrors() throws {
    let array = try failure("[{\"a\":1},\n {\"a\":2} {\"a\":3}]", documents: 2)
    #expect(array.kind == .invalidJSON)
    #expect(array.message == "expected ',' or ']' after a document in the array, found '{'")
    #expect(array.documentIndex == 2)
    #expect((array.line, array.column, array.offset) == (2, 10, 19))

    let after = try failure("[{\"a\":1}] x", documents: 1)
    #expect(after.message == "expected the end of the input after the array of documents, found 'x'")
    #expect(after.documentIndex == nil)
    #expect((after.line, after.column, after.offset) == (1, 11, 10))

    let number = try failure("{\"a\":1}\n5\n", documents: 1)
    #expect(number.message == "expected a document ('{') or the end of the input, found '5'")
    #expect(number.documentIndex == 1)
    #expect((number.line, number.column, number.offset) == (2, 1, 8))

    let text = try failure("hello", documents: 0)
    #expect(text.message == "expected a document ('{') or '[', found 'h'")
    #expect((text.documentIndex, text.line, text.column, text.offset) == (0, 1, 1, 0))

    let comma = try failure("[{\"a\":1}, ]", documents: 1)
    #expect(comma.message == "expected a document ('{') after ',', found ']'")
    #expect((comma.documentIndex, comma.column) == (1, 11))

    let open = try failure("[{\"a\":1}", documents: 1)
    #expect(open.message == "expected ',' or ']' after a document in the array, found the end of the input")
  }

  @Test("a damaged document whose braces balance is stepped over; the next keeps its line and index")
  func skippingDamagedDocuments() throws {
    let text =
      "[{\"a\": 1},\n {\"a\": tru},\n {\"a\": {\"$date\": \"2020-02-30T00:00:00Z\"}}, {\"a\": 4},\n {\"a\": x]\n"
    var r = try reader(text)
    var skipped: [BSONError] = []
    r.onDamagedDocument = { skipped.append($0) }
    #expect(try r.next()?["a"] == .int32(1))
    #expect(try r.next()?["a"] == .int32(4))
    #expect(r.documentsRead == 4)
    #expect(r.documentsSkipped == 2)
    #expect(skipped.map(\.line) == [2, 3])
    #expect(skipped[0].message == "expected true, found 't'")
    #expect(skipped[1].message.contains("2020-02-30"), "\(skipped[1])")
    // The last document's brackets balance (`{` … `]`), so it is framed and stepped over too; the
    // array's missing `]` then ends the stream.
    let end = try #require(throws: BSONError.self) { try r.next() }
    #expect(skipped.map(\.documentIndex) == [1, 2, 4])
    #expect(end.documentIndex == 5)
    #expect(end.message == "expected ',' or ']' after a document in the array, found the end of the input")
    #expect(r.documentsSkipped == 3)

    // Without a handler, skipDamagedDocument() steps over one failure at a time.
    var manual = try reader("{\"a\": 1}\n{\"a\": }\n{\"a\": 3}\n")
    #expect(try manual.next()?["a"] == .int32(1))
    let error = try #require(throws: BSONError.self) { try manual.next() }
    #expect((error.line, error.column, error.offset) == (2, 7, 15))
    #expect(manual.skipDamagedDocument() == 7)
    #expect(manual.skipDamagedDocument() == nil)
    #expect(try manual.next()?["a"] == .int32(3))
    #expect(try manual.next() == nil)
    // Text that is not a document cannot be stepped over.
    var unframed = try reader("{\"a\": 1}\nnope\n")
    _ = try unframed.next()
    #expect(throws: BSONError.self) { try unframed.next() }
    #expect(unframed.skipDamagedDocument() == nil)
    #expect(throws: BSONError.self) { try unframed.next() }
  }

  @Test("a stream that ends inside a document is truncated, naming where the document starts")
  func truncated() throws {
    let e = try failure("{\"a\":1}\n  {\"a\": [1, 2", documents: 1)
    #expect(e.kind == .truncated)
    #expect(
      e.message
        == "expected the rest of the document that starts at line 2, column 3, found the end of the input")
    #expect(e.documentIndex == 1)
    #expect((e.line, e.column, e.offset) == (2, 14, 21))

    // Inside a string: the closing quote never comes.
    let string = try failure("{\"a\": \"abc", documents: 0)
    #expect(string.kind == .truncated)
    #expect((string.line, string.column, string.offset) == (1, 11, 10))
  }

  @Test("an unterminated string fails at the end of its line, not at the end of the input")
  func controlCharacter() throws {
    let e = try failure("{\"a\": \"abc\n{\"b\": 1}\n", documents: 0)
    #expect(e.kind == .invalidJSON)
    #expect(e.message == "expected a printable character or an escape in a string, found control character 0x0A")
    #expect((e.documentIndex, e.line, e.column, e.offset) == (0, 1, 11, 10))
  }

  @Test("bad UTF-8 in a string is reported where it is")
  func badUTF8() throws {
    var r = try reader(Array("{\"a\":1}\n{\"k\": \"x".utf8) + [0xC3, 0x28] + Array("\"}\n".utf8))
    #expect(try r.next() != nil)
    do {
      _ = try r.next()
      Issue.record("bad UTF-8 was accepted")
    } catch {
      #expect(error.kind == .invalidUTF8)
      #expect(error.documentIndex == 1)
      #expect((error.line, error.column, error.offset) == (2, 9, 16))
      #expect(error.keyPath == ["k"])
    }
  }

  @Test("the options' depth limit is the parser's; a smaller size limit is checked after parsing")
  func stricterOptions() throws {
    let e = try failure(
      "{\"a\": 1}\n{\"a\": {\"b\": {\"c\": 1}}}\n", documents: 1, options: ValidationOptions(maximumDepth: 1))
    #expect(e.kind == .depthLimitExceeded)
    #expect((e.documentIndex, e.line, e.column, e.offset) == (1, 2, 13, 21))
    #expect(e.keyPath == ["a", "b"])

    let size = try failure(
      "{\"a\": \"\(String(repeating: "x", count: 100))\"}", documents: 0,
      options: ValidationOptions(maximumSize: 64))
    #expect(size.kind == .sizeLimitExceeded)
    #expect(size.documentIndex == 0)
  }

  @Test("deep nesting: refused past the options' limit with the position, read whole without one")
  func deepNesting() throws {
    let levels = 100_000
    let text = "{\"a\":" + String(repeating: "[", count: levels) + String(repeating: "]", count: levels) + "}"
    let e = try failure("{}\n" + text, documents: 1)
    #expect(e.kind == .depthLimitExceeded)
    #expect(e.message == "expected documents and arrays nested at most 100 deep, found deeper nesting")
    #expect(e.documentIndex == 1)
    #expect((e.line, e.column, e.offset) == (2, 106, 108))

    var r = try reader(text, options: ValidationOptions(maximumDepth: ValidationOptions.unlimitedDepth))
    // Each array is its length, a type byte, the key "0" and a terminator around its child.
    #expect(try r.next()?.byteCount == 4 + 1 + 2 + (5 + 8 * (levels - 1)) + 1)
    #expect(try r.next() == nil)
  }

  @Test("a line that never ends its document fails at the text limit, without reading it all")
  func endlessLine() throws {
    // A writer thread offers 1 GiB of one string on a pipe; the reader must stop long before.
    signal(SIGPIPE, SIG_IGN)
    var fds: [Int32] = [0, 0]
    #expect(pipe(&fds) == 0)
    let writeEnd = fds[1]
    final class Written: @unchecked Sendable { var bytes = 0 }
    let written = Written()
    // Waited on below: what the thread wrote is read after it (a semaphore orders the two for
    // ThreadSanitizer, where polling `Thread.isFinished` does not).
    let finished = DispatchSemaphore(value: 0)
    let writer = Thread {
      let head = Array("{\"a\":\"".utf8)
      written.bytes = head.withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) }
      let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 16)
      while written.bytes < 1 << 30 {
        let n = chunk.withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) }
        if n <= 0 { break }
        written.bytes += n
      }
      close(writeEnd)
      finished.signal()
    }
    writer.start()
    let options = ValidationOptions(maximumSize: 1000)
    var r = ExtendedJSONStreamReader(fileDescriptor: fds[0], options: options)
    do {
      _ = try r.next()
      Issue.record("an endless document was accepted")
    } catch {
      #expect(error.kind == .sizeLimitExceeded)
      #expect(
        error.message
          == "expected a document of at most 6291456 bytes of text, found a longer one (it starts at line 1, column 1)")
      #expect((error.documentIndex, error.line, error.column, error.offset) == (0, 1, 1, 0))
    }
    close(fds[0])
    finished.wait()
    #expect(written.bytes < 16 << 20)
  }
}
