#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// MARK: - Decoder

extension BSONDecoderImpl: Decoder {
  var codingPath: [any CodingKey] {
    checkAlive()
    return path.codingPath
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    checkAlive()
    guard value.type == BSONType.document.rawValue else {
      throw mismatch([String: Any].self, "document", value, path)
    }
    return keyedContainer(Key.self, parent: parent, component: component, document: value)
  }

  /// A keyed container over `document`, the value at `component` in `parent`: in a reused box of
  /// the call's ``KeyedBoxCache``.
  @inline(__always)
  func keyedContainer<Key: CodingKey>(
    _ key: Key.Type, parent: UnsafeMutablePointer<PathEntry>?, component: DecodingComponent, document: BSONValueRef
  ) -> KeyedDecodingContainer<Key> {
    call.pointee.boxes.container(
      Key.self, KeyedDecodingState(decoder: self, parent: parent, component: component, document: document))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    checkAlive()
    guard value.type == BSONType.array.rawValue else { throw mismatch([Any].self, "array", value, path) }
    return UnkeyedBSONDecodingContainer(decoder: self, parent: parent, component: component, array: value)
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer {
    checkAlive()
    return self
  }
}

/// The `Decoder` handed to the `init(from:)` of a nested value: the call's decoder, referenced
/// without counting (like the containers' ``DecoderHandle``). Plain data that fits in an
/// existential's inline buffer, so making one costs no retain, release or conformance lookup.
/// Once the call has returned, using it traps (before it touches the decoder).
struct BSONDecoderView: Decoder {
  let state: Unmanaged<BSONDecoderImpl>
  let liveGeneration: UnsafePointer<UInt64>
  /// The generation of the call that made the view.
  let generation: UInt64

  @inline(__always)
  init(_ decoder: BSONDecoderImpl) {
    state = Unmanaged.passUnretained(decoder)
    liveGeneration = UnsafePointer(decoder.liveGeneration)
    generation = decoder.generation
  }

  /// Runs `body` with the decoder, after checking that its call is still running.
  @inline(__always)
  func with<R>(_ body: (BSONDecoderImpl) throws -> R) rethrows -> R {
    precondition(
      liveGeneration.pointee == generation,
      "a BSONDecoder decoder was used after the decode(_:from:) call that created it had returned")
    return try state._withUnsafeGuaranteedRef(body)
  }

  /// The decoder, retained (for casts).
  var decoder: BSONDecoderImpl { with { $0 } }

  var codingPath: [any CodingKey] { with { $0.codingPath } }
  var userInfo: [CodingUserInfoKey: Any] { with { $0.userInfo } }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    try with { try $0.container(keyedBy: type) }
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer { try with { try $0.unkeyedContainer() } }

  func singleValueContainer() throws -> any SingleValueDecodingContainer {
    try with { try $0.singleValueContainer() }
  }
}

extension BSONDecoderImpl {
  /// The BSON decoder behind `decoder`, if it is one (itself or a ``BSONDecoderView``).
  static func of(_ decoder: any Decoder) -> BSONDecoderImpl? {
    if let view = decoder as? BSONDecoderView { return view.decoder }
    return decoder as? BSONDecoderImpl
  }
}

// MARK: - Single value

extension BSONDecoderImpl: SingleValueDecodingContainer {
  /// The current value, after checking that the call is still running.
  @inline(__always) private var current: BSONValueRef {
    checkAlive()
    return value
  }

