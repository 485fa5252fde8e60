#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Starts a POSIX thread that runs `body` (which it keeps alive until it returns), for Reef's
/// modules' own background threads; nil when the thread cannot be created.
@_spi(ReefInternal)
public func startThread(_ body: @escaping () -> Void) -> pthread_t? {
  final class Box {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
  }
  let context = Unmanaged.passRetained(Box(body)).toOpaque()
  var created = pthread_t()
  #if canImport(Glibc)
    let code = pthread_create(
      &created, nil,
      { context in
        Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
        return nil
      }, context)
  #else
    let code = pthread_create(
      &created, nil,
      { context in
        Unmanaged<Box>.fromOpaque(context).takeRetainedValue().body()
        return nil
      }, context)
  #endif
  guard code == 0 else {
    Unmanaged<Box>.fromOpaque(context).release()
    return nil
  }
  return created
}
