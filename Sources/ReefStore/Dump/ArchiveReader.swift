import ReefBSON

/// Reads a `mongodump --archive` stream block by block (see `DumpSource`'s "Archives and
/// interleaving" for what it yields).
final class ArchiveReader {
  /// The magic number 0x8199e26d as it appears in the file (little-endian).
  static let magic: [UInt8] = [0x6D, 0xE2, 0x99, 0x81]
  static let terminator: Int32 = -1

  let input: DumpInput
  let options: ValidationOptions
  private(set) var header: Document?
  private var preludeNamespaces: [(namespace: Namespace, metadata: CollectionMetadata)] = []
  private var metadataByNamespace: [Namespace: CollectionMetadata] = [:]
  private var preludeRead = false
  /// The namespace whose segment is being read, when inside a segment.
  private var segment: Namespace?
  /// A block header read while looking for the next segment of the current namespace.
  private var pending: BlockHeader?
  private var checksums: [Namespace: CRC64] = [:]
  private var counts: [Namespace: Int] = [:]
  private var finished: Set<Namespace> = []
  private var yielded: Set<Namespace> = []
  private var bodyEnded = false
  private var leftovers: [(Namespace, CollectionMetadata)] = []

  struct BlockHeader {
    var namespace: Namespace
    var isEOF: Bool
    var crc: Int64
    var offset: Int
  }

  init(input: DumpInput, options: ValidationOptions) {
    self.input = input
    self.options = options
  }

  // MARK: - Prelude

  /// Reads the magic number, the header and the collection metadata, once.
  func readPrelude() throws(BSONError) -> [(namespace: Namespace, metadata: CollectionMetadata)] {
    if preludeRead { return preludeNamespaces }
    try DumpSource.annotate(input.name) { () throws(BSONError) in try readPreludeBlocks() }
    preludeRead = true
    return preludeNamespaces
  }

  private func readPreludeBlocks() throws(BSONError) {
    let available = try input.fill(atLeast: 4)
    let found = input.withUnread { Array($0.prefix(4)) }
    guard available >= 4, found == Self.magic else {
      throw BSONError(
        available < 4 ? .truncated : .invalidValue,
        "expected the archive magic number 6D E2 99 81, found \(Self.hex(found))", offset: 0)
    }
    input.consume(4)
    guard let header = try input.readDocument(options: options, what: "the archive header") else {
      throw BSONError(.truncated, "expected the archive header after the magic number, found the end", offset: 4)
    }
    if let version = header.value(forKey: "version"), case .string(let text) = version, text != "0.1" {
      throw BSONError(
        .invalidValue, "expected archive format version \"0.1\", found \"\(text)\"", offset: 4, keyPath: ["version"])
    }
    self.header = header
    while true {
      let at = input.offset
      guard let next = try input.peekInt32(expecting: "collection metadata or the end of the prelude (FF FF FF FF)")
      else {
        throw BSONError(
          .truncated, "the archive ends inside its prelude, before the terminator FF FF FF FF", offset: at)
      }
      if next == Self.terminator {
        input.consume(4)
        return
      }
      guard let block = try input.readDocument(options: options, what: "collection metadata") else { return }
      do throws(BSONError) {
        let namespace = Namespace(
          database: try Self.string(block, "db"), collection: try Self.string(block, "collection"))
        var metadata = CollectionMetadata()
        switch block.value(forKey: "metadata") {
        case .string(let json)?: metadata = try CollectionMetadata(json: Array(json.utf8))
        case nil: break
        case let value?:
          throw BSONError(
            .invalidValue, "expected the metadata as a JSON string, found \(value.type)", keyPath: ["metadata"])
        }
        guard metadataByNamespace[namespace] == nil else {
          throw BSONError(.invalidValue, "the prelude lists namespace '\(namespace)' twice")
        }
        metadataByNamespace[namespace] = metadata
        preludeNamespaces.append((namespace, metadata))
      } catch {
        var error = error
        error.message = "in the prelude's collection metadata at byte offset \(at): " + error.message
        if error.offset == nil { error.offset = at }
        throw error
      }
    }
  }

  // MARK: - Body

  func nextNamespace() throws(BSONError) -> (Namespace, CollectionMetadata)? {
    _ = try readPrelude()
    return try DumpSource.annotate(input.name) { () throws(BSONError) -> (Namespace, CollectionMetadata)? in
      while segment != nil { _ = try nextDocumentInSegment() }
      while true {
        if !leftovers.isEmpty { return leftovers.removeFirst() }
        if bodyEnded { return nil }
        guard let block = try takeBlock() else {
          try finishBody()
          continue
        }
        if block.isEOF {
          try finishNamespace(block)
          if !yielded.contains(block.namespace) {
            yielded.insert(block.namespace)
            return (block.namespace, metadata(block.namespace))
          }
          continue
        }
        guard !finished.contains(block.namespace) else {
          throw BSONError(
            .invalidValue, "a block of documents for '\(block.namespace)' follows its end block", offset: block.offset)
        }
        segment = block.namespace
        yielded.insert(block.namespace)
        return (block.namespace, metadata(block.namespace))
      }
    }
  }

  func nextDocument() throws(BSONError) -> Document? {
    guard segment != nil else { return nil }
    return try DumpSource.annotate(input.name) { () throws(BSONError) in try nextDocumentInSegment() }
  }

