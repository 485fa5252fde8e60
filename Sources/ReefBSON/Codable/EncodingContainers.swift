extension EncodingNode: Encoder {
  var userInfo: [CodingUserInfoKey: Any] { isLive ? state.userInfo : [:] }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    becomeContainer(.document)
    return keyedContainer(Key.self)
  }

  /// A keyed container writing to this node: in a reused box in fast mode.
  @inline(__always)
  func keyedContainer<Key: CodingKey>(_ key: Key.Type) -> KeyedEncodingContainer<Key> {
    if !state.isTree && isLive { return state.boxes.container(Key.self, self) }
    return KeyedEncodingContainer(OwnedKeyedEncodingContainer<Key>(owner: SlotOwner<EncodingNode?>(self)))
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer {
    becomeContainer(.array)
    return UnkeyedBSONEncodingContainer(node: self)
  }

  func singleValueContainer() -> any SingleValueEncodingContainer { self }
}

/// The error for an integer that BSON's int64 cannot hold.
@inline(never)
func integerOverflow<I: BinaryInteger>(_ value: I, _ codingPath: [any CodingKey]) -> EncodingError {
  EncodingError.invalidValue(
    value,
    EncodingError.Context(
      codingPath: codingPath, debugDescription: "\(I.self) value \(value) does not fit in a BSON int64"))
}

// MARK: - Single value

extension EncodingNode: SingleValueEncodingContainer {
  func encodeNil() throws { try writeSingle(.null) { _ in } }
  func encode(_ value: Bool) throws { try writeSingle(.bool) { $0.byte(value ? 1 : 0) } }
  func encode(_ value: String) throws { try writeSingle(.string) { $0.string(value) } }
  func encode(_ value: Double) throws { try writeSingle(.double) { $0.uint64(value.bitPattern) } }
  func encode(_ value: Float) throws { try writeSingle(.double) { $0.uint64(Double(value).bitPattern) } }
  func encode(_ value: Int) throws { try writeSingle(.int64) { $0.int64(Int64(value)) } }
  func encode(_ value: Int8) throws { try writeSingle(.int32) { $0.int32(Int32(value)) } }
  func encode(_ value: Int16) throws { try writeSingle(.int32) { $0.int32(Int32(value)) } }
  func encode(_ value: Int32) throws { try writeSingle(.int32) { $0.int32(value) } }
  func encode(_ value: Int64) throws { try writeSingle(.int64) { $0.int64(value) } }
  func encode(_ value: UInt8) throws { try writeSingle(.int32) { $0.int32(Int32(value)) } }
  func encode(_ value: UInt16) throws { try writeSingle(.int32) { $0.int32(Int32(value)) } }
  func encode(_ value: UInt32) throws { try writeSingle(.int64) { $0.int64(Int64(value)) } }

  func encode(_ value: UInt) throws {
    guard let v = Int64(exactly: value) else { throw integerOverflow(value, codingPath) }
    try writeSingle(.int64) { $0.int64(v) }
  }

  func encode(_ value: UInt64) throws {
    guard let v = Int64(exactly: value) else { throw integerOverflow(value, codingPath) }
    try writeSingle(.int64) { $0.int64(v) }
  }

  func encode(_ value: Int128) throws {
    guard let v = Int64(exactly: value) else { throw integerOverflow(value, codingPath) }
    try writeSingle(.int64) { $0.int64(v) }
  }

  func encode(_ value: UInt128) throws {
    guard let v = Int64(exactly: value) else { throw integerOverflow(value, codingPath) }
    try writeSingle(.int64) { $0.int64(v) }
  }

  func encode<T: Encodable>(_ value: T) throws { try encodeSingle(value) }
}

// MARK: - Keyed

