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

/// One value being encoded, and, once it asks for a container, that document or array.
///
/// The node is the `Encoder` handed to `encode(to:)`, its single-value container, the storage
/// behind its keyed and unkeyed containers, and its own coding-path node.
final class EncodingNode: CodingPathNode {
  enum Kind {
    /// Nothing encoded yet; closed as an empty document.
    case pending
    case document
    case array
    /// A single value was encoded.
    case value
  }

  let state: EncodingState
  @exclusivity(unchecked) var kind: Kind
  /// The offset of this element's type byte: in `state.writer` in fast mode, in the parent's
  /// `own` bytes in tree mode; -1 for the top-level value.
  @exclusivity(unchecked) var typeOffset: Int
  /// Fast mode: the offset of the length prefix once this is a document or array.
  @exclusivity(unchecked) var start = 0
  /// Fast mode: whether the node is one of the state's open frames (the first `depth` nodes of
  /// its node stack).
  @exclusivity(unchecked) var isOpen = false
  /// Fast mode: whether the nested value the node was pushed for is still being encoded (its
  /// ``writeNested(key:component:_:)`` has not returned), so that the node is not reused even
  /// when it is closed and only the stack retains it (see `EncodingState.isFree(_:)`).
  @exclusivity(unchecked) var isNesting = false
  /// Fast mode: the generation of the call the node belongs to (see ``EncodingState/generation``).
  @exclusivity(unchecked) var generation: UInt64
  /// The number of array elements written.
  @exclusivity(unchecked) var count = 0
  /// Fast mode: the slot of the state's ``KeyedEncodingBoxCache`` that holds this node, or -1.
  @exclusivity(unchecked) var boxSlot = -1
  /// Tree mode: this node's own bytes (elements without the length prefix and terminator, or the
  /// value of a single value). Made on first use, so fast mode never allocates it.
  lazy var own = BSONWriter(capacity: 64)
  /// Tree mode: nested values, each with the offset in `own` where its bytes go.
  var children: [(offset: Int, node: EncodingNode)] = []

  init(state: EncodingState, parent: EncodingNode?, component: CodingPathComponent, kind: Kind, typeOffset: Int) {
    self.state = state
    self.kind = kind
    self.typeOffset = typeOffset
    generation = state.generation
    super.init(parent: parent, component: component)
  }

  /// Whether the node belongs to its state's current call (always, in tree mode).
  @inline(__always) var isLive: Bool { generation == state.generation }

  @inline(__always) var isRoot: Bool { typeOffset < 0 }

  /// The node whose bytes hold this node's header (tree mode).
  var owner: EncodingNode { unsafeDowncast(parent!, to: EncodingNode.self) }

  // MARK: - Elements of a document or array

  /// Writes `type`, `key` and then the value through `value`: one element of this container.
  @inline(__always)
  func writeElement(
    _ type: BSONType, key: String, component: @autoclosure () -> CodingPathComponent,
    _ value: (inout BSONWriter) -> Void
  ) throws {
    let written: Bool
    if state.isTree {
      written = Self.put(type, key, into: &own, value)
    } else {
      guard state.prepareWrite(self) else { return }
      written = Self.put(type, key, into: &state.writer, value)
    }
    if !written { throw invalidKey(key, component()) }
  }

  /// Writes one element whose value is a scalar, in a single reservation of the writer.
  @inline(__always)
  func writeScalar(
    _ type: BSONType, key: String, component: @autoclosure () -> CodingPathComponent, _ value: ScalarValue
  )
    throws
  {
    let written: Bool
    if state.isTree {
      written = own.appendScalarElement(type.rawValue, key, value)
    } else {
      guard state.prepareWrite(self) else { return }
      written = state.writer.appendScalarElement(type.rawValue, key, value)
    }
    if !written { throw invalidKey(key, component()) }
  }

  @inline(__always)
  static func put(_ type: BSONType, _ key: String, into w: inout BSONWriter, _ value: (inout BSONWriter) -> Void)
    -> Bool
  {
    let mark = w.count
    w.byte(type.rawValue)
    guard w.appendKey(key) else {
      w.truncate(to: mark)
      return false
    }
    value(&w)
    return true
  }

