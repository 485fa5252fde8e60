/// Reuses the standard library's boxes of keyed encoding containers in fast mode (see
/// ``KeyedBoxCache``, the decoder's, for why and how a box is known to be free).
///
/// A box's container (``KeyedBSONEncodingContainer``) reads its node from a slot of the cache,
/// which holds the node strongly while the box is handed out, so that a container kept by its
/// user keeps its node (which then writes nothing, or sends the call to tree mode, as before).
/// The slot lets go of the node when the node is recycled with its box free (``release(_:)``) and
/// when the call ends; a node therefore records its slot (``EncodingNode/boxSlot``).
struct KeyedEncodingBoxCache {
  private struct Slot {
    let keyType: ObjectIdentifier
    /// Holds one `KeyedEncodingContainer<Key>`: the cache's reference to the box.
    let container: UnsafeMutableRawPointer
    /// The node the box's container writes to.
    let node: UnsafeMutablePointer<EncodingNode?>
    /// A retained `BoxCopier<KeyedEncodingContainer<Key>>` of `container`.
    let copier: UnsafeMutableRawPointer
  }

  /// At most this many boxes are kept; containers beyond them get boxes of their own.
  static let capacity = 64
  private var slots: UnsafeMutablePointer<Slot>?
  private var count = 0

  /// A container of `Key`s writing to `node`, in a reused box when one is free.
  @inline(__always)
  mutating func container<Key: CodingKey>(_ key: Key.Type, _ node: EncodingNode) -> KeyedEncodingContainer<Key> {
    let keyType = ObjectIdentifier(Key.self)
    var index = count
    while index > 0 {
      index &-= 1
      let slot = slots.unsafelyUnwrapped[index]
      if slot.keyType == keyType && KeyedBoxCache.isFree(slot.container) {
        bind(slot, index, node)
        return Unmanaged<BoxCopier<KeyedEncodingContainer<Key>>>.fromOpaque(slot.copier)
          ._withUnsafeGuaranteedRef { $0.copy() }
      }
    }
    return add(Key.self, node)
  }

  @inline(__always)
  private func bind(_ slot: Slot, _ index: Int, _ node: EncodingNode) {
    if let old = slot.node.pointee, old !== node, old.boxSlot == index { old.boxSlot = -1 }
    slot.node.pointee = node
    node.boxSlot = index
  }

  @inline(never)
  private mutating func add<Key: CodingKey>(_ key: Key.Type, _ node: EncodingNode) -> KeyedEncodingContainer<Key> {
    guard Self.layoutHolds, count < Self.capacity else {
      return KeyedEncodingContainer(OwnedKeyedEncodingContainer<Key>(owner: NodeSlotOwner(node)))
    }
    if slots == nil { slots = .allocate(capacity: Self.capacity) }
    let nodeSlot = UnsafeMutablePointer<EncodingNode?>.allocate(capacity: 1)
    nodeSlot.initialize(to: nil)
    let container = KeyedEncodingContainer(KeyedBSONEncodingContainer<Key>(slot: nodeSlot))
    let memory = UnsafeMutablePointer<KeyedEncodingContainer<Key>>.allocate(capacity: 1)
    memory.initialize(to: container)
    let slot = Slot(
      keyType: ObjectIdentifier(Key.self), container: UnsafeMutableRawPointer(memory), node: nodeSlot,
      copier: Unmanaged.passRetained(BoxCopier(memory)).toOpaque())
    slots.unsafelyUnwrapped[count] = slot
    bind(slot, count, node)
    count &+= 1
    return container
  }

  /// Lets go of `node` (about to be recycled) when the box that writes to it is free.
  @inline(__always)
  func release(_ node: EncodingNode) {
    let index = node.boxSlot
    guard index >= 0 else { return }
    let slot = slots.unsafelyUnwrapped[index]
    guard KeyedBoxCache.isFree(slot.container) else { return }
    node.boxSlot = -1
    slot.node.pointee = nil
  }

  /// Ends a call: slots of free boxes let go of their nodes; with `all`, so do the slots of boxes
  /// their users kept (whose containers then write nowhere), so that nothing keeps the state.
  func endCall(all: Bool) {
    for index in 0..<count {
      let slot = slots.unsafelyUnwrapped[index]
      guard all || KeyedBoxCache.isFree(slot.container) else { continue }
      if let node = slot.node.pointee, node.boxSlot == index { node.boxSlot = -1 }
      slot.node.pointee = nil
    }
  }

