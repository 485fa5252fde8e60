import ReefBSON
import Testing

@testable import ReefSwift

/// The index sets of `List`, `MutableSet` and `Map` notifications, from two versions of their
/// elements (values without identity).
@Suite struct ElementDiffTests {
  func diff(
    _ old: [BSON], _ new: [BSON], fixed: Set<Int> = [], pairs: Bool = true, modified: Set<Int> = []
  ) -> String {
    let change = ElementDiff(
      old: old, new: new, fixed: fixed, pairs: pairs, stayedModified: { oldIndex, _ in modified.contains(oldIndex) },
      pairModified: { oldIndex, newIndex in old[oldIndex] != new[newIndex] })
    return "d\(change.deletions) i\(change.insertions) m\(change.modifications)"
  }

  @Test func equalValuesAreMatchedByOccurrence() {
    // The second 1 went: the first stays where it is.
    #expect(diff([1, 2, 1, 3], [1, 2, 3]) == "d[2] i[] m[]")
    #expect(diff([1, 1], [1, 1, 1]) == "d[] i[2] m[]")
    // A value moved past others: one deletion and one insertion.
    #expect(diff([1, 2, 3, 4], [2, 3, 1, 4]) == "d[0] i[2] m[]")
  }

  @Test func elementsGoneAndComeBetweenTheSameNeighboursArePairedInLists() {
    #expect(diff([1, 2, 3], [1, 9, 3]) == "d[] i[] m[1]")
    #expect(diff([1, 2, 3], [1, 8, 9, 3]) == "d[] i[2] m[1]")
    // Not in sets and maps.
    #expect(diff([1, 2, 3], [1, 9, 3], pairs: false) == "d[1] i[1] m[]")
    // Elements that kept their place are modified only when the caller says so.
    #expect(diff([1, 2, 3], [1, 2, 3, 4], modified: [0, 2]) == "d[] i[3] m[0, 2]")
  }

  @Test func fixedPositionsKeepTheirElements() {
    // [A, B] -> [B, B]: without the feed's positions, the first B looks kept and A deleted;
    // with position 1 fixed, A was changed in place.
    #expect(diff(["A", "B"], ["B", "B"]) == "d[0] i[1] m[]")
    #expect(diff(["A", "B"], ["B", "B"], fixed: [1]) == "d[] i[] m[0]")
    // A swap across a fixed element: both moved.
    #expect(diff(["a", "b", "c"], ["c", "b", "a"], fixed: [1]) == "d[0, 2] i[0, 2] m[]")
    // A fixed position whose values differ is not fixed.
    #expect(diff(["a", "b"], ["a", "c"], fixed: [1]) == "d[] i[] m[1]")
  }
}
