import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Where a value is in the decoded document's storage: its type byte and its value bytes.
struct BSONValueRef {
  let type: UInt8
  /// Offset of the value's first byte in the storage.
  let offset: Int
  let length: Int

  /// What a missing `super` key decodes from.
  static let missing = BSONValueRef(type: BSONType.null.rawValue, offset: 0, length: 0)

  @inline(__always) var isNull: Bool { type == BSONType.null.rawValue || type == BSONType.undefined.rawValue }
}

/// A node of a decoding coding path, and the lookup cursor of the keyed container it belongs to.
///
/// Entries live in their decoder's ``PathArena`` for the duration of one `decode` call, so
/// containers can refer to them with a plain pointer (no reference counting, no allocation).
struct PathEntry {
  /// The entry of the enclosing container, or `nil` at the top level.
  let parent: UnsafeMutablePointer<PathEntry>?
  /// This container's key in its parent (made in the parent's call).
  let component: DecodingComponent
  /// The call this entry belongs to, whose key list holds the keys its containers make.
  let call: UnsafeMutablePointer<DecodeCall>
  /// Keyed containers: where the next lookup starts (just after the element found last).
  var cursor: Int
  /// Keyed containers: every element before this offset has its key in ``keyBits``.
  var scanned: Int
  /// Keyed containers: one bit per key seen (``keyBit(_:_:)``), so that once every element was
  /// seen, a lookup of a key that is not there costs no scan.
  var keyBits: UInt64 = 0

  init(
    parent: UnsafeMutablePointer<PathEntry>?, component: DecodingComponent, call: UnsafeMutablePointer<DecodeCall>,
    cursor: Int
  ) {
    self.parent = parent
    self.component = component
    self.call = call
    self.cursor = cursor
    scanned = cursor
  }

  /// The bit of ``keyBits`` for the key of `count` bytes at `key`.
  @inline(__always)
  static func keyBit(_ key: UnsafeRawPointer, _ count: Int) -> UInt64 {
    var h = UInt(bitPattern: count)
    // Safe: count > 0, so the first and last bytes are the key's.
    if count > 0 { h = h &* 31 &+ UInt(key.byte(0)) &* 7 &+ UInt(key.byte(count &- 1)) }
    return 1 &<< (h & 63)
  }
}

/// Where a decoded value sits: its container's path entry and its own key.
struct DecodingPath {
  let parent: UnsafeMutablePointer<PathEntry>?
  let component: DecodingComponent

  /// The keys from the top level down to the value.
  var codingPath: [any CodingKey] { Self.codingPath(parent, component) }

  static func codingPath(_ parent: UnsafeMutablePointer<PathEntry>?, _ component: DecodingComponent)
    -> [any CodingKey]
  {
    // A component is made in the call of the entry it hangs from.
    var keys: [any CodingKey] = []
    if let key = component.codingKey(in: parent?.pointee.call) { keys.append(key) }
    var entry = parent
    while let current = entry {
      let up = current.pointee.parent
      if let key = current.pointee.component.codingKey(in: up?.pointee.call) { keys.append(key) }
      entry = up
    }
    keys.reverse()
    return keys
  }
}

/// Storage for path entries whose addresses never change while they are in use: chunks of
/// entries that are reused from one `decode` call to the next.
struct PathArena {
  private static let chunkSize = 64
  /// Chunks kept between calls; more are freed at the end of a call.
  private static let keptChunks = 16
  private var chunks: [UnsafeMutablePointer<PathEntry>] = []
  private var used = 0

  /// Stores `entry` and returns its address, valid until ``reset()``.
  @inline(__always)
  mutating func push(_ entry: PathEntry) -> UnsafeMutablePointer<PathEntry> {
    let chunk = used / Self.chunkSize
    if chunk == chunks.count { addChunk() }
    let slot = chunks.withUnsafeBufferPointer { $0[chunk] } + used % Self.chunkSize
    slot.initialize(to: entry)
    used += 1
    return slot
  }

  @inline(never)
  private mutating func addChunk() { chunks.append(.allocate(capacity: Self.chunkSize)) }

  /// Destroys every entry (and frees chunks beyond the few kept for reuse).
  mutating func reset() {
    var remaining = used
    for chunk in chunks where remaining > 0 {
      let count = min(remaining, Self.chunkSize)
      chunk.deinitialize(count: count)
      remaining -= count
    }
    used = 0
    while chunks.count > Self.keptChunks { chunks.removeLast().deallocate() }
  }
}

