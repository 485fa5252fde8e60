import ReefBSON

/// One source of documents for import: a mongodump directory, a single `.bson` file, a mongodump
/// `--archive` file, or Extended JSON, read as a stream of namespaces, each with its metadata
/// and documents.
///
/// What each kind accepts:
/// - ``Kind/directory``: a dump root (`dump/<db>/<collection>.bson`, one folder per database) or
///   one database folder (`dump/<db>`, whose database is the folder's name unless
///   `defaultNamespace` names one). Data files are `.bson`, `.bson.gz` (`mongodump --gzip`), and
///   also `.json`/`.jsonl` (`.gz` too) as ``DumpWriter`` writes them; `<collection>.metadata.json`
///   or `.metadata.json.gz` gives the metadata. A collection with metadata and no data file (an
///   empty collection, a view) has no documents. File names are unescaped as mongorestore does
///   (`%2F` is `/`). `prelude.json` at the root is passed over. Anything else that is not one of
///   these files (`oplog.bson`, other files, a folder inside a database folder) is not read and
///   listed in ``ignored``, for the caller to report. Collections are read in byte order of
///   their names, databases likewise.
/// - ``Kind/bsonFile``: concatenated BSON documents, gzipped or not; a sibling
///   `<name>.metadata.json` (or `.gz`) is read when present.
/// - ``Kind/archive``: a `mongodump --archive` stream, gzipped or not (see below).
/// - ``Kind/extendedJSON``: mongoexport's output, one document per line or one JSON array,
///   canonical or relaxed, gzipped or not.
///
/// A single file (`.bson` or JSON) does not name a database: its namespace is `defaultNamespace`,
/// or the file name without its extensions as the collection with an empty database.
///
/// ```swift
/// let source = try DumpSource(path: "dump")
/// while let (namespace, metadata) = try source.nextNamespace() {
///   print(namespace, metadata.indexes.count, "indexes")
///   while let document = try source.nextDocument() { insert(document, into: namespace.dotted) }
/// }
/// ```
///
/// ## Archives and interleaving
/// An archive lists every namespace with its metadata up front (its prelude, also returned by
/// ``prelude()``), then carries the documents in blocks, and mongodump interleaves the blocks of
/// the collections it dumps in parallel. The source never buffers documents: ``nextNamespace()``
/// yields namespaces in the order their blocks appear, and ``nextDocument()`` returns the
/// documents of consecutive blocks of that namespace, ending (`nil`) where a block of another
/// namespace begins. So a namespace whose blocks are interleaved with others' is yielded once
/// for each run of blocks, with the same metadata each time: consumers that create, drop or
/// count per namespace should do so the first time they see it. A namespace listed in the
/// prelude with no documents is yielded once, with none, where its end block is read. At the end
/// of the archive every checksum has been verified and every namespace of the prelude is
/// complete, or an error says which is not.
///
/// ``nextArchiveDocument()`` is the simpler interface for consumers that can take documents in
/// any order: it returns `(namespace, document)` pairs in file order, for every kind of source.
/// Call ``prelude()`` first to create the collections and their indexes, including empty ones.
///
/// Errors are ``BSONError``s with the document index (within its namespace), the byte offset
/// (in the decompressed file), the line and column for JSON, and the file's path in the message.
/// After an error the source cannot continue, unless ``skipDamagedDocument()`` steps over the
/// damaged document (BSON files) or the rest of its file (directories and single files).
///
/// Memory stays flat: one 64 KiB buffer, grown only for a document larger than that.
public final class DumpSource {
  /// What a source was detected to be.
  public enum Kind: Sendable {
    /// A mongodump output directory, or one database folder in it.
    case directory
    /// A single file of concatenated BSON documents (`.bson`, `.bson.gz`).
    case bsonFile
    /// A `mongodump --archive` file.
    case archive
    /// Extended JSON, as mongoexport writes it: lines or an array.
    case extendedJSON
  }

  /// What was detected at `path`.
  public let kind: Kind
  /// The path given to ``init(path:defaultNamespace:options:)``.
  public let path: String
  /// How BSON documents are validated.
  public let options: ValidationOptions

  /// One collection of a directory or single-file source.
  struct Entry {
    var namespace: Namespace
    var dataPath: String?
    var isJSON: Bool
    var metadataPath: String?
    var size: Int
  }

  /// Something in a dump directory that the source does not read, and why.
  public struct Ignored: Sendable, Hashable, CustomStringConvertible {
    /// The file or folder.
    public var path: String
    /// Why it is not read: what was expected instead.
    public var reason: String
    /// `path: reason`.
    public var description: String { "\(path): \(reason)" }
  }

