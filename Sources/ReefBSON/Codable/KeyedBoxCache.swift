/// Slots of reused keyed-container boxes, for the decoder's ``KeyedBoxCache`` and the
/// encoder's ``KeyedEncodingBoxCache``.
///
/// `KeyedDecodingContainer(_:)` and `KeyedEncodingContainer(_:)` wrap every container in a class
/// instance (its box), allocated for each `container(keyedBy:)` call; making one also costs two
/// runtime metadata lookups (the container's and the box's generic types). A tree of small
/// objects spends a large part of its coding there. Each slot keeps one box whose container reads
/// its state (a `Payload`) through a pointer into the slot, and the box is handed out again once
/// nobody else holds it: its reference count is one, the slot's own. A container kept past its
/// call therefore keeps its box and its payload.
///
/// This relies on a keyed container being one strong reference to its box, which the standard
/// library does not promise; ``boxLayoutHolds(_:)`` checks it once per container type, and the
/// caches make plain containers when it does not hold.
struct ContainerBoxSlots<Payload> {
  struct Slot {
    let keyType: ObjectIdentifier
    /// Holds one container (`KeyedDecodingContainer<Key>` or `KeyedEncodingContainer<Key>`): the
    /// slot's reference to the box.
    let container: UnsafeMutableRawPointer
    /// What the box's container reads.
    let payload: UnsafeMutablePointer<Payload>
    /// A retained `BoxCopier` of `container`.
    let copier: UnsafeMutableRawPointer
  }

  /// At most this many boxes are kept; containers beyond them (deeper nesting, or containers kept
  /// by the caller) get boxes of their own.
  static var capacity: Int { 64 }
  private var slots: UnsafeMutablePointer<Slot>?
  private(set) var count = 0

  var isFull: Bool { count == Self.capacity }

  @inline(__always) subscript(index: Int) -> Slot { slots.unsafelyUnwrapped[index] }

  /// The newest slot whose box is for keys of `keyType` and free, if any. From the newest slot
  /// down: containers are mostly released in the reverse order of their making, so the newest
  /// slots are the likeliest to be free.
  @inline(__always)
  func freeSlot(for keyType: ObjectIdentifier) -> Int? {
    var index = count
    while index > 0 {
      index &-= 1
      let slot = self[index]
      if slot.keyType == keyType && isFreeBox(slot.container) { return index }
    }
    return nil
  }

  /// Whether only the slot holds its box.
  @inline(__always) func isFree(_ index: Int) -> Bool { isFreeBox(self[index].container) }

  /// A copy of the container of slot `index`, a `C`, made without a metadata lookup.
  @inline(__always)
  func container<C>(at index: Int, as type: C.Type) -> C {
    Unmanaged<BoxCopier<C>>.fromOpaque(self[index].copier)._withUnsafeGuaranteedRef { $0.copy() }
  }

  /// Keeps `container`, whose box's container reads `payload`, in a new slot (the caller checks
  /// ``isFull``); returns the slot's index.
  mutating func add<C>(_ container: C, keyType: ObjectIdentifier, payload: UnsafeMutablePointer<Payload>) -> Int {
    if slots == nil { slots = .allocate(capacity: Self.capacity) }
    let memory = UnsafeMutablePointer<C>.allocate(capacity: 1)
    memory.initialize(to: container)
    slots.unsafelyUnwrapped[count] = Slot(
      keyType: keyType, container: UnsafeMutableRawPointer(memory), payload: payload,
      copier: Unmanaged.passRetained(BoxCopier(memory)).toOpaque())
    count &+= 1
    return count &- 1
  }

  /// Frees every slot and its box reference; `payload` gets each slot's payload to free. No box
  /// may be held elsewhere (its container would read the payload).
  mutating func free(_ payload: (UnsafeMutablePointer<Payload>) -> Void) {
    for index in 0..<count {
      let slot = self[index]
      assert(isFreeBox(slot.container), "a box is held elsewhere as its cache is freed")
      Unmanaged<AnyObject>.fromOpaque(slot.copier).release()
      // The slot's reference to the box (a one-reference value, see `boxLayoutHolds`).
      slot.container.withMemoryRebound(to: AnyObject.self, capacity: 1) { _ = $0.move() }
      slot.container.deallocate()
      payload(slot.payload)
    }
    slots?.deallocate()
    slots = nil
    count = 0
  }
}

