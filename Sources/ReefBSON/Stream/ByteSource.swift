#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Whether a stream is gzip-compressed.
public enum StreamCompression: Sendable, Hashable {
  /// Decide by the path: a name ending in `.gz` is gzip. When reading, gzip is also recognised by
  /// its magic bytes (1F 8B 08), so compressed standard input and misnamed files work too.
  case automatic
  /// Always gzip.
  case gzip
  /// Never gzip: the bytes are taken as they are.
  case none
}

/// A sequential source of bytes from a file, standard input or a file descriptor, decompressing
/// gzip on the fly.
///
/// Reads go through a fixed 64 KiB buffer, so memory use does not depend on the size of the
/// input. ``peek(count:)`` looks ahead without consuming, for format detection.
///
/// Errors are ``BSONError/Kind/io`` with ``BSONError/offset`` set to the position in the
/// (decompressed) stream where reading failed. When gzip data turns out to be corrupt, the bytes
/// decompressed before the damage are delivered first and the error comes with the next read.
public final class ByteSource {
  /// The path, or `-` for standard input, as used in error messages.
  public let name: String
  /// The number of (decompressed) bytes delivered by ``read(into:)`` so far.
  public private(set) var position = 0

  private let fd: Int32
  private let closesDescriptor: Bool
  private var isClosed = false
  private let compression: StreamCompression
  private var decided = false
  private var inflater: GzipInflater?
  private var memberEnded = false

  /// Raw bytes from the descriptor: compressed input, or the look-ahead used to detect gzip.
  private let raw: UnsafeMutableRawPointer
  private static let rawCapacity = 64 * 1024
  private var rawStart = 0
  private var rawEnd = 0
  private var rawEOF = false
  /// Raw bytes consumed by the decompressor, for error messages.
  private var rawConsumed = 0
  /// Decoded bytes peeked at but not yet delivered.
  private var lookahead: [UInt8] = []
  private var lookaheadStart = 0
  /// zlib's complaint, kept until the bytes decoded before it have been delivered.
  private var deferredFailure: String?
  private var failure: BSONError?

  /// Opens a file for reading; `-` reads standard input.
  /// - Parameters:
  ///   - path: a file path, or `-` for standard input.
  ///   - compression: with `.automatic`, a path ending in `.gz` is gunzipped, and other input is
  ///     gunzipped when it starts with the gzip magic bytes.
  /// - Throws: ``BSONError/Kind/io`` (`cannot open 'path': No such file or directory`).
  public convenience init(path: String, compression: StreamCompression = .automatic) throws(BSONError) {
    if path == "-" {
      self.init(fileDescriptor: 0, name: "-", closesDescriptor: false, compression: compression)
      return
    }
    let fd = path.withCString { open($0, O_RDONLY | O_CLOEXEC) }
    guard fd >= 0 else { throw BSONError(.io, "cannot open '\(path)': \(errnoDescription())") }
    let resolved: StreamCompression = compression == .automatic && path.hasSuffix(".gz") ? .gzip : compression
    self.init(fileDescriptor: fd, name: path, closesDescriptor: true, compression: resolved)
  }

  /// Reads from an open file descriptor.
  /// - Parameters:
  ///   - fileDescriptor: the descriptor to read; it is closed when the source is closed or
  ///     deinitialised only if `closesDescriptor` is true.
  ///   - name: what error messages call the input.
  ///   - compression: `.automatic` detects gzip by its magic bytes.
  public init(
    fileDescriptor: Int32, name: String, closesDescriptor: Bool = false, compression: StreamCompression = .automatic
  ) {
    self.fd = fileDescriptor
    self.name = name
    self.closesDescriptor = closesDescriptor
    self.compression = compression
    raw = .allocate(byteCount: Self.rawCapacity, alignment: 8)
  }

  deinit {
    close()
    raw.deallocate()
  }

  /// Closes the file descriptor if the source owns it. Reading afterwards returns end of input.
  public func close() {
    guard !isClosed else { return }
    isClosed = true
    if closesDescriptor { _ = systemClose(fd) }
  }

