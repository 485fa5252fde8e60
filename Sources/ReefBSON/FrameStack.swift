/// A stack of frames for the walks that would otherwise recurse once per level of nesting
/// (validation, Extended JSON output): on the caller's stack for the first levels, on the heap
/// past them, so that a deep document costs heap, never the thread's stack.
struct FrameStack<Frame> {
  private(set) var frames: UnsafeMutablePointer<Frame>
  private var capacity: Int
  /// The number of frames on the stack.
  var count = 0
  /// Whether `frames` was allocated here (and is deallocated by ``release()``).
  private var onHeap = false

  /// The number of frames kept on the caller's stack by ``withFrameStack(of:_:)``: as many as fit
  /// in 1 KiB, since Swift puts a larger temporary buffer on the heap (a malloc per walk).
  static var framesOnStack: Int { max(2, 1024 / MemoryLayout<Frame>.stride) }

  init(_ buffer: UnsafeMutableBufferPointer<Frame>) {
    frames = buffer.baseAddress!
    capacity = buffer.count
  }

  /// The innermost frame; the stack must not be empty.
  @inline(__always)
  var top: UnsafeMutablePointer<Frame> {
    // Safe: callers check count > 0.
    frames + (count &- 1)
  }

  @inline(__always)
  mutating func push(_ frame: Frame) {
    if count == capacity { grow() }
    // Safe: count < capacity after grow().
    (frames + count).initialize(to: frame)
    count &+= 1
  }

  /// Removes the innermost frame; the stack must not be empty.
  @inline(__always)
  mutating func pop() {
    count &-= 1
    // Safe: the frame at count was initialized by push.
    _ = (frames + count).move()
  }

  @inline(never)
  private mutating func grow() {
    let bigger = UnsafeMutablePointer<Frame>.allocate(capacity: capacity &* 2)
    bigger.moveInitialize(from: frames, count: count)
    if onHeap { frames.deallocate() }
    frames = bigger
    capacity &*= 2
    onHeap = true
  }

  /// Deinitializes the frames left and frees the heap memory, if any.
  mutating func release() {
    frames.deinitialize(count: count)
    count = 0
    if onHeap { frames.deallocate() }
    onHeap = false
  }
}

/// Runs `body` with an empty ``FrameStack`` whose first frames are on the caller's stack, and
/// releases it afterwards.
@inline(__always)
func withFrameStack<Frame, R, E: Error>(
  of: Frame.Type, _ body: (inout FrameStack<Frame>) throws(E) -> R
) throws(E) -> R {
  try withUnsafeTemporaryAllocation(of: Frame.self, capacity: FrameStack<Frame>.framesOnStack) {
    (buffer) throws(E) -> R in
    var stack = FrameStack(buffer)
    defer { stack.release() }
    return try body(&stack)
  }
}
