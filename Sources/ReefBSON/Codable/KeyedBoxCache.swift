/// Reuses the standard library's boxes of keyed decoding containers.
///
/// `KeyedDecodingContainer<Key>` wraps every container in a class instance (its box), allocated
/// for each `container(keyedBy:)` call; making one also costs two runtime metadata lookups (the
/// container's and the box's generic types). A tree of small objects spends a large part of its
/// decode there. The cache keeps boxes whose container (``SlotKeyedDecodingContainer``) reads
/// its state through a pointer into a slot of the cache, and hands a box out again once nobody
/// else holds it: its reference count is one, the cache's own. A container kept past its call
/// therefore keeps its box and its slot, and still traps on use (its state's generation is old).
///
/// This relies on `KeyedDecodingContainer` being one strong reference to its box, which the
/// standard library does not promise; ``layoutHolds`` checks it once, and the cache makes plain
/// containers when it does not hold.
struct KeyedBoxCache {
  private struct Slot {
    let keyType: ObjectIdentifier
    /// Holds one `KeyedDecodingContainer<Key>`: the cache's reference to the box.
    let container: UnsafeMutableRawPointer
    /// The state the box's container reads.
    let state: UnsafeMutablePointer<KeyedDecodingState>
    /// A retained `BoxCopier<KeyedDecodingContainer<Key>>` of `container`.
    let copier: UnsafeMutableRawPointer
  }

  /// At most this many boxes are kept; containers beyond them (deeper nesting, or containers kept
  /// by the caller) get boxes and states of their own.
  static let capacity = 64
  private var slots: UnsafeMutablePointer<Slot>?
  private var count = 0

  /// A container of `Key`s reading `state`, in a reused box when one is free.
  @inline(__always)
  mutating func container<Key: CodingKey>(_ key: Key.Type, _ state: KeyedDecodingState) -> KeyedDecodingContainer<Key> {
    let keyType = ObjectIdentifier(Key.self)
    // From the newest slot down: containers are mostly released in the reverse order of their
    // making, so the newest slots are the likeliest to be free.
    var index = count
    while index > 0 {
      index &-= 1
      let slot = slots.unsafelyUnwrapped[index]
      if slot.keyType == keyType && Self.isFree(slot.container) {
        slot.state.pointee = state
        return Unmanaged<BoxCopier<KeyedDecodingContainer<Key>>>.fromOpaque(slot.copier)
          ._withUnsafeGuaranteedRef { $0.copy() }
      }
    }
    return add(Key.self, state)
  }

  /// Whether only the cache holds the box of the container stored at `container`.
  ///
  /// The reference is read as a ``BoxReference``, a native class like the box, so that the test
  /// is the runtime's reference count check without a generic call (only the count is read).
  @inline(__always)
  static func isFree(_ container: UnsafeMutableRawPointer) -> Bool {
    container.withMemoryRebound(to: BoxReference.self, capacity: 1) { isKnownUniquelyReferenced(&$0.pointee) }
  }

  @inline(never)
  private mutating func add<Key: CodingKey>(_ key: Key.Type, _ state: KeyedDecodingState) -> KeyedDecodingContainer<Key>
  {
    guard Self.layoutHolds, count < Self.capacity else {
      return KeyedDecodingContainer(OwnedKeyedDecodingContainer<Key>(owner: KeyedStateOwner(state)))
    }
    if slots == nil { slots = .allocate(capacity: Self.capacity) }
    let slotState = UnsafeMutablePointer<KeyedDecodingState>.allocate(capacity: 1)
    slotState.initialize(to: state)
    let container = KeyedDecodingContainer(KeyedBSONDecodingContainer<Key>(state: slotState))
    let memory = UnsafeMutablePointer<KeyedDecodingContainer<Key>>.allocate(capacity: 1)
    memory.initialize(to: container)
    let copier = Unmanaged.passRetained(BoxCopier(memory)).toOpaque()
    slots.unsafelyUnwrapped[count] = Slot(
      keyType: ObjectIdentifier(Key.self), container: UnsafeMutableRawPointer(memory), state: slotState,
      copier: copier)
    count &+= 1
    return container
  }

