import Foundation
import ReefBSON
import ReefTestSupport
import Testing

/// Reads all documents of `reader`, returning them and the error that stopped it, if any.
func readAll(_ reader: inout BSONStreamReader) -> ([Document], BSONError?) {
  var documents: [Document] = []
  do {
    while let document = try reader.next() { documents.append(document) }
    return (documents, nil)
  } catch {
    return (documents, error)
  }
}

@Suite("BSON stream reader and writer")
struct BSONStreamTests {
  @Test("reads every document of a stream, and the documents outlive the reader")
  func readsStream() throws {
    let dir = try TemporaryDirectory()
    let documents = sampleDocuments(count: 1000)
    let path = try dir.write("people.bson", stream(documents))
    var read: [Document] = []
    var total = 0
    do {
      var reader = try BSONStreamReader(path: path)
      while let document = try reader.next() { read.append(document) }
      #expect(reader.documentsRead == 1000)
      #expect(reader.bytesRead == stream(documents).count)
      total = reader.bytesRead
      #expect(try reader.next() == nil)  // Stays at the end.
    }
    #expect(read == documents)
    #expect(total > 64 * 1024)  // The stream spans several read chunks.
  }

  @Test("an empty stream has no documents")
  func emptyStream() throws {
    let dir = try TemporaryDirectory()
    var reader = try BSONStreamReader(path: try dir.write("empty.bson", []))
    #expect(try reader.next() == nil)
    #expect(reader.documentsRead == 0)
  }

  @Test("a document larger than the read chunk grows the buffer for that document only")
  func largeDocuments() throws {
    let dir = try TemporaryDirectory()
    let documents =
      [sampleDocuments(count: 1)[0], largeDocument(size: 3_000_000), sampleDocuments(count: 3)[2]]
      + [largeDocument(size: 70_000)]
    var reader = try BSONStreamReader(path: try dir.write("big.bson", stream(documents)))
    let (read, error) = readAll(&reader)
    #expect(error == nil)
    #expect(read == documents)
  }

  @Test("a stream that ends inside a document is a truncation error at that document", arguments: [1, 2, 3, 4, 20])
  func truncatedLastDocument(cut: Int) throws {
    let dir = try TemporaryDirectory()
    let documents = sampleDocuments(count: 3)
    let bytes = stream(documents)
    let start = documents[0].byteCount + documents[1].byteCount
    var reader = try BSONStreamReader(path: try dir.write("cut.bson", Array(bytes[0..<(start + cut)])))
    let (read, error) = readAll(&reader)
    #expect(read == Array(documents[0..<2]))
    let e = try #require(error)
    #expect(e.kind == .truncated)
    #expect(e.documentIndex == 2)
    #expect(e.offset == start)
    #expect(reader.bytesRead == start)
  }

  @Test("validation errors carry the document index and the offset in the stream")
  func validationErrorLocation() throws {
    let dir = try TemporaryDirectory()
    let documents = sampleDocuments(count: 4)
    var bytes = stream(documents)
    let start = documents[0].byteCount + documents[1].byteCount
    // The first element of document 2 is `_id` (int32): its type byte is at start + 4.
    bytes[start + 4] = 0x42
    var reader = try BSONStreamReader(path: try dir.write("bad.bson", bytes))
    let (read, error) = readAll(&reader)
    #expect(read.count == 2)
    let e = try #require(error)
    #expect(e.kind == .unknownType)
    #expect(e.documentIndex == 2)
    #expect(e.offset == start + 4)
    // The error sticks: the stream cannot be resynchronised.
    #expect(throws: e) { try reader.next() }
  }

  @Test("impossible and oversized lengths are reported before reading the document")
  func lengthChecks() throws {
    let dir = try TemporaryDirectory()
    let good = sampleDocuments(count: 1)[0]
    var reader = try BSONStreamReader(path: try dir.write("short.bson", good.bytes + [3, 0, 0, 0, 0]))
    var (read, error) = readAll(&reader)
    #expect(read.count == 1)
    #expect(error?.kind == .invalidLength)
    #expect(error?.documentIndex == 1)
    #expect(error?.offset == good.byteCount)

    let options = ValidationOptions(maximumSize: 1000)
    reader = try BSONStreamReader(
      path: try dir.write("large.bson", good.bytes + largeDocument(size: 2000).bytes), options: options)
    (read, error) = readAll(&reader)
    #expect(read.count == 1)
    #expect(error?.kind == .sizeLimitExceeded)
    #expect(error?.documentIndex == 1)
    #expect(error?.offset == good.byteCount)
  }

