@_spi(ReefInternal) import ReefBSON

/// A BSON value in place: its type byte and a pointer to its bytes.
///
/// Only ever made from validated documents, so lengths inside the bytes are trusted. The memory
/// belongs to a `Document` that the caller keeps alive.
@usableFromInline
struct RawValue {
  @usableFromInline let type: UInt8
  @usableFromInline let pointer: UnsafeRawPointer

  @inlinable init(type: UInt8, pointer: UnsafeRawPointer) {
    self.type = type
    self.pointer = pointer
  }

  @inlinable var isDocument: Bool { type == 0x03 }
  @inlinable var isArray: Bool { type == 0x04 }
  @inlinable var isContainer: Bool { type == 0x03 || type == 0x04 }

  /// A document or an array seen as a document: the same bytes, whose keys for an array are
  /// its indexes (`"0"`, `"1"`, …). A query run on it looks fields up by name and never
  /// traverses it as an array.
  @inlinable var asDocument: RawValue { RawValue(type: 0x03, pointer: pointer) }

  @inlinable func int32(at offset: Int = 0) -> Int32 {
    Int32(littleEndian: pointer.loadUnaligned(fromByteOffset: offset, as: Int32.self))
  }

  @inlinable func int64(at offset: Int = 0) -> Int64 {
    Int64(littleEndian: pointer.loadUnaligned(fromByteOffset: offset, as: Int64.self))
  }

  @inlinable var double: Double { Double(bitPattern: UInt64(truncatingIfNeeded: int64())) }

  /// For strings, symbols and JavaScript code: the UTF-8 bytes without the terminating zero.
  @inlinable var stringBytes: UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(start: pointer + 4, count: Int(int32()) - 1)
  }

  /// A Decimal128 value.
  @inlinable var decimal128: Decimal128 {
    Decimal128(high: UInt64(bitPattern: int64(at: 8)), low: UInt64(bitPattern: int64()))
  }

  /// The number of bytes the value occupies, from ReefBSON's table of value lengths. (Not
  /// `@inlinable`, because that table is SPI; the module's own callers inline it all the same.)
  @usableFromInline var size: Int { BSON.trustedValueLength(type: type, at: pointer) }

  /// The value as a `BSON`, for the slow paths (aggregates, projections, errors).
  func bson() -> BSON {
    withElementBytes(key: "") { bytes in
      (try? Document(bytes: bytes, options: ValidationOptions(maximumDepth: 1_000)))?.firstElement?.value ?? .null
    }
  }

  /// The bytes of a one-element document `{key: value}`.
  func withElementBytes<R>(key: String, _ body: ([UInt8]) -> R) -> R {
    let valueSize = size
    var bytes: [UInt8] = []
    bytes.reserveCapacity(valueSize + key.utf8.count + 7)
    let total = Int32(4 + 1 + key.utf8.count + 1 + valueSize + 1)
    withUnsafeBytes(of: total.littleEndian) { bytes.append(contentsOf: $0) }
    bytes.append(type)
    bytes.append(contentsOf: key.utf8)
    bytes.append(0)
    bytes.append(contentsOf: UnsafeRawBufferPointer(start: pointer, count: valueSize))
    bytes.append(0)
    return body(bytes)
  }
}

/// The elements of a document or array value, in order.
@usableFromInline
struct RawElements: IteratorProtocol {
  @usableFromInline var position: UnsafeRawPointer
  @usableFromInline let end: UnsafeRawPointer

  /// The elements of `container`, a document or array value.
  @inlinable init(_ container: RawValue) {
    position = container.pointer + 4
    end = container.pointer + Int(container.int32()) - 1
  }

  /// The next element: its key (bytes without the zero) and value.
  @inlinable mutating func next() -> (key: UnsafeRawPointer, keyLength: Int, value: RawValue)? {
    guard position < end else { return nil }
    let type = position.load(as: UInt8.self)
    let key = position + 1
    var keyLength = 0
    while key.load(fromByteOffset: keyLength, as: UInt8.self) != 0 { keyLength += 1 }
    let value = RawValue(type: type, pointer: key + keyLength + 1)
    position = value.pointer + value.size
    return (key, keyLength, value)
  }
}

extension RawValue {
  /// The value of the first element named `name` when this is a document (or array).
  @inlinable func field(_ name: [UInt8]) -> RawValue? {
    name.withUnsafeBytes { field($0) }
  }

  /// The value of the first element whose key is the bytes of `wanted` (without a zero), when
  /// this is a document (or array). Each key is compared while it is scanned, stopping at the
  /// first difference, so a key is read once.
  @inlinable func field(_ wanted: UnsafeRawBufferPointer) -> RawValue? {
    var position = pointer + 4
    let end = pointer + Int(int32()) - 1
    let count = wanted.count
    // Most keys differ from the wanted one in their first byte (the empty key has only its zero).
    let first = count > 0 ? wanted.load(as: UInt8.self) : 0
    while position < end {
      let type = position.load(as: UInt8.self)
      let key = position + 1
      var index = 0
      if key.load(as: UInt8.self) == first {
        index = 1
        while index < count
          && key.load(fromByteOffset: index, as: UInt8.self) == wanted.load(fromByteOffset: index, as: UInt8.self)
        {
          index += 1
        }
        if index >= count && key.load(fromByteOffset: count, as: UInt8.self) == 0 {
          return RawValue(type: type, pointer: key + count + 1)
        }
      }
      while key.load(fromByteOffset: index, as: UInt8.self) != 0 { index += 1 }
      let value = RawValue(type: type, pointer: key + index + 1)
      position = value.pointer + value.size
    }
    return nil
  }

  /// The element at `index` when this is an array.
  @inlinable func element(at index: Int) -> RawValue? {
    var elements = RawElements(self)
    var remaining = index
    while let element = elements.next() {
      if remaining == 0 { return element.value }
      remaining -= 1
    }
    return nil
  }

  /// The number of elements of a document or array.
  @inlinable var elementCount: Int {
    var elements = RawElements(self)
    var count = 0
    while elements.next() != nil { count += 1 }
    return count
  }
}

extension Document {
  /// Calls `body` with the document as a raw value.
  @inlinable func withRawValue<R>(_ body: (RawValue) throws -> R) rethrows -> R {
    try withUnsafeBytes { bytes in try body(RawValue(type: 0x03, pointer: bytes.baseAddress!)) }
  }
}

/// A literal held as BSON bytes, so that it compares with document values by the same code.
@usableFromInline
final class Literal: @unchecked Sendable {
  @usableFromInline let document: Document
  @usableFromInline let value: RawValue

  init(_ bson: BSON) {
    var builder = DocumentBuilder(capacity: 64)
    builder.append("", bson)
    document = builder.document
    value = document.withUnsafeBytes { bytes in
      let base = bytes.baseAddress!
      return RawValue(type: base.load(fromByteOffset: 4, as: UInt8.self), pointer: base + 6)
    }
  }
}

extension Document {
  /// The first element, if any.
  var firstElement: Element? {
    var iterator = makeIterator()
    return iterator.next()
  }
}
