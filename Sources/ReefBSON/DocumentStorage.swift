/// Immutable bytes that one or more `Document` views point into: either memory Reef allocated
/// and owns, or external memory (a memory map, a read buffer) kept alive by an owner object.
@usableFromInline
final class DocumentStorage: @unchecked Sendable {
  // @unchecked Sendable: the bytes are never written after init, and `isValidated` is set only
  // before the storage is shared (by `Document(storage:validatedWith:)`), so sharing is safe.
  @usableFromInline let base: UnsafeRawPointer
  @usableFromInline let count: Int
  private let owner: AnyObject?
  private let owned: Bool
  /// Whether the bytes were validated, as one document, with options at least as strict as
  /// ``ValidationOptions/default``: then every document viewing them is valid under the default
  /// options too (a nested document or array is shallower and smaller than its parent).
  private(set) var isValidated = false

  /// Records that the bytes passed validation with options at least as strict as the default.
  /// Called only by `Document(storage:validatedWith:)`, before the storage is shared.
  func markValidated() { isValidated = true }

  /// Copies `bytes` into memory owned by this storage.
  init(copying bytes: UnsafeRawBufferPointer) {
    let memory = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 8)
    if let src = bytes.baseAddress, bytes.count > 0 {
      memory.copyMemory(from: src, byteCount: bytes.count)
    }
    base = UnsafeRawPointer(memory)
    count = bytes.count
    owner = nil
    owned = true
  }

  /// Takes ownership of memory allocated with `UnsafeMutableRawPointer.allocate`.
  init(adopting memory: UnsafeMutableRawPointer, count: Int) {
    base = UnsafeRawPointer(memory)
    self.count = count
    owner = nil
    owned = true
  }

  /// Points at external memory without copying; `owner` keeps it alive.
  @usableFromInline
  init(borrowing bytes: UnsafeRawBufferPointer, owner: AnyObject?) {
    base = bytes.baseAddress ?? UnsafeRawPointer(DocumentStorage.emptyBytes)
    count = bytes.count
    self.owner = owner
    owned = false
  }

  deinit {
    if owned { UnsafeMutableRawPointer(mutating: base).deallocate() }
  }

  nonisolated(unsafe) static let emptyBytes: UnsafeMutableRawPointer = {
    let p = UnsafeMutableRawPointer.allocate(byteCount: 8, alignment: 8)
    p.initializeMemory(as: UInt8.self, repeating: 0, count: 8)
    p.storeBytes(of: 5, as: UInt8.self)
    return p
  }()

  static let empty = DocumentStorage(borrowing: UnsafeRawBufferPointer(start: emptyBytes, count: 5), owner: nil)
}

extension UnsafeRawPointer {
  // All readers below are unaligned little-endian loads; callers bounds-check first.
  /// Reads a little-endian Int32 at `offset`.
  @inlinable @inline(__always)
  func int32LE(_ offset: Int) -> Int32 {
    Int32(littleEndian: loadUnaligned(fromByteOffset: offset, as: Int32.self))
  }
  @inlinable @inline(__always)
  func int64LE(_ offset: Int) -> Int64 {
    Int64(littleEndian: loadUnaligned(fromByteOffset: offset, as: Int64.self))
  }
  @inlinable @inline(__always)
  func uint64LE(_ offset: Int) -> UInt64 {
    UInt64(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
  }
  @inlinable @inline(__always)
  func byte(_ offset: Int) -> UInt8 {
    load(fromByteOffset: offset, as: UInt8.self)
  }
}
