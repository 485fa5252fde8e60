import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// How each type met so far encodes (a type's conformances never change, so this only grows).
private let encodingKinds = Locked<[ObjectIdentifier: EncodingKind]>([:])

/// How the encoder writes a value of a given static type.
enum EncodingKind: @unchecked Sendable {  // @unchecked: it holds only metatypes
  /// Written by the encoder itself (``BSONEncodingPrimitive``).
  case primitive(any BSONEncodingPrimitive.Type)
  /// An `Optional`: each value is cast, so that a wrapped primitive is still written directly.
  case optional
  /// Through the type's `encode(to:)`.
  case other
}

/// One slot of an ``EncodingState``'s cache of ``EncodingKind``s.
struct EncodingKindSlot {
  var type: ObjectIdentifier?
  var kind: EncodingKind
}

/// One idle fast-mode ``EncodingState``, kept between calls with its nodes (a retained
/// reference, or 0).
private let idleEncodingState = Atomic<UInt>(0)

/// Fast-mode states let go of (another was idle already) while boxes of their last call were
/// still held by their users: the slot of each such box retains its node, which holds the state,
/// so nothing else would ever free them (a leak that LeakSanitizer reported). Each retained
/// once (their addresses); ``EncodingState/reclaimAbandoned()`` lets each go once its users have
/// let go of all its boxes.
private let abandonedStates = Locked<[UInt]>([])
/// How many states `abandonedStates` holds, for a check without the lock at the end of each call.
private let abandonedCount = Atomic<Int>(0)

/// Marks `Optional`, whose values a dynamic cast unwraps.
protocol OptionalMarker {}
extension Optional: OptionalMarker {}

/// The state of one `BSONEncoder.encode` call.
///
/// In the normal (fast) mode every container writes into the one `writer`, in place: a nested
/// container's header and length prefix are written when it is created, its elements follow, and
/// its terminator and length are written when something outside it is written next (or at the
/// end). The node stack's first `depth` nodes are the chain of open containers, outermost first.
/// A write to a container that was already closed means the containers were used out of order;
/// the state then sets `needsTreeMode` and the encoder starts again in tree mode, where every
/// container keeps its own bytes and the pieces are joined at the end.
///
/// Node lifetimes in fast mode: the state holds every node it made for a call until the call
/// ends, in its node stack or in `retired` (a node whose stack slot was given a new node while
/// something else still held it, and a detached node). A slot's node is reused (for a later node
/// at the same depth, in this call or a later one) only when nothing but the stack holds it, no
/// box held by its user writes to it, and its nested value has ended (``EncodingNode/isNesting``:
/// `writeNested` and the `encode(to:)` it calls use the node without retaining it, and a value
/// that writes into an outer container closes its own node while it still encodes). So the code
/// of a call may use a node of that call without retaining it, the box cache's slots need not
/// retain their nodes during the call (see ``KeyedEncodingBoxCache``), and a node's unretained
/// parent reference (``CodingPathNode/unownedParent``) stays valid while anything can read it
/// (see ``EncodingNode/writeNested(key:component:_:)``).
final class EncodingState {
  static let kindSlotCount = 64
  /// The largest starting capacity taken from the previous document: one large document must
  /// not make every later small one hold a large buffer (larger documents grow as they are written).
  static let maximumStartCapacity = 64 * 1024

