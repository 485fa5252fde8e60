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
  var stack: [AnyObject] = []
  /// While the object layer constructs a managed object: its type. Properties then push a
  /// placeholder instead of their initial value, which a managed object never reads.
  var constructingManaged: ObjectIdentifier?
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

  /// For a `@Persisted` initializer while a managed object is constructed: a placeholder's slot
  /// (a managed object reads no initial value). Nil otherwise.
  @usableFromInline static func managedSlot() -> Int? {
    let thread = current
    guard thread.constructingManaged != nil else { return nil }
    thread.stack.append(placeholder)
    return thread.stack.count &- 1
  }

  /// For a `@Persisted` initializer of an unmanaged object: the slot its initial value took.
  @usableFromInline static func pushSlot(_ box: AnyObject) -> Int {
    let thread = current
    thread.stack.append(box)
    return thread.stack.count &- 1
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
