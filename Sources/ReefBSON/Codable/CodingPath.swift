/// One step of a coding path: the key of a document element or the index of an array element.
enum CodingPathComponent {
  /// The top-level value, which has no key.
  case root
  /// A key of a trivial type of at most eight bytes (a synthesized `CodingKeys` enum): its type and
  /// its bytes, so that copying the component copies no existential and calls no value witness.
  case trivialKey(any CodingKey.Type, UInt64)
  /// Any other key.
  case anyKey(any CodingKey)
  case index(Int)

  /// The component for `key`: its bytes when its type is trivial and small, else the key itself.
  @inline(__always)
  static func key<K: CodingKey>(_ key: K) -> CodingPathComponent {
    guard let bits = trivialBits(key) else { return .anyKey(key) }
    return .trivialKey(K.self, bits)
  }

  /// The bytes of `key` when its type is trivial and at most eight bytes (as in a ``trivialKey(_:_:)``), else `nil`.
  @inline(__always)
  static func trivialBits<K: CodingKey>(_ key: K) -> UInt64? {
    guard _isPOD(K.self) && MemoryLayout<K>.size <= MemoryLayout<UInt64>.size else { return nil }
    var bits: UInt64 = 0
    // Safe: `K` is trivial and fits in the eight bytes of `bits`.
    withUnsafeMutableBytes(of: &bits) { $0.storeBytes(of: key, as: K.self) }
    return bits
  }

  /// The component as a coding key; `nil` for the root.
  var codingKey: (any CodingKey)? {
    switch self {
    case .root: nil
    case .trivialKey(let type, let bits): Self.load(type, bits)
    case .anyKey(let key): key
    case .index(let index): BSONCodingKey(index: index)
    }
  }

  /// The key of type `type` stored in `bits` by ``trivialBits(_:)``.
  static func load<K: CodingKey>(_ type: K.Type, _ bits: UInt64) -> any CodingKey {
    // Safe: `bits` holds a `K` (trivial, at most eight bytes) written by `trivialBits(_:)`.
    withUnsafeBytes(of: bits) { $0.load(as: K.self) }
  }
}

/// One step of a decoding coding path. Unlike ``CodingPathComponent`` it is trivial, so the
/// decoder copies it (into path entries, around every nested value) as plain bits: a key that is
/// not trivial is kept in its decode call's ``DecodeCall/keys``, and a dictionary key is read back
/// from the document's bytes when a path is made (for an error).
enum DecodingComponent {
  /// The top-level value, which has no key.
  case root
  /// A key of a trivial type of at most eight bytes (see ``CodingPathComponent/trivialKey(_:_:)``).
  case trivialKey(any CodingKey.Type, UInt64)
  /// The key at this index of the call's ``DecodeCall/keys``.
  case storedKey(Int)
  case index(Int)
  /// A key in the document (of a `[String: T]`): the offset of its first byte and its length.
  case documentKey(offset: Int, count: Int)

  /// The component for `key`, made in `call` (whose key list keeps a key that is not trivial).
  @inline(__always)
  static func key<K: CodingKey>(_ key: K, in call: UnsafeMutablePointer<DecodeCall>) -> DecodingComponent {
    guard let bits = CodingPathComponent.trivialBits(key) else { return stored(key, in: call) }
    return .trivialKey(K.self, bits)
  }

  @inline(never)
  private static func stored(_ key: any CodingKey, in call: UnsafeMutablePointer<DecodeCall>) -> DecodingComponent {
    call.pointee.keys.append(key)
    return .storedKey(call.pointee.keys.count &- 1)
  }

  /// The component as a coding key (`nil` for the root); `call` is the call the component was
  /// made in (its parent entry's), `nil` only for the root.
  func codingKey(in call: UnsafeMutablePointer<DecodeCall>?) -> (any CodingKey)? {
    switch self {
    case .root: return nil
    case .trivialKey(let type, let bits): return CodingPathComponent.load(type, bits)
    case .storedKey(let index): return call?.pointee.keys[index]
    case .index(let index): return BSONCodingKey(index: index)
    case .documentKey(let offset, let count):
      guard let base = call?.pointee.base else { return nil }
      // Safe: the key's bytes lie in the call's validated document, which outlives the call.
      return BSONCodingKey(
        stringValue: String(decoding: UnsafeRawBufferPointer(start: base + offset, count: count), as: UTF8.self))
    }
  }
}

/// A node of an encoding coding path, built lazily: each container knows its parent and its own
/// key, and the `[CodingKey]` array is only made when someone asks for it (usually for an error).
/// (The decoder keeps its path in `PathEntry`s instead.)
class CodingPathNode {
  /// The node of the enclosing container, or `nil` at the top level. (Variable only so that
  /// the encoder can reuse a node it has finished with; like the encoder's other per-node fields
  /// it is only touched by the one encode call that owns it, so the dynamic exclusivity check of
  /// every assignment is left out.)
  @exclusivity(unchecked) final var parent: CodingPathNode?
  /// The node of the enclosing container, not retained, when `parent` is `nil` and something
  /// else keeps that node alive while this node's path can be read (the encoder's node stack,
  /// see `EncodingState`); `nil` otherwise.
  @exclusivity(unchecked) final var unownedParent: Unmanaged<CodingPathNode>?
  /// This node's key in its parent.
  @exclusivity(unchecked) final var component: CodingPathComponent

  init(parent: CodingPathNode?, component: CodingPathComponent) {
    self.parent = parent
    self.component = component
  }

  /// The node of the enclosing container (`parent` or `unownedParent`), or `nil` at the top level.
  final var pathParent: CodingPathNode? { parent ?? unownedParent?.takeUnretainedValue() }

  /// The keys from the top level down to this node.
  final var codingPath: [any CodingKey] { CodingPathNode.path(pathParent, component) }

  /// The path of a value whose parent is `parent` and whose key is `component`.
  static func path(_ parent: CodingPathNode?, _ component: CodingPathComponent) -> [any CodingKey] {
    var keys: [any CodingKey] = []
    if let key = component.codingKey { keys.append(key) }
    var node = parent
    while let current = node {
      if let key = current.component.codingKey { keys.append(key) }
      node = current.pathParent
    }
    keys.reverse()
    return keys
  }
}

/// Where a value being encoded sits: its parent node and its key, without allocating a node for it.
struct CodingPathRef {
  let parent: CodingPathNode?
  let component: CodingPathComponent

  /// The keys from the top level down to the value.
  var codingPath: [any CodingKey] { CodingPathNode.path(parent, component) }
}

/// A coding key for array indices, dictionary keys and `super`.
struct BSONCodingKey: CodingKey {
  let stringValue: String
  let intValue: Int?

  init(stringValue: String) {
    self.stringValue = stringValue
    self.intValue = nil
  }

  init(intValue: Int) {
    self.stringValue = String(intValue)
    self.intValue = intValue
  }

  /// The key of array element `index`, whose string value is the decimal index as in BSON.
  init(index: Int) {
    self.stringValue = arrayKey(index)
    self.intValue = index
  }

  /// The key `superEncoder()` and `superDecoder()` use.
  static let `super` = BSONCodingKey(stringValue: "super")
}
