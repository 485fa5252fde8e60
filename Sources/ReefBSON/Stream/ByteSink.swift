#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A buffered destination for bytes (BSON or text) in a file, standard output or a file
/// descriptor, compressing with gzip when asked.
///
/// Writes collect in a 256 KiB buffer and reach the descriptor in large chunks. Call ``close()``
/// when done: it flushes, finishes the gzip trailer and reports any error. A sink that is
/// deinitialised without being closed flushes and closes quietly, ignoring errors.
///
/// ```swift
/// let out = try ByteSink(path: "people.json.gz")  // gzip, by the extension
/// try out.append { document.appendExtendedJSON(to: &$0); $0.append(0x0A) }
/// try out.close()
/// ```
public final class ByteSink {
  /// The path, or `-` for standard output, as used in error messages.
  public let name: String
  /// The number of bytes accepted so far, before compression.
  public private(set) var bytesWritten = 0

  private let fd: Int32
  private let closesDescriptor: Bool
  private var isClosed = false
  private var pending: [UInt8] = []
  private let deflater: GzipDeflater?
  private var failure: BSONError?
  /// Buffered bytes are written out once there are this many.
  private static let flushThreshold = 256 * 1024

  /// Creates (or truncates) a file for writing; `-` writes standard output.
  /// - Parameters:
  ///   - path: a file path, or `-` for standard output.
  ///   - compression: with `.automatic`, a path ending in `.gz` is gzip-compressed.
  /// - Throws: ``BSONError/Kind/io`` (`cannot open 'path': Permission denied`).
  public convenience init(path: String, compression: StreamCompression = .automatic) throws(BSONError) {
    let gzip = compression == .gzip || (compression == .automatic && path.hasSuffix(".gz"))
    if path == "-" {
      try self.init(fileDescriptor: 1, name: "-", closesDescriptor: false, gzip: gzip)
      return
    }
    let fd = path.withCString { open($0, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
    guard fd >= 0 else { throw BSONError(.io, "cannot open '\(path)': \(errnoDescription())") }
    try self.init(fileDescriptor: fd, name: path, closesDescriptor: true, gzip: gzip)
  }

  /// Writes to an open file descriptor.
  /// - Parameters:
  ///   - fileDescriptor: the descriptor; closed by ``close()`` only if `closesDescriptor` is true.
  ///   - name: what error messages call the output.
  ///   - gzip: whether to compress.
  public init(
    fileDescriptor: Int32, name: String, closesDescriptor: Bool = false, gzip: Bool = false
  ) throws(BSONError) {
    self.fd = fileDescriptor
    self.name = name
    self.closesDescriptor = closesDescriptor
    deflater = gzip ? try GzipDeflater() : nil
    pending.reserveCapacity(Self.flushThreshold + 64 * 1024)
  }

  deinit {
    try? close()
  }

  /// Standard output, not closed by ``close()``.
  public static func standardOutput(gzip: Bool = false) throws(BSONError) -> ByteSink {
    try ByteSink(fileDescriptor: 1, name: "-", gzip: gzip)
  }

  /// Whether the output is gzip-compressed.
  public var isGzip: Bool { deflater != nil }

  /// Appends bytes.
  /// - Throws: ``BSONError/Kind/io`` when writing out the buffer fails.
  public func write(_ bytes: [UInt8]) throws(BSONError) {
    try append { $0.append(contentsOf: bytes) }
  }

  /// Appends bytes from memory.
  public func write(_ bytes: UnsafeRawBufferPointer) throws(BSONError) {
    try append { $0.append(contentsOf: bytes) }
  }

  /// Appends a string's UTF-8.
  public func write(_ string: String) throws(BSONError) {
    try append { $0.append(contentsOf: string.utf8) }
  }

  /// Lets `body` append straight to the output buffer (no intermediate copy), then writes the
  /// buffer out if it is full. `body` must only append.
  public func append(_ body: (inout [UInt8]) -> Void) throws(BSONError) {
    if let failure { throw failure }
    guard !isClosed else { throw BSONError(.io, "cannot write to '\(name)': the output is closed") }
    let before = pending.count
    body(&pending)
    bytesWritten += pending.count - before
    if pending.count >= Self.flushThreshold { try drain(finish: false) }
  }

  /// Writes the buffered bytes to the descriptor. With gzip, zlib may hold back up to a block
  /// until ``close()``.
  public func flush() throws(BSONError) {
    if let failure { throw failure }
    guard !isClosed else { return }
    try drain(finish: false)
  }

  /// Flushes, finishes the gzip stream, and closes the descriptor if the sink owns it.
  /// Calling it again does nothing.
  /// - Throws: ``BSONError/Kind/io`` when the last writes or closing fail.
  public func close() throws(BSONError) {
    guard !isClosed else {
      if let failure { throw failure }
      return
    }
    defer {
      isClosed = true
      if closesDescriptor { _ = systemClose(fd) }
    }
    if let failure { throw failure }
    try drain(finish: true)
  }

  private func drain(finish: Bool) throws(BSONError) {
    do throws(BSONError) {
      if let deflater {
        try deflate(deflater, finish: finish)
      } else {
        try withBytes(of: pending) { (b) throws(BSONError) in try writeAll(b) }
      }
      pending.removeAll(keepingCapacity: true)
    } catch {
      failure = error
      throw error
    }
  }

  private func deflate(_ deflater: GzipDeflater, finish: Bool) throws(BSONError) {
    let outCapacity = 64 * 1024
    let out = UnsafeMutableRawBufferPointer.allocate(byteCount: outCapacity, alignment: 8)
    defer { out.deallocate() }
    try withBytes(of: pending) { (input) throws(BSONError) in
      var offset = 0
      while true {
        let step = deflater.step(
          input: UnsafeRawBufferPointer(rebasing: input[offset...]), output: out, finish: finish)
        offset += step.consumed
        if step.produced > 0 { try writeAll(UnsafeRawBufferPointer(rebasing: out[0..<step.produced])) }
        if finish ? step.ended : (offset == input.count && step.produced < outCapacity) { return }
      }
    }
  }

  private func writeAll(_ bytes: UnsafeRawBufferPointer) throws(BSONError) {
    guard var p = bytes.baseAddress else { return }
    var left = bytes.count
    while left > 0 {
      let n = systemWrite(fd, p, left)
      if n < 0 {
        if errno == EINTR { continue }
        throw BSONError(.io, "cannot write to '\(name)': \(errnoDescription())")
      }
      // Safe: write returns at most `left`.
      p += n
      left -= n
    }
  }
}