  @Test("validation options apply to every document")
  func depthOption() throws {
    let dir = try TemporaryDirectory()
    let doc: Document = ["a": ["b": ["c": 1]]]
    let path = try dir.write("deep.bson", doc.bytes)
    var strict = try BSONStreamReader(path: path, options: ValidationOptions(maximumDepth: 1))
    #expect(throws: BSONError.self) { try strict.next() }
    var lenient = try BSONStreamReader(path: path, options: ValidationOptions(maximumDepth: 2))
    #expect(try lenient.next() == doc)
  }

  @Test("a missing file is an I/O error naming the file")
  func missingFile() throws {
    let error = try #require(throws: BSONError.self) {
      _ = try BSONStreamReader(path: "/nonexistent/reef/people.bson")
    }
    #expect(error.kind == .io)
    #expect(error.message == "cannot open '/nonexistent/reef/people.bson': No such file or directory")
  }

  @Test("an unwritable output is an I/O error naming the file")
  func unwritableOutput() throws {
    let error = try #require(throws: BSONError.self) {
      _ = try BSONStreamWriter(path: "/nonexistent/reef/out.bson")
    }
    #expect(error.kind == .io)
    #expect(error.message.hasPrefix("cannot open '/nonexistent/reef/out.bson': "))
  }

  @Test("reads from a file descriptor (a pipe, as standard input would be)")
  func readsFileDescriptor() throws {
    let documents = sampleDocuments(count: 50)
    let bytes = stream(documents)
    var fds: [Int32] = [0, 0]
    #expect(pipe(&fds) == 0)
    let (readEnd, writeEnd) = (fds[0], fds[1])
    // Writing from another thread, so that a stream larger than the pipe buffer works too.
    let writer = Thread {
      bytes.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
          let n = write(writeEnd, raw.baseAddress! + offset, min(1000, raw.count - offset))
          if n <= 0 { break }
          offset += n
        }
      }
      close(writeEnd)
    }
    writer.start()
    var reader = BSONStreamReader(fileDescriptor: readEnd, name: "-")
    let (read, error) = readAll(&reader)
    close(readEnd)
    #expect(error == nil)
    #expect(read == documents)
  }

  @Test("the writer and reader round-trip plain and gzip streams", arguments: ["out.bson", "out.bson.gz"])
  func writerRoundTrip(name: String) throws {
    let dir = try TemporaryDirectory()
    let documents = sampleDocuments(count: 2000) + [largeDocument(size: 500_000)]
    let writer = try BSONStreamWriter(path: dir.path(name))
    for document in documents { try writer.write(document) }
    try writer.write(bytes: documents[0].bytes)
    try writer.close()
    #expect(writer.documentsWritten == documents.count + 1)
    let written = try dir.read(name)
    #expect(writer.bytesWritten == stream(documents).count + documents[0].byteCount)
    if name.hasSuffix(".gz") {
      #expect(written.starts(with: [0x1F, 0x8B, 0x08]))
      #expect(written.count < writer.bytesWritten / 2)
    } else {
      #expect(written == stream(documents) + documents[0].bytes)
    }
    var reader = try BSONStreamReader(path: dir.path(name))
    let (read, error) = readAll(&reader)
    #expect(error == nil)
    #expect(read == documents + [documents[0]])
  }

  @Test("write(bytes:) refuses bytes that are not exactly one valid document")
  func writerValidatesBytes() throws {
    let dir = try TemporaryDirectory()
    let writer = try BSONStreamWriter(path: dir.path("out.bson"))
    try writer.write(sampleDocuments(count: 1)[0])
    let twoDocuments = stream(sampleDocuments(count: 2))
    let trailing = try #require(throws: BSONError.self) { try writer.write(bytes: twoDocuments) }
    #expect(trailing.kind == .trailingBytes)
    #expect(trailing.documentIndex == 1)
    let broken = try #require(throws: BSONError.self) { try writer.write(bytes: [5, 0, 0, 0, 1]) }
    #expect(broken.kind == .missingTerminator)
    try writer.close()
    #expect(writer.documentsWritten == 1)
  }

  @Test("gzip input is recognised by its magic bytes whatever the file is called")
  func gzipMagic() throws {
    let dir = try TemporaryDirectory()
    let documents = sampleDocuments(count: 300)
    let compressed = try gzipped(stream(documents), in: dir)
    for name in ["people.bson.gz", "people.bson"] {
      let source = try ByteSource(path: try dir.write(name, compressed))
      var reader = BSONStreamReader(source: source)
      let (read, error) = readAll(&reader)
      #expect(error == nil)
      #expect(read == documents)
      #expect(source.isGzip)
    }
    // With compression turned off, the gzip bytes are taken as BSON, and fail.
    var raw = try BSONStreamReader(path: dir.path("people.bson"), compression: .none)
    #expect(throws: BSONError.self) { try raw.next() }
  }

  @Test("concatenated gzip members are one stream")
  func gzipMembers() throws {
    let dir = try TemporaryDirectory()
    let first = sampleDocuments(count: 10)
    let second = sampleDocuments(count: 20)
    let path = try dir.write("joined.gz", try gzipped(stream(first), in: dir) + gzipped(stream(second), in: dir))
    var reader = try BSONStreamReader(path: path)
    let (read, error) = readAll(&reader)
    #expect(error == nil)
    #expect(read == first + second)
  }

  @Test("corrupt gzip is an I/O error after the documents decoded before the damage")
  func corruptGzip() throws {
    let dir = try TemporaryDirectory()
    let documents = sampleDocuments(count: 20)
    var compressed = try gzipped(stream(documents), in: dir)
    // The CRC-32 in the trailer: zlib notices only at the end, after delivering everything.
    compressed[compressed.count - 8] ^= 0xFF
    var reader = try BSONStreamReader(path: try dir.write("crc.bson.gz", compressed))
    var (read, error) = readAll(&reader)
    #expect(read == documents)
    #expect(error?.kind == .io)
    #expect(error?.documentIndex == 20)
    #expect(error?.offset == stream(documents).count)
    #expect(error?.message.contains("corrupt gzip data in") == true)

    reader = try BSONStreamReader(path: try dir.write("notgzip.gz", Array("not gzip at all".utf8)))
    (read, error) = readAll(&reader)
    #expect(read.isEmpty)
    #expect(error?.kind == .io)
    #expect(error?.documentIndex == 0)
    #expect(error?.offset == 0)

    let cut = try gzipped(stream(documents), in: dir).dropLast(30)
    reader = try BSONStreamReader(path: try dir.write("cut.gz", Array(cut)))
    (read, error) = readAll(&reader)
    #expect(read.count < documents.count)
    #expect(error?.kind == .io)
    #expect(error?.documentIndex == read.count)
  }

  @Test("a byte sink writes text, buffered, and gzip by extension")
  func byteSink() throws {
    let dir = try TemporaryDirectory()
    let line = Array(repeating: "{\"a\": 1}\n", count: 100_000).joined()
    for name in ["lines.json", "lines.json.gz"] {
      let sink = try ByteSink(path: dir.path(name))
      try sink.write(line)
      try sink.write([0x7B, 0x7D])
      try sink.append { $0.append(0x0A) }
      try sink.close()
      try sink.close()  // Closing twice is harmless.
      #expect(sink.bytesWritten == line.utf8.count + 3)
      let source = try ByteSource(path: dir.path(name))
      #expect(try source.readAll() == Array(line.utf8) + [0x7B, 0x7D, 0x0A])
      #expect(source.isGzip == name.hasSuffix(".gz"))
    }
  }

  @Test("a byte source can be peeked at without consuming")
  func peek() throws {
    let dir = try TemporaryDirectory()
    let bytes = stream(sampleDocuments(count: 5))
    let source = try ByteSource(path: try dir.write("x.bson.gz", try gzipped(bytes, in: dir)))
    #expect(try source.peek(count: 4) == Array(bytes[0..<4]))
    #expect(try source.peek(count: 10_000) == bytes)
    #expect(source.position == 0)
    var reader = BSONStreamReader(source: source)
    #expect(readAll(&reader).0 == sampleDocuments(count: 5))
  }
}