/// A keyed container: the elements of an embedded document, written in place in encoding order.
///
/// The container is a pointer to its node's slot (the standard library's box copies it on every
/// call), which a ``KeyedEncodingBoxCache`` or an ``OwnedKeyedEncodingContainer`` keeps. A
/// container kept past its call keeps its node, which is no longer live and writes nothing.
struct KeyedBSONEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
  let slot: UnsafeMutablePointer<EncodingNode?>

  /// Runs `body` with the node, without retaining it: during its call the state holds it, after
  /// the call the slot does (a box in use is not free, so its slot is not given another node).
  @inline(__always)
  private func withNode<R>(_ body: (EncodingNode) throws -> R) rethrows -> R {
    // The slot of a container in use always holds a node: a cache slot is emptied only while its
    // box is free or when the cache is freed with its state, and a kept box's slot retains its
    // node, which holds the state (see `KeyedEncodingBoxCache.free()`). Checked all the same (a
    // test for nil): were that ever wrong, the program stops rather than reading memory.
    guard let node = KeyedEncodingBoxCache.node(in: slot) else {
      preconditionFailure("a BSONEncoder keyed container's slot is empty")
    }
    return try node._withUnsafeGuaranteedRef(body)
  }

  var codingPath: [any CodingKey] { withNode { $0.codingPath } }

  @inline(__always)
  private func scalar(_ type: BSONType, _ key: Key, _ value: ScalarValue) throws {
    try withNode { try $0.writeScalar(type, key: key.stringValue, component: .key(key), value) }
  }

  private func overflow<I: BinaryInteger>(_ value: I, _ key: Key) -> EncodingError {
    withNode { integerOverflow(value, CodingPathNode.path($0, .key(key))) }
  }

  mutating func encodeNil(forKey key: Key) throws { try scalar(.null, key, .none) }
  mutating func encode(_ value: Bool, forKey key: Key) throws { try scalar(.bool, key, .byte(value ? 1 : 0)) }
  mutating func encode(_ value: String, forKey key: Key) throws { try scalar(.string, key, .string(value)) }
  mutating func encode(_ value: Double, forKey key: Key) throws {
    try scalar(.double, key, .bits(value.bitPattern))
  }
  mutating func encode(_ value: Float, forKey key: Key) throws {
    try scalar(.double, key, .bits(Double(value).bitPattern))
  }
  mutating func encode(_ value: Int, forKey key: Key) throws { try scalar(.int64, key, .int64(Int64(value))) }
  mutating func encode(_ value: Int8, forKey key: Key) throws { try scalar(.int32, key, .int32(Int32(value))) }
  mutating func encode(_ value: Int16, forKey key: Key) throws { try scalar(.int32, key, .int32(Int32(value))) }
  mutating func encode(_ value: Int32, forKey key: Key) throws { try scalar(.int32, key, .int32(value)) }
  mutating func encode(_ value: Int64, forKey key: Key) throws { try scalar(.int64, key, .int64(value)) }
  mutating func encode(_ value: UInt8, forKey key: Key) throws { try scalar(.int32, key, .int32(Int32(value))) }
  mutating func encode(_ value: UInt16, forKey key: Key) throws { try scalar(.int32, key, .int32(Int32(value))) }
  mutating func encode(_ value: UInt32, forKey key: Key) throws { try scalar(.int64, key, .int64(Int64(value))) }

  mutating func encode(_ value: UInt, forKey key: Key) throws {
    guard let v = Int64(exactly: value) else { throw overflow(value, key) }
    try scalar(.int64, key, .int64(v))
  }

  mutating func encode(_ value: UInt64, forKey key: Key) throws {
    guard let v = Int64(exactly: value) else { throw overflow(value, key) }
    try scalar(.int64, key, .int64(v))
  }

  mutating func encode(_ value: Int128, forKey key: Key) throws {
    guard let v = Int64(exactly: value) else { throw overflow(value, key) }
    try scalar(.int64, key, .int64(v))
  }

  mutating func encode(_ value: UInt128, forKey key: Key) throws {
    guard let v = Int64(exactly: value) else { throw overflow(value, key) }
    try scalar(.int64, key, .int64(v))
  }

  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
    try withNode { try $0.encodeElement(value, key: key.stringValue, component: .key(key)) }
  }

  // `nil` is left out or written as null, per `nilEncodingStrategy`.

  @inline(__always)
  private mutating func absent(_ key: Key) throws {
    if withNode({ $0.state.options.encodesNil }) { try encodeNil(forKey: key) }
  }

  mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws {
    if let value { try encode(value, forKey: key) } else { try absent(key) }
  }
  mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
    if let value { try encode(value, forKey: key) } else { try absent(key) }
  }
  mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
    if let value { try encode(value, forKey: key) } else { try absent(key) }
  }
  mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws {
    if let value { try encode(value, forKey: key) } else { try absent(key) }
  }
  mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws {
    if let value { try encode(value, forKey: key) } else { try absent(key) }
  }
  mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws {
    if let value { try encode(value, forKey: key) } else { try absent(key) }
  }
  mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws {
    if let value { try encode(value, forKey: key) } else { try absent(key) }
  }
  mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws {
    if let value { try encode(value, forKey: key) } else { try absent(key) }
  }
  mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws {
    if let value { try encode(value, forKey: key) } else { try absent(key) }
  }
  mutating func encodeIfPresent(_ value: Int128?, forKey key: Key) throws {
    if let value { try encode(value, forKey: key) } else { try absent(key) }
  }
  mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws {
    if let value { try encode(value, forKey: key) } else { try absent(key) }
  }
  mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws {
    if let value { try encode(value, forKey: key) } else { try absent(key) }
  }
  mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws {
    if let value { try encode(value, forKey: key) } else { try absent(key) }
  }
  mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws {
    if let value { try encode(value, forKey: key) } else { try absent(key) }
  }
  mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws {
    if let value { try encode(value, forKey: key) } else { try absent(key) }
  }
  mutating func encodeIfPresent(_ value: UInt128?, forKey key: Key) throws {
    if let value { try encode(value, forKey: key) } else { try absent(key) }
  }
  mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
    // Tested without unwrapping first: unwrapping needs `Optional<T>`'s metadata (a lookup per
    // call), a test for nil only `T`'s.
    guard value != nil else { return try absent(key) }
    try encode(value.unsafelyUnwrapped, forKey: key)
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type, forKey key: Key
  ) -> KeyedEncodingContainer<NestedKey> {
    withNode { $0.nestedContainerNode(.document, key: key.stringValue, component: .key(key)) }
      .keyedContainer(NestedKey.self)
  }

  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    UnkeyedBSONEncodingContainer(
      node: withNode { $0.nestedContainerNode(.array, key: key.stringValue, component: .key(key)) })
  }

  mutating func superEncoder() -> any Encoder {
    withNode { $0.superEncoderNode(key: BSONCodingKey.super.stringValue, component: .key(BSONCodingKey.super)) }
  }

  mutating func superEncoder(forKey key: Key) -> any Encoder {
    withNode { $0.superEncoderNode(key: key.stringValue, component: .key(key)) }
  }
}