  /// The current call's settings.
  private(set) var options: EncodingOptions
  /// Whether every container keeps its own bytes (the second, order-independent pass).
  let isTree: Bool
  /// Fast mode: changes when a call ends. A node belongs to the call whose generation it carries
  /// (``EncodingNode/isLive``), so an encoder or container kept past its call writes nothing into
  /// a later call that reuses this state.
  @exclusivity(unchecked) private(set) var generation: UInt64 = 0
  /// The output in fast mode. It lives behind a pointer (as does `boxes`) so that the many small
  /// writes cost no dynamic exclusivity check.
  var writer: BSONWriter {
    unsafeAddress { UnsafePointer(writerStorage) }
    unsafeMutableAddress { writerStorage }
  }
  private let writerStorage = UnsafeMutablePointer<BSONWriter>.allocate(capacity: 1)
  /// Fast mode: the node stack. `nodes[0..<depth]` are the open containers and pending values,
  /// outermost first; `nodes[depth..<nodeCount]` are closed nodes, kept for reuse from call to
  /// call (each slot holds its node strongly).
  private var nodes: UnsafeMutablePointer<EncodingNode>
  @exclusivity(unchecked) private var nodeCount = 0
  @exclusivity(unchecked) private var nodeCapacity = 16
  /// Fast mode: the number of open frames.
  @exclusivity(unchecked) private(set) var depth = 0
  /// Fast mode: nodes of the call outside the stack (whose stack slot was given a new node while
  /// something else held them, and detached nodes), kept until the call ends (see the type's note
  /// on lifetimes).
  private var retired: [EncodingNode] = []
  /// Fast mode: boxes of keyed containers, reused from container to container and from call to call.
  var boxes: KeyedEncodingBoxCache {
    unsafeAddress { UnsafePointer(boxesStorage) }
    unsafeMutableAddress { boxesStorage }
  }
  private let boxesStorage = UnsafeMutablePointer<KeyedEncodingBoxCache>.allocate(capacity: 1)
  /// Set in fast mode when a container was used after it was closed.
  @exclusivity(unchecked) var needsTreeMode = false
  /// The first error from an API that cannot throw (`container(keyedBy:)` and the like).
  var error: (any Error)?
  private var cachedUserInfo: [CodingUserInfoKey: Any]?
  /// A small direct-mapped cache in front of the global `encodingKinds`, kept across calls.
  private let kindSlots = UnsafeMutablePointer<EncodingKindSlot>.allocate(capacity: EncodingState.kindSlotCount)
  /// The top-level type of the last fast call and the size of its document, for the next
  /// writer's capacity.
  private var rootType: ObjectIdentifier?
  private var rootSize = 0

  /// A new state, with empty caches and no spare nodes.
  private init(options: EncodingOptions, isTree: Bool) {
    self.options = options
    self.isTree = isTree
    kindSlots.initialize(repeating: EncodingKindSlot(type: nil, kind: .other), count: Self.kindSlotCount)
    writerStorage.initialize(to: BSONWriter(capacity: isTree ? 16 : 256))
    nodes = UnsafeMutablePointer<EncodingNode>.allocate(capacity: isTree ? 0 : nodeCapacity)
    boxesStorage.initialize(to: KeyedEncodingBoxCache())
  }

  /// A state for one tree-mode call.
  static func tree(options: EncodingOptions) -> EncodingState {
    EncodingState(options: options, isTree: true)
  }

  /// A fast-mode state for a call encoding a value of type `root`: the idle one when there is
  /// one (with its nodes and caches), else a new one. Give it back with ``endFast()``.
  static func fast<Root>(options: EncodingOptions, root: Root.Type) -> EncodingState {
    let idle = idleEncodingState.exchange(0, ordering: .acquiringAndReleasing)
    guard idle != 0 else { return EncodingState(options: options, isTree: false) }
    let state = Unmanaged<EncodingState>.fromOpaque(UnsafeRawPointer(bitPattern: idle)!).takeRetainedValue()
    state.options = options
    // The last document of the same type is the best guess of this one's size (rounded up to 64).
    var capacity = 256
    if state.rootType == ObjectIdentifier(root) {
      capacity = max(capacity, (min(state.rootSize, Self.maximumStartCapacity) &+ 63) & ~63)
    }
    state.writer = BSONWriter(capacity: capacity)
    return state
  }

  /// Remembers the size of a finished fast-mode document for the next call of the same type.
  func recordSize<Root>(_ size: Int, of root: Root.Type) {
    rootType = ObjectIdentifier(root)
    rootSize = size
  }

  /// Ends a fast-mode call: its nodes stop being live, the per-call fields are cleared, and the
  /// state is kept for the next call (or, when one is kept already, its reference cycles with its
  /// nodes are broken so that it can go; a node that a container kept past the call still holds
  /// keeps it, see ``KeyedEncodingBoxCache/endCall()``).
  func endFast() {
    generation &+= 1
    depth = 0
    needsTreeMode = false
    error = nil
    cachedUserInfo = nil
    options = EncodingOptions.cleared
    writer = BSONWriter(buffer: Self.placeholderBuffer)
    // First, so that the slots of kept boxes retain their nodes before the state lets go of them.
    boxes.endCall()
    retired.removeAll()
    let address = UInt(bitPattern: Unmanaged.passRetained(self).toOpaque())
    if !idleEncodingState.compareExchange(expected: 0, desired: address, ordering: .acquiringAndReleasing).exchanged {
      nodes.deinitialize(count: nodeCount)
      nodeCount = 0
      if boxes.retainsNodes {
        // Kept boxes: keep the state's reference (taken above) where a later call looks again.
        abandonedStates.withLock { $0.append(address) }
        abandonedCount.add(1, ordering: .relaxed)
      } else {
        Unmanaged<EncodingState>.fromOpaque(UnsafeRawPointer(bitPattern: address)!).release()
      }
    }
    if abandonedCount.load(ordering: .relaxed) != 0 { Self.reclaimAbandoned() }
  }