  /// What a directory source holds that it does not read (files that are not dump files,
  /// folders inside a database folder, an oplog), in the order found; empty for other kinds.
  /// An import reports them (``ImportReport/ignored``) rather than pass over them silently.
  public private(set) var ignored: [Ignored] = []

  private var entries: [Entry] = []
  private var entryIndex = -1
  private var metadataCache: [Int: CollectionMetadata] = [:]
  private var reader: Reader?
  private var completedBytes = 0
  private let total: Int?
  private var archive: ArchiveReader?
  private var failure: BSONError?
  /// The namespace of the documents ``nextDocument()`` returns.
  private var currentNamespace: Namespace?
  /// The input opened to detect the kind of a single file, to be used for reading it.
  private var openedInput: DumpInput?
  /// The byte offset of the last document returned, when known.
  private var documentOffset: Int?

  private enum Reader {
    case bson(BSONStreamReader, DumpInput?, descriptor: Int32?, path: String)
    case json(ExtendedJSONStreamReader, DumpInput, path: String)
  }

  /// Opens a source and detects its kind.
  ///
  /// A directory is a ``Kind/directory``. A file (or `-` for standard input) is an archive when
  /// it starts with the archive magic number (after gunzipping), Extended JSON when its name
  /// ends in `.json`, `.jsonl` or `.ndjson` (before `.gz`), BSON when it ends in `.bson` (before
  /// `.gz`), and otherwise as ``DocumentStreamFormat/detect(_:maximumSize:)`` finds from its
  /// first bytes.
  /// - Parameters:
  ///   - path: the directory or file; `-` reads standard input.
  ///   - defaultNamespace: the namespace of a single file (instead of its file name), or the
  ///     database of a database folder (instead of the folder's name, when not empty). Sources
  ///     that name their databases ignore it.
  ///   - options: how BSON documents are validated (sizes, depth, UTF-8).
  /// - Throws: ``BSONError/Kind/io`` when the path cannot be opened or read,
  ///   ``BSONError/Kind/invalidValue`` when a directory holds no dump files.
  public init(path: String, defaultNamespace: Namespace? = nil, options: ValidationOptions = .default) throws(BSONError)
  {
    self.path = path
    self.options = options
    if path != "-", FileSystem.kind(path) == .directory {
      kind = .directory
      (entries, ignored) = try Self.scanDirectory(path, defaultNamespace: defaultNamespace)
      total = entries.reduce(0) { $0 + $1.size }
      return
    }
    let descriptor: Int32? = path == "-" ? nil : try FileSystem.openForReading(path)
    let source = ByteSource(
      fileDescriptor: descriptor ?? 0, name: path, closesDescriptor: descriptor != nil,
      compression: path.hasSuffix(".gz") ? .gzip : .automatic)
    let input = DumpInput(source: source, descriptor: descriptor)
    total = path == "-" ? nil : FileSystem.size(path)
    let head = try Self.annotate(path) { () throws(BSONError) in try source.peek(count: 5) }
    let base = Self.stripExtensions(FileSystem.baseName(path))
    if head.count >= 4, head[0..<4].elementsEqual(ArchiveReader.magic) {
      kind = .archive
      archive = ArchiveReader(input: input, options: options)
      return
    }
    let lowered = path.lowercased()
    let jsonByName = [".json", ".jsonl", ".ndjson"].contains { lowered.hasSuffix($0) || lowered.hasSuffix($0 + ".gz") }
    let bsonByName = lowered.hasSuffix(".bson") || lowered.hasSuffix(".bson.gz")
    if jsonByName || bsonByName {
      kind = jsonByName ? .extendedJSON : .bsonFile
    } else {
      let format = try Self.annotate(path) { () throws(BSONError) in
        try DocumentStreamFormat.detect(source, maximumSize: options.maximumSize)
      }
      kind = format.isExtendedJSON ? .extendedJSON : .bsonFile
    }
    openedInput = input
    let namespace = defaultNamespace ?? Namespace(database: "", collection: base.name)
    let metadataPath = path == "-" ? nil : Self.siblingMetadata(of: path, base: base.name)
    entries = [
      Entry(namespace: namespace, dataPath: path, isJSON: kind == .extendedJSON, metadataPath: metadataPath, size: 0)
    ]
  }

  /// Bytes read so far: of the files, as stored (compressed bytes for gzip), so that it can be
  /// compared with ``totalBytes``. For standard input, decompressed bytes.
  public var bytesRead: Int {
    if let archive { return archive.input.rawBytesRead }
    switch reader {
    case .bson(let r, let input, let descriptor, _):
      if let input { return completedBytes + input.rawBytesRead }
      return completedBytes + (descriptor.map(FileSystem.offset) ?? r.bytesRead)
    case .json(_, let input, _): return completedBytes + input.rawBytesRead
    case nil: return completedBytes
    }
  }

