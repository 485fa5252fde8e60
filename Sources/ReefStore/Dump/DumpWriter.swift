import ReefBSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The output formats of ``DumpWriter``.
public enum DumpFormat: String, Sendable, CaseIterable {
  /// A mongodump directory: `<out>/<db>/<collection>.bson` and `<collection>.metadata.json`.
  case dump
  /// BSON: one `.bson` file, or a dump directory when the output is a directory.
  case bson
  /// A `mongodump --archive` file.
  case archive
  /// Canonical Extended JSON, one JSON array per collection file (`mongoexport --jsonArray`).
  case json
  /// Canonical Extended JSON, one document per line (mongoexport's default).
  case jsonl
}

/// Writes collections in one of the dump formats, streaming: ``beginNamespace(_:metadata:)``,
/// ``write(_:)`` for each document, ``endNamespace()``, and at last ``close()``.
///
/// Where the output goes:
/// - ``DumpFormat/dump``: the directory `path`, created if needed, gets
///   `<db>/<collection>.bson` and `<db>/<collection>.metadata.json` per namespace (with `.gz`
///   appended to both when `gzip`), as mongodump writes them and mongorestore reads them. The
///   collection name is escaped in the file name as mongodump does (`/` is `%2F`).
/// - ``DumpFormat/bson``, ``DumpFormat/json``, ``DumpFormat/jsonl``: when `path` is an existing
///   directory or ends in `/`, the same layout with `.bson`, `.json` or `.jsonl` data files;
///   otherwise the single file `path` (`-` is standard output), which holds one namespace. A
///   single `.bson` or `.bson.gz` file gets its metadata next to it (`people.bson` →
///   `people.metadata.json`), as mongodump's layout has it; single JSON files have none, as
///   with mongoexport.
/// - ``DumpFormat/archive``: the file `path` (`-` is standard output) in the mongodump archive
///   format, version 0.1, the whole stream gzipped when `gzip`. Each namespace's documents are
///   one contiguous block followed by its end block with the CRC-64 of its documents. Since the
///   prelude must list every namespace before any document, documents go to a temporary file
///   next to `path` (in `$TMPDIR` for standard output) that ``close()`` appends to the prelude
///   and removes: disk use is twice the archive's size for a moment, memory stays flat.
///
/// A namespace with an empty ``Namespace/database`` goes under `defaultDatabase`. The metadata
/// written is `metadata` with `collectionName` set, and a random UUID when it has none.
/// Single files are gzipped when `gzip` is set or their name ends in `.gz`. JSON is canonical
/// Extended JSON, so documents read back byte for byte.
///
/// ```swift
/// let writer = try DumpWriter(path: "dump", format: .dump, gzip: true)
/// try writer.beginNamespace(Namespace(database: "shop", collection: "orders"), metadata: metadata)
/// for order in orders { try writer.write(order) }
/// try writer.endNamespace()
/// try writer.close()
/// ```
///
/// Errors are ``BSONError/Kind/io`` for files, and ``BSONError/Kind/invalidValue`` for calls out
/// of order (a document outside a namespace, a namespace written twice, a second namespace in a
/// single file).
public final class DumpWriter {
  /// Where the output goes.
  public let path: String
  /// The format written.
  public let format: DumpFormat
  /// Whether the output is gzipped.
  public let gzip: Bool
  /// The database of namespaces that have none.
  public let defaultDatabase: String

  private enum Layout {
    case directory, singleFile, archive
  }
  private let layout: Layout
  private var current: Namespace?
  private var written: Set<Namespace> = []
  private var dataSink: ByteSink?
  private var documentsInNamespace = 0
  private var isClosed = false
  // Archive state.
  private var body: ByteSink?
  private var bodyPath: String?
  private var prelude: [Document] = []
  private var checksum = CRC64()
  private var namespaceSize = 0
  private var currentMetadata = CollectionMetadata()

  /// Prepares the output; directories are created, files are created when first written.
  /// - Parameters:
  ///   - path: a directory for ``DumpFormat/dump``; a file or a directory for the others (see
  ///     above); `-` for standard output.
  ///   - format: what to write.
  ///   - gzip: gzip the files (mongodump's `--gzip`).
  ///   - defaultDatabase: the database of namespaces without one.
  /// - Throws: ``BSONError/Kind/io`` when a directory cannot be created.
  public init(path: String, format: DumpFormat, gzip: Bool = false, defaultDatabase: String = "reef") throws(BSONError)
  {
    self.path = path
    self.format = format
    self.defaultDatabase = defaultDatabase
    switch format {
    case .dump:
      layout = .directory
    case .archive:
      layout = .archive
    case .bson, .json, .jsonl:
      layout = path != "-" && (path.hasSuffix("/") || FileSystem.kind(path) == .directory) ? .directory : .singleFile
    }
    self.gzip = gzip || (layout != .directory && path.hasSuffix(".gz"))
    if layout == .directory { try FileSystem.makeDirectories(path) }
  }

