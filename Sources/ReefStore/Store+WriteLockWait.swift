extension Store {
  /// Begins the write transaction if no other writer of this process holds the store's write
  /// lock now; returns nil, without waiting, when one does. For callers that must not block
  /// (an actor's executor, a queue): wait with ``waitUntilWriteLockIsFree()`` on a thread of
  /// their own, then try again.
  ///
  /// End the transaction on the thread that began it. A writer of another process is still
  /// waited for inside LMDB (its lock is in the lock file, shared between processes).
  /// - Throws: ``StoreError/Kind/readOnly`` for a read-only store; what beginning LMDB's
  ///   transaction throws.
  public func beginWriteIfAvailable() throws(StoreError) -> Transaction? {
    guard !options.readOnly else { throw StoreError(.readOnly, "the store \(path) is open read-only") }
    guard writeLock.tryLock() else { return nil }
    return try beginWriteHoldingLock()
  }

  /// Blocks the calling thread until no writer of this process holds the store's write lock
  /// (another may take it again at once: ``beginWriteIfAvailable()`` says).
  public func waitUntilWriteLockIsFree() {
    writeLock.lock()
    writeLock.unlock()
  }
}
