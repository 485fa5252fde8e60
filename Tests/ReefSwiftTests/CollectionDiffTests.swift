import ReefBSON
import Testing

@testable import ReefSwift

/// The index sets of collection notifications: what left, what came, what moved (a deletion and
/// an insertion) and what changed in place, from two orders of `_id`s.
@Suite struct CollectionDiffTests {
  @Test func theDiffOfTwoOrdersIsMinimal() {
    // Longest run kept: moving one element is one deletion and one insertion.
    let old: [BSON] = [1, 2, 3, 4, 5]
    let moved: [BSON] = [2, 3, 4, 5, 1]
    var change = CollectionDiff(old: old, new: moved, modified: [])
    #expect(change.deletions == [0] && change.insertions == [4] && change.modifications.isEmpty)
    // Reversed: one object stays (the last on the longest run: 1), the others move; a moved
    // object is not also a modification.
    change = CollectionDiff(old: old, new: [5, 4, 3, 2, 1], modified: [1, 3])
    #expect(change.deletions == [1, 2, 3, 4] && change.insertions == [0, 1, 2, 3] && change.modifications == [0])
    change = CollectionDiff(old: old, new: [1, 6, 2, 4], modified: nil)
    #expect(change.deletions == [2, 4] && change.insertions == [1] && change.modifications == [0, 1, 3])
  }
}
