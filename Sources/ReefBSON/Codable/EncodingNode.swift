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
