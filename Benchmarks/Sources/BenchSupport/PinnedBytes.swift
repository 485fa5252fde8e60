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