  /// Whether the input is being gunzipped (decided at the first read or peek).
  public var isGzip: Bool { inflater != nil }

  /// Reads up to `buffer.count` bytes into `buffer` and returns how many were read; 0 means the
  /// end of the input.
  /// - Throws: ``BSONError/Kind/io`` when the descriptor cannot be read or gzip data is corrupt
  ///   or cut short. Once thrown, the same error is thrown by every later read.
  public func read(into buffer: UnsafeMutableRawBufferPointer) throws(BSONError) -> Int {
    guard buffer.count > 0 else { return 0 }
    if lookaheadStart < lookahead.count {
      let n = min(buffer.count, lookahead.count - lookaheadStart)
      lookahead.withUnsafeBytes { src in
        // Safe: n <= both the remaining look-ahead and the destination's size.
        buffer.baseAddress!.copyMemory(from: src.baseAddress! + lookaheadStart, byteCount: n)
      }
      lookaheadStart += n
      if lookaheadStart == lookahead.count {
        lookahead.removeAll(keepingCapacity: false)
        lookaheadStart = 0
      }
      position += n
      return n
    }
    let n = try decode(into: buffer)
    position += n
    return n
  }

  /// Returns up to `count` bytes that the next reads will deliver, without consuming them (fewer
  /// only at the end of the input).
  /// - Throws: as ``read(into:)``, when no byte at all can be read.
  public func peek(count: Int) throws(BSONError) -> [UInt8] {
    var chunk = [UInt8](repeating: 0, count: 4096)
    while lookahead.count - lookaheadStart < count {
      let n = try withMutableBytes(of: &chunk) { (b) throws(BSONError) -> Int in try decode(into: b) }
      if n == 0 { break }
      lookahead.append(contentsOf: chunk[0..<n])
    }
    return Array(lookahead[lookaheadStart..<min(lookahead.count, lookaheadStart + count)])
  }