  /// Writes an element whose value is encoded by `body` through a child encoder, in place.
  func writeNested(key: String, component: CodingPathComponent, _ body: (EncodingNode) throws -> Void) throws {
    if state.isTree {
      let mark = own.count
      let childCount = children.count
      own.byte(BSONType.document.rawValue)
      guard own.appendKey(key) else {
        own.truncate(to: mark)
        throw invalidKey(key, component)
      }
      let child = EncodingNode(state: state, parent: self, component: component, kind: .pending, typeOffset: mark)
      children.append((own.count, child))
      do {
        try body(child)
      } catch {
        own.truncate(to: mark)
        children.removeSubrange(childCount...)
        throw error
      }
      return
    }
    guard state.prepareWrite(self), !state.needsTreeMode else { return }
    let mark = state.writer.count
    let depth = state.depth
    // A document until the value says otherwise, so that a value that encodes nothing is `{}`.
    state.writer.byte(BSONType.document.rawValue)
    guard state.writer.appendKey(key) else {
      state.writer.truncate(to: mark)
      throw invalidKey(key, component)
    }
    // Neither the child nor its reference to this node is retained: the state holds both until
    // the call ends (see `EncodingState`), `self` is held by this method's caller while `body`
    // runs, and the child is not reused until `endNested` (`isNesting`), even if `body` closes it
    // (by writing into an outer container) and its caller does not retain it. The child's path
    // is read through its reference to this node only while `body` runs, or later by code that
    // kept the child, which `endNested` checks as the child ends: it then holds this node
    // strongly (and this node, held, does the same as it ends).
    try state.push(.pending, parent: self, retainsParent: false, component: component, typeOffset: mark)
      ._withUnsafeGuaranteedRef { child in
        defer { state.endNested(child, at: depth, parent: self) }
        do {
          try body(child)
        } catch {
          // In tree mode the error (if it is real) happens again and is thrown from there.
          if state.needsTreeMode || !state.rollBack(to: depth, container: self, mark: mark) { return }
          throw error
        }
        state.close(through: child)
      }
  }

  /// Creates a nested document or array container as the element `key`.
  func nestedContainerNode(_ wanted: Kind, key: String, component: CodingPathComponent) -> EncodingNode {
    let type: BSONType = wanted == .array ? .array : .document
    if state.isTree {
      let mark = own.count
      own.byte(type.rawValue)
      guard own.appendKey(key) else {
        own.truncate(to: mark)
        state.record(invalidKey(key, component))
        return detachedNode(wanted, component)
      }
      let child = EncodingNode(state: state, parent: self, component: component, kind: wanted, typeOffset: mark)
      children.append((own.count, child))
      return child
    }
    guard state.prepareWrite(self) else { return detachedNode(wanted, component) }
    let mark = state.writer.count
    state.writer.byte(type.rawValue)
    guard state.writer.appendKey(key) else {
      state.writer.truncate(to: mark)
      state.record(invalidKey(key, component))
      return detachedNode(wanted, component)
    }
    let start = state.writer.beginDocument()
    let child = state.push(wanted, parent: self, retainsParent: true, component: component, typeOffset: mark)
      .takeUnretainedValue()
    child.start = start
    return child
  }

  /// Creates a pending value as the element `key`, for `superEncoder()`.
  func superEncoderNode(key: String, component: CodingPathComponent) -> EncodingNode {
    if state.isTree {
      let mark = own.count
      own.byte(BSONType.document.rawValue)
      guard own.appendKey(key) else {
        own.truncate(to: mark)
        state.record(invalidKey(key, component))
        return detachedNode(.pending, component)
      }
      let child = EncodingNode(state: state, parent: self, component: component, kind: .pending, typeOffset: mark)
      children.append((own.count, child))
      return child
    }
    guard state.prepareWrite(self) else { return detachedNode(.pending, component) }
    let mark = state.writer.count
    state.writer.byte(BSONType.document.rawValue)
    guard state.writer.appendKey(key) else {
      state.writer.truncate(to: mark)
      state.record(invalidKey(key, component))
      return detachedNode(.pending, component)
    }
    return state.push(.pending, parent: self, retainsParent: true, component: component, typeOffset: mark)
      .takeUnretainedValue()
  }