  func decodeNil() -> Bool { current.isNull }
  func decode(_ type: Bool.Type) throws -> Bool { try bool(current, path) }
  func decode(_ type: String.Type) throws -> String { try string(current, path) }
  func decode(_ type: Double.Type) throws -> Double { try double(current, path) }
  func decode(_ type: Float.Type) throws -> Float { try float(current, path) }
  func decode(_ type: Int.Type) throws -> Int { try integer(type, current, path) }
  func decode(_ type: Int8.Type) throws -> Int8 { try integer(type, current, path) }
  func decode(_ type: Int16.Type) throws -> Int16 { try integer(type, current, path) }
  func decode(_ type: Int32.Type) throws -> Int32 { try integer(type, current, path) }
  func decode(_ type: Int64.Type) throws -> Int64 { try integer(type, current, path) }
  func decode(_ type: Int128.Type) throws -> Int128 { try integer(type, current, path) }
  func decode(_ type: UInt.Type) throws -> UInt { try integer(type, current, path) }
  func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type, current, path) }
  func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type, current, path) }
  func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type, current, path) }
  func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type, current, path) }
  func decode(_ type: UInt128.Type) throws -> UInt128 { try integer(type, current, path) }
  func decode<T: Decodable>(_ type: T.Type) throws -> T {
    try decodeValue(T.self, current, parent: parent, component: component)
  }
}

// MARK: - Keyed