  /// Lets go of each abandoned state (see `abandonedStates`) whose users have let go of every box
  /// they kept: its slots then let go of their nodes as at the end of a call, and with them of
  /// the state.
  @inline(never)
  static func reclaimAbandoned() {
    abandonedStates.withLock { addresses in
      addresses.removeAll { address in
        let state = Unmanaged<EncodingState>.fromOpaque(UnsafeRawPointer(bitPattern: address)!)
        let free = state._withUnsafeGuaranteedRef { state in
          state.boxes.endCall()
          return !state.boxes.retainsNodes
        }
        guard free else { return false }
        abandonedCount.subtract(1, ordering: .relaxed)
        state.release()
        return true
      }
    }
  }

  /// Whether `state` was let go of with boxes its users kept, and waits for them (for tests).
  static func isAbandoned(_ state: EncodingState) -> Bool {
    let address = UInt(bitPattern: Unmanaged.passUnretained(state).toOpaque())
    return abandonedStates.withLock { $0.contains(address) }
  }

  /// What an idle state's writer holds, so that it keeps no document's bytes alive.
  // nonisolated(unsafe): never written to; a writer holding it is never its only owner, so its
  // first write moves to a buffer of its own (copy on write).
  nonisolated(unsafe) private static let placeholderBuffer = WriteBuffer(capacity: 1)

  deinit {
    writerStorage.deinitialize(count: 1)
    writerStorage.deallocate()
    nodes.deinitialize(count: nodeCount)
    nodes.deallocate()
    kindSlots.deinitialize(count: Self.kindSlotCount)
    kindSlots.deallocate()
    boxes.free()
    boxesStorage.deinitialize(count: 1)
    boxesStorage.deallocate()
  }

  /// The top-level node of this call: in fast mode, the last call's when nothing else kept it.
  func makeRoot() -> EncodingNode {
    if isTree { return EncodingNode(state: self, parent: nil, component: .root, kind: .pending, typeOffset: -1) }
    return push(.pending, parent: nil, retainsParent: true, component: .root, typeOffset: -1).takeUnretainedValue()
  }

  // MARK: - The node stack (fast mode)

  /// The node in slot `index` of the stack, unretained.
  @inline(__always)
  private func stackNode(_ index: Int) -> Unmanaged<EncodingNode> {
    // Safe: `index` < `nodeCount`, so the slot holds a node.
    Unmanaged.fromOpaque(UnsafeRawPointer(nodes + index).load(as: UnsafeRawPointer.self))
  }

  /// Whether slot `index` (< `nodeCount`) of the stack holds `node` (compared in place, without
  /// retaining either).
  @inline(__always)
  private func slot(_ index: Int, holds node: EncodingNode) -> Bool {
    stackNode(index).toOpaque() == Unmanaged.passUnretained(node).toOpaque()
  }

  /// Opens a frame for a node of `kind` on top of the stack and returns the node, unretained
  /// (the state holds it until the call ends). The node is the slot's last one when that one is
  /// free (``isFree(_:)``), else a new one (``placeNewNode(at:)``). With `retainsParent`, `parent`
  /// is held strongly (a node handed to the caller's code); without, it is an
  /// ``CodingPathNode/unownedParent`` and the node is a nested value's (``EncodingNode/isNesting``
  /// until ``endNested(_:at:parent:)``).
  @inline(__always)
  func push(
    _ kind: EncodingNode.Kind, parent: EncodingNode?, retainsParent: Bool, component: CodingPathComponent,
    typeOffset: Int
  ) -> Unmanaged<EncodingNode> {
    let index = depth
    if index >= nodeCount || !isFree(index) { placeNewNode(at: index) }
    let node = stackNode(index)
    node._withUnsafeGuaranteedRef { node in
      if retainsParent {
        node.unownedParent = nil
        if node.parent !== parent { node.parent = parent }
      } else {
        if node.parent != nil { node.parent = nil }
        node.unownedParent = parent.map { Unmanaged.passUnretained($0) }
      }
      node.component = component
      node.kind = kind
      node.typeOffset = typeOffset
      node.start = 0
      node.count = 0
      node.generation = generation
      node.isOpen = true
      node.isNesting = !retainsParent
    }
    depth = index &+ 1
    return node
  }

