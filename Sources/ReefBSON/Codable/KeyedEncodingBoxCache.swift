/// Reuses the standard library's boxes of keyed encoding containers in fast mode (see
/// ``ContainerBoxSlots`` for why and how a box is known to be free).
///
/// A box's container (``KeyedBSONEncodingContainer``) reads its node from a slot of the cache.
/// During a call the slot does not retain its node (the state holds every node of its call until
/// the call ends, see `EncodingState`), and a node whose box is held (``isHeld(_:)``) is not
/// taken for reuse. When the call ends, the slot of a box its user kept retains its node, so that
/// the kept container keeps its node (which then writes nothing, as before). The slot lets go of
/// the node when the node's nested value ends or its stack slot is about to be reused with its box
/// free (``release(_:)``) and when the call ends; a node therefore records its slot
/// (``EncodingNode/boxSlot``). A node is in at most one slot that does not retain it: that one.
struct KeyedEncodingBoxCache {
  private var boxes = ContainerBoxSlots<EncodingNode?>()
  /// Bit `i`: slot `i` retains its node. (``ContainerBoxSlots/capacity`` is 64.)
  private var retained: UInt64 = 0

  /// A container of `Key`s writing to `node`, in a reused box when one is free.
  @inline(__always)
  mutating func container<Key: CodingKey>(_ key: Key.Type, _ node: EncodingNode) -> KeyedEncodingContainer<Key> {
    if let index = boxes.freeSlot(for: ObjectIdentifier(Key.self)) {
      bind(index, node)
      return boxes.container(at: index, as: KeyedEncodingContainer<Key>.self)
    }
    return add(Key.self, node)
  }

  @inline(__always)
  private mutating func bind(_ index: Int, _ node: EncodingNode) {
    if let old = Self.node(in: boxes[index].payload) {
      old._withUnsafeGuaranteedRef { if $0 !== node && $0.boxSlot == index { $0.boxSlot = -1 } }
      clear(index)
    }
    let earlier = node.boxSlot
    if earlier >= 0 && earlier != index { keepOrClear(earlier) }
    UnsafeMutableRawPointer(boxes[index].payload).storeBytes(
      of: UnsafeRawPointer(Unmanaged.passUnretained(node).toOpaque()), as: UnsafeRawPointer?.self)
    node.boxSlot = index
  }

  /// The node in `slot`, unretained.
  @inline(__always)
  static func node(in slot: UnsafeMutablePointer<EncodingNode?>) -> Unmanaged<EncodingNode>? {
    UnsafeRawPointer(slot).load(as: UnsafeRawPointer?.self).map { Unmanaged.fromOpaque($0) }
  }

  @inline(__always)
  private static func bit(_ index: Int) -> UInt64 { 1 &<< UInt64(truncatingIfNeeded: index) }

  /// Empties slot `index`, releasing its node if the slot retains it.
  @inline(__always)
  private mutating func clear(_ index: Int) {
    let slot = boxes[index].payload
    guard let node = Self.node(in: slot) else { return }
    UnsafeMutableRawPointer(slot).storeBytes(of: nil, as: UnsafeRawPointer?.self)
    if retained & Self.bit(index) != 0 {
      retained &= ~Self.bit(index)
      node.release()
    }
  }

  /// Slot `index` (which holds a node) lets go of it when its box is free, else retains it.
  @inline(never)
  private mutating func keepOrClear(_ index: Int) {
    guard let node = Self.node(in: boxes[index].payload) else { return }
    if boxes.isFree(index) {
      node._withUnsafeGuaranteedRef { if $0.boxSlot == index { $0.boxSlot = -1 } }
      clear(index)
    } else if retained & Self.bit(index) == 0 {
      retained |= Self.bit(index)
      _ = node.retain()
    }
  }

  @inline(never)
  private mutating func add<Key: CodingKey>(_ key: Key.Type, _ node: EncodingNode) -> KeyedEncodingContainer<Key> {
    guard Self.layoutHolds, !boxes.isFull else {
      return KeyedEncodingContainer(OwnedKeyedEncodingContainer<Key>(owner: SlotOwner<EncodingNode?>(node)))
    }
    let payload = UnsafeMutablePointer<EncodingNode?>.allocate(capacity: 1)
    payload.initialize(to: nil)
    let container = KeyedEncodingContainer(KeyedBSONEncodingContainer<Key>(slot: payload))
    let index = boxes.add(container, keyType: ObjectIdentifier(Key.self), payload: payload)
    bind(index, node)
    return container
  }

  /// Lets go of `node` (closed, to be reused when nothing else holds it) when the box that writes
  /// to it is free.
  @inline(__always)
  mutating func release(_ node: EncodingNode) {
    let index = node.boxSlot
    guard index >= 0, boxes.isFree(index) else { return }
    node.boxSlot = -1
    clear(index)
  }

  /// Whether a box that writes to `node` is held by its user (after ``release(_:)``).
  @inline(__always)
  static func isHeld(_ node: EncodingNode) -> Bool { node.boxSlot >= 0 }

  /// Ends a call: slots of free boxes let go of their nodes, and slots of boxes their users kept
  /// retain theirs (the state is about to let go of its nodes).
  ///
  /// A slot whose box is held never lets go of its node, even when the state itself is let go:
  /// the kept container may be read on another thread at any moment (its `codingPath`, a write
  /// that does nothing), and it reads the node through the slot without retaining it, so a
  /// release there could free the node under that read. Such a node (which holds its state) is
  /// freed only once its user has let go of the box: by a later call's `endCall()` on the same
  /// state, or, for a state let go of meanwhile, by `EncodingState.reclaimAbandoned()`.
  mutating func endCall() {
    for index in 0..<boxes.count where Self.node(in: boxes[index].payload) != nil { keepOrClear(index) }
  }

  /// Whether a slot retains its node: a box its user kept past the call (see ``endCall()``).
  var retainsNodes: Bool { retained != 0 }

  /// Frees the cache, with its state. No slot holds a node then, and no box is held: the call
  /// has ended, so every slot let go of its node except those of boxes their users kept
  /// (``endCall()``), which retain their nodes, and so the state, until their users let go.
  mutating func free() {
    boxes.free { slot in
      assert(slot.pointee == nil, "a box cache slot still holds a node as its state is freed")
      slot.deinitialize(count: 1)
      slot.deallocate()
    }
  }

  /// Whether a `KeyedEncodingContainer` is one reference to its box (see ``boxLayoutHolds(_:)``).
  static let layoutHolds = boxLayoutHolds { KeyedEncodingContainer(ProbeEncodingContainer<BSONCodingKey>()) }
}

/// The container of ``KeyedEncodingBoxCache/layoutHolds``'s probe: never used.
private struct ProbeEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
  var codingPath: [any CodingKey] { [] }
  mutating func encodeNil(forKey key: Key) throws {}
  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {}
  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
    -> KeyedEncodingContainer<NestedKey>
  {
    KeyedEncodingContainer(ProbeEncodingContainer<NestedKey>())
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
  let owner: SlotOwner<EncodingNode?>

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