  /// The namespace whose documents ``nextDocument()`` returns (the one the last
  /// ``nextNamespace()`` yielded), or `nil` before the first and after the last.
  public var namespace: Namespace? { currentNamespace }

  /// The byte offset of the last document ``nextDocument()`` returned, in its decompressed file
  /// (for an archive, in the archive); `nil` for Extended JSON, before the first document, and
  /// after an error.
  public var lastDocumentOffset: Int? { documentOffset }

  /// What ``skipDamagedDocument()`` stepped over.
  public enum Skip: Sendable, Equatable {
    /// The damaged document alone, of this many bytes (trusting its length prefix); reading goes
    /// on with the next document of the same file.
    case document(bytes: Int)
    /// The rest of the file holding the damaged document; reading goes on with the next
    /// namespace (for a single file, there is none).
    case restOfFile
  }

  /// Steps over the error that made ``nextDocument()`` fail, so that reading can go on: the
  /// damaged document alone in a BSON file whose length prefix is plausible (see
  /// ``BSONStreamReader/skipDamagedDocument()``) or in a JSON file where its braces balance (see
  /// ``ExtendedJSONStreamReader/skipDamagedDocument()``), else the rest of that file for
  /// directory and single-file sources.
  ///
  /// It cannot step over I/O errors, errors in metadata, or anything in an archive (whose blocks
  /// and checksums do not survive a skipped document): it returns `nil` and the source keeps
  /// throwing the error.
  public func skipDamagedDocument() -> Skip? {
    guard let error = failure, archive == nil, error.kind != .io else { return nil }
    if case .bson(var r, let input, let descriptor, let path) = reader, let bytes = r.skipDamagedDocument() {
      reader = .bson(r, input, descriptor: descriptor, path: path)
      failure = nil
      return .document(bytes: bytes)
    }
    if case .json(var r, let input, let path) = reader, let bytes = r.skipDamagedDocument() {
      reader = .json(r, input, path: path)
      failure = nil
      return .document(bytes: bytes)
    }
    guard reader != nil else { return nil }
    closeReader()
    failure = nil
    return .restOfFile
  }

  /// The total size of the input files as stored, or `nil` for standard input.
  public var totalBytes: Int? { total }

  /// The archive's header document (`concurrent_collections`, `version`, `server_version`,
  /// `tool_version`) once ``prelude()`` or ``nextNamespace()`` has read it; `nil` for other kinds.
  public var archiveHeader: Document? { archive?.header }

  /// Every namespace of the source with its metadata, in the order ``nextNamespace()`` first
  /// yields them (for an archive, the prelude's order). It reads the archive's prelude or the
  /// metadata files, and no documents.
  /// - Throws: as ``nextNamespace()``.
  /// - Complexity: O(n) in the number of namespaces and the size of their metadata.
  public func prelude() throws(BSONError) -> [(namespace: Namespace, metadata: CollectionMetadata)] {
    if let failure { throw failure }
    if let archive { return try fail { () throws(BSONError) in try archive.readPrelude() } }
    var result: [(namespace: Namespace, metadata: CollectionMetadata)] = []
    for i in entries.indices {
      result.append((entries[i].namespace, try fail { () throws(BSONError) in try metadata(i) }))
    }
    return result
  }

  /// The next namespace in the source, with its metadata; then read its documents with
  /// ``nextDocument()`` until it returns `nil`. Documents of the previous namespace that were not
  /// read are skipped (and still checked).
  ///
  /// For an archive, a namespace can come more than once; see "Archives and interleaving" above.
  /// - Returns: `nil` after the last namespace.
  /// - Throws: ``BSONError`` for unreadable metadata or, in an archive, malformed blocks.
  public func nextNamespace() throws(BSONError) -> (Namespace, CollectionMetadata)? {
    if let failure { throw failure }
    return try fail { () throws(BSONError) -> (Namespace, CollectionMetadata)? in
      if let archive {
        let next = try archive.nextNamespace()
        currentNamespace = next?.0
        return next
      }
      closeReader()
      entryIndex += 1
      guard entryIndex < entries.count else {
        entryIndex = entries.count
        currentNamespace = nil
        return nil
      }
      let entry = entries[entryIndex]
      let metadata = try metadata(entryIndex)
      try openReader(entry)
      currentNamespace = entry.namespace
      return (entry.namespace, metadata)
    }
  }