  /// Whether the node in slot `index` can be given to another value: its nested value has
  /// ended (its `writeNested` may be using it unretained), no box held by its user writes to it
  /// (a box cache slot for a free box lets go of it first), and nothing but the stack retains it.
  @inline(__always)
  private func isFree(_ index: Int) -> Bool {
    let inUse = stackNode(index)._withUnsafeGuaranteedRef { node in
      boxes.release(node)
      return node.isNesting || KeyedEncodingBoxCache.isHeld(node)
    }
    return !inUse && isKnownUniquelyReferenced(&nodes[index])
  }

  /// Puts a new node in slot `index`: the top of the stack (`nodeCount`), or a slot whose node is
  /// not free (that node goes to `retired`); ``push(_:parent:retainsParent:component:typeOffset:)``
  /// then sets it up as it does a reused one.
  @inline(never)
  private func placeNewNode(at index: Int) {
    let node = EncodingNode(state: self, parent: nil, component: .root, kind: .pending, typeOffset: -1)
    if index < nodeCount {
      retired.append(nodes[index])
      nodes[index] = node
      return
    }
    if nodeCount == nodeCapacity {
      let larger = UnsafeMutablePointer<EncodingNode>.allocate(capacity: nodeCapacity * 2)
      larger.moveInitialize(from: nodes, count: nodeCount)
      nodes.deallocate()
      nodes = larger
      nodeCapacity *= 2
    }
    (nodes + nodeCount).initialize(to: node)
    nodeCount &+= 1
  }

  /// Keeps `node`, a node of this fast-mode call outside the stack, until the call ends.
  @inline(never)
  func hold(_ node: EncodingNode) {
    retired.append(node)
  }

  /// Drops the innermost open frame (which is `node`) without writing anything.
  @inline(__always)
  func popInnermost(_ node: EncodingNode) {
    depth &-= 1
    node.isOpen = false
  }

  /// Ends the nested value `node`, pushed with an unretained parent in slot `index`, whose
  /// ``EncodingNode/writeNested(key:component:_:)`` is returning: when anything but the state still
  /// holds it, it now holds `parent` strongly, so that its coding path outlives the stack's reuse
  /// of its parent's slot.
  @inline(__always)
  func endNested(_ node: EncodingNode, at index: Int, parent: EncodingNode) {
    node.isNesting = false
    // A closed node above, with its strong reference to `node`, lets go of it when nothing else holds it.
    let above = index &+ 1
    if above < nodeCount && stackNode(above)._withUnsafeGuaranteedRef({ $0.parent === node }) && isFree(above) {
      stackNode(above)._withUnsafeGuaranteedRef { $0.parent = nil }
    }
    // Still in its slot and free: nothing can read its path any more. (A node that left its
    // slot is in `retired`, and may be held elsewhere.)
    if index < nodeCount && slot(index, holds: node) && isFree(index) {
      return
    }
    if node.parent == nil { node.parent = parent }
  }

  /// How values of static type `T` are encoded; classified once per type and process, and
  /// cached per call (a dynamic cast per value costs a conformance lookup).
  @inline(__always)
  func kind<T>(of type: T.Type) -> EncodingKind {
    let id = ObjectIdentifier(type)
    // Metadata addresses are at least 8-byte aligned: mix the bits above that into a slot index.
    let bits = UInt(bitPattern: id)
    let slot = kindSlots + Int((bits >> 4 ^ bits >> 9) & UInt(EncodingState.kindSlotCount - 1))
    if slot.pointee.type == id { return slot.pointee.kind }
    let kind = Self.sharedKind(type)
    slot.pointee = EncodingKindSlot(type: id, kind: kind)
    return kind
  }