/// A keyed container over an embedded document.
///
/// Lookups walk the elements from just after the last element found and wrap around, so keys
/// decoded in stored order cost one step each. The container is a pointer to its state (the
/// standard library's box copies it on every call), which lives in a slot of the call's
/// ``KeyedBoxCache`` (or, past the cache's capacity, in an ``OwnedKeyedDecodingContainer``); its
/// decoder is referenced without counting (decoder states are never freed, see
/// `BSONDecoderImpl`), and its path and cursor live in the decoder's arena.
struct KeyedBSONDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let state: UnsafeMutablePointer<KeyedDecodingState>

  @inline(__always) var handle: DecoderHandle { state.pointee.handle }
  /// This container's path entry, which also holds the lookup cursor.
  @inline(__always) var entry: UnsafeMutablePointer<PathEntry> { state.pointee.entry }
  /// Offset of the first element's type byte.
  @inline(__always) var first: Int { state.pointee.first }
  /// Offset of the document's terminating zero.
  @inline(__always) var end: Int { state.pointee.end }

  var codingPath: [any CodingKey] {
    handle.checkAlive()
    return DecodingPath.codingPath(entry.pointee.parent, entry.pointee.component)
  }

  @inline(__always)
  private func path(_ key: Key) -> DecodingPath { DecodingPath(parent: entry, component: component(key)) }

  /// The path component of `key`, made in this container's call.
  @inline(__always)
  private func component(_ key: Key) -> DecodingComponent { .key(key, in: entry.pointee.call) }

  var allKeys: [Key] {
    handle.checkAlive()
    var keys: [Key] = []
    var p = first
    while p < end {
      let element = handle.bytes.element(at: p, end: end)
      let name = String(
        decoding: UnsafeRawBufferPointer(start: handle.bytes.base + p + 1, count: element.keyLength), as: UTF8.self)
      if let key = Key(stringValue: name) { keys.append(key) }
      p = element.value &+ element.length
    }
    return keys
  }

  /// The element named `key`, or `nil`.
  @inline(__always)
  func find(_ key: Key) -> BSONValueRef? {
    handle.checkAlive()
    var name = key.stringValue
    return name.withUTF8 { find(UnsafeRawBufferPointer($0)) }
  }

  func find(_ name: UnsafeRawBufferPointer) -> BSONValueRef? {
    // Every key has been seen and this one is not among them: no need to scan again (a struct
    // with optional properties looks up each absent key once).
    if entry.pointee.scanned == end,
      entry.pointee.keyBits & PathEntry.keyBit(name.baseAddress ?? UnsafeRawPointer(handle.bytes.base), name.count)
        == 0
    {
      return nil
    }
    let cursor = entry.pointee.cursor
    if let found = scan(name, from: cursor, to: end) { return found }
    guard cursor > first else { return nil }
    return scan(name, from: first, to: cursor)
  }

  @inline(__always)
  private func scan(_ name: UnsafeRawBufferPointer, from: Int, to limit: Int) -> BSONValueRef? {
    let base = handle.bytes.base
    let count = name.count
    var p = from
    while p < limit {
      let element = handle.bytes.element(at: p, end: end)
      let next = element.value &+ element.length
      if p == entry.pointee.scanned { note(base + p + 1, element.keyLength, next) }
      if element.keyLength == count && (count == 0 || bytesEqual(base + p + 1, name.baseAddress!, count)) {
        entry.pointee.cursor = next
        return BSONValueRef(type: element.type, offset: element.value, length: element.length)
      }
      p = next
    }
    return nil
  }

  /// Records the key of the element before `next` in the entry's key bits.
  @inline(__always)
  private func note(_ key: UnsafeRawPointer, _ count: Int, _ next: Int) {
    entry.pointee.keyBits |= PathEntry.keyBit(key, count)
    entry.pointee.scanned = next
  }

  @inline(__always)
  private func require(_ key: Key) throws -> BSONValueRef {
    guard let value = find(key) else { throw keyNotFound(key) }
    return value
  }

  @inline(never)
  private func keyNotFound(_ key: Key) -> DecodingError {
    DecodingError.keyNotFound(
      key,
      DecodingError.Context(
        codingPath: codingPath,
        debugDescription: "No value for the key \(String(reflecting: key.stringValue)) in the document"))
  }

  func contains(_ key: Key) -> Bool { find(key) != nil }

  func decodeNil(forKey key: Key) throws -> Bool { try require(key).isNull }

  func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try handle.bytes.bool(require(key), path(key)) }
  func decode(_ type: String.Type, forKey key: Key) throws -> String {
    try handle.bytes.string(require(key), path(key))
  }
  func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
    try handle.bytes.double(require(key), path(key))
  }
  func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try handle.bytes.float(require(key), path(key)) }
  func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
    try handle.bytes.integer(type, require(key), path(key))
  }
  func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
    try handle.bytes.integer(type, require(key), path(key))
  }
  func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
    try handle.bytes.integer(type, require(key), path(key))
  }
  func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
    try handle.bytes.integer(type, require(key), path(key))
  }
  func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
    try handle.bytes.integer(type, require(key), path(key))
  }
  func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 {
    try handle.bytes.integer(type, require(key), path(key))
  }
  func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
    try handle.bytes.integer(type, require(key), path(key))
  }
  func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
    try handle.bytes.integer(type, require(key), path(key))
  }
  func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
    try handle.bytes.integer(type, require(key), path(key))
  }
  func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
    try handle.bytes.integer(type, require(key), path(key))
  }
  func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
    try handle.bytes.integer(type, require(key), path(key))
  }
  func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 {
    try handle.bytes.integer(type, require(key), path(key))
  }
  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
    // Found outside the closure, which would otherwise look up this container type's metadata.
    let value = try require(key)
    return try handle.withState { try $0.decodeValue(T.self, value, parent: entry, component: component(key)) }
  }

  // A missing key and a null both decode as `nil`.

  @inline(__always)
  private func present(_ key: Key) -> BSONValueRef? {
    guard let value = find(key), !value.isNull else { return nil }
    return value
  }

  func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
    guard let v = present(key) else { return nil }
    return try handle.bytes.bool(v, path(key))
  }
  func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
    guard let v = present(key) else { return nil }
    return try handle.bytes.string(v, path(key))
  }
  func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
    guard let v = present(key) else { return nil }
    return try handle.bytes.double(v, path(key))
  }
  func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
    guard let v = present(key) else { return nil }
    return try handle.bytes.float(v, path(key))
  }
  func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
    guard let v = present(key) else { return nil }
    return try handle.bytes.integer(type, v, path(key))
  }
  func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? {
    guard let v = present(key) else { return nil }
    return try handle.bytes.integer(type, v, path(key))
  }
  func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? {
    guard let v = present(key) else { return nil }
    return try handle.bytes.integer(type, v, path(key))
  }
  func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
    guard let v = present(key) else { return nil }
    return try handle.bytes.integer(type, v, path(key))
  }
  func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
    guard let v = present(key) else { return nil }
    return try handle.bytes.integer(type, v, path(key))
  }
  func decodeIfPresent(_ type: Int128.Type, forKey key: Key) throws -> Int128? {
    guard let v = present(key) else { return nil }
    return try handle.bytes.integer(type, v, path(key))
  }
  func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? {
    guard let v = present(key) else { return nil }
    return try handle.bytes.integer(type, v, path(key))
  }
  func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? {
    guard let v = present(key) else { return nil }
    return try handle.bytes.integer(type, v, path(key))
  }
  func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
    guard let v = present(key) else { return nil }
    return try handle.bytes.integer(type, v, path(key))
  }
  func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
    guard let v = present(key) else { return nil }
    return try handle.bytes.integer(type, v, path(key))
  }
  func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
    guard let v = present(key) else { return nil }
    return try handle.bytes.integer(type, v, path(key))
  }
  func decodeIfPresent(_ type: UInt128.Type, forKey key: Key) throws -> UInt128? {
    guard let v = present(key) else { return nil }
    return try handle.bytes.integer(type, v, path(key))
  }
  func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
    guard let v = present(key) else { return nil }
    return try handle.withState { try $0.decodeValue(T.self, v, parent: entry, component: component(key)) }
  }

  func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type, forKey key: Key
  ) throws -> KeyedDecodingContainer<NestedKey> {
    let value = try require(key)
    guard value.type == BSONType.document.rawValue else {
      throw handle.bytes.mismatch([String: Any].self, "document", value, path(key))
    }
    return handle.withState {
      $0.keyedContainer(NestedKey.self, parent: entry, component: component(key), document: value)
    }
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    let value = try require(key)
    guard value.type == BSONType.array.rawValue else {
      throw handle.bytes.mismatch([Any].self, "array", value, path(key))
    }
    return handle.withState {
      UnkeyedBSONDecodingContainer(decoder: $0, parent: entry, component: component(key), array: value)
    }
  }

  func superDecoder() throws -> any Decoder {
    handle.checkAlive()
    let key = BSONCodingKey.super
    var name = key.stringValue
    let value = name.withUTF8 { find(UnsafeRawBufferPointer($0)) } ?? .missing
    return handle.withState { $0.detached(value, parent: entry, component: .key(key, in: entry.pointee.call)) }
  }

  func superDecoder(forKey key: Key) throws -> any Decoder {
    let value = find(key) ?? .missing
    return handle.withState { $0.detached(value, parent: entry, component: component(key)) }
  }
}