/// Every `DecoderResources` made so far, and those not in use. Resources are never freed once
/// made, so that containers can point into them without reference counting; a container used
/// after its `decode` call has returned is caught by the generation check instead of reading
/// freed memory.
private let resourcePool = Locked<(all: [DecoderResources], idle: [DecoderResources])>(([], []))

/// One idle `DecoderResources`, handed over without a lock (the common case): the address of
/// resources kept alive by `resourcePool.all`, or 0. Idle resources are either here or in
/// `resourcePool.idle`.
private let fastIdleResources = Atomic<UInt>(0)

/// How each type met so far decodes (a type's conformances never change, so this only grows).
private let decodingKinds = Locked<[ObjectIdentifier: DecodingKind]>([:])

/// What changes during a decode call. It lives behind a pointer, so that updating it costs no
/// dynamic exclusivity check.
struct DecodeCall {
  /// The value being decoded.
  var value = BSONValueRef.missing
  /// The value's coding path: its container's entry and its key.
  var parent: UnsafeMutablePointer<PathEntry>?
  var component = DecodingComponent.root
  var arena = PathArena()
  /// Keys that are not trivial, kept for the call's ``DecodingComponent/storedKey(_:)``s.
  var keys: [any CodingKey] = []
  /// The first byte of the document's storage, for ``DecodingComponent/documentKey(offset:count:)``.
  var base: UnsafeRawPointer?
  /// Decoders lent to `superDecoder()`, finished with this one.
  var helpers: [BSONDecoderImpl] = []
  var userInfo: [CodingUserInfoKey: Any]?
  /// Boxes of keyed containers, reused from container to container and from call to call.
  var boxes = KeyedBoxCache()
}

/// One slot of the cache of ``DecodingKind``s.
struct KindSlot {
  var type: ObjectIdentifier?
  var kind: DecodingKind
}

/// The memory a decode call's containers point into: the call's mutable state and path arena,
/// the generation counter, and a cache of how types decode. Pooled and never freed.
final class DecoderResources: @unchecked Sendable {
  // @unchecked Sendable: used by one decode call at a time, handed between calls only through
  // `resourcePool` and `fastIdleResources`.
  let call = UnsafeMutablePointer<DecodeCall>.allocate(capacity: 1)
  /// Changes when a decode call ends; decoders and containers remember the value they were made with.
  let liveGeneration = UnsafeMutablePointer<UInt64>.allocate(capacity: 1)
  /// A small direct-mapped cache in front of the global `decodingKinds`, kept across calls.
  let kindSlots = UnsafeMutablePointer<KindSlot>.allocate(capacity: DecoderResources.kindSlotCount)
  static let kindSlotCount = 32

  private init() {
    call.initialize(to: DecodeCall())
    liveGeneration.initialize(to: 0)
    kindSlots.initialize(repeating: KindSlot(type: nil, kind: .other), count: Self.kindSlotCount)
  }

  /// Resources for a new call, from the pool when some are idle.
  static func acquire() -> DecoderResources {
    let fast = fastIdleResources.exchange(0, ordering: .acquiringAndReleasing)
    if fast != 0 {
      return Unmanaged<DecoderResources>.fromOpaque(UnsafeRawPointer(bitPattern: fast)!).takeUnretainedValue()
    }
    return resourcePool.withLock { pool in
      if let idle = pool.idle.popLast() { return idle }
      let new = DecoderResources()
      pool.all.append(new)
      return new
    }
  }

  /// Ends a call: invalidates its decoders and containers, resets the state and returns the
  /// resources to the pool.
  func release() {
    liveGeneration.pointee &+= 1
    call.pointee.arena.reset()
    call.pointee.helpers = []
    call.pointee.keys.removeAll(keepingCapacity: true)
    call.pointee.base = nil
    call.pointee.userInfo = nil
    call.pointee.value = .missing
    call.pointee.parent = nil
    call.pointee.component = .root
    let address = UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque())
    if fastIdleResources.compareExchange(expected: 0, desired: address, ordering: .acquiringAndReleasing).exchanged {
      return
    }
    resourcePool.withLock { $0.idle.append(self) }
  }
}