  /// Frees the cache (its state is going). A box its user still holds keeps its node slot (the
  /// box's container reads it: empty, it writes nowhere), which is then never freed.
  mutating func free() {
    for index in 0..<count {
      let slot = slots.unsafelyUnwrapped[index]
      Unmanaged<AnyObject>.fromOpaque(slot.copier).release()
      let held = !KeyedBoxCache.isFree(slot.container)
      // The cache's reference to the box (a one-reference value, see `layoutHolds`).
      slot.container.withMemoryRebound(to: AnyObject.self, capacity: 1) { _ = $0.move() }
      slot.container.deallocate()
      slot.node.pointee = nil
      if !held {
        slot.node.deinitialize(count: 1)
        slot.node.deallocate()
      }
    }
    slots?.deallocate()
    slots = nil
    count = 0
  }

  /// Whether a `KeyedEncodingContainer` is one strong reference to its box, tried once on a
  /// probe (see ``KeyedBoxCache/layoutHolds``).
  static let layoutHolds: Bool = {
    typealias Probe = KeyedEncodingContainer<BSONCodingKey>
    guard MemoryLayout<Probe>.size == MemoryLayout<AnyObject>.size,
      MemoryLayout<Probe>.alignment == MemoryLayout<AnyObject>.alignment
    else { return false }
    let memory = makeProbe()
    defer {
      memory.deinitialize(count: 1)
      memory.deallocate()
    }
    let raw = UnsafeMutableRawPointer(memory)
    return KeyedBoxCache.isFree(raw) && sharedWhileCopied(memory) && KeyedBoxCache.isFree(raw)
  }()

  @inline(never)
  private static func makeProbe() -> UnsafeMutablePointer<KeyedEncodingContainer<BSONCodingKey>> {
    let memory = UnsafeMutablePointer<KeyedEncodingContainer<BSONCodingKey>>.allocate(capacity: 1)
    memory.initialize(to: KeyedEncodingContainer(ProbeEncodingContainer()))
    return memory
  }

  @inline(never)
  private static func sharedWhileCopied(_ memory: UnsafeMutablePointer<KeyedEncodingContainer<BSONCodingKey>>)
    -> Bool
  {
    let copy = memory.pointee
    return withExtendedLifetime(copy) { !KeyedBoxCache.isFree(UnsafeMutableRawPointer(memory)) }
  }
}

/// The container of ``KeyedEncodingBoxCache/layoutHolds``'s probe: never used.
private struct ProbeEncodingContainer: KeyedEncodingContainerProtocol {
  typealias Key = BSONCodingKey
  var codingPath: [any CodingKey] { [] }
  mutating func encodeNil(forKey key: Key) throws {}
  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {}
  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
    -> KeyedEncodingContainer<NestedKey>
  {
    KeyedEncodingContainer(ProbeNestedContainer<NestedKey>())
  }
  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    fatalError("the probe is never used")
  }
  mutating func superEncoder() -> any Encoder { fatalError("the probe is never used") }
  mutating func superEncoder(forKey key: Key) -> any Encoder { fatalError("the probe is never used") }
}

private struct ProbeNestedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
  var codingPath: [any CodingKey] { [] }
  mutating func encodeNil(forKey key: Key) throws {}
  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {}
  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
    -> KeyedEncodingContainer<NestedKey>
  {
    KeyedEncodingContainer(ProbeNestedContainer<NestedKey>())
  }
  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    fatalError("the probe is never used")
  }
  mutating func superEncoder() -> any Encoder { fatalError("the probe is never used") }
  mutating func superEncoder(forKey key: Key) -> any Encoder { fatalError("the probe is never used") }
}