  /// The next document of the current namespace, or `nil` at its end (and before the first
  /// ``nextNamespace()``).
  ///
  /// The document owns its bytes. Errors carry the document's index in its namespace and its
  /// byte offset in the file (and line and column for JSON).
  /// - Throws: ``BSONError/Kind/truncated`` for a file that ends inside a document, validation and
  ///   JSON errors for a malformed one, ``BSONError/Kind/io`` when reading or gunzipping fails.
  /// - Complexity: O(n) in the size of the document.
  public func nextDocument() throws(BSONError) -> Document? {
    if let failure { throw failure }
    documentOffset = nil
    return try fail { () throws(BSONError) -> Document? in
      if let archive {
        let document = try archive.nextDocument()
        if let document { documentOffset = archive.input.offset - document.byteCount }
        return document
      }
      switch reader {
      case .bson(var r, let input, let descriptor, let path):
        let document = try Self.annotate(path) { () throws(BSONError) in
          defer { reader = .bson(r, input, descriptor: descriptor, path: path) }
          return try r.next()
        }
        if let document { documentOffset = r.bytesRead - document.byteCount }
        return document
      case .json(var r, let input, let path):
        return try Self.annotate(path) { () throws(BSONError) in
          defer { reader = .json(r, input, path: path) }
          return try r.next()
        }
      case nil:
        return nil
      }
    }
  }

  /// The next document of the source with its namespace, in file order, for every kind of
  /// source: across namespaces, and for an archive across interleaved blocks. It moves on to the
  /// next namespace by itself; empty namespaces are passed over, so call ``prelude()`` first to
  /// learn about them.
  ///
  /// Do not mix it with ``nextNamespace()`` except to continue after it.
  /// - Returns: `nil` at the end of the source.
  /// - Throws: as ``nextNamespace()`` and ``nextDocument()``.
  public func nextArchiveDocument() throws(BSONError) -> (Namespace, Document)? {
    while true {
      if let namespace = currentNamespace, let document = try nextDocument() { return (namespace, document) }
      guard try nextNamespace() != nil else { return nil }
    }
  }

  // MARK: - Opening files

  private func fail<R>(_ body: () throws(BSONError) -> R) throws(BSONError) -> R {
    do throws(BSONError) {
      return try body()
    } catch {
      failure = error
      // Readers stay open after data errors, for skipDamagedDocument(); I/O errors end them.
      if error.kind == .io || archive != nil || reader == nil {
        closeReader()
        archive?.input.close()
      }
      throw error
    }
  }

  /// Adds the file's path to the message of errors from reading it.
  static func annotate<R>(_ path: String, _ body: () throws(BSONError) -> R) throws(BSONError) -> R {
    do throws(BSONError) {
      return try body()
    } catch {
      var error = error
      let prefix = "in '\(path)': "
      if !error.message.hasPrefix(prefix), !error.message.contains("'\(path)'") {
        error.message = prefix + error.message
      }
      throw error
    }
  }

  private func metadata(_ i: Int) throws(BSONError) -> CollectionMetadata {
    if let cached = metadataCache[i] { return cached }
    var metadata = CollectionMetadata()
    if let path = entries[i].metadataPath {
      let text = try Self.annotate(path) { () throws(BSONError) in
        let source = try ByteSource(path: path)
        defer { source.close() }
        return try source.readAll(limit: 64 * 1024 * 1024)
      }
      metadata = try Self.annotate(path) { () throws(BSONError) in try CollectionMetadata(json: text) }
    }
    metadataCache[i] = metadata
    return metadata
  }

  private func openReader(_ entry: Entry) throws(BSONError) {
    guard let dataPath = entry.dataPath else { return }
    let input: DumpInput
    if let opened = openedInput {
      input = opened
      openedInput = nil
    } else {
      let descriptor = try FileSystem.openForReading(dataPath)
      let source = ByteSource(
        fileDescriptor: descriptor, name: dataPath, closesDescriptor: true,
        compression: dataPath.hasSuffix(".gz") ? .gzip : .automatic)
      input = DumpInput(source: source, descriptor: descriptor)
    }
    if entry.isJSON {
      // The reader reads the source directly; keep the input only for progress.
      reader = .json(
        ExtendedJSONStreamReader(source: input.source, options: options), input, path: dataPath)
    } else {
      // BSONStreamReader reads the source directly; keep the input only for progress.
      reader = .bson(
        BSONStreamReader(source: input.source, options: options), input, descriptor: input.descriptor, path: dataPath)
    }
  }