  @inline(never)
  private static func sharedKind<T>(_ type: T.Type) -> EncodingKind {
    if let known = encodingKinds.withLock({ $0[ObjectIdentifier(type)] }) { return known }
    let kind: EncodingKind
    if let primitive = type as? any BSONEncodingPrimitive.Type {
      kind = .primitive(primitive)
    } else if type is any OptionalMarker.Type {
      kind = .optional
    } else {
      kind = .other
    }
    encodingKinds.withLock { $0[ObjectIdentifier(type)] = kind }
    return kind
  }

  /// What `value` encodes as when it is a primitive (`nil` otherwise): the same answer as a
  /// dynamic cast to `BSONEncodingPrimitive`, without one for non-optional types.
  @inline(__always)
  func primitiveEncoding<T: Encodable>(_ value: T, at path: @autoclosure () -> CodingPathRef) throws
    -> PrimitiveEncoding?
  {
    switch kind(of: T.self) {
    case .primitive(let primitive):
      return try primitive.bsonEncoding(of: value, options, at: path())
    case .optional:
      guard let primitive = value as? any BSONEncodingPrimitive else { return nil }
      return try primitive.bsonEncoding(options, at: path())
    case .other:
      return nil
    }
  }

  /// `userInfo` as the `Encoder` protocol wants it.
  var userInfo: [CodingUserInfoKey: Any] {
    if let cachedUserInfo { return cachedUserInfo }
    let info = options.userInfo.mapValues { $0 as Any }
    cachedUserInfo = info
    return info
  }

  /// Records the first error of an API that cannot throw; `encode` throws it at the end.
  func record(_ error: any Error) {
    if self.error == nil { self.error = error }
  }

  /// Makes `node` the innermost open container so that it can be written to. Returns `false`
  /// (and switches to tree mode) when `node` was closed already.
  @inline(__always)
  func prepareWrite(_ node: EncodingNode) -> Bool {
    if isInnermost(node) { return true }
    return prepareWriteSlow(node)
  }

  @inline(never)
  func prepareWriteSlow(_ node: EncodingNode) -> Bool {
    // A node of an earlier call (kept by its user) writes nothing, and does not disturb this call.
    guard node.isLive else { return false }
    guard node.isOpen else {
      needsTreeMode = true
      return false
    }
    while !isInnermost(node) { closeInnermost() }
    return true
  }

  /// Whether `node` is the innermost open frame (compared in place, without retaining it).
  @inline(__always)
  func isInnermost(_ node: EncodingNode) -> Bool {
    depth > 0 && slot(depth &- 1, holds: node)
  }

  /// Closes the innermost open frame: writes its terminator and length, or an empty document for
  /// a value that never encoded anything.
  func closeInnermost() {
    depth &-= 1
    stackNode(depth)._withUnsafeGuaranteedRef { node in
      node.isOpen = false
      switch node.kind {
      case .document, .array: writer.endDocument(node.start)
      case .pending: writer.emptyDocument()  // its type byte is already 0x03
      case .value: break
      }
    }
  }

  /// Closes `node` and everything opened inside it, when it is still open.
  func close(through node: EncodingNode) {
    guard node.isOpen else { return }
    while depth > 0 {
      let wasNode = isInnermost(node)
      closeInnermost()
      if wasNode { return }
    }
  }

  /// Undoes an element whose encoding threw: drops the frames above `depth` and the bytes from
  /// `mark`. Returns `false` when that is impossible because the element's container was closed
  /// meanwhile (out-of-order use); the caller then switches to tree mode.
  func rollBack(to depth: Int, container: EncodingNode, mark: Int) -> Bool {
    guard self.depth >= depth, depth > 0, slot(depth &- 1, holds: container) else {
      needsTreeMode = true
      return false
    }
    while self.depth > depth {
      self.depth &-= 1
      stackNode(self.depth)._withUnsafeGuaranteedRef { $0.isOpen = false }
    }
    writer.truncate(to: mark)
    return true
  }

  /// The finished document in fast mode (closes what is still open).
  func finishFast() -> BSONWriter {
    while depth > 0 { closeInnermost() }
    return writer
  }

  /// The finished document in tree mode: the root's pieces joined.
  func finishTree(_ root: EncodingNode) -> BSONWriter {
    var out = BSONWriter(capacity: 256)
    root.assemble(into: &out)
    return out
  }
}