/// Whether only the slot holds the box of the container stored at `container`.
///
/// The reference is read as a ``BoxReference``, a native class like the box, so that the test
/// is the runtime's reference count check without a generic call (only the count is read).
@inline(__always)
func isFreeBox(_ container: UnsafeMutableRawPointer) -> Bool {
  container.withMemoryRebound(to: BoxReference.self, capacity: 1) { isKnownUniquelyReferenced(&$0.pointee) }
}

/// Whether a keyed container of type `C` is one strong reference whose uniqueness tells whether
/// anyone else holds the container, tried once on a probe that `make` makes.
func boxLayoutHolds<C>(_ make: () -> C) -> Bool {
  guard MemoryLayout<C>.size == MemoryLayout<AnyObject>.size,
    MemoryLayout<C>.alignment == MemoryLayout<AnyObject>.alignment
  else { return false }
  let memory = probeMemory(make)
  defer {
    memory.deinitialize(count: 1)
    memory.deallocate()
  }
  let raw = UnsafeMutableRawPointer(memory)
  return isFreeBox(raw) && sharedWhileCopied(memory) && isFreeBox(raw)
}

/// The probe in memory of its own (no temporary copy outlives this call).
@inline(never)
private func probeMemory<C>(_ make: () -> C) -> UnsafeMutablePointer<C> {
  let memory = UnsafeMutablePointer<C>.allocate(capacity: 1)
  memory.initialize(to: make())
  return memory
}

/// Whether the probe's box is shared while a copy of it exists (the copy is gone when this
/// returns).
@inline(never)
private func sharedWhileCopied<C>(_ memory: UnsafeMutablePointer<C>) -> Bool {
  let copy = memory.pointee
  return withExtendedLifetime(copy) { !isFreeBox(UnsafeMutableRawPointer(memory)) }
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

/// The type a box's reference is read as to test its uniqueness (``isFreeBox(_:)``); never made.
private final class BoxReference {}

/// Memory of its own for one value, freed with the owner: the state of a container that has no
/// slot in a box cache (``OwnedKeyedDecodingContainer``, ``OwnedKeyedEncodingContainer``).
final class SlotOwner<Value> {
  let slot = UnsafeMutablePointer<Value>.allocate(capacity: 1)

  init(_ value: Value) { slot.initialize(to: value) }

  deinit {
    slot.deinitialize(count: 1)
    slot.deallocate()
  }
}

/// Reuses the standard library's boxes of keyed decoding containers (see ``ContainerBoxSlots``).
///
/// A box's container (``KeyedBSONDecodingContainer``) reads a ``KeyedDecodingState`` from its
/// slot; one kept past its call still traps on use (its state's generation is old).
struct KeyedBoxCache {
  private var boxes = ContainerBoxSlots<KeyedDecodingState>()

  /// A container of `Key`s reading `state`, in a reused box when one is free.
  @inline(__always)
  mutating func container<Key: CodingKey>(_ key: Key.Type, _ state: KeyedDecodingState) -> KeyedDecodingContainer<Key> {
    if let index = boxes.freeSlot(for: ObjectIdentifier(Key.self)) {
      boxes[index].payload.pointee = state
      return boxes.container(at: index, as: KeyedDecodingContainer<Key>.self)
    }
    return add(Key.self, state)
  }

  @inline(never)
  private mutating func add<Key: CodingKey>(_ key: Key.Type, _ state: KeyedDecodingState) -> KeyedDecodingContainer<Key>
  {
    guard Self.layoutHolds, !boxes.isFull else {
      return KeyedDecodingContainer(OwnedKeyedDecodingContainer<Key>(owner: SlotOwner(state)))
    }
    let payload = UnsafeMutablePointer<KeyedDecodingState>.allocate(capacity: 1)
    payload.initialize(to: state)
    let container = KeyedDecodingContainer(KeyedBSONDecodingContainer<Key>(state: payload))
    _ = boxes.add(container, keyType: ObjectIdentifier(Key.self), payload: payload)
    return container
  }

  /// Whether a `KeyedDecodingContainer` is one reference to its box (see ``boxLayoutHolds(_:)``).
  static let layoutHolds = boxLayoutHolds { KeyedDecodingContainer(ProbeContainer()) }
}

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

/// A keyed container with a state of its own (see ``KeyedBoxCache``'s capacity): it owns the
/// state and forwards to the container that reads it. Rare, so plain forwarding.
struct OwnedKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let owner: SlotOwner<KeyedDecodingState>

  @inline(__always) private var inner: KeyedBSONDecodingContainer<Key> {
    KeyedBSONDecodingContainer(state: owner.slot)
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
