#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A value guarded by a pthread mutex, for the Codable engine's process-wide tables and pools.
///
/// `Synchronization.Mutex` would do the same, but on Linux its lock is not one ThreadSanitizer
/// sees: `make sanitize` reported the accesses it guards as races (two `encodingKinds` lookups on
/// two test threads). ThreadSanitizer intercepts `pthread_mutex_lock`, so these are checked for
/// real. Uncontended, either costs about the same; every use is off the per-value path (a type's
/// first encoding, a decoder's resources taken and given back once per call).
final class Locked<Value>: @unchecked Sendable {
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>
  private var value: Value

  init(_ value: Value) {
    self.value = value
    mutex = .allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    pthread_mutex_init(mutex, nil)
  }

  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deinitialize(count: 1)
    mutex.deallocate()
  }

  /// Runs `body` with the value, the mutex held.
  func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return try body(&value)
  }
}