  /// A node whose writes go nowhere, for containers that could not be created (the error is
  /// recorded, or tree mode will redo the work).
  private func detachedNode(_ kind: Kind, _ component: CodingPathComponent) -> EncodingNode {
    let node = EncodingNode(state: state, parent: self, component: component, kind: kind, typeOffset: Int.max)
    node.generation = generation  // a node of an earlier call makes nodes of that call
    if !state.isTree && isLive { state.hold(node) }
    return node
  }

  /// Encodes `value` as the element `key` of this container.
  func encodeElement<T: Encodable>(_ value: T, key: String, component: CodingPathComponent) throws {
    if let encoding = try state.primitiveEncoding(value, at: CodingPathRef(parent: self, component: component)) {
      switch encoding {
      case .value(let bson):
        if let scalar = ScalarValue(bson) { return try writeScalar(bson.type, key: key, component: component, scalar) }
        return try writeElement(bson.type, key: key, component: component) { $0.value(bson) }
      case .deferred:
        break
      case .custom(let body):
        return try writeNested(key: key, component: component) { try body($0) }
      }
    }
    try writeNested(key: key, component: component) { try value.encode(to: $0) }
  }

  /// The next array element's key and path component (the count is advanced by the caller on success).
  @inline(__always) var nextIndexKey: String { arrayKey(count) }

  // MARK: - A single value

  /// Writes this pending value as a single BSON value of `type`.
  @inline(__always)
  func writeSingle(_ type: BSONType, _ value: (inout BSONWriter) -> Void) throws {
    guard kind == .pending, !isRoot || type == .document else { throw singleValueError(type) }
    if state.isTree {
      if typeOffset != Int.max && !isRoot { owner.own[typeOffset] = type.rawValue }
      value(&own)
      kind = .value
      return
    }
    // A pending value is always the innermost open frame until it is closed.
    guard state.isInnermost(self) else {
      if isLive { state.needsTreeMode = true }
      return
    }
    if !isRoot { state.writer[typeOffset] = type.rawValue }
    value(&state.writer)
    kind = .value
    state.popInnermost(self)
  }

  /// Encodes `value` as this node's value.
  func encodeSingle<T: Encodable>(_ value: T) throws {
    if let encoding = try state.primitiveEncoding(value, at: CodingPathRef(parent: pathParent, component: component)) {
      switch encoding {
      case .value(let bson):
        return try writeSingle(bson.type) { $0.value(bson) }
      case .deferred:
        break
      case .custom(let body):
        return try body(self)
      }
    }
    try value.encode(to: self)
  }

  /// Turns this pending value into a document or array container (or checks that it is one).
  func becomeContainer(_ wanted: Kind) {
    if kind == wanted { return }
    // A node of an earlier call (kept by its user) changes nothing.
    guard isLive else { return }
    guard kind == .pending else {
      state.record(containerMisuse(wanted))
      return
    }
    if isRoot && wanted == .array {
      state.record(
        EncodingError.invalidValue(
          [Any](),
          EncodingError.Context(
            codingPath: [],
            debugDescription: "BSONEncoder needs a document at the top level (a keyed container), found an unkeyed "
              + "container (an array); wrap the array in a struct or encode it as a field")))
    }
    let type: BSONType = wanted == .array ? .array : .document
    kind = wanted
    if state.isTree {
      if typeOffset != Int.max && !isRoot { owner.own[typeOffset] = type.rawValue }
      return
    }
    guard state.isInnermost(self) else {
      state.needsTreeMode = true
      return
    }
    if !isRoot { state.writer[typeOffset] = type.rawValue }
    start = state.writer.beginDocument()
  }

  // MARK: - Tree mode

  /// Appends this node's finished bytes (tree mode).
  func assemble(into out: inout BSONWriter) {
    switch kind {
    case .value:
      out.append(own, 0..<own.count)
    case .pending:
      out.emptyDocument()
    case .document, .array:
      let start = out.beginDocument()
      var from = 0
      for (offset, child) in children {
        out.append(own, from..<offset)
        child.assemble(into: &out)
        from = offset
      }
      out.append(own, from..<own.count)
      out.endDocument(start)
    }
    children = []  // breaks the parent <-> child reference cycle
  }