  private func nextDocumentInSegment() throws(BSONError) -> Document? {
    while let namespace = segment {
      let at = input.offset
      let index = counts[namespace, default: 0]
      guard let next = try input.peekInt32(expecting: "a document of '\(namespace)' or the terminator FF FF FF FF")
      else {
        throw BSONError(
          .truncated, "the archive ends inside a block of '\(namespace)', before its terminator FF FF FF FF",
          offset: at, documentIndex: index)
      }
      if next == Self.terminator {
        input.consume(4)
        // Continue across consecutive blocks of the same namespace.
        let block = try takeBlock()
        if let block, !block.isEOF, block.namespace == namespace {
          continue
        }
        pending = block
        segment = nil
        return nil
      }
      let document: Document
      do throws(BSONError) {
        guard let read = try input.readDocument(options: options, what: "document \(index) of '\(namespace)'") else {
          return nil
        }
        document = read
      } catch {
        var error = error
        error.documentIndex = index
        throw error
      }
      document.withUnsafeBytes { checksums[namespace, default: CRC64()].update($0) }
      counts[namespace] = index + 1
      return document
    }
    return nil
  }

  /// The pending block header, or the next one from the input; `nil` at the end of the archive.
  private func takeBlock() throws(BSONError) -> BlockHeader? {
    if let pending {
      self.pending = nil
      return pending
    }
    if bodyEnded { return nil }
    let at = input.offset
    guard let block = try input.readDocument(options: options, what: "a namespace header") else { return nil }
    do throws(BSONError) {
      let namespace = Namespace(
        database: try Self.string(block, "db"), collection: try Self.string(block, "collection"))
      var isEOF = false
      switch block.value(forKey: "EOF") {
      case .bool(let value)?: isEOF = value
      case nil: break
      case let value?:
        throw BSONError(.invalidValue, "expected EOF to be a boolean, found \(value.type)", keyPath: ["EOF"])
      }
      var crc: Int64 = 0
      switch block.value(forKey: "CRC") {
      case .int64(let value)?: crc = value
      case .int32(let value)?: crc = Int64(value)
      case nil: break
      case let value?:
        throw BSONError(.invalidValue, "expected CRC to be an int64, found \(value.type)", keyPath: ["CRC"])
      }
      return BlockHeader(namespace: namespace, isEOF: isEOF, crc: crc, offset: at)
    } catch {
      var error = error
      error.message = "in the namespace header at byte offset \(at): " + error.message
      if error.offset == nil { error.offset = at }
      throw error
    }
  }

  /// Checks an end block: its terminator and the checksum of the namespace's documents.
  private func finishNamespace(_ block: BlockHeader) throws(BSONError) {
    let at = input.offset
    guard
      let next = try input.peekInt32(
        expecting: "the terminator FF FF FF FF after the end block of '\(block.namespace)'"),
      next == Self.terminator
    else {
      throw BSONError(
        .invalidValue, "expected the terminator FF FF FF FF after the end block of '\(block.namespace)'", offset: at)
    }
    input.consume(4)
    guard !finished.contains(block.namespace) else {
      throw BSONError(.invalidValue, "'\(block.namespace)' has two end blocks", offset: block.offset)
    }
    let computed = Int64(bitPattern: checksums[block.namespace, default: CRC64()].value)
    guard computed == block.crc else {
      throw BSONError(
        .invalidValue,
        "the checksum of the \(counts[block.namespace, default: 0]) documents of '\(block.namespace)' is \(computed), but its end block says \(block.crc)",
        offset: block.offset)
    }
    finished.insert(block.namespace)
  }

  /// At the end of the input: every namespace of the prelude must have had its end block.
  private func finishBody() throws(BSONError) {
    guard !bodyEnded else { return }
    bodyEnded = true
    let incomplete = preludeNamespaces.map(\.namespace).filter { !finished.contains($0) }
    if let first = incomplete.first {
      throw BSONError(
        .truncated,
        "the archive ends before the end block of '\(first)'"
          + (incomplete.count > 1 ? " and \(incomplete.count - 1) other namespaces" : "") + " (it is truncated)",
        offset: input.offset)
    }
    leftovers = preludeNamespaces.filter { !yielded.contains($0.namespace) }.map { ($0.namespace, $0.metadata) }
    for (namespace, _) in leftovers { yielded.insert(namespace) }
  }

  private func metadata(_ namespace: Namespace) -> CollectionMetadata {
    metadataByNamespace[namespace] ?? CollectionMetadata()
  }

  private static func string(_ document: Document, _ key: String) throws(BSONError) -> String {
    guard let value = document.value(forKey: key) else {
      throw BSONError(.invalidValue, "expected a string '\(key)', found none", keyPath: [key])
    }
    guard case .string(let text) = value else {
      throw BSONError(.invalidValue, "expected '\(key)' to be a string, found \(value.type)", keyPath: [key])
    }
    return text
  }

  static func hex(_ bytes: [UInt8]) -> String {
    bytes.isEmpty
      ? "nothing"
      : bytes.map { byte in
        let text = String(byte, radix: 16, uppercase: true)
        return byte < 16 ? "0" + text : text
      }.joined(separator: " ")
  }
}