/// The `Decoder` of one `BSONDecoder.decode` call, and its single-value container.
///
/// One decoder serves the whole call: decoding a nested value repositions it (``descend``) and
/// puts it back afterwards, so nested structs cost no decoder allocation. Once the call has
/// returned, using the decoder (or any of its containers) traps.
final class BSONDecoderImpl {
  let resources: DecoderResources
  /// The call's mutable state (in `resources`).
  let call: UnsafeMutablePointer<DecodeCall>
  let liveGeneration: UnsafeMutablePointer<UInt64>
  /// The generation of this call.
  let generation: UInt64
  let storage: DocumentStorage
  let bytes: BSONBytes
  let options: DecodingOptions

  init(
    storage: DocumentStorage, options: DecodingOptions, value: BSONValueRef,
    parent: UnsafeMutablePointer<PathEntry>? = nil, component: DecodingComponent = .root
  ) {
    resources = DecoderResources.acquire()
    call = resources.call
    liveGeneration = resources.liveGeneration
    generation = resources.liveGeneration.pointee
    self.storage = storage
    bytes = BSONBytes(base: storage.base)
    self.options = options
    call.pointee.value = value
    call.pointee.parent = parent
    call.pointee.component = component
    call.pointee.base = storage.base
  }

  /// Ends the call (and those of decoders lent to `superDecoder()`).
  func finish() {
    for helper in call.pointee.helpers { helper.finish() }
    resources.release()
  }

  /// Traps when the decoder is used after its call has returned.
  @inline(__always)
  func checkAlive() {
    precondition(
      liveGeneration.pointee == generation,
      "a BSONDecoder decoder was used after the decode(_:from:) call that created it had returned")
  }

  @inline(__always) var base: UnsafeRawPointer { bytes.base }
  @inline(__always) var value: BSONValueRef { call.pointee.value }
  @inline(__always) var parent: UnsafeMutablePointer<PathEntry>? { call.pointee.parent }
  @inline(__always) var component: DecodingComponent { call.pointee.component }

  /// The path of the current value.
  var path: DecodingPath { DecodingPath(parent: parent, component: component) }

  /// A new path entry (a container's node) whose address stays valid for this call.
  @inline(__always)
  func pushEntry(parent: UnsafeMutablePointer<PathEntry>?, component: DecodingComponent, cursor: Int)
    -> UnsafeMutablePointer<PathEntry>
  {
    call.pointee.arena.push(PathEntry(parent: parent, component: component, call: call, cursor: cursor))
  }

  /// A handle for containers: what they read with, without reference counting.
  var handle: DecoderHandle {
    DecoderHandle(
      state: Unmanaged.passUnretained(self), bytes: bytes, liveGeneration: UnsafePointer(liveGeneration),
      generation: generation)
  }

  /// A decoder positioned on `value`, independent of this one (for `superDecoder()`).
  func detached(_ value: BSONValueRef, parent: UnsafeMutablePointer<PathEntry>?, component: DecodingComponent)
    -> BSONDecoderImpl
  {
    let helper = BSONDecoderImpl(storage: storage, options: options, value: value, parent: parent, component: component)
    call.pointee.helpers.append(helper)
    return helper
  }

  /// Runs `body` with this decoder positioned on `value`, then puts it back.
  @inline(__always)
  func descend<R>(
    _ value: BSONValueRef, parent: UnsafeMutablePointer<PathEntry>?, component: DecodingComponent,
    _ body: (BSONDecoderImpl) throws -> R
  ) rethrows -> R {
    let savedValue = call.pointee.value
    let savedParent = call.pointee.parent
    let savedComponent = call.pointee.component
    call.pointee.value = value
    call.pointee.parent = parent
    call.pointee.component = component
    defer {
      call.pointee.value = savedValue
      call.pointee.parent = savedParent
      call.pointee.component = savedComponent
    }
    return try body(self)
  }

  /// `userInfo` as the `Decoder` protocol wants it.
  var userInfo: [CodingUserInfoKey: Any] {
    checkAlive()
    if let cached = call.pointee.userInfo { return cached }
    let info = options.userInfo.mapValues { $0 as Any }
    call.pointee.userInfo = info
    return info
  }

  // MARK: - Dispatch

  /// Decodes a `T` from `value`: primitives and BSON types directly, arrays and `[String: T]`
  /// element by element, anything else through `init(from:)`.
  @inline(__always)
  func decodeValue<T: Decodable>(
    _ type: T.Type, _ value: BSONValueRef, parent: UnsafeMutablePointer<PathEntry>?, component: DecodingComponent
  ) throws -> T {
    try decodeValue(T.self, kind: kind(of: T.self), value, parent: parent, component: component)
  }