  /// Breaks reference cycles after a tree-mode encoding that threw.
  func tearDown() {
    for (_, child) in children { child.tearDown() }
    children = []
  }

  // MARK: - Errors

  func invalidKey(_ key: String, _ component: CodingPathComponent) -> EncodingError {
    EncodingError.invalidValue(
      key,
      EncodingError.Context(
        codingPath: CodingPathNode.path(self, component),
        debugDescription: "BSON keys cannot contain a zero byte, found the key \(String(reflecting: key))"))
  }

  @inline(never)
  func singleValueError(_ type: BSONType) -> EncodingError {
    let message: String
    switch kind {
    case .pending:
      message =
        "BSONEncoder needs a document at the top level (a keyed container), found a single value of BSON type "
        + "\(type.codableName); wrap the value in a struct"
    case .value:
      message = "a single value container already encoded a value here; encode exactly one value"
    case .document, .array:
      message = "a \(kind == .document ? "keyed" : "unkeyed") container was already requested for this value"
    }
    return EncodingError.invalidValue(
      type.codableName, EncodingError.Context(codingPath: codingPath, debugDescription: message))
  }

  func containerMisuse(_ wanted: Kind) -> EncodingError {
    let asked = wanted == .document ? "a keyed container" : "an unkeyed container"
    let had: String
    switch kind {
    case .document: had = "a keyed container"
    case .array: had = "an unkeyed container"
    default: had = "a single value"
    }
    return EncodingError.invalidValue(
      asked,
      EncodingError.Context(codingPath: codingPath, debugDescription: "asked for \(asked) after encoding \(had) here"))
  }
}

/// What a primitive or native BSON value encodes as.
enum PrimitiveEncoding {
  /// This BSON value.
  case value(BSON)
  /// Whatever the type's own `encode(to:)` writes.
  case deferred
  /// Whatever the closure writes through the encoder (a `.custom` strategy).
  case custom((any Encoder) throws -> Void)
}

/// A type that the encoder writes itself instead of calling `encode(to:)`: the standard library's
/// scalars, `Date`/`UUID`/`Data` (through their strategies) and Reef's BSON types.
protocol BSONEncodingPrimitive {
  /// The value to write, given the encoder's options; `path` is the value's coding path, for errors.
  func bsonEncoding(_ options: EncodingOptions, at path: CodingPathRef) throws -> PrimitiveEncoding
}

extension BSONEncodingPrimitive {
  /// ``bsonEncoding(_:at:)`` of `value`, whose type `T` is `Self` (looked up through the kind cache).
  @inline(__always)
  static func bsonEncoding<T>(of value: T, _ options: EncodingOptions, at path: CodingPathRef) throws
    -> PrimitiveEncoding
  {
    // `T` is `Self` (the kind was looked up for `T`), so this cast is a plain copy.
    try unsafeBitCast(value, to: Self.self).bsonEncoding(options, at: path)
  }
}

/// The value of an element that ``BSONWriter/appendScalarElement(_:_:_:)`` writes in one go.
enum ScalarValue {
  /// No value bytes (null).
  case none
  case byte(UInt8)
  case int32(Int32)
  case int64(Int64)
  /// Eight bytes: a double's bit pattern, a timestamp.
  case bits(UInt64)
  case string(String)

  /// The scalar form of the common BSON values, `nil` for the others.
  @inline(__always)
  init?(_ value: BSON) {
    switch value {
    case .double(let d): self = .bits(d.bitPattern)
    case .string(let s): self = .string(s)
    case .bool(let b): self = .byte(b ? 1 : 0)
    case .null: self = .none
    case .int32(let i): self = .int32(i)
    case .int64(let i): self = .int64(i)
    case .datetime(let d): self = .int64(d.millisecondsSinceEpoch)
    default: return nil
    }
  }
}

