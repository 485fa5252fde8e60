import ReefBSON
import ReefTestSupport
import Testing

@testable import ReefStore

/// Recovery after a restart of the machine (`Specs/store/log.md`), acted out on copies of a
/// store's files (``PowerLossCopy``); the crash test does the same after every kill.
@Suite struct RecoveryTests {
  /// A power loss that lost both of LMDB's meta pages, and the pages written since the
  /// checkpoint: the first opener writes the checkpoint's meta pages back and applies the log's
  /// records (none when the store closed, which checkpoints).
  @Test(arguments: [false, true])
  func aStoreWhoseMetaPagesWereLostRecovers(closed: Bool) throws {
    let directory = TemporaryDirectory()
    let path = directory.store
    do {
      let store = try Store(path: path)
      for index in 0..<10 { try store.collection("c").insert(document(#"{"_id": \#(index)}"#)) }
    }
    // A checkpoint at the transaction of the last insert, then 10 more commits.
    var store: Store? = try Store(path: path)
    for index in 10..<20 { try store?.collection("c").insert(document(#"{"_id": \#(index)}"#)) }
    if closed { store = nil }
    var garbage = SplitMix64(seed: 7)
    let copy = try #require(try PowerLossCopy(of: path, in: directory.path + "/copy", garbage: &garbage))
    #expect(copy.checkpoint > 0)
    let recovered = try Store(path: copy.path)
    #expect(recovered.log?.replayed == (closed ? 0 : 10))
    #expect(try recovered.collection("c").count() == 20)
    withExtendedLifetime(store) {}
  }
}
