#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What a slot of the construction stack needs to know of its value's type: how to destroy it.
@usableFromInline protocol _SlotValue {
  /// Whether values need no destruction (no references).
  static var isTrivial: Bool { get }
  /// Destroys the value at `pointer`.
  static func destroy(at pointer: UnsafeMutableRawPointer)
}

/// ``_SlotValue`` for values of type `Value`.
@usableFromInline enum SlotValue<Value>: _SlotValue {
  @usableFromInline static var isTrivial: Bool { _isPOD(Value.self) }
  @usableFromInline static func destroy(at pointer: UnsafeMutableRawPointer) {
    pointer.assumingMemoryBound(to: Value.self).deinitialize(count: 1)
  }
}

/// One slot of the construction stack: where its value lies in the byte stack, how much room it
/// takes (a multiple of 8; 0 for the slot of a managed object, which holds no value) and how
/// to destroy it.
@usableFromInline struct SlotInfo {
  @usableFromInline let position: Int
  @usableFromInline let stride: Int
  @usableFromInline let value: any _SlotValue.Type
  @inlinable init(position: Int, stride: Int, value: any _SlotValue.Type) {
    self.position = position
    self.stride = stride
    self.value = value
  }
}

/// Where the values of one class's unmanaged objects lie in their storage, and which need
/// destroying. Made once per class from its first unmanaged instance and never freed.
final class StorageLayout {
  /// The byte offset of each property's value, by ordinal.
  let offsets: [Int]
  /// The bytes an object's storage takes.
  let size: Int
  /// The values that hold references: destroyed with the object.
  private let destroyed: [(offset: Int, value: any _SlotValue.Type)]

  init(slots: UnsafeBufferPointer<SlotInfo>) {
    let base = slots.first?.position ?? 0
    offsets = slots.map { $0.position &- base }
    size = slots.reduce(0) { $0 + $1.stride }
    destroyed = slots.filter { !$0.value.isTrivial }.map { ($0.position &- base, $0.value) }
  }

  /// Destroys the values in an object's storage.
  func destroy(_ storage: UnsafeMutableRawPointer) {
    for (offset, value) in destroyed { value.destroy(at: storage + offset) }
  }
}

/// What `@Persisted` initializers of the objects being constructed on one thread left behind.
///
/// Swift runs a class's property initializers before its base class's `init`, so each
/// `Persisted` pushes its initial value here and remembers the slot and the value's position;
/// `ObjectBase.init` then moves the last *n* slots' bytes (its own properties) into the
/// object's storage, one allocation per object. Objects created inside a property initializer
/// push and pop their own slots first, so the stack stays in step.
///
/// Values are moved bitwise (into the object, and when the stack grows), as Swift moves values
/// of the types `@Persisted` takes. Each slot is aligned to 8 bytes and takes a multiple of 8,
/// so a property's offset from its object's first one is the same in every instance.
@usableFromInline final class ThreadState {
  /// The construction stack, used through a pointer, so that a property initializer pays no
  /// exclusivity check and no copy-on-write check.
  @usableFromInline let slots: UnsafeMutablePointer<Slots>
  @usableFromInline struct Slots {
    @usableFromInline var infos: UnsafeMutablePointer<SlotInfo>
    @usableFromInline var count: Int
    @usableFromInline var capacity: Int
    /// The values, each at its slot's position.
    @usableFromInline var bytes: UnsafeMutableRawPointer
    @usableFromInline var byteCount: Int
    @usableFromInline var byteCapacity: Int
    /// While the object layer constructs a managed object: its type. Properties then take a
    /// slot without a value, which a managed object never reads.
    @usableFromInline var constructingManaged: ObjectIdentifier?
  }
  /// What `ObjectBase.init` needs of each class: its number of `@Persisted` properties and,
  /// once an unmanaged instance was made, its storage layout (copies of the process-wide tables,
  /// read without a lock: one lookup per object constructed).
  var classes = ClassTable<(count: Int, layout: StorageLayout?)>()
  /// The schemas discovered, by class (a copy of the process-wide table, read without a lock).
  var schemas = ClassTable<ObjectSchema>()
  /// The live thread-confined `Reef`s of this thread, by path, held weakly (see `OpenReefs`).
  var openReefs: [String: WeakReef] = [:]
  /// The thread-confined `Reef`s of this thread inside a write transaction, held strongly until
  /// it ends (see `Reef.holdWhileWriting()`).
  var writingReefs: [ObjectIdentifier: Reef] = [:]

