import CZlib

/// The result of one step of a zlib stream: how much input it took, how much output it made,
/// whether the stream (one gzip member) ended, and zlib's complaint when the data is corrupt
/// (the output made before zlib noticed is still counted in `produced`).
struct ZlibStep {
  var consumed: Int
  var produced: Int
  var ended: Bool
  var failure: String? = nil
}

/// Incremental gzip decompression (zlib's `inflate` with header auto-detection).
///
/// The `z_stream` lives on the heap because zlib keeps a pointer back to it and refuses a stream
/// that has moved.
final class GzipInflater {
  private let stream: UnsafeMutablePointer<z_stream>

  /// Starts a decoder that accepts a gzip or zlib header (windowBits 15 + 32).
  init() throws(BSONError) {
    stream = .allocate(capacity: 1)
    stream.initialize(to: z_stream())
    let rc = inflateInit2_(stream, 15 + 32, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
    guard rc == Z_OK else {
      stream.deinitialize(count: 1)
      stream.deallocate()
      throw BSONError(.io, "cannot start gzip decompression: zlib error \(rc)")
    }
  }

  deinit {
    inflateEnd(stream)
    stream.deinitialize(count: 1)
    stream.deallocate()
  }

  /// Prepares for the next gzip member of a multi-member file.
  func reset() { inflateReset(stream) }

  /// Inflates from `input` into `output`; corrupt data is reported in ``ZlibStep/failure``.
  func step(input: UnsafeRawBufferPointer, output: UnsafeMutableRawBufferPointer) -> ZlibStep {
    stream.pointee.next_in = input.baseAddress.map {
      UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: Bytef.self))
    }
    stream.pointee.avail_in = uInt(input.count)
    stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
    stream.pointee.avail_out = uInt(output.count)
    let rc = inflate(stream, Z_NO_FLUSH)
    var result = ZlibStep(
      consumed: input.count - Int(stream.pointee.avail_in), produced: output.count - Int(stream.pointee.avail_out),
      ended: rc == Z_STREAM_END)
    stream.pointee.next_in = nil
    stream.pointee.next_out = nil
    switch rc {
    case Z_OK, Z_STREAM_END, Z_BUF_ERROR: break
    default: result.failure = zlibMessage(rc)
    }
    return result
  }

  private func zlibMessage(_ rc: Int32) -> String {
    if let msg = stream.pointee.msg { return String(cString: msg) }
    switch rc {
    case Z_NEED_DICT: return "a preset dictionary is required"
    case Z_MEM_ERROR: return "out of memory"
    default: return "zlib error \(rc)"
    }
  }
}

/// Incremental gzip compression (zlib's `deflate` writing a gzip header, windowBits 15 + 16).
final class GzipDeflater {
  private let stream: UnsafeMutablePointer<z_stream>

  /// Starts an encoder at the given zlib compression level (0-9, or -1 for zlib's default, 6).
  init(level: Int32 = Z_DEFAULT_COMPRESSION) throws(BSONError) {
    stream = .allocate(capacity: 1)
    stream.initialize(to: z_stream())
    let rc = deflateInit2_(
      stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
    guard rc == Z_OK else {
      stream.deinitialize(count: 1)
      stream.deallocate()
      throw BSONError(.io, "cannot start gzip compression: zlib error \(rc)")
    }
  }

  deinit {
    deflateEnd(stream)
    stream.deinitialize(count: 1)
    stream.deallocate()
  }

  /// Deflates from `input` into `output`; with `finish`, flushes everything and writes the trailer
  /// (call again with more output space until `ended`).
  func step(input: UnsafeRawBufferPointer, output: UnsafeMutableRawBufferPointer, finish: Bool) -> ZlibStep {
    stream.pointee.next_in = input.baseAddress.map {
      UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: Bytef.self))
    }
    stream.pointee.avail_in = uInt(input.count)
    stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
    stream.pointee.avail_out = uInt(output.count)
    let rc = deflate(stream, finish ? Z_FINISH : Z_NO_FLUSH)
    // deflate cannot fail on a valid stream with output space: Z_STREAM_ERROR would be a bug here.
    precondition(rc != Z_STREAM_ERROR, "zlib deflate reported an inconsistent stream")
    let result = ZlibStep(
      consumed: input.count - Int(stream.pointee.avail_in), produced: output.count - Int(stream.pointee.avail_out),
      ended: rc == Z_STREAM_END)
    stream.pointee.next_in = nil
    stream.pointee.next_out = nil
    return result
  }
}

/// Whether `bytes` start like a gzip member: magic 1F 8B, method 8 (deflate), no reserved flag bits.
///
/// A BSON stream whose first document is exactly 559,903 bytes long also starts with 1F 8B 08 00;
/// name such a file without `.gz` and pass ``Decompression/none`` to read it.
func looksLikeGzip(_ bytes: some Collection<UInt8>) -> Bool {
  var it = bytes.makeIterator()
  guard it.next() == 0x1F, it.next() == 0x8B, it.next() == 0x08 else { return false }
  guard let flags = it.next() else { return true }
  return flags & 0xE0 == 0
}