  /// Whether a `KeyedDecodingContainer` is one strong reference whose uniqueness tells whether
  /// anyone else holds the container, tried once on a probe.
  static let layoutHolds: Bool = {
    typealias Probe = KeyedDecodingContainer<BSONCodingKey>
    guard MemoryLayout<Probe>.size == MemoryLayout<AnyObject>.size,
      MemoryLayout<Probe>.alignment == MemoryLayout<AnyObject>.alignment
    else { return false }
    let memory = makeProbe()
    defer {
      memory.deinitialize(count: 1)
      memory.deallocate()
    }
    let raw = UnsafeMutableRawPointer(memory)
    return isFree(raw) && sharedWhileCopied(memory) && isFree(raw)
  }()

  /// A probe container in memory of its own (no temporary copy outlives this call).
  @inline(never)
  private static func makeProbe() -> UnsafeMutablePointer<KeyedDecodingContainer<BSONCodingKey>> {
    let memory = UnsafeMutablePointer<KeyedDecodingContainer<BSONCodingKey>>.allocate(capacity: 1)
    memory.initialize(to: KeyedDecodingContainer(ProbeContainer()))
    return memory
  }

  /// Whether the probe's box is shared while a copy of the container exists (the copy is gone
  /// when this returns).
  @inline(never)
  private static func sharedWhileCopied(_ memory: UnsafeMutablePointer<KeyedDecodingContainer<BSONCodingKey>>) -> Bool {
    let copy = memory.pointee
    return withExtendedLifetime(copy) { !isFree(UnsafeMutableRawPointer(memory)) }
  }
}

/// Copies the value at a fixed address.
///
/// Copying a `KeyedDecodingContainer<Key>` in code generic over `Key` looks up the type's
/// metadata in the runtime's table on every copy. A `BoxCopier<KeyedDecodingContainer<Key>>`
/// carries that metadata in its own (looked up once, when it is made), and ``copy()`` is never
/// specialized, so it copies without a lookup.
final class BoxCopier<Value> {
  private let memory: UnsafeMutablePointer<Value>

  init(_ memory: UnsafeMutablePointer<Value>) { self.memory = memory }

  @inline(never)
  @_semantics("optimize.sil.specialize.generic.never")
  func copy() -> Value { memory.pointee }
}

/// The type a box's reference is read as to test its uniqueness (``KeyedBoxCache``); never made.
private final class BoxReference {}

/// The container of ``KeyedBoxCache/layoutHolds``'s probe: never used.
private struct ProbeContainer: KeyedDecodingContainerProtocol {
  typealias Key = BSONCodingKey
  var codingPath: [any CodingKey] { [] }
  var allKeys: [Key] { [] }
  func contains(_ key: Key) -> Bool { false }
  func decodeNil(forKey key: Key) throws -> Bool { false }
  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
    throw DecodingError.keyNotFound(key, DecodingError.Context(codingPath: [], debugDescription: "probe"))
  }
  func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
    -> KeyedDecodingContainer<NestedKey>
  {
    throw DecodingError.keyNotFound(key, DecodingError.Context(codingPath: [], debugDescription: "probe"))
  }
  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    throw DecodingError.keyNotFound(key, DecodingError.Context(codingPath: [], debugDescription: "probe"))
  }
  func superDecoder() throws -> any Decoder {
    throw DecodingError.keyNotFound(Key.super, DecodingError.Context(codingPath: [], debugDescription: "probe"))
  }
  func superDecoder(forKey key: Key) throws -> any Decoder {
    throw DecodingError.keyNotFound(key, DecodingError.Context(codingPath: [], debugDescription: "probe"))
  }
}

/// What a keyed decoding container reads: its decoder, its path entry and its document's bounds.
struct KeyedDecodingState {
  let handle: DecoderHandle
  /// The container's path entry, which also holds the lookup cursor.
  let entry: UnsafeMutablePointer<PathEntry>
  /// Offset of the first element's type byte.
  let first: Int
  /// Offset of the document's terminating zero.
  let end: Int