// MARK: - Unkeyed

/// An unkeyed container over an array, read front to back.
final class UnkeyedBSONDecodingContainer: UnkeyedDecodingContainer {
  let handle: DecoderHandle
  let entry: UnsafeMutablePointer<PathEntry>
  /// Offset of the next element's type byte.
  private var position: Int
  /// Offset of the array's terminating zero.
  private let end: Int
  private(set) var currentIndex = 0
  private var cachedCount: Int?

  init(
    decoder: BSONDecoderImpl, parent: UnsafeMutablePointer<PathEntry>?, component: DecodingComponent,
    array: BSONValueRef
  ) {
    handle = decoder.handle
    entry = decoder.pushEntry(parent: parent, component: component, cursor: 0)
    // Safe: a validated array is at least 5 bytes (length prefix and terminator).
    position = array.offset &+ 4
    end = array.offset &+ array.length &- 1
  }

  var codingPath: [any CodingKey] {
    handle.checkAlive()
    return DecodingPath.codingPath(entry.pointee.parent, entry.pointee.component)
  }

  var count: Int? {
    if let cachedCount { return cachedCount }
    handle.checkAlive()
    var n = currentIndex
    var p = position
    while p < end {
      let element = handle.bytes.element(at: p, end: end)
      p = element.value &+ element.length
      n += 1
    }
    cachedCount = n
    return n
  }

