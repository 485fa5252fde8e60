#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An immutable, ordered BSON document that views its bytes without copying them.
///
/// A `Document` is a view: it can point into memory it owns, into a slice of a larger buffer, or
/// into a memory map kept alive by an owner. Nested documents and arrays returned by lookups are
/// views on the same bytes. Every public way of creating a document from bytes validates them
/// first (see ``ValidationOptions``), so reading a document never reads out of bounds.
///
/// Keys keep their order; lookups by key are linear scans, as in every BSON library, and
/// ``subscript(_:)-(String)`` follows dotted paths (`doc["address.city"]`, `doc["addresses.0.city"]`).
///
/// ```swift
/// let doc: Document = ["name": "Ada", "address": ["city": "London"]]
/// doc["address.city"]  // .string("London")
/// ```
public struct Document: Sendable {
  @usableFromInline let storage: DocumentStorage
  /// Offset of the document's first byte (its length prefix) in `storage`.
  @usableFromInline let start: Int
  /// Total length in bytes, including the length prefix and the terminating zero.
  @usableFromInline let length: Int

  @inlinable @inline(__always)
  init(storage: DocumentStorage, start: Int, length: Int) {
    self.storage = storage
    self.start = start
    self.length = length
  }

  /// The empty document (5 bytes).
  public init() {
    self.init(storage: .empty, start: 0, length: 5)
  }

  /// Validates `bytes` and copies them into a new document.
  ///
  /// - Throws: ``BSONError`` saying what is wrong and at which byte offset and key path. The
  ///   bytes must hold exactly one document: trailing bytes are an error.
  /// - Complexity: O(n) in the number of bytes.
  public init(bytes: some Collection<UInt8>, options: ValidationOptions = .default) throws(BSONError) {
    let copied: DocumentStorage? = bytes.withContiguousStorageIfAvailable {
      DocumentStorage(copying: UnsafeRawBufferPointer($0))
    }
    let storage = copied ?? Array(bytes).withUnsafeBytes { DocumentStorage(copying: $0) }
    try self.init(validating: storage, options: options)
  }

  /// Validates a document in external memory and views it without copying.
  ///
  /// The caller guarantees that the memory stays valid and unchanged while `owner` is alive;
  /// the document keeps `owner` alive for as long as any view of it exists.
  /// - Throws: ``BSONError`` when the bytes are not exactly one valid document.
  public init(
    bytesNoCopy bytes: UnsafeRawBufferPointer, owner: AnyObject?, options: ValidationOptions = .default
  ) throws(BSONError) {
    try self.init(validating: DocumentStorage(borrowing: bytes, owner: owner), options: options)
  }

  /// Views bytes that Reef itself validated earlier, without validating them again.
  ///
  /// For Reef's own modules only (the store reads documents it validated when it wrote them and
  /// whose checksum it has just verified). The bytes must be exactly one valid document: this
  /// initializer trusts them, and reading an invalid document made this way is undefined.
  @_spi(ReefInternal)
  public init(trustedBytesNoCopy bytes: UnsafeRawBufferPointer, owner: AnyObject?) {
    self.init(storage: DocumentStorage(borrowing: bytes, owner: owner), start: 0, length: bytes.count)
  }

  /// A copy of bytes that Reef itself validated earlier, in memory of its own, without
  /// validating them again. For Reef's own modules only; see ``init(trustedBytesNoCopy:owner:)``.
  @_spi(ReefInternal)
  public init(trustedCopying bytes: UnsafeRawBufferPointer) {
    self.init(storage: DocumentStorage(copying: bytes), start: 0, length: bytes.count)
  }

  /// A copy of a document that Reef's store validated with the default options when it wrote it
  /// (and whose checksum it has just verified), recorded as known valid (``isKnownValid``): the
  /// store does not validate it again when it is written elsewhere. For Reef's own modules only;
  /// the bytes are trusted as with ``init(trustedCopying:)``.
  @_spi(ReefInternal)
  public init(storedCopying bytes: UnsafeRawBufferPointer) {
    self.init(storage: DocumentStorage(copying: bytes), validatedWith: .default)
  }

  /// A copy of this document in memory of its own.
  ///
  /// The bytes are not validated again (they were when this document was made), so this is the
  /// cheap way to keep a document that views memory that is about to go away, such as a
  /// database's memory map after its transaction ends.
  public func copied() -> Document {
    withUnsafeBytes { Document(trustedCopying: $0) }
  }

  init(validating storage: DocumentStorage, options: ValidationOptions) throws(BSONError) {
    let length = try BSONValidator.validateDocument(
      UnsafeRawBufferPointer(start: storage.base, count: storage.count), at: 0, options: options)
    guard length == storage.count else {
      throw BSONError(
        .trailingBytes, "expected the document to end at byte \(length), found \(storage.count - length) more bytes",
        offset: length)
    }
    self.init(storage: storage, validatedWith: options)
  }

  /// A document of all the bytes of `storage`, which were just validated as one document with
  /// `options`: recorded as known valid (``isKnownValid``) when those options are at least as
  /// strict as the default. Called before the storage is shared.
  init(storage: DocumentStorage, validatedWith options: ValidationOptions) {
    if options.isAtLeastAsStrictAsDefault { storage.markValidated() }
    self.init(storage: storage, start: 0, length: storage.count)
  }

  /// Whether this document's bytes are known to be valid under ``ValidationOptions/default``
  /// (MongoDB's limits, UTF-8 and array keys checked): true for documents made from bytes by a
  /// validating initializer or read by a ``BSONStreamReader`` with those options or stricter
  /// ones, and for the documents and arrays nested in them; false for documents built in memory (which may be too deep or too large)
  /// and for trusted views. For Reef's own modules: the store validates a document before
  /// writing it unless this is true.
  @_spi(ReefInternal)
  public var isKnownValid: Bool { storage.isValidated }

  @inline(__always)
  var base: UnsafeRawPointer { storage.base + start }

  /// The number of bytes in the encoded document, including its length prefix and terminator.
  public var byteCount: Int { length }

  /// A copy of the document's bytes.
  public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

  /// Calls `body` with the document's bytes; the pointer must not escape the closure.
  public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
    try body(UnsafeRawBufferPointer(start: base, count: length))
  }

  /// Whether the document has no elements.
  public var isEmpty: Bool { length == 5 }

  /// The number of elements. - Complexity: O(n).
  public var count: Int {
    var n = 0
    var it = makeIterator()
    while it.nextPosition() != nil { n += 1 }
    return n
  }

  /// The keys, in order. - Complexity: O(n).
  public var keys: [String] { map(\.key) }

  /// The values, in order. - Complexity: O(n).
  public var values: [BSON] { map(\.value) }
}

extension Document: Equatable, Hashable {
  /// Two documents are equal when their bytes are equal (so key order matters, as in MongoDB).
  public static func == (a: Document, b: Document) -> Bool {
    a.length == b.length && (a.storage === b.storage && a.start == b.start || memcmp(a.base, b.base, a.length) == 0)
  }
  public func hash(into hasher: inout Hasher) {
    withUnsafeBytes { hasher.combine(bytes: $0) }
  }
}