  @inline(__always)
  init(
    decoder: BSONDecoderImpl, parent: UnsafeMutablePointer<PathEntry>?, component: DecodingComponent,
    document: BSONValueRef
  ) {
    handle = decoder.handle
    // Safe: a validated document is at least 5 bytes (length prefix and terminator).
    first = document.offset &+ 4
    end = document.offset &+ document.length &- 1
    entry = decoder.pushEntry(parent: parent, component: component, cursor: first)
  }
}

/// The state of a keyed decoding container that has no slot in a ``KeyedBoxCache``.
final class KeyedStateOwner {
  let state = UnsafeMutablePointer<KeyedDecodingState>.allocate(capacity: 1)

  init(_ value: KeyedDecodingState) { state.initialize(to: value) }

  deinit { state.deallocate() }
}

/// A keyed container with a state of its own (see ``KeyedBoxCache``'s capacity): it owns the
/// state and forwards to the container that reads it. Rare, so plain forwarding.
struct OwnedKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let owner: KeyedStateOwner

  @inline(__always) private var inner: KeyedBSONDecodingContainer<Key> {
    KeyedBSONDecodingContainer(state: owner.state)
  }

  var codingPath: [any CodingKey] { inner.codingPath }
  var allKeys: [Key] { inner.allKeys }
  func contains(_ key: Key) -> Bool { inner.contains(key) }
  func decodeNil(forKey key: Key) throws -> Bool { try inner.decodeNil(forKey: key) }
  func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try inner.decode(type, forKey: key) }
  func decode(_ type: String.Type, forKey key: Key) throws -> String { try inner.decode(type, forKey: key) }
  func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try inner.decode(type, forKey: key) }
  func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try inner.decode(type, forKey: key) }
  func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try inner.decode(type, forKey: key) }
  func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try inner.decode(type, forKey: key) }
  func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try inner.decode(type, forKey: key) }
  func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try inner.decode(type, forKey: key) }
  func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try inner.decode(type, forKey: key) }
  func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 { try inner.decode(type, forKey: key) }
  func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try inner.decode(type, forKey: key) }
  func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try inner.decode(type, forKey: key) }
  func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try inner.decode(type, forKey: key) }
  func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try inner.decode(type, forKey: key) }
  func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try inner.decode(type, forKey: key) }
  func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 { try inner.decode(type, forKey: key) }
  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try inner.decode(type, forKey: key) }
  func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
    try inner.decodeIfPresent(type, forKey: key)
  }
  func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
    try inner.decodeIfPresent(type, forKey: key)
  }
  func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
    try inner.decodeIfPresent(type, forKey: key)
  }
  func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
    try inner.decodeIfPresent(type, forKey: key)
  }
  func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
    try inner.decodeIfPresent(type, forKey: key)
  }
  func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? {
    try inner.decodeIfPresent(type, forKey: key)
  }
  func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? {
    try inner.decodeIfPresent(type, forKey: key)
  }
  func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
    try inner.decodeIfPresent(type, forKey: key)
  }
  func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
    try inner.decodeIfPresent(type, forKey: key)
  }
  func decodeIfPresent(_ type: Int128.Type, forKey key: Key) throws -> Int128? {
    try inner.decodeIfPresent(type, forKey: key)
  }
  func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? {
    try inner.decodeIfPresent(type, forKey: key)
  }
  func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? {
    try inner.decodeIfPresent(type, forKey: key)
  }
  func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
    try inner.decodeIfPresent(type, forKey: key)
  }
  func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
    try inner.decodeIfPresent(type, forKey: key)
  }
  func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
    try inner.decodeIfPresent(type, forKey: key)
  }
  func decodeIfPresent(_ type: UInt128.Type, forKey key: Key) throws -> UInt128? {
    try inner.decodeIfPresent(type, forKey: key)
  }
  func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
    try inner.decodeIfPresent(type, forKey: key)
  }
  func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type, forKey key: Key
  ) throws -> KeyedDecodingContainer<NestedKey> {
    try inner.nestedContainer(keyedBy: type, forKey: key)
  }
  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    try inner.nestedUnkeyedContainer(forKey: key)
  }
  func superDecoder() throws -> any Decoder { try inner.superDecoder() }
  func superDecoder(forKey key: Key) throws -> any Decoder { try inner.superDecoder(forKey: key) }
}