  var isAtEnd: Bool { position >= end }

  @inline(__always)
  private var path: DecodingPath { DecodingPath(parent: entry, component: .index(currentIndex)) }

  /// The next element and the offset after it.
  @inline(__always)
  private func peek(_ type: Any.Type) throws -> (value: BSONValueRef, next: Int) {
    handle.checkAlive()
    guard position < end else { throw atEnd(type) }
    let element = handle.bytes.element(at: position, end: end)
    return (
      BSONValueRef(type: element.type, offset: element.value, length: element.length), element.value &+ element.length
    )
  }

  @inline(__always)
  private func advance(to next: Int) {
    position = next
    currentIndex &+= 1
  }

  @inline(never)
  private func atEnd(_ type: Any.Type) -> DecodingError {
    DecodingError.valueNotFound(
      type,
      DecodingError.Context(
        codingPath: path.codingPath,
        debugDescription: "Unkeyed container is at end: the array has \(currentIndex) elements"))
  }

  /// Decodes the next element with `read`, advancing only on success.
  @inline(__always)
  private func next<T>(_ type: T.Type, _ read: (BSONValueRef) throws -> T) throws -> T {
    let (value, next) = try peek(type)
    let result = try read(value)
    advance(to: next)
    return result
  }

  func decodeNil() throws -> Bool {
    let (value, next) = try peek(Never.self)
    if value.isNull {
      advance(to: next)
      return true
    }
    return false
  }

  func decode(_ type: Bool.Type) throws -> Bool { try next(type) { try handle.bytes.bool($0, path) } }
  func decode(_ type: String.Type) throws -> String { try next(type) { try handle.bytes.string($0, path) } }
  func decode(_ type: Double.Type) throws -> Double { try next(type) { try handle.bytes.double($0, path) } }
  func decode(_ type: Float.Type) throws -> Float { try next(type) { try handle.bytes.float($0, path) } }
  func decode(_ type: Int.Type) throws -> Int { try next(type) { try handle.bytes.integer(type, $0, path) } }
  func decode(_ type: Int8.Type) throws -> Int8 { try next(type) { try handle.bytes.integer(type, $0, path) } }
  func decode(_ type: Int16.Type) throws -> Int16 { try next(type) { try handle.bytes.integer(type, $0, path) } }
  func decode(_ type: Int32.Type) throws -> Int32 { try next(type) { try handle.bytes.integer(type, $0, path) } }
  func decode(_ type: Int64.Type) throws -> Int64 { try next(type) { try handle.bytes.integer(type, $0, path) } }
  func decode(_ type: Int128.Type) throws -> Int128 { try next(type) { try handle.bytes.integer(type, $0, path) } }
  func decode(_ type: UInt.Type) throws -> UInt { try next(type) { try handle.bytes.integer(type, $0, path) } }
  func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type) { try handle.bytes.integer(type, $0, path) } }
  func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type) { try handle.bytes.integer(type, $0, path) } }
  func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type) { try handle.bytes.integer(type, $0, path) } }
  func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type) { try handle.bytes.integer(type, $0, path) } }
  func decode(_ type: UInt128.Type) throws -> UInt128 { try next(type) { try handle.bytes.integer(type, $0, path) } }
  func decode<T: Decodable>(_ type: T.Type) throws -> T {
    let index = currentIndex
    return try next(type) { value in
      try handle.withState { try $0.decodeValue(T.self, value, parent: entry, component: .index(index)) }
    }
  }

  func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
    try next(KeyedDecodingContainer<NestedKey>.self) { value in
      guard value.type == BSONType.document.rawValue else {
        throw handle.bytes.mismatch([String: Any].self, "document", value, path)
      }
      let index = currentIndex
      return handle.withState {
        $0.keyedContainer(NestedKey.self, parent: entry, component: .index(index), document: value)
      }
    }
  }

  func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
    try next((any UnkeyedDecodingContainer).self) { value in
      guard value.type == BSONType.array.rawValue else { throw handle.bytes.mismatch([Any].self, "array", value, path) }
      let index = currentIndex
      return handle.withState {
        UnkeyedBSONDecodingContainer(decoder: $0, parent: entry, component: .index(index), array: value)
      }
    }
  }

  func superDecoder() throws -> any Decoder {
    let index = currentIndex
    return try next((any Decoder).self) { value in
      handle.withState { $0.detached(value, parent: entry, component: .index(index)) }
    }
  }
}

