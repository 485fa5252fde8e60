/// Copies of many small documents in shared chunks of memory, one allocation per chunk instead
/// of two per document.
///
/// For Reef's own modules only (the store copies query results out of its memory map with it).
/// The bytes given to ``copy(trusted:)`` must be exactly one document that Reef validated: they
/// are trusted. A document keeps alive only its own chunk (64 KiB by default), so keeping one
/// result out of many holds little memory; a document over a quarter of a chunk gets memory of
/// its own.
@_spi(ReefInternal)
public struct DocumentArena {
  private let chunkSize: Int
  /// The current chunk; it owns the whole chunk, and documents view only the parts written before
  /// they were made.
  private var storage: DocumentStorage?
  private var used = 0

  /// An arena whose chunks hold `chunkSize` bytes.
  public init(chunkSize: Int = 64 * 1024) {
    self.chunkSize = max(chunkSize, 64)
  }

  /// A copy of `bytes`, a document validated earlier, in this arena's memory.
  public mutating func copy(trusted bytes: UnsafeRawBufferPointer) -> Document {
    let count = bytes.count
    guard count <= chunkSize / 4 else { return Document(trustedCopying: bytes) }
    if storage == nil || used + count > chunkSize {
      storage = DocumentStorage(
        adopting: UnsafeMutableRawPointer.allocate(byteCount: chunkSize, alignment: 8), count: chunkSize)
      used = 0
    }
    let chunk = storage!
    let start = used
    // Safe: the chunk was allocated writable by this arena, and `start + count <= chunkSize`.
    UnsafeMutableRawPointer(mutating: chunk.base + start).copyMemory(from: bytes.baseAddress!, byteCount: count)
    used = (start + count + 7) & ~7
    return Document(storage: chunk, start: start, length: count)
  }
}