  /// Decodes a `T` whose ``DecodingKind`` is known (so that an array classifies its element type once).
  @inline(__always)
  func decodeValue<T: Decodable>(
    _ type: T.Type, kind: DecodingKind, _ value: BSONValueRef, parent: UnsafeMutablePointer<PathEntry>?,
    component: DecodingComponent
  ) throws -> T {
    switch kind {
    case .primitive(let primitive):
      return try decodePrimitive(primitive, as: T.self, value, DecodingPath(parent: parent, component: component))
    case .collection(let collection):
      return try decodeCollection(collection, as: T.self, value, parent: parent, component: component)
    case .other:
      // A view, not the decoder itself: no retain and no conformance lookup per nested value.
      return try descend(value, parent: parent, component: component) { try T(from: BSONDecoderView($0)) }
    }
  }

  private func decodePrimitive<P: BSONDecodingPrimitive, T>(
    _ type: P.Type, as: T.Type, _ value: BSONValueRef, _ path: DecodingPath
  ) throws -> T {
    // `P` is `T` (the kind was looked up for `T`), so this cast is a plain copy.
    unsafeBitCast(try P.decodeBSON(value, in: self, at: path), to: T.self)
  }

  private func decodeCollection<C: BSONCollectionDecodable, T>(
    _ type: C.Type, as: T.Type, _ value: BSONValueRef, parent: UnsafeMutablePointer<PathEntry>?,
    component: DecodingComponent
  ) throws -> T {
    unsafeBitCast(try C.decodeBSON(value, in: self, parent: parent, component: component), to: T.self)
  }

  /// How `type` is decoded; classified once per type and process, and cached per state.
  @inline(__always)
  func kind<T>(of type: T.Type) -> DecodingKind {
    let id = ObjectIdentifier(type)
    // Metadata addresses are at least 8-byte aligned: mix the bits above that into a slot index.
    let bits = UInt(bitPattern: id)
    let slot = resources.kindSlots + Int((bits >> 4 ^ bits >> 9) & UInt(DecoderResources.kindSlotCount - 1))
    if slot.pointee.type == id { return slot.pointee.kind }
    let kind = sharedKind(type)
    slot.pointee = KindSlot(type: id, kind: kind)
    return kind
  }

  @inline(never)
  private func sharedKind<T>(_ type: T.Type) -> DecodingKind {
    if let known = decodingKinds.withLock({ $0[ObjectIdentifier(type)] }) { return known }
    return classify(type)
  }

  private func classify<T>(_ type: T.Type) -> DecodingKind {
    let kind: DecodingKind
    if let primitive = type as? any BSONDecodingPrimitive.Type {
      kind = .primitive(primitive)
    } else if let collection = type as? any BSONCollectionDecodable.Type {
      kind = .collection(collection)
    } else {
      kind = .other
    }
    decodingKinds.withLock { $0[ObjectIdentifier(type)] = kind }
    return kind
  }

  // MARK: - Reading values (forwarded to `bytes`)

  @inline(__always) func pointer(_ value: BSONValueRef) -> UnsafeRawPointer { bytes.pointer(value) }
  @inline(__always) func element(at p: Int, end: Int) -> (type: UInt8, keyLength: Int, value: Int, length: Int) {
    bytes.element(at: p, end: end)
  }
  func elementCount(_ value: BSONValueRef) -> Int { bytes.elementCount(value) }
  @inline(__always) func bool(_ value: BSONValueRef, _ path: @autoclosure () -> DecodingPath) throws -> Bool {
    try bytes.bool(value, path())
  }
  @inline(__always) func string(_ value: BSONValueRef, _ path: @autoclosure () -> DecodingPath) throws -> String {
    try bytes.string(value, path())
  }
  @inline(__always) func integer<I: FixedWidthInteger>(
    _ type: I.Type, _ value: BSONValueRef, _ path: @autoclosure () -> DecodingPath
  ) throws -> I {
    try bytes.integer(type, value, path())
  }
  @inline(__always) func double(_ value: BSONValueRef, _ path: @autoclosure () -> DecodingPath) throws -> Double {
    try bytes.double(value, path())
  }
  @inline(__always) func float(_ value: BSONValueRef, _ path: @autoclosure () -> DecodingPath) throws -> Float {
    try bytes.float(value, path())
  }
  func number(_ value: BSONValueRef, _ type: Any.Type, _ path: @autoclosure () -> DecodingPath) throws -> Double {
    try bytes.number(value, type, path())
  }
  func mismatch(_ type: Any.Type, _ expected: String, _ value: BSONValueRef, _ path: DecodingPath) -> DecodingError {
    bytes.mismatch(type, expected, value, path)
  }
  func corrupted(_ message: String, _ path: DecodingPath) -> DecodingError { bytes.corrupted(message, path) }