  deinit {
    if let bodyPath {
      try? body?.close()
      FileSystem.remove(bodyPath)
    }
  }

  /// Starts a namespace; its documents follow with ``write(_:)``.
  /// - Throws: ``BSONError/Kind/invalidValue`` when a namespace is already open, was written
  ///   before, or a single file already holds one; ``BSONError/Kind/io`` when a file cannot be
  ///   created or written.
  public func beginNamespace(_ namespace: Namespace, metadata: CollectionMetadata) throws(BSONError) {
    try checkOpen()
    if let current {
      throw BSONError(
        .invalidValue, "cannot begin '\(namespace)' while '\(current)' is open; call endNamespace() first")
    }
    let resolved = Namespace(
      database: namespace.database.isEmpty ? defaultDatabase : namespace.database, collection: namespace.collection)
    guard !resolved.collection.isEmpty else {
      throw BSONError(.invalidValue, "cannot write a namespace with an empty collection name")
    }
    guard !written.contains(resolved) else {
      throw BSONError(.invalidValue, "'\(resolved)' was already written to '\(path)'")
    }
    if layout == .singleFile, let first = written.first {
      throw BSONError(
        .invalidValue,
        "'\(path)' is a single file and already holds '\(first)'; write to a directory (an existing one, or a path ending in '/') to export several collections"
      )
    }
    var metadata = metadata
    metadata.collectionName = resolved.collection
    if metadata.uuid == nil { metadata.uuid = CollectionMetadata.randomUUID() }
    currentMetadata = metadata
    documentsInNamespace = 0
    namespaceSize = 0
    checksum = CRC64()
    switch layout {
    case .directory:
      // A database is one folder, named as it is: a name that is not one folder name would
      // write nested folders (or none) that an import cannot read back.
      let database = resolved.database
      if let bad = database.unicodeScalars.first(where: { $0 == "/" || $0 == "\\" || $0 == "\0" }) {
        throw BSONError(
          .invalidValue,
          "cannot write '\(resolved)' as a dump directory: its database name '\(database)' contains '\(bad == "\0" ? "NUL" : String(bad))', so it cannot be one folder (MongoDB's database names cannot contain / \\ . space \" $); write an archive, or rename the collection"
        )
      }
      let directory = FileSystem.join(path, resolved.database)
      try FileSystem.makeDirectories(directory)
      let base = FileSystem.join(directory, FileSystem.escape(resolved.collection))
      let suffix = gzip ? ".gz" : ""
      try writeMetadata(metadata, to: base + ".metadata.json" + suffix)
      dataSink = try ByteSink(path: base + "." + dataExtension + suffix, compression: gzip ? .gzip : .none)
    case .singleFile:
      if format == .bson, path != "-" {
        let name = FileSystem.baseName(path)
        for suffix in [".bson", ".bson.gz"] where name.hasSuffix(suffix) && name.count > suffix.count {
          let base = FileSystem.join(FileSystem.directoryName(path), String(name.dropLast(suffix.count)))
          try writeMetadata(metadata, to: base + ".metadata.json" + (suffix.hasSuffix(".gz") ? ".gz" : ""))
        }
      }
      dataSink = try ByteSink(path: path, compression: gzip ? .gzip : .none)
    case .archive:
      if body == nil { try openBody() }
    }
    if format == .json, layout != .archive { try dataSink?.write("[") }
    current = resolved
    written.insert(resolved)
  }

  /// Appends a document to the open namespace.
  /// - Throws: ``BSONError/Kind/invalidValue`` when no namespace is open; ``BSONError/Kind/io``
  ///   when writing fails.
  /// - Complexity: O(n) in the size of the document.
  public func write(_ document: Document) throws(BSONError) {
    try checkOpen()
    guard let namespace = current else {
      throw BSONError(.invalidValue, "cannot write a document outside a namespace; call beginNamespace first")
    }
    switch layout {
    case .archive:
      guard let body else { return }
      if documentsInNamespace == 0 {
        try body.write(Self.blockHeader(namespace, eof: false, crc: 0).bytes)
      }
      try document.withUnsafeBytes { (raw) throws(BSONError) in
        checksum.update(raw)
        try body.write(raw)
      }
    case .directory, .singleFile:
      guard let sink = dataSink else { return }
      switch format {
      case .dump, .bson, .archive:
        try document.withUnsafeBytes { (raw) throws(BSONError) in try sink.write(raw) }
      case .json:
        try sink.append { out in
          out.append(contentsOf: (documentsInNamespace == 0 ? "\n" : ",\n").utf8)
          document.appendExtendedJSON(to: &out, mode: .canonical)
        }
      case .jsonl:
        try sink.append { out in
          document.appendExtendedJSON(to: &out, mode: .canonical)
          out.append(0x0A)
        }
      }
    }
    namespaceSize += document.byteCount
    documentsInNamespace += 1
  }