  /// Reads everything that is left.
  /// - Parameter limit: the most bytes to accept.
  /// - Throws: as ``read(into:)``, and ``BSONError/Kind/sizeLimitExceeded`` past `limit`.
  public func readAll(limit: Int = Int.max) throws(BSONError) -> [UInt8] {
    var out = [UInt8]()
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
      let n = try withMutableBytes(of: &chunk) { (b) throws(BSONError) -> Int in try read(into: b) }
      if n == 0 { return out }
      guard out.count + n <= limit else {
        throw BSONError(
          .sizeLimitExceeded, "'\(name)' is larger than the limit of \(limit) bytes", offset: position)
      }
      out.append(contentsOf: chunk[0..<n])
    }
  }

  // MARK: - Decoding

  private func decode(into buffer: UnsafeMutableRawBufferPointer) throws(BSONError) -> Int {
    if let failure { throw failure }
    do throws(BSONError) {
      if !decided { try decide() }
      return try inflater != nil ? inflate(into: buffer) : copyPlain(into: buffer)
    } catch {
      var error = error
      if error.offset == nil { error.offset = position + lookahead.count - lookaheadStart }
      failure = error
      throw error
    }
  }

  private func decide() throws(BSONError) {
    decided = true
    var gzip = compression == .gzip
    if compression == .automatic {
      while rawEnd - rawStart < 4, !rawEOF { try fillRaw() }
      gzip = looksLikeGzip(UnsafeRawBufferPointer(start: raw + rawStart, count: rawEnd - rawStart))
    }
    if gzip { inflater = try GzipInflater() }
  }

  private func copyPlain(into buffer: UnsafeMutableRawBufferPointer) throws(BSONError) -> Int {
    if rawStart < rawEnd {
      let n = min(buffer.count, rawEnd - rawStart)
      buffer.baseAddress!.copyMemory(from: raw + rawStart, byteCount: n)
      rawStart += n
      return n
    }
    if rawEOF || isClosed { return 0 }
    let n = try readDescriptor(into: buffer.baseAddress!, count: buffer.count)
    if n == 0 { rawEOF = true }
    return n
  }

  private func inflate(into buffer: UnsafeMutableRawBufferPointer) throws(BSONError) -> Int {
    if let message = deferredFailure { throw corrupt(message) }
    while true {
      if rawStart == rawEnd, !rawEOF { try fillRaw() }
      if rawStart == rawEnd, rawEOF {
        if memberEnded { return 0 }
        throw BSONError(
          .io,
          "gzip data in '\(name)' ends unexpectedly after \(rawConsumed) compressed bytes (the file is truncated)")
      }
      if memberEnded {
        // Another gzip member follows (files joined with `cat` are valid gzip).
        inflater!.reset()
        memberEnded = false
      }
      let step = inflater!.step(
        input: UnsafeRawBufferPointer(start: raw + rawStart, count: rawEnd - rawStart), output: buffer)
      rawStart += step.consumed
      rawConsumed += step.consumed
      if step.ended { memberEnded = true }
      if let message = step.failure {
        if step.produced > 0 {
          deferredFailure = message
          return step.produced
        }
        throw corrupt(message)
      }
      if step.produced > 0 { return step.produced }
    }
  }

  private func corrupt(_ message: String) -> BSONError {
    BSONError(.io, "corrupt gzip data in '\(name)' near compressed byte \(rawConsumed): \(message)")
  }

  /// Moves unread raw bytes to the front and reads more from the descriptor.
  private func fillRaw() throws(BSONError) {
    if rawStart > 0 {
      let n = rawEnd - rawStart
      if n > 0 { raw.copyMemory(from: raw + rawStart, byteCount: n) }
      rawStart = 0
      rawEnd = n
    }
    guard !isClosed else {
      rawEOF = true
      return
    }
    let n = try readDescriptor(into: raw + rawEnd, count: Self.rawCapacity - rawEnd)
    if n == 0 { rawEOF = true }
    rawEnd += n
  }

  private func readDescriptor(into p: UnsafeMutableRawPointer, count: Int) throws(BSONError) -> Int {
    while true {
      let n = systemRead(fd, p, count)
      if n >= 0 { return n }
      if errno == EINTR { continue }
      throw BSONError(.io, "cannot read '\(name)': \(errnoDescription())")
    }
  }
}

/// The text of the current `errno`.
func errnoDescription(_ code: Int32 = errno) -> String {
  String(cString: strerror(code))
}

@inline(__always)
func systemRead(_ fd: Int32, _ p: UnsafeMutableRawPointer, _ count: Int) -> Int {
  #if canImport(Glibc)
    Glibc.read(fd, p, count)
  #else
    Darwin.read(fd, p, count)
  #endif
}

@inline(__always)
func systemWrite(_ fd: Int32, _ p: UnsafeRawPointer, _ count: Int) -> Int {
  #if canImport(Glibc)
    Glibc.write(fd, p, count)
  #else
    Darwin.write(fd, p, count)
  #endif
}

@inline(__always)
func systemClose(_ fd: Int32) -> Int32 {
  #if canImport(Glibc)
    Glibc.close(fd)
  #else
    Darwin.close(fd)
  #endif
}

/// `Array.withUnsafeBytes` with a typed-throwing body (the standard library's is `rethrows`).
@inline(__always)
func withBytes<R>(
  of array: [UInt8], _ body: (UnsafeRawBufferPointer) throws(BSONError) -> R
) throws(BSONError) -> R {
  try array.withUnsafeBytes { raw in Result { () throws(BSONError) -> R in try body(raw) } }.get()
}

/// `Array.withUnsafeMutableBytes` with a typed-throwing body.
@inline(__always)
func withMutableBytes<R>(
  of array: inout [UInt8], _ body: (UnsafeMutableRawBufferPointer) throws(BSONError) -> R
) throws(BSONError) -> R {
  try array.withUnsafeMutableBytes { raw in Result { () throws(BSONError) -> R in try body(raw) } }.get()
}