  private static let key: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key) { pointer in
      #if canImport(Darwin)
        Unmanaged<ThreadState>.fromOpaque(pointer).release()
      #else
        if let pointer { Unmanaged<ThreadState>.fromOpaque(pointer).release() }
      #endif
    }
    return key
  }()

  init() {
    // Small: the stack grows once per thread to what its deepest construction needs.
    let capacity = 16
    let byteCapacity = 256
    slots = .allocate(capacity: 1)
    slots.initialize(
      to: Slots(
        infos: .allocate(capacity: capacity), count: 0, capacity: capacity,
        bytes: .allocate(byteCount: byteCapacity, alignment: 16), byteCount: 0, byteCapacity: byteCapacity))
  }

  deinit {
    dropSlots(from: 0)
    slots.pointee.infos.deallocate()
    slots.pointee.bytes.deallocate()
    slots.deinitialize(count: 1)
    slots.deallocate()
  }

  /// See ``Slots/constructingManaged``.
  var constructingManaged: ObjectIdentifier? {
    get { slots.pointee.constructingManaged }
    set { slots.pointee.constructingManaged = newValue }
  }

  /// The number of slots taken.
  var slotCount: Int { slots.pointee.count }

  /// For a `@Persisted` initializer: pushes the initial value (`make()`) and returns its slot and
  /// its position in the byte stack. While a managed object is constructed, the slot gets no
  /// value (a managed object reads none, so `make` is not called).
  @inlinable static func push<Value>(_ make: () -> Value) -> (slot: Int, position: Int) {
    current.push(make)
  }

  @inlinable func push<Value>(_ make: () -> Value) -> (slot: Int, position: Int) {
    reefRequire(MemoryLayout<Value>.alignment <= 8, "ReefSwift: \(Value.self) is aligned to more than 8 bytes")
    let slots = self.slots
    if slots.pointee.constructingManaged != nil {
      if slots.pointee.count == slots.pointee.capacity { growSlots() }
      let slot = slots.pointee.count
      let position = slots.pointee.byteCount
      (slots.pointee.infos + slot).initialize(to: SlotInfo(position: position, stride: 0, value: SlotValue<Value>.self))
      slots.pointee.count = slot &+ 1
      return (slot, position)
    }
    // Made before the slot is taken: an initial value may construct objects, which take and
    // give back slots of their own.
    let value = make()
    let stride = max((MemoryLayout<Value>.size &+ 7) & ~7, 8)
    if slots.pointee.count == slots.pointee.capacity { growSlots() }
    if slots.pointee.byteCount &+ stride > slots.pointee.byteCapacity { growBytes(stride) }
    let slot = slots.pointee.count
    let position = slots.pointee.byteCount
    (slots.pointee.bytes + position).initializeMemory(as: Value.self, to: value)
    (slots.pointee.infos + slot).initialize(
      to: SlotInfo(position: position, stride: stride, value: SlotValue<Value>.self))
    slots.pointee.count = slot &+ 1
    slots.pointee.byteCount = position &+ stride
    return (slot, position)
  }

  @usableFromInline func growSlots() {
    let capacity = slots.pointee.capacity * 2
    let infos = UnsafeMutablePointer<SlotInfo>.allocate(capacity: capacity)
    infos.moveInitialize(from: slots.pointee.infos, count: slots.pointee.count)
    slots.pointee.infos.deallocate()
    slots.pointee.infos = infos
    slots.pointee.capacity = capacity
  }

  @usableFromInline func growBytes(_ needed: Int) {
    var capacity = slots.pointee.byteCapacity * 2
    while capacity < slots.pointee.byteCount + needed { capacity *= 2 }
    let bytes = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    // A bitwise move of the values (see the type's comment).
    bytes.copyMemory(from: slots.pointee.bytes, byteCount: slots.pointee.byteCount)
    slots.pointee.bytes.deallocate()
    slots.pointee.bytes = bytes
    slots.pointee.byteCapacity = capacity
  }

  /// Removes the slots from `base` on and moves their values into a new storage, returned with
  /// the position of its first byte in the stack and the class's layout (nil storage for a
  /// class without properties).
  ///
  /// `known` is the class's layout when this thread has it already.
  func takeSlots(from base: Int, of objectClass: ObjectBase.Type, known: StorageLayout?)
    -> (storage: UnsafeMutableRawPointer?, byteBase: Int, layout: StorageLayout?)
  {
    let count = slots.pointee.count &- base
    guard count > 0 else { return (nil, 0, nil) }
    let first = slots.pointee.infos + base
    let byteBase = first.pointee.position
    let size = slots.pointee.byteCount &- byteBase
    let layout = known ?? layout(of: objectClass, slots: UnsafeBufferPointer(start: first, count: count))
    reefRequire(
      layout.size == size, "ReefSwift: the @Persisted properties of \(objectClass) were not initialized in step")
    let storage = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
    storage.copyMemory(from: slots.pointee.bytes + byteBase, byteCount: size)
    first.deinitialize(count: count)
    slots.pointee.count = base
    slots.pointee.byteCount = byteBase
    return (storage, byteBase, layout)
  }

  /// Removes the slots from `base` on, destroying their values.
  func dropSlots(from base: Int) {
    let count = slots.pointee.count &- base
    guard count > 0 else { return }
    let first = slots.pointee.infos + base
    for index in 0..<count where first[index].stride > 0 {
      first[index].value.destroy(at: slots.pointee.bytes + first[index].position)
    }
    slots.pointee.byteCount = first.pointee.position
    first.deinitialize(count: count)
    slots.pointee.count = base
  }

  // MARK: Layouts

  nonisolated(unsafe) private static var layouts: [ObjectIdentifier: StorageLayout] = [:]
  private static let layoutsLock = Lock()

  /// The class's layout from the process-wide table (made from `slots` the first time), kept in
  /// this thread's table too.
  private func layout(of objectClass: ObjectBase.Type, slots: UnsafeBufferPointer<SlotInfo>) -> StorageLayout {
    let key = ObjectIdentifier(objectClass)
    let layout = Self.layoutsLock.withLock {
      if let existing = Self.layouts[key] { return existing }
      let layout = StorageLayout(slots: slots)
      Self.layouts[key] = layout
      return layout
    }
    classes[key]?.layout = layout
    return layout
  }

  /// This thread's state, made on first use.
  @usableFromInline static var current: ThreadState {
    if let pointer = pthread_getspecific(key) {
      return Unmanaged<ThreadState>.fromOpaque(pointer).takeUnretainedValue()
    }
    let state = ThreadState()
    pthread_setspecific(key, Unmanaged.passRetained(state).toOpaque())
    return state
  }
}

