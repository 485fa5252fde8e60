import ReefBSON

/// Bytes in memory that neither side of a comparison owns or copies, so that Reef and its anchor
/// read the same bytes at the same address. Never freed: benchmarks keep them for the process.
public struct PinnedBytes: @unchecked Sendable {
  public let buffer: UnsafeRawBufferPointer

  public init(_ bytes: [UInt8]) {
    let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 16)
    memory.copyBytes(from: bytes)
    buffer = UnsafeRawBufferPointer(memory)
  }

  public var pointer: UnsafePointer<UInt8> { buffer.baseAddress!.assumingMemoryBound(to: UInt8.self) }
  public var count: Int { buffer.count }
}

extension PinnedBytes {
  /// Views (no copies) of the BSON stream held here, document `i` from `offsets[i]` to the next
  /// offset (the last to the end). Traps on a document that is not valid BSON.
  public func documents(startingAt offsets: [Int]) -> [Document] {
    offsets.indices.map { index in
      let end = index + 1 < offsets.count ? offsets[index + 1] : count
      return try! Document(bytesNoCopy: UnsafeRawBufferPointer(rebasing: buffer[offsets[index]..<end]), owner: nil)
    }
  }
}