  /// The value as a `BSON`.
  func bson(_ value: BSONValueRef) -> BSON {
    BSON.read(type: BSONType(rawValue: value.type), storage: storage, offset: value.offset, length: value.length)
  }

  /// A view of the embedded document or array `value`.
  func document(_ value: BSONValueRef) -> Document {
    Document(storage: storage, start: value.offset, length: value.length)
  }
}

/// Reads values from a validated document's bytes. Plain data, so containers can hold it and read
/// without touching any reference count.
struct BSONBytes {
  let base: UnsafeRawPointer

  /// The first byte of `value`. Safe: offsets come from walking a validated document.
  @inline(__always) func pointer(_ value: BSONValueRef) -> UnsafeRawPointer { base + value.offset }

  /// The type byte, key length, value offset and value length of the element at `p`, in the
  /// document or array whose terminating zero is at `end`. The key's end is found eight bytes at
  /// a time inline (no `strlen` call).
  @inline(__always)
  func element(at p: Int, end: Int) -> (type: UInt8, keyLength: Int, value: Int, length: Int) {
    // Safe: validated documents terminate every key with a zero byte before the document's end,
    // and every value's length fits before it.
    let type = base.byte(p)
    let keyEnd = keyTerminator(base, from: p &+ 1, end: end)
    let value = keyEnd &+ 1
    return (type, keyEnd &- p &- 1, value, BSON.valueLength(type: type, in: base, at: value, end: end))
  }

  /// The number of elements of the document or array `value`.
  func elementCount(_ value: BSONValueRef) -> Int {
    // Safe: offsets from a validated document; its elements end at its terminating zero.
    let end = value.offset &+ value.length &- 1
    var p = value.offset &+ 4
    var count = 0
    while p < end {
      let element = element(at: p, end: end)
      p = element.value &+ element.length
      count &+= 1
    }
    return count
  }

  @inline(__always)
  func bool(_ value: BSONValueRef, _ path: @autoclosure () -> DecodingPath) throws -> Bool {
    guard value.type == BSONType.bool.rawValue else { throw mismatch(Bool.self, "bool", value, path()) }
    return pointer(value).byte(0) != 0
  }

  @inline(__always)
  func string(_ value: BSONValueRef, _ path: @autoclosure () -> DecodingPath) throws -> String {
    guard value.type == BSONType.string.rawValue || value.type == BSONType.symbol.rawValue else {
      throw mismatch(String.self, "string", value, path())
    }
    let p = pointer(value)
    // Safe: a validated string's length prefix counts its bytes and the terminator (at least 1).
    return String(decoding: UnsafeRawBufferPointer(start: p + 4, count: Int(p.int32LE(0)) &- 1), as: UTF8.self)
  }

  @inline(__always)
  func integer<I: FixedWidthInteger>(
    _ type: I.Type, _ value: BSONValueRef, _ path: @autoclosure () -> DecodingPath
  ) throws -> I {
    let p = pointer(value)
    let result: I?
    switch value.type {
    case BSONType.int32.rawValue: result = I(exactly: p.int32LE(0))
    case BSONType.int64.rawValue: result = I(exactly: p.int64LE(0))
    case BSONType.double.rawValue: result = I(exactly: Double(bitPattern: p.uint64LE(0)))
    default: throw mismatch(I.self, "int32, int64 or double", value, path())
    }
    guard let result else { throw unrepresentable(I.self, value, path()) }
    return result
  }

  @inline(__always)
  func double(_ value: BSONValueRef, _ path: @autoclosure () -> DecodingPath) throws -> Double {
    let p = pointer(value)
    switch value.type {
    case BSONType.double.rawValue: return Double(bitPattern: p.uint64LE(0))
    case BSONType.int32.rawValue: return Double(p.int32LE(0))
    case BSONType.int64.rawValue:
      guard let d = Double(exactly: p.int64LE(0)) else { throw unrepresentable(Double.self, value, path()) }
      return d
    default: throw mismatch(Double.self, "double, int32 or int64", value, path())
    }
  }