  /// Finishes the open namespace: closes its files, or writes its archive end block.
  /// - Throws: ``BSONError/Kind/invalidValue`` when no namespace is open; ``BSONError/Kind/io``
  ///   when writing fails.
  public func endNamespace() throws(BSONError) {
    try checkOpen()
    guard let namespace = current else {
      throw BSONError(.invalidValue, "endNamespace() without beginNamespace")
    }
    current = nil
    switch layout {
    case .archive:
      guard let body else { return }
      if documentsInNamespace > 0 { try body.write(Self.terminatorBytes) }
      try body.write(Self.blockHeader(namespace, eof: true, crc: Int64(bitPattern: checksum.value)).bytes)
      try body.write(Self.terminatorBytes)
      var entry = Document()
      entry.append(.string(namespace.database), forKey: "db")
      entry.append(.string(namespace.collection), forKey: "collection")
      entry.append(.string(String(decoding: currentMetadata.json(), as: UTF8.self)), forKey: "metadata")
      entry.append(
        namespaceSize <= Int(Int32.max) ? .int32(Int32(namespaceSize)) : .int64(Int64(namespaceSize)), forKey: "size")
      if case .string(let type)? = currentMetadata.raw?.value(forKey: "type") {
        entry.append(.string(type), forKey: "type")
      } else {
        entry.append(.string("collection"), forKey: "type")
      }
      prelude.append(entry)
    case .directory, .singleFile:
      guard let sink = dataSink else { return }
      dataSink = nil
      if format == .json { try sink.write(documentsInNamespace == 0 ? "]\n" : "\n]\n") }
      try sink.close()
    }
  }

  /// Ends an open namespace and finishes the output (for an archive, writes the file). Calling
  /// it again does nothing.
  /// - Throws: ``BSONError/Kind/io`` when writing fails.
  public func close() throws(BSONError) {
    if isClosed { return }
    if current != nil { try endNamespace() }
    isClosed = true
    guard layout == .archive else { return }
    if body == nil { try openBody() }
    guard let body, let bodyPath else { return }
    defer {
      FileSystem.remove(bodyPath)
      self.bodyPath = nil
    }
    try body.close()
    let out = try ByteSink(path: path, compression: gzip ? .gzip : .none)
    try out.write(ArchiveReader.magic)
    var header = Document()
    header.append(.int32(1), forKey: "concurrent_collections")
    header.append(.string("0.1"), forKey: "version")
    header.append(.string(Self.serverVersion), forKey: "server_version")
    header.append(.string(Self.toolVersion), forKey: "tool_version")
    try out.write(header.bytes)
    for entry in prelude { try out.write(entry.bytes) }
    try out.write(Self.terminatorBytes)
    let input = try ByteSource(path: bodyPath, compression: StreamCompression.none)
    defer { input.close() }
    var chunk = [UInt8](repeating: 0, count: 256 * 1024)
    while true {
      let n = try chunk.withUnsafeMutableBytes { raw in
        Result { () throws(BSONError) -> Int in try input.read(into: raw) }
      }.get()
      if n == 0 { break }
      try chunk.withUnsafeBytes { raw in
        Result { () throws(BSONError) in try out.write(UnsafeRawBufferPointer(rebasing: raw[0..<n])) }
      }.get()
    }
    try out.close()
  }

  /// The MongoDB version an archive header names: the server whose semantics Reef follows.
  static let serverVersion = "8.0.0"
  /// The tool an archive header names.
  static let toolVersion = "reef \(ReefStoreVersion.formatVersion)"
  static let terminatorBytes: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF]

  private var dataExtension: String {
    switch format {
    case .dump, .bson, .archive: "bson"
    case .json: "json"
    case .jsonl: "jsonl"
    }
  }

  private func checkOpen() throws(BSONError) {
    if isClosed { throw BSONError(.invalidValue, "the writer for '\(path)' is closed") }
  }

  private func writeMetadata(_ metadata: CollectionMetadata, to file: String) throws(BSONError) {
    let sink = try ByteSink(path: file, compression: file.hasSuffix(".gz") ? .gzip : .none)
    try sink.write(metadata.json())
    try sink.close()
  }

  private func openBody() throws(BSONError) {
    let temporary: String
    if path == "-" {
      let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
      temporary = FileSystem.join(directory, "reef-archive-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).tmp")
    } else {
      temporary = path + ".reef-body-\(getpid()).tmp"
    }
    body = try ByteSink(path: temporary, compression: StreamCompression.none)
    bodyPath = temporary
  }

  private static func blockHeader(_ namespace: Namespace, eof: Bool, crc: Int64) -> Document {
    var header = Document()
    header.append(.string(namespace.database), forKey: "db")
    header.append(.string(namespace.collection), forKey: "collection")
    header.append(.bool(eof), forKey: "EOF")
    header.append(.int64(crc), forKey: "CRC")
    return header
  }
}