/// A keyed encoding container with a node slot of its own, for the containers that get no box of
/// the cache (tree mode, a node of an ended call, beyond the cache's capacity): it owns the slot
/// and forwards to the container that reads it. Rare, so plain forwarding.
struct OwnedKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
  let owner: NodeSlotOwner

  @inline(__always) private var inner: KeyedBSONEncodingContainer<Key> { KeyedBSONEncodingContainer(slot: owner.slot) }

  var codingPath: [any CodingKey] { inner.codingPath }
  mutating func encodeNil(forKey key: Key) throws {
    var inner = self.inner
    try inner.encodeNil(forKey: key)
  }
  mutating func encode(_ value: Bool, forKey key: Key) throws {
    var inner = self.inner
    try inner.encode(value, forKey: key)
  }
  mutating func encode(_ value: String, forKey key: Key) throws {
    var inner = self.inner
    try inner.encode(value, forKey: key)
  }
  mutating func encode(_ value: Double, forKey key: Key) throws {
    var inner = self.inner
    try inner.encode(value, forKey: key)
  }
  mutating func encode(_ value: Float, forKey key: Key) throws {
    var inner = self.inner
    try inner.encode(value, forKey: key)
  }
  mutating func encode(_ value: Int, forKey key: Key) throws {
    var inner = self.inner
    try inner.encode(value, forKey: key)
  }
  mutating func encode(_ value: Int8, forKey key: Key) throws {
    var inner = self.inner
    try inner.encode(value, forKey: key)
  }
  mutating func encode(_ value: Int16, forKey key: Key) throws {
    var inner = self.inner
    try inner.encode(value, forKey: key)
  }
  mutating func encode(_ value: Int32, forKey key: Key) throws {
    var inner = self.inner
    try inner.encode(value, forKey: key)
  }
  mutating func encode(_ value: Int64, forKey key: Key) throws {
    var inner = self.inner
    try inner.encode(value, forKey: key)
  }
  mutating func encode(_ value: Int128, forKey key: Key) throws {
    var inner = self.inner
    try inner.encode(value, forKey: key)
  }
  mutating func encode(_ value: UInt, forKey key: Key) throws {
    var inner = self.inner
    try inner.encode(value, forKey: key)
  }
  mutating func encode(_ value: UInt8, forKey key: Key) throws {
    var inner = self.inner
    try inner.encode(value, forKey: key)
  }
  mutating func encode(_ value: UInt16, forKey key: Key) throws {
    var inner = self.inner
    try inner.encode(value, forKey: key)
  }
  mutating func encode(_ value: UInt32, forKey key: Key) throws {
    var inner = self.inner
    try inner.encode(value, forKey: key)
  }
  mutating func encode(_ value: UInt64, forKey key: Key) throws {
    var inner = self.inner
    try inner.encode(value, forKey: key)
  }
  mutating func encode(_ value: UInt128, forKey key: Key) throws {
    var inner = self.inner
    try inner.encode(value, forKey: key)
  }
  mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws {
    var inner = self.inner
    try inner.encodeIfPresent(value, forKey: key)
  }
  mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
    var inner = self.inner
    try inner.encodeIfPresent(value, forKey: key)
  }
  mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
    var inner = self.inner
    try inner.encodeIfPresent(value, forKey: key)
  }
  mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws {
    var inner = self.inner
    try inner.encodeIfPresent(value, forKey: key)
  }
  mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws {
    var inner = self.inner
    try inner.encodeIfPresent(value, forKey: key)
  }
  mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws {
    var inner = self.inner
    try inner.encodeIfPresent(value, forKey: key)
  }
  mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws {
    var inner = self.inner
    try inner.encodeIfPresent(value, forKey: key)
  }
  mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws {
    var inner = self.inner
    try inner.encodeIfPresent(value, forKey: key)
  }
  mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws {
    var inner = self.inner
    try inner.encodeIfPresent(value, forKey: key)
  }
  mutating func encodeIfPresent(_ value: Int128?, forKey key: Key) throws {
    var inner = self.inner
    try inner.encodeIfPresent(value, forKey: key)
  }
  mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws {
    var inner = self.inner
    try inner.encodeIfPresent(value, forKey: key)
  }
  mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws {
    var inner = self.inner
    try inner.encodeIfPresent(value, forKey: key)
  }
  mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws {
    var inner = self.inner
    try inner.encodeIfPresent(value, forKey: key)
  }
  mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws {
    var inner = self.inner
    try inner.encodeIfPresent(value, forKey: key)
  }
  mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws {
    var inner = self.inner
    try inner.encodeIfPresent(value, forKey: key)
  }
  mutating func encodeIfPresent(_ value: UInt128?, forKey key: Key) throws {
    var inner = self.inner
    try inner.encodeIfPresent(value, forKey: key)
  }
  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
    var inner = self.inner
    try inner.encode(value, forKey: key)
  }
  mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
    var inner = self.inner
    try inner.encodeIfPresent(value, forKey: key)
  }
  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type, forKey key: Key
  ) -> KeyedEncodingContainer<NestedKey> {
    var inner = self.inner
    return inner.nestedContainer(keyedBy: keyType, forKey: key)
  }
  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    var inner = self.inner
    return inner.nestedUnkeyedContainer(forKey: key)
  }
  mutating func superEncoder() -> any Encoder {
    var inner = self.inner
    return inner.superEncoder()
  }
  mutating func superEncoder(forKey key: Key) -> any Encoder {
    var inner = self.inner
    return inner.superEncoder(forKey: key)
  }
}

/// The node slot of an ``OwnedKeyedEncodingContainer``.
final class NodeSlotOwner {
  let slot = UnsafeMutablePointer<EncodingNode?>.allocate(capacity: 1)

  init(_ node: EncodingNode) { slot.initialize(to: node) }

  deinit {
    slot.deinitialize(count: 1)
    slot.deallocate()
  }
}
