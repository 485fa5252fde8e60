public import CLibBSON
public import ReefBSON

// The zero-copy bridge between Reef's `Document` and libbson's `bson_t`.
//
// Ownership rules, in one place:
// - `withBSONT` lends a *static* `bson_t` (libbson's read-only view made by `bson_init_static`) over
//   the document's own bytes. Nothing is copied and nothing needs freeing; the view dies with the closure.
// - `makeBSONT()` returns a heap `bson_t` holding a copy; the caller owns it and frees it with
//   `bson_destroy`. Prefer `LibBSONDocument`, which owns such a copy and destroys it on `deinit`.
// - `Document(copying:)` copies out of any `bson_t` (static, inline or heap) and validates the copy
//   with Reef's validator, so a `Document` never trusts libbson's bytes blindly.
//
// Swift note: C declares `bson_t` and `bson_iter_t` 128-byte aligned, which Swift cannot express, so
// libbson's functions are imported taking `OpaquePointer`; convert with `OpaquePointer(pointer)`.
// The sizes Swift imports are the C sizes (128 and 80 bytes); scratch structs are allocated with the
// C alignment anyway (see `withLibBSONScratch`).

extension Document {
  /// Calls `body` with a read-only libbson view of the document's bytes, without copying them.
  ///
  /// The `bson_t` is initialised with `bson_init_static`, so libbson treats it as immutable: pass it
  /// (as `OpaquePointer(bson)`) to any libbson or MongoDB C driver function that takes a
  /// `const bson_t *` (iteration, `bson_as_*_json`, `mongoc_collection_insert_one`, …), but never to
  /// one that appends to, reinitialises or destroys it. The pointer, and anything derived from it
  /// (iterators, `bson_get_data`), must not escape the closure.
  ///
  /// ```swift
  /// let count = doc.withBSONT { bson in bson_count_keys(OpaquePointer(bson)) }
  /// ```
  /// - Complexity: O(1).
  public func withBSONT<R>(_ body: (UnsafePointer<bson_t>) throws -> R) rethrows -> R {
    try withUnsafeBytes { raw in
      try withLibBSONScratch(bson_t.self) { b in
        // A `Document` is always exactly one validated document, so libbson's envelope checks
        // (length >= 5, length prefix == byte count, trailing zero) cannot fail.
        let ok = bson_init_static(OpaquePointer(b), raw.baseAddress!.assumingMemoryBound(to: UInt8.self), raw.count)
        precondition(ok, "bson_init_static rejected the bytes of a validated Document")
        // A static bson_t owns no memory, so it needs no bson_destroy.
        return try body(UnsafePointer(b))
      }
    }
  }

  /// Copies the bytes of a libbson document into a new Reef document, validating them.
  ///
  /// Works with every kind of `bson_t` (static, inline, heap, or one a C driver function filled in).
  /// libbson's own, lenient validation is not relied on: the copy goes through Reef's validator with
  /// the default options.
  /// - Throws: ``BSONError`` when the bytes are not one valid document.
  /// - Complexity: O(n) in the number of bytes.
  public init(copying bson: UnsafePointer<bson_t>) throws(BSONError) {
    try self.init(copying: OpaquePointer(bson))
  }

  /// Copies the bytes of a libbson document, given as the `OpaquePointer` that libbson's functions
  /// return (`bson_new()`, `bson_new_from_json(…)`), into a new Reef document, validating them.
  /// - Throws: ``BSONError`` when the bytes are not one valid document.
  /// - Complexity: O(n) in the number of bytes.
  public init(copying bson: OpaquePointer) throws(BSONError) {
    guard let data = bson_get_data(bson) else {
      throw BSONError(.invalidLength, "expected a bson_t with data, found a NULL buffer")
    }
    let length = Int(UnsafePointer<bson_t>(bson).pointee.len)
    try self.init(bytes: UnsafeRawBufferPointer(start: data, count: length))
  }

  /// Returns a heap-allocated libbson copy of the document, which the caller must free with
  /// `bson_destroy`.
  ///
  /// Use this only to hand a document to C code that takes ownership of a `bson_t *`; otherwise use
  /// ``withBSONT(_:)`` (no copy) or ``LibBSONDocument`` (a copy that frees itself).
  /// - Complexity: O(n) in the number of bytes.
  public func makeBSONT() -> UnsafeMutablePointer<bson_t> {
    withUnsafeBytes { raw in
      // bson_new_from_data copies; it fails only for lengths libbson cannot represent (< 5 or
      // > INT_MAX), which a validated document never has.
      guard let b = bson_new_from_data(raw.baseAddress!.assumingMemoryBound(to: UInt8.self), raw.count) else {
        preconditionFailure("bson_new_from_data rejected the bytes of a validated Document")
      }
      return UnsafeMutablePointer(b)
    }
  }
}

/// A libbson document (`bson_t`) owned by Swift: a heap copy made with `bson_new_from_data` (or
/// `bson_copy`) that is destroyed with `bson_destroy` when the object is deinitialised.
///
/// Use it to keep a `bson_t` alive across calls into the MongoDB C driver without managing its memory
/// by hand. The pointer handed to ``withBSONT(_:)`` must not escape the closure, and C code must not
/// take ownership of it (use ``ReefBSON/Document/makeBSONT()`` for that).
///
/// Instances are not `Sendable`: the C API can mutate the document, and libbson does no locking.
public final class LibBSONDocument {
  private let bson: UnsafeMutablePointer<bson_t>

  /// Copies a Reef document into a new libbson document.
  /// - Complexity: O(n) in the number of bytes.
  public init(_ document: Document) {
    bson = document.makeBSONT()
  }

  /// Copies any libbson document (static, inline or heap) into a new one owned by this object.
  ///
  /// The bytes are copied as they are; ``document()`` validates them.
  /// - Complexity: O(n) in the number of bytes.
  public init(copying other: UnsafePointer<bson_t>) {
    guard let copy = bson_copy(OpaquePointer(other)) else { preconditionFailure("bson_copy failed") }
    bson = UnsafeMutablePointer(copy)
  }

  deinit { bson_destroy(OpaquePointer(bson)) }

  /// Calls `body` with the owned `bson_t`; the pointer must not escape the closure, and `body` must
  /// not destroy it.
  public func withBSONT<R>(_ body: (UnsafeMutablePointer<bson_t>) throws -> R) rethrows -> R {
    try body(bson)
  }

  /// The document's length in bytes.
  public var byteCount: Int { Int(bson.pointee.len) }

  /// A validated Reef copy of the libbson document.
  /// - Throws: ``BSONError`` when the bytes are not one valid document.
  /// - Complexity: O(n) in the number of bytes.
  public func document() throws(BSONError) -> Document {
    try Document(copying: UnsafePointer(bson))
  }
}

/// Calls `body` with zeroed scratch memory for a libbson struct that C declares 128-byte aligned
/// (`bson_t`, `bson_iter_t`): Swift imports these with their C size but a smaller alignment, so a
/// Swift local of that type would not be laid out as libbson expects.
@inline(__always)
func withLibBSONScratch<T, R>(_ type: T.Type, _ body: (UnsafeMutablePointer<T>) throws -> R) rethrows -> R {
  try withUnsafeTemporaryAllocation(byteCount: MemoryLayout<T>.size, alignment: 128) { raw in
    raw.initializeMemory(as: UInt8.self, repeating: 0)
    return try body(raw.baseAddress!.bindMemory(to: T.self, capacity: 1))
  }
}
