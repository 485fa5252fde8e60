import Testing

@testable import ReefBSON

/// The fast-mode node stack (`EncodingState`) driven directly: a nested value's node is not given
/// to another value while its `writeNested` may still use it unretained, even when the value
/// closed itself and nothing else retains the node (`EncodingNode.isNesting`). Through the public
/// API this shows only if the compiler stops retaining the `any Encoder` it passes to
/// `encode(to:)`, so the end-to-end tests cannot catch its loss.
@Suite struct EncodingStateTests {
  @Test func aNestedValuesNodeIsNotReusedBeforeItEnds() {
    let state = EncodingState.fast(options: EncodingOptions(BSONEncoder()), root: Int.self)
    defer { state.endFast() }
    let root = state.makeRoot()
    // A nested value that closed itself (its frame popped) but has not ended: the stack alone
    // retains its node (compared by address, so that the test holds no reference to it).
    let first = state.push(.pending, parent: root, retainsParent: false, component: .index(0), typeOffset: 0)
      .toOpaque()
    state.closeInnermost()
    let second = state.push(.pending, parent: root, retainsParent: false, component: .index(1), typeOffset: 0)
    #expect(second.toOpaque() != first, "a nesting node was given to the next value")
    // Once that value ends, its node is free again for the next one at the same depth.
    state.closeInnermost()
    second._withUnsafeGuaranteedRef { state.endNested($0, at: 1, parent: root) }
    let third = state.push(.pending, parent: root, retainsParent: false, component: .index(2), typeOffset: 0)
    #expect(third.toOpaque() == second.toOpaque(), "an ended node was not reused")
    state.closeInnermost()
    third._withUnsafeGuaranteedRef { state.endNested($0, at: 1, parent: root) }
  }

  /// A state let go of at the end of its call (another state was idle already) while its user
  /// still held a box of that call is freed once the user lets go of the box and a later call
  /// ends. It used to be kept for ever: the box's slot retains its node, which holds the state
  /// (a cycle that LeakSanitizer reported at the end of `make sanitize`'s run).
  @Test func aStateLetGoWithAKeptBoxIsFreedOnceTheBoxIsLetGo() {
    let options = EncodingOptions(BSONEncoder())
    // Another test's call may take the idle state between the two ends below (the second state
    // is then kept as the idle one): try again.
    for _ in 0..<100 {
      weak var watched: EncodingState?
      var kept: KeyedEncodingContainer<AnyKey>?
      var abandoned = false
      do {
        let idle = EncodingState.fast(options: options, root: Int.self)
        let state = EncodingState.fast(options: options, root: Int.self)
        watched = state
        kept = state.makeRoot().keyedContainer(AnyKey.self)
        idle.endFast()
        state.endFast()
        abandoned = EncodingState.isAbandoned(state)
      }
      #expect(watched != nil, "a state whose box is held was freed")
      #expect(kept != nil)
      kept = nil
      guard abandoned else { continue }
      EncodingState.fast(options: options, root: Int.self).endFast()
      #expect(watched == nil, "the state is still there after its box was let go and a call ended")
      return
    }
    Issue.record("the second state was never let go of in 100 tries")
  }
}