// MARK: - Collections

/// A type that the decoder reads itself instead of calling `init(from:)`: the standard library's
/// scalars, `Date`/`UUID`/`Data` (through their strategies) and Reef's BSON types.
protocol BSONDecodingPrimitive {
  /// Reads a value from `value`; `path` is its coding path, for errors.
  static func decodeBSON(_ value: BSONValueRef, in decoder: BSONDecoderImpl, at path: DecodingPath) throws -> Self
}

/// A collection the decoder fills directly: arrays and dictionaries with string keys. This skips
/// the unkeyed or keyed container and reserves the capacity up front.
protocol BSONCollectionDecodable {
  static func decodeBSON(
    _ value: BSONValueRef, in decoder: BSONDecoderImpl, parent: UnsafeMutablePointer<PathEntry>?,
    component: DecodingComponent
  ) throws -> Self
}

extension Array: BSONCollectionDecodable where Element: Decodable {
  static func decodeBSON(
    _ value: BSONValueRef, in decoder: BSONDecoderImpl, parent: UnsafeMutablePointer<PathEntry>?,
    component: DecodingComponent
  ) throws -> [Element] {
    guard value.type == BSONType.array.rawValue else {
      throw decoder.mismatch(Self.self, "array", value, DecodingPath(parent: parent, component: component))
    }
    var result: [Element] = []
    result.reserveCapacity(decoder.elementCount(value))
    let entry = decoder.pushEntry(parent: parent, component: component, cursor: 0)
    let kind = decoder.kind(of: Element.self)
    // Safe: offsets from a validated array; its elements end at its terminating zero.
    let end = value.offset &+ value.length &- 1
    var p = value.offset &+ 4
    var index = 0
    while p < end {
      let e = decoder.element(at: p, end: end)
      let element = BSONValueRef(type: e.type, offset: e.value, length: e.length)
      result.append(
        try decoder.decodeValue(Element.self, kind: kind, element, parent: entry, component: .index(index)))
      p = e.value &+ e.length
      index &+= 1
    }
    return result
  }
}

extension Dictionary: BSONCollectionDecodable where Key == String, Value: Decodable {
  static func decodeBSON(
    _ value: BSONValueRef, in decoder: BSONDecoderImpl, parent: UnsafeMutablePointer<PathEntry>?,
    component: DecodingComponent
  ) throws -> [String: Value] {
    guard value.type == BSONType.document.rawValue else {
      throw decoder.mismatch(Self.self, "document", value, DecodingPath(parent: parent, component: component))
    }
    var result: [String: Value] = [:]
    result.reserveCapacity(decoder.elementCount(value))
    let entry = decoder.pushEntry(parent: parent, component: component, cursor: 0)
    let kind = decoder.kind(of: Value.self)
    // Safe: offsets from a validated document; its elements end at its terminating zero.
    let end = value.offset &+ value.length &- 1
    var p = value.offset &+ 4
    while p < end {
      let e = decoder.element(at: p, end: end)
      let key = String(decoding: UnsafeRawBufferPointer(start: decoder.base + p + 1, count: e.keyLength), as: UTF8.self)
      let element = BSONValueRef(type: e.type, offset: e.value, length: e.length)
      result[key] = try decoder.decodeValue(
        Value.self, kind: kind, element, parent: entry, component: .documentKey(offset: p &+ 1, count: e.keyLength))
      p = e.value &+ e.length
    }
    return result
  }
}
