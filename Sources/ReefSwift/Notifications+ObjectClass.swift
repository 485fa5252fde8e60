import Dispatch

// The observe forms of a top-level object whose block's type is left to the compiler: an
// unannotated block of several statements gets its parameter's type before its body is read, so
// Swift takes the bound of `T`. Bound to `Object` here, such a block may pass its change on as an
// `ObjectChange<Object>`, as Realm's tests do; a block that needs the object's own class falls
// back to the form typed by `Self`.

extension Object {
  /// `observe(keyPaths:_:)` for a block whose object is an `Object` (the object's class or a
  /// superclass): Realm's `observe<T>(keyPaths:on:_:)`.
  ///
  /// - Parameters:
  ///   - keyPaths: The properties whose changes notify (nil: all).
  ///   - block: Called after each commit that changed or deleted the object.
  /// - Returns: The token that keeps the observation.
  public func observe<T: Object>(keyPaths: [String]? = nil, _ block: @escaping (ObjectChange<T>) -> Void)
    -> NotificationToken
  {
    requireObserved(as: T.self)
    return observeObject(keyPaths: keyPaths) { block($0.cast(to: T.self)) }
  }

  /// The same with the block called on `queue` (nil: on this `Reef`'s thread).
  ///
  /// - Parameters:
  ///   - keyPaths: The properties whose changes notify (nil: all).
  ///   - queue: The serial queue the block is called on.
  ///   - block: Called after each commit that changed or deleted the object.
  /// - Returns: The token that keeps the observation.
  public func observe<T: Object>(
    keyPaths: [String]? = nil, on queue: DispatchQueue?, _ block: @escaping (ObjectChange<T>) -> Void
  ) -> NotificationToken {
    requireObserved(as: T.self)
    guard let queue else { return observeObject(keyPaths: keyPaths) { block($0.cast(to: T.self)) } }
    return observeObject(keyPaths: keyPaths, on: queue) { block($0.cast(to: T.self)) }
  }
}
