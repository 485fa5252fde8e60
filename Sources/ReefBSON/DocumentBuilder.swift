/// Builds a BSON document by appending elements, producing valid bytes.
///
/// Nested documents and arrays are written in place, with no intermediate values:
///
/// ```swift
/// var builder = DocumentBuilder()
/// builder.append("name", "Ada")
/// builder.appendDocument("address") { address in
///   address.append("city", "London")
/// }
/// let doc = builder.document
/// ```
///
/// Keys are not checked for duplicates (BSON allows them; MongoDB does not store them). A key
/// containing a zero byte cannot be encoded and stops the program with a message: check keys
/// from untrusted input first (the Extended JSON parser and the Codable encoder do).
public struct DocumentBuilder {
  @usableFromInline var writer: BSONWriter
  /// Offset of the length prefix of the document being written (the top level, or the embedded
  /// document an `appendDocument` closure is writing).
  @usableFromInline var start: Int

  /// Creates an empty builder; `capacity` is a hint for the number of bytes.
  @inlinable
  public init(capacity: Int = 256) {
    writer = BSONWriter(capacity: capacity)
    start = writer.beginDocument()
  }

  /// Appends an element of any type.
  public mutating func append(_ key: String, _ value: BSON) { writer.element(key, value) }

  /// Appends a string.
  @inlinable
  public mutating func append(_ key: String, _ value: String) {
    withUTF8Bytes(of: value) { u in
      writer.element(.string, key, valueCount: u.count &+ 5) { p in
        p.storeBytes(of: Int32(u.count &+ 1).littleEndian, as: Int32.self)
        if u.count > 0 { (p + 4).copyMemory(from: u.baseAddress!, byteCount: u.count) }
        p.storeBytes(of: 0, toByteOffset: u.count &+ 4, as: UInt8.self)
      }
    }
  }

  /// Appends an int32.
  @inlinable
  public mutating func append(_ key: String, _ value: Int32) {
    writer.element(.int32, key, valueCount: 4) { $0.storeBytes(of: value.littleEndian, as: Int32.self) }
  }

  /// Appends an int64.
  @inlinable
  public mutating func append(_ key: String, _ value: Int64) {
    writer.element(.int64, key, valueCount: 8) { $0.storeBytes(of: value.littleEndian, as: Int64.self) }
  }

  /// Appends an `Int` as int32 when it fits, otherwise as int64.
  @inlinable
  public mutating func append(_ key: String, _ value: Int) {
    if let small = Int32(exactly: value) { append(key, small) } else { append(key, Int64(value)) }
  }

  /// Appends a double.
  @inlinable
  public mutating func append(_ key: String, _ value: Double) {
    writer.element(.double, key, valueCount: 8) { $0.storeBytes(of: value.bitPattern.littleEndian, as: UInt64.self) }
  }

  /// Appends a boolean.
  @inlinable
  public mutating func append(_ key: String, _ value: Bool) {
    writer.element(.bool, key, valueCount: 1) { $0.storeBytes(of: value ? 1 : 0, as: UInt8.self) }
  }

  /// Appends an ObjectId.
  public mutating func append(_ key: String, _ value: ObjectId) { writer.element(key, .objectId(value)) }

  /// Appends an embedded document.
  public mutating func append(_ key: String, _ value: Document) { writer.element(key, .document(value)) }

  /// Appends a null.
  @inlinable
  public mutating func appendNull(_ key: String) { writer.header(.null, key) }

  /// Appends an embedded document written by `build`, in place.
  ///
  /// When `build` throws, the elements it appended stay, as a complete embedded document.
  @inlinable @inline(__always)
  public mutating func appendDocument<E: Error>(
    _ key: String, _ build: (inout DocumentBuilder) throws(E) -> Void
  ) throws(E) {
    // The closure writes through this same builder, pointed at the embedded document.
    let outer = start
    start = writer.beginEmbedded(.document, key)
    do {
      try build(&self)
    } catch {
      writer.endDocument(start)
      start = outer
      throw error
    }
    writer.endDocument(start)
    start = outer
  }

  /// Appends an array written by `build`, in place.
  ///
  /// When `build` throws, the elements it appended stay, as a complete embedded array.
  @inlinable @inline(__always)
  public mutating func appendArray<E: Error>(_ key: String, _ build: (inout ArrayBuilder) throws(E) -> Void) throws(E) {
    let outer = start
    start = writer.beginEmbedded(.array, key)
    // The array builder takes this builder over (moved, so the buffer stays uniquely referenced
    // and is never copied) and hands it back.
    var nested = ArrayBuilder(builder: consume self)
    do {
      try build(&nested)
    } catch {
      self = nested.builder
      writer.endDocument(start)
      start = outer
      throw error
    }
    self = nested.builder
    writer.endDocument(start)
    start = outer
  }

  /// The number of bytes written so far (without the terminator).
  public var byteCount: Int { writer.count - start }

  /// The finished document, viewing the builder's bytes without copying them.
  ///
  /// The builder can go on appending afterwards: its next write copies the bytes first, so the
  /// document never changes.
  @inlinable
  public var document: Document {
    mutating get { writer.sharedDocument(from: start) }
  }

  /// The finished document's bytes, copied.
  public var bytes: [UInt8] { writer.finishedDocument(from: start).bytes }
}

/// Builds a BSON array; keys "0", "1", … are generated.
public struct ArrayBuilder {
  @usableFromInline var builder: DocumentBuilder
  /// The number of elements appended.
  public private(set) var count = 0

  /// Creates an empty array builder.
  public init(capacity: Int = 64) { builder = DocumentBuilder(capacity: capacity) }

  @inlinable
  init(builder: DocumentBuilder) { self.builder = builder }

  /// Appends a value.
  public mutating func append(_ value: BSON) {
    builder.append(arrayKey(count), value)
    count += 1
  }

  /// Appends an embedded document written by `build`, in place.
  public mutating func appendDocument<E: Error>(_ build: (inout DocumentBuilder) throws(E) -> Void) throws(E) {
    let key = arrayKey(count)
    count += 1
    try builder.appendDocument(key, build)
  }

  /// Appends an array written by `build`, in place.
  public mutating func appendArray<E: Error>(_ build: (inout ArrayBuilder) throws(E) -> Void) throws(E) {
    let key = arrayKey(count)
    count += 1
    try builder.appendArray(key, build)
  }

  /// The finished array.
  public var array: BSONArray {
    mutating get { BSONArray(builder.document) }
  }
}

/// The key of array element `i`, with small keys cached.
@inline(__always)
func arrayKey(_ i: Int) -> String {
  i < smallArrayKeys.count ? smallArrayKeys[i] : String(i)
}

let smallArrayKeys: [String] = (0..<1000).map { String($0) }
