@_spi(ReefInternal) import ReefBSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The check every scan of a collection's documents makes of each entry LMDB gives it, in
/// order: the stored value passes its checksum (``StoredDocument``), the keys strictly increase
/// (LMDB's order: bytes compared unsigned, a shorter key before its extensions), and the
/// document's `_id`, in the key encoding, is the entry's key.
///
/// A damaged page can make LMDB return garbage keys, or the value of the entry before again
/// (a leaf page whose flags say it holds fixed-size keys only): each value is whole, and
/// passes its checksum, but the scan would report copies of a neighbour, or documents under
/// another key. This check turns that into a ``StoreError/Kind/corrupt`` error naming the
/// collection and the position, never a wrong answer.
///
/// Make one per scan, and call ``document(key:value:)`` with each entry in the order read:
///
/// ```swift
/// let check = DocumentScanCheck(collection: name)
/// try lmdb.scan(documentsDB) { key, value throws(StoreError) in
///   let bson = try check.document(key: key, value: value)
///   …
/// }
/// ```
///
/// - Complexity: O(1) allocations per scan; per entry a copy of the key (at most 511 bytes)
///   and, for an ObjectId `_id` as the first field, a comparison of 13 bytes; another `_id` is
///   encoded into a buffer the check keeps.
final class DocumentScanCheck {
  /// The collection scanned, for errors.
  let collection: String
  /// How many entries passed the check: the position (from 0, in `_id` order) of the next one.
  var position: Int { state.pointee.position }
  /// The key of the entry before, copied (LMDB's keys are at most 511 bytes).
  private let previous = UnsafeMutableRawPointer.allocate(byteCount: 512, alignment: 8)
  /// The size of the key before (-1 before the first entry) and ``position``, behind a pointer:
  /// a class's stored `var` would be checked for exclusive access at run time at each entry.
  private let state: UnsafeMutablePointer<(previousCount: Int, position: Int)> = {
    let pointer = UnsafeMutablePointer<(previousCount: Int, position: Int)>.allocate(capacity: 1)
    pointer.initialize(to: (-1, 0))
    return pointer
  }()
  /// The `_id` of a document, encoded, when it is not an ObjectId as the first field.
  private var encoded: [UInt8] = []

  /// A check for a scan of `collection`'s documents, from its first entry.
  init(collection: String) { self.collection = collection }

  deinit {
    previous.deallocate()
    state.deallocate()
  }

  /// The BSON of the next entry of the scan, once its checksum, its key's order and its `_id`
  /// have been checked.
  ///
  /// - Parameters:
  ///   - key: the entry's key (the document's encoded `_id`), as LMDB returns it.
  ///   - value: the entry's value (checksum, then BSON), as LMDB returns it.
  /// - Returns: the document's BSON, a view of `value`.
  /// - Throws: ``StoreError/Kind/corrupt`` naming the collection and the position, when any
  ///   check fails.
  @inline(__always)
  func document(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws(StoreError)
    -> UnsafeRawBufferPointer
  {
    guard let bson = StoredDocument.verifiedBSON(value) else { throw damaged(key: key, value: value) }
    guard key.count <= 512, follows(key), idIsKey(bson, key) else { throw damaged(key: key, value: value) }
    // Safe: the key holds at most 512 bytes (checked above), the buffer's size.
    if key.count > 0 { previous.copyMemory(from: key.baseAddress!, byteCount: key.count) }
    state.pointee.previousCount = key.count
    state.pointee.position &+= 1  // Safe: a count of entries.
    return bson
  }

  /// Whether `key` comes strictly after the key of the entry before (any key, for the first).
  @inline(__always)
  private func follows(_ key: UnsafeRawBufferPointer) -> Bool {
    let previousCount = state.pointee.previousCount
    guard previousCount >= 0 else { return true }
    let common = min(previousCount, key.count)
    let order = common == 0 ? 0 : memcmp(previous, key.baseAddress!, common)
    return order < 0 || (order == 0 && previousCount < key.count)
  }

  /// Whether the document's `_id`, in the key encoding, is `key`.
  @inline(__always)
  private func idIsKey(_ bson: UnsafeRawBufferPointer, _ key: UnsafeRawBufferPointer) -> Bool {
    // The usual document: an ObjectId `_id` first (type 7, then "_id\0", then 12 bytes), whose
    // key is the tag 0x40 and the same 12 bytes.
    if bson.count >= 22, key.count == 13, bson[4] == 0x07, bson[5] == 0x5F, bson[6] == 0x69, bson[7] == 0x64,
      bson[8] == 0
    {
      // Safe: the document holds at least 22 bytes and the key 13 (checked above).
      return key[0] == KeyEncoding.Tag.objectId && memcmp(bson.baseAddress! + 9, key.baseAddress! + 1, 12) == 0
    }
    return otherIDIsKey(bson, key)
  }

  /// ``idIsKey(_:_:)`` for an `_id` of another type, or not first.
  @inline(never)
  private func otherIDIsKey(_ bson: UnsafeRawBufferPointer, _ key: UnsafeRawBufferPointer) -> Bool {
    guard let id = Document(trustedBytesNoCopy: bson, owner: nil)["_id"] else { return false }
    encoded.removeAll(keepingCapacity: true)
    KeyEncoding.appendValue(id, to: &encoded)
    return encoded.withUnsafeBytes { $0.elementsEqual(key) }
  }

  /// The error for the entry at ``position``: what was expected, what was found.
  @inline(never)
  private func damaged(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> StoreError {
    let place = "the documents of \(collection) are damaged at position \(position) of its _id order (from 0)"
    let advice = "the store file is damaged: restore it from a backup, or export what reads and import it again"
    guard let bson = StoredDocument.verifiedBSON(value) else {
      return StoreError(.corrupt, "\(place): \(StoredDocument.damage(value)); \(advice)")
    }
    if key.count > 512 || !follows(key) {
      let before = UnsafeRawBufferPointer(start: previous, count: max(state.pointee.previousCount, 0))
      return StoreError(
        .corrupt,
        "\(place): expected a key after the previous one (\(DocumentScanCheck.hex(before))), found "
          + "\(DocumentScanCheck.hex(key)); \(advice)")
    }
    let id = Document(trustedBytesNoCopy: bson, owner: nil)["_id"]
    return StoreError(
      .corrupt,
      "\(place): expected the document stored under key \(DocumentScanCheck.hex(key)) to have that _id, found "
        + "_id \(id.map { $0.extendedJSON() } ?? "missing"); \(advice)")
  }

  /// Up to 32 bytes of `bytes` in hexadecimal (then "…").
  static func hex(_ bytes: UnsafeRawBufferPointer) -> String {
    let digits = bytes.prefix(32).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    return digits.isEmpty ? "(empty)" : digits + (bytes.count > 32 ? "…" : "")
  }
}