extension BSONWriter {
  /// Appends a whole element (type byte, key, scalar value) with one reservation. Returns
  /// `false`, writing nothing, when the key contains a zero byte.
  @inline(__always)
  mutating func appendScalarElement(_ type: UInt8, _ key: String, _ value: ScalarValue) -> Bool {
    withUTF8Bytes(of: key) { k -> Bool in
      let n = k.count
      switch value {
      case .string(let text):
        return withUTF8Bytes(of: text) { u in
          // Safe: the reservation covers the header (n + 2), the length (4), the bytes and the zero.
          let total = n &+ 7 &+ u.count
          let p = reserve(total)
          guard Self.storeHeader(p, type, k) else { return false }
          let v = p + (n &+ 2)
          v.storeBytes(of: Int32(truncatingIfNeeded: u.count &+ 1).littleEndian, as: Int32.self)
          if u.count > 0 { (v + 4).copyMemory(from: u.baseAddress!, byteCount: u.count) }
          v.storeBytes(of: 0, toByteOffset: 4 &+ u.count, as: UInt8.self)
          advance(total)
          return true
        }
      case .none:
        guard Self.storeHeader(reserve(n &+ 2), type, k) else { return false }
        advance(n &+ 2)
      case .byte(let b):
        let p = reserve(n &+ 3)
        guard Self.storeHeader(p, type, k) else { return false }
        p.storeBytes(of: b, toByteOffset: n &+ 2, as: UInt8.self)
        advance(n &+ 3)
      case .int32(let i):
        let p = reserve(n &+ 6)
        guard Self.storeHeader(p, type, k) else { return false }
        p.storeBytes(of: i.littleEndian, toByteOffset: n &+ 2, as: Int32.self)
        advance(n &+ 6)
      case .int64(let i):
        let p = reserve(n &+ 10)
        guard Self.storeHeader(p, type, k) else { return false }
        p.storeBytes(of: i.littleEndian, toByteOffset: n &+ 2, as: Int64.self)
        advance(n &+ 10)
      case .bits(let bits):
        let p = reserve(n &+ 10)
        guard Self.storeHeader(p, type, k) else { return false }
        p.storeBytes(of: bits.littleEndian, toByteOffset: n &+ 2, as: UInt64.self)
        advance(n &+ 10)
      }
      return true
    }
  }

  /// Stores a type byte, `key` and its terminator at `p` (which has room for them). Returns
  /// `false` when the key contains a zero byte (the caller then does not advance past them).
  @inline(__always)
  private static func storeHeader(_ p: UnsafeMutableRawPointer, _ type: UInt8, _ key: UnsafeBufferPointer<UInt8>)
    -> Bool
  {
    p.storeBytes(of: type, as: UInt8.self)
    // Safe: the caller reserved room for the type byte, the key and its terminator.
    guard copyNonZeroBytes(to: p + 1, from: UnsafeRawBufferPointer(key)) else { return false }
    p.storeBytes(of: 0, toByteOffset: key.count &+ 1, as: UInt8.self)
    return true
  }

  /// Appends `key` and its terminator. Returns `false` (with the bytes appended) when the key
  /// contains a zero byte, which BSON cannot store in a key.
  @inline(__always)
  mutating func appendKey(_ key: String) -> Bool {
    withUTF8Bytes(of: key) { u -> Bool in
      let n = u.count
      let p = reserve(n &+ 1)
      // Safe: n + 1 bytes were reserved.
      let clean = copyNonZeroBytes(to: p, from: UnsafeRawBufferPointer(u))
      p.storeBytes(of: 0, toByteOffset: n, as: UInt8.self)
      advance(n &+ 1)
      return clean
    }
  }

  /// Appends the 5-byte empty document.
  @inline(__always)
  mutating func emptyDocument() {
    int32(5)
    byte(0)
  }
}

extension BSONType {
  /// The name used in Codable error messages (`int32`, `document`, …).
  var codableName: String {
    switch rawValue {
    case 0x01: "double"
    case 0x02: "string"
    case 0x03: "document"
    case 0x04: "array"
    case 0x05: "binary"
    case 0x06: "undefined"
    case 0x07: "objectId"
    case 0x08: "bool"
    case 0x09: "datetime"
    case 0x0A: "null"
    case 0x0B: "regex"
    case 0x0C: "dbPointer"
    case 0x0D: "javascript"
    case 0x0E: "symbol"
    case 0x0F: "javascriptWithScope"
    case 0x10: "int32"
    case 0x11: "timestamp"
    case 0x12: "int64"
    case 0x13: "decimal128"
    case 0xFF: "minKey"
    case 0x7F: "maxKey"
    default: name
    }
  }
}