/// A table by class, for the lookups made for every object constructed or read: the first
/// classes are found by comparing identities (no hashing), the others in a dictionary.
struct ClassTable<Value> {
  private var keys: [ObjectIdentifier] = []
  private var items: [Value] = []
  private var more: [ObjectIdentifier: Value] = [:]
  /// How many classes are compared before the dictionary is used.
  private static var compared: Int { 16 }

  subscript(key: ObjectIdentifier) -> Value? {
    get {
      for index in keys.indices where keys[index] == key { return items[index] }
      return more.isEmpty ? nil : more[key]
    }
    set {
      if let index = keys.firstIndex(of: key) {
        if let newValue {
          items[index] = newValue
        } else {
          keys.remove(at: index)
          items.remove(at: index)
        }
      } else if keys.count < Self.compared, let newValue {
        keys.append(key)
        items.append(newValue)
      } else {
        more[key] = newValue
      }
    }
  }

  /// Every value, in no particular order.
  var values: [Value] { items + Array(more.values) }
}

/// The calling thread, for the checks that live objects stay on theirs.
struct ThreadID: Equatable {
  let raw: pthread_t
  static var current: ThreadID { ThreadID(raw: pthread_self()) }
  static func == (a: ThreadID, b: ThreadID) -> Bool { pthread_equal(a.raw, b.raw) != 0 }
}