  @inline(__always)
  func float(_ value: BSONValueRef, _ path: @autoclosure () -> DecodingPath) throws -> Float {
    let p = pointer(value)
    let result: Float?
    switch value.type {
    case BSONType.double.rawValue:
      let d = Double(bitPattern: p.uint64LE(0))
      result = d.isFinite && abs(d) > Double(Float.greatestFiniteMagnitude) ? nil : Float(d)
    case BSONType.int32.rawValue: result = Float(exactly: p.int32LE(0))
    case BSONType.int64.rawValue: result = Float(exactly: p.int64LE(0))
    default: throw mismatch(Float.self, "double, int32 or int64", value, path())
    }
    guard let result else { throw unrepresentable(Float.self, value, path()) }
    return result
  }

  /// Any number as a `Double`, rounding int64s beyond 2^53 (for date strategies).
  func number(_ value: BSONValueRef, _ type: Any.Type, _ path: @autoclosure () -> DecodingPath) throws -> Double {
    let p = pointer(value)
    switch value.type {
    case BSONType.double.rawValue: return Double(bitPattern: p.uint64LE(0))
    case BSONType.int32.rawValue: return Double(p.int32LE(0))
    case BSONType.int64.rawValue: return Double(p.int64LE(0))
    default: throw mismatch(type, "int32, int64 or double", value, path())
    }
  }

  // MARK: - Errors

  /// A type mismatch: `type` wanted one of the BSON types in `expected`, `value` has another.
  @inline(never)
  func mismatch(_ type: Any.Type, _ expected: String, _ value: BSONValueRef, _ path: DecodingPath) -> DecodingError {
    DecodingError.typeMismatch(
      type,
      DecodingError.Context(
        codingPath: path.codingPath,
        debugDescription:
          "Expected to decode \(type) from BSON \(expected), but found BSON "
          + BSONType(rawValue: value.type).codableName
          + (value.isNull ? " (use an optional for values that can be null)" : "")))
  }

  /// A number of the right BSON type whose value `type` cannot hold exactly.
  @inline(never)
  func unrepresentable(_ type: Any.Type, _ value: BSONValueRef, _ path: DecodingPath) -> DecodingError {
    let found: String
    switch value.type {
    case BSONType.int32.rawValue: found = "int32 \(pointer(value).int32LE(0))"
    case BSONType.int64.rawValue: found = "int64 \(pointer(value).int64LE(0))"
    default: found = "double \(Double(bitPattern: pointer(value).uint64LE(0)))"
    }
    return DecodingError.typeMismatch(
      type,
      DecodingError.Context(
        codingPath: path.codingPath,
        debugDescription: "Expected to decode \(type), but found BSON \(found), which \(type) cannot represent exactly")
    )
  }

  /// Malformed content for a strategy (an ISO 8601 string that does not parse, a bad UUID).
  @inline(never)
  func corrupted(_ message: String, _ path: DecodingPath) -> DecodingError {
    DecodingError.dataCorrupted(DecodingError.Context(codingPath: path.codingPath, debugDescription: message))
  }
}

/// What a container keeps of its decoder: plain data, so that the standard library's container
/// box can copy it without reference counting.
struct DecoderHandle {
  /// The decoder, not retained: it lives as long as its call, and `checkAlive()` is called before
  /// every use.
  let state: Unmanaged<BSONDecoderImpl>
  let bytes: BSONBytes
  let liveGeneration: UnsafePointer<UInt64>
  /// The generation of the call that made the container.
  let generation: UInt64

  /// Traps when a container made during an earlier decode call is used now.
  @inline(__always)
  func checkAlive() {
    precondition(
      liveGeneration.pointee == generation,
      "a BSONDecoder container was used after the decode(_:from:) call that created it had returned")
  }

  /// Runs `body` with the decoder, without retaining it. Call `checkAlive()` first.
  @inline(__always)
  func withState<R>(_ body: (BSONDecoderImpl) throws -> R) rethrows -> R {
    try state._withUnsafeGuaranteedRef(body)
  }
}

/// How the decoder reads a type.
enum DecodingKind: @unchecked Sendable {  // @unchecked: it holds only metatypes
  /// Read directly from the bytes.
  case primitive(any BSONDecodingPrimitive.Type)
  /// An array or `[String: T]`, read element by element.
  case collection(any BSONCollectionDecodable.Type)
  /// Through the type's `init(from:)`.
  case other
}
