#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A value of one property of an unmanaged object, kept in the object's side table.
@usableFromInline final class Box<Value> {
  @usableFromInline var value: Value
  @inlinable init(_ value: Value) { self.value = value }
}

/// What `@Persisted` initializers of the objects being constructed on one thread left behind.
///
/// Swift runs a class's property initializers before its base class's `init`, so each
/// `Persisted` pushes its initial value here and remembers the slot; `ObjectBase.init` then
/// takes the last *n* slots (its own properties) as the object's side table. Objects created
/// inside a property initializer push and pop their own slots first, so the stack stays in step.
@usableFromInline final class ThreadState {
  /// The construction stack: retained references, pushed and taken through a pointer, so that
  /// a property initializer pays no exclusivity check and no copy-on-write check.
  private let slots: UnsafeMutablePointer<Slots>
  struct Slots {
    var items: UnsafeMutablePointer<Unmanaged<AnyObject>>
    var count: Int
    var capacity: Int
    /// While the object layer constructs a managed object: its type. Properties then push a
    /// placeholder instead of their initial value, which a managed object never reads.
    var constructingManaged: ObjectIdentifier?
  }
  /// The number of `@Persisted` properties of each class, as `ObjectBase.init` needs it (a
  /// copy of the process-wide table, read without a lock).
  var persistedCounts: [ObjectIdentifier: Int] = [:]
  /// The schemas discovered, by class (a copy of the process-wide table, read without a lock).
  var schemas: [ObjectIdentifier: ObjectSchema] = [:]

  nonisolated(unsafe) static let placeholder = Box<Void>(())

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
    let capacity = 64
    slots = .allocate(capacity: 1)
    slots.initialize(to: Slots(items: .allocate(capacity: capacity), count: 0, capacity: capacity))
  }

  deinit {
    for index in 0..<slots.pointee.count { slots.pointee.items[index].release() }
    slots.pointee.items.deallocate()
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

  /// For a `@Persisted` initializer: the slot its initial value took (`make()`'s box), or, while
  /// a managed object is constructed, the slot of a placeholder (a managed object reads no
  /// initial value, so `make` is not called).
  @usableFromInline static func slot(_ make: () -> AnyObject) -> Int {
    let slots = current.slots
    // Made before the slot is taken: an initial value may construct objects, which take and
    // give back slots of their own.
    let value = slots.pointee.constructingManaged == nil ? Unmanaged.passRetained(make()) : .passRetained(placeholder)
    if slots.pointee.count == slots.pointee.capacity {
      let capacity = slots.pointee.capacity * 2
      let items = UnsafeMutablePointer<Unmanaged<AnyObject>>.allocate(capacity: capacity)
      items.moveInitialize(from: slots.pointee.items, count: slots.pointee.count)
      slots.pointee.items.deallocate()
      slots.pointee.items = items
      slots.pointee.capacity = capacity
    }
    let slot = slots.pointee.count
    (slots.pointee.items + slot).initialize(to: value)
    slots.pointee.count = slot &+ 1
    return slot
  }

  /// Removes the slots from `base` on and returns their values, in order.
  func takeSlots(from base: Int) -> [AnyObject] {
    let count = slots.pointee.count &- base
    let items = slots.pointee.items + base
    let values = [AnyObject](unsafeUninitializedCapacity: count) { buffer, initialized in
      for index in 0..<count { (buffer.baseAddress! + index).initialize(to: items[index].takeRetainedValue()) }
      initialized = count
    }
    slots.pointee.count = base
    return values
  }

  /// Removes the slots from `base` on, dropping their values.
  func dropSlots(from base: Int) {
    for index in base..<slots.pointee.count { slots.pointee.items[index].release() }
    slots.pointee.count = base
  }

  /// This thread's state, made on first use.
  static var current: ThreadState {
    if let pointer = pthread_getspecific(key) {
      return Unmanaged<ThreadState>.fromOpaque(pointer).takeUnretainedValue()
    }
    let state = ThreadState()
    pthread_setspecific(key, Unmanaged.passRetained(state).toOpaque())
    return state
  }
}

/// The calling thread, for the checks that live objects stay on theirs.
struct ThreadID: Equatable {
  let raw: pthread_t
  static var current: ThreadID { ThreadID(raw: pthread_self()) }
  static func == (a: ThreadID, b: ThreadID) -> Bool { pthread_equal(a.raw, b.raw) != 0 }
}