  private func closeReader() {
    let input: DumpInput?
    switch reader {
    case .bson(_, let bsonInput, _, _): input = bsonInput
    case .json(_, let jsonInput, _): input = jsonInput
    case nil: return
    }
    let size = entryIndex >= 0 && entryIndex < entries.count ? entries[entryIndex].size : 0
    completedBytes += max(size, input?.rawBytesRead ?? 0)
    input?.close()
    reader = nil
  }

  // MARK: - File names

  /// The collection name in a file name, and what kind of file it is.
  struct FileName {
    enum Role {
      case bson, json, metadata, other
    }
    var name: String
    var role: Role
  }

  static func stripExtensions(_ fileName: String) -> FileName {
    var name = Substring(fileName)
    if name.hasSuffix(".gz") { name = name.dropLast(3) }
    for (suffix, role) in [
      (".metadata.json", FileName.Role.metadata), (".bson", .bson), (".jsonl", .json), (".ndjson", .json),
      (".json", .json),
    ] where name.hasSuffix(suffix) && name.count > suffix.count {
      return FileName(name: String(name.dropLast(suffix.count)), role: role)
    }
    return FileName(name: String(name), role: .other)
  }

  private static func siblingMetadata(of path: String, base: String) -> String? {
    let directory = FileSystem.directoryName(path)
    for suffix in [".metadata.json", ".metadata.json.gz"] {
      let candidate = FileSystem.join(directory, base + suffix)
      if candidate != path, FileSystem.size(candidate) != nil { return candidate }
    }
    return nil
  }

  /// The collections of a dump root or database folder, and what it holds besides.
  private static func scanDirectory(_ path: String, defaultNamespace: Namespace?) throws(BSONError) -> (
    [Entry], [Ignored]
  ) {
    let names = try FileSystem.list(path)
    let isDatabaseFolder = names.contains { name in
      name != "oplog.bson" && name != "prelude.json" && stripExtensions(name).role != .other
        && FileSystem.kind(FileSystem.join(path, name)) != .directory
    }
    var ignored: [Ignored] = []
    if isDatabaseFolder {
      var database = FileSystem.baseName(path)
      if let given = defaultNamespace?.database, !given.isEmpty { database = given }
      let entries = try scanDatabase(path, database: database, ignored: &ignored)
      return (entries, ignored)
    }
    var entries: [Entry] = []
    for name in names {
      let full = FileSystem.join(path, name)
      if FileSystem.kind(full) == .directory {
        entries += try scanDatabase(full, database: name, ignored: &ignored)
      } else if name == "oplog.bson" {
        ignored.append(Ignored(path: full, reason: "an oplog (mongodump --oplog), which import does not replay"))
      } else if name != "prelude.json" {
        ignored.append(
          Ignored(path: full, reason: "not a database folder: a dump root holds one folder per database"))
      }
    }
    guard !entries.isEmpty else {
      throw BSONError(
        .invalidValue,
        "'\(path)' is not a mongodump directory: expected <db>/<collection>.bson or <collection>.metadata.json files, found none"
      )
    }
    return (entries, ignored)
  }

  private static func scanDatabase(_ path: String, database: String, ignored: inout [Ignored]) throws(BSONError)
    -> [Entry]
  {
    var byName: [String: Entry] = [:]
    for file in try FileSystem.list(path) {
      let full = FileSystem.join(path, file)
      guard case .file(let size)? = FileSystem.kind(full) else {
        let reason =
          FileSystem.kind(full) == .directory
          ? "a folder inside the database folder of \(database): a dump has one level of database folders (a database name cannot contain '/')"
          : "neither a file nor a folder that can be read"
        ignored.append(Ignored(path: full, reason: reason))
        continue
      }
      let parsed = stripExtensions(file)
      guard parsed.role != .other else {
        ignored.append(
          Ignored(
            path: full,
            reason:
              "not a dump file: expected <collection>.bson, .json, .jsonl, .ndjson or .metadata.json (each may end in .gz)"
          ))
        continue
      }
      let collection = FileSystem.unescape(parsed.name)
      var entry =
        byName[collection]
        ?? Entry(
          namespace: Namespace(database: database, collection: collection), dataPath: nil, isJSON: false,
          metadataPath: nil, size: 0)
      switch parsed.role {
      case .metadata:
        if entry.metadataPath == nil { entry.metadataPath = full }
      case .bson, .json:
        if entry.dataPath == nil {
          entry.dataPath = full
          entry.isJSON = parsed.role == .json
          entry.size = size
        }
      case .other: break
      }
      byName[collection] = entry
    }
    return byName.values.sorted { $0.namespace.collection.utf8.lexicographicallyPrecedes($1.namespace.collection.utf8) }
  }
}