// MARK: - Unkeyed

/// An unkeyed container: the elements of an array (keys "0", "1", …), written in place.
struct UnkeyedBSONEncodingContainer: UnkeyedEncodingContainer {
  let node: EncodingNode

  var codingPath: [any CodingKey] { node.codingPath }
  var count: Int { node.count }

  @inline(__always)
  private func scalar(_ type: BSONType, _ value: ScalarValue) throws {
    let index = node.count
    try node.writeScalar(type, key: arrayKey(index), component: .index(index), value)
    node.count = index + 1
  }

  private func overflow<I: BinaryInteger>(_ value: I) -> EncodingError {
    integerOverflow(value, CodingPathNode.path(node, .index(node.count)))
  }

  mutating func encodeNil() throws { try scalar(.null, .none) }
  mutating func encode(_ value: Bool) throws { try scalar(.bool, .byte(value ? 1 : 0)) }
  mutating func encode(_ value: String) throws { try scalar(.string, .string(value)) }
  mutating func encode(_ value: Double) throws { try scalar(.double, .bits(value.bitPattern)) }
  mutating func encode(_ value: Float) throws { try scalar(.double, .bits(Double(value).bitPattern)) }
  mutating func encode(_ value: Int) throws { try scalar(.int64, .int64(Int64(value))) }
  mutating func encode(_ value: Int8) throws { try scalar(.int32, .int32(Int32(value))) }
  mutating func encode(_ value: Int16) throws { try scalar(.int32, .int32(Int32(value))) }
  mutating func encode(_ value: Int32) throws { try scalar(.int32, .int32(value)) }
  mutating func encode(_ value: Int64) throws { try scalar(.int64, .int64(value)) }
  mutating func encode(_ value: UInt8) throws { try scalar(.int32, .int32(Int32(value))) }
  mutating func encode(_ value: UInt16) throws { try scalar(.int32, .int32(Int32(value))) }
  mutating func encode(_ value: UInt32) throws { try scalar(.int64, .int64(Int64(value))) }

  mutating func encode(_ value: UInt) throws {
    guard let v = Int64(exactly: value) else { throw overflow(value) }
    try scalar(.int64, .int64(v))
  }

  mutating func encode(_ value: UInt64) throws {
    guard let v = Int64(exactly: value) else { throw overflow(value) }
    try scalar(.int64, .int64(v))
  }

  mutating func encode(_ value: Int128) throws {
    guard let v = Int64(exactly: value) else { throw overflow(value) }
    try scalar(.int64, .int64(v))
  }

  mutating func encode(_ value: UInt128) throws {
    guard let v = Int64(exactly: value) else { throw overflow(value) }
    try scalar(.int64, .int64(v))
  }

  mutating func encode<T: Encodable>(_ value: T) throws {
    let index = node.count
    try node.encodeElement(value, key: arrayKey(index), component: .index(index))
    node.count = index + 1
  }

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
    NestedKey
  > {
    let index = node.count
    node.count = index + 1
    let child = node.nestedContainerNode(.document, key: arrayKey(index), component: .index(index))
    return child.keyedContainer(NestedKey.self)
  }

  mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
    let index = node.count
    node.count = index + 1
    return UnkeyedBSONEncodingContainer(
      node: node.nestedContainerNode(.array, key: arrayKey(index), component: .index(index)))
  }

  mutating func superEncoder() -> any Encoder {
    let index = node.count
    node.count = index + 1
    return node.superEncoderNode(key: arrayKey(index), component: .index(index))
  }
}
