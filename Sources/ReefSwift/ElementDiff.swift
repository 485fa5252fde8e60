import ReefBSON

/// The difference between two versions of a `List`, `MutableSet` or `Map`, as collection
/// notifications report it: deletions (old indices), insertions (new indices), modifications
/// (old indices), each sorted ascending.
///
/// Elements have no identity but their stored value (a scalar, an embedded object's
/// subdocument, a link's primary key) or, in a map, their key: the k-th occurrence of a value
/// in the new version is the k-th occurrence of it in the old one. Elements found in both keep
/// their place when they are on a longest increasing run of old positions (and agree with the
/// fixed positions); the others moved (a deletion and an insertion). Between two elements that
/// kept their place, the elements that went and those that came are paired in order (for a
/// list): each pair is one element replaced or changed in place, a modification.
struct ElementDiff {
  var deletions: [Int] = []
  var insertions: [Int] = []
  var modifications: [Int] = []

  var isEmpty: Bool { deletions.isEmpty && insertions.isEmpty && modifications.isEmpty }

  /// - Parameters:
  ///   - fixed: positions known to hold the same element in both versions (the change feed
  ///     named no change there, and the length did not change): they keep their place.
  ///   - pairs: whether an element gone and one come between the same neighbours are one
  ///     element changed in place (lists), or unrelated (sets and maps).
  ///   - stayedModified: whether an element that kept its place (old index, new index) is to
  ///     be reported modified (a linked object that changed; a map's value).
  ///   - pairModified: whether a pair (old index, new index) is to be reported modified (with
  ///     key paths, only when the values differ at those paths).
  init(
    old: [BSON], new: [BSON], fixed: Set<Int> = [], pairs: Bool, stayedModified: (Int, Int) -> Bool,
    pairModified: (Int, Int) -> Bool
  ) {
    let fixed = fixed.filter { $0 < old.count && $0 < new.count && old[$0] == new[$0] }
    var newToOld = [Int?](repeating: nil, count: new.count)
    var oldMatched = [Bool](repeating: false, count: old.count)
    for position in fixed {
      newToOld[position] = position
      oldMatched[position] = true
    }
    var oldPositions: [BSON: [Int]] = [:]
    for (index, value) in old.enumerated() where !fixed.contains(index) {
      oldPositions[value, default: []].append(index)
    }
    var used: [BSON: Int] = [:]
    for (index, value) in new.enumerated() where !fixed.contains(index) {
      let occurrence = used[value, default: 0]
      guard let positions = oldPositions[value], occurrence < positions.count else { continue }
      newToOld[index] = positions[occurrence]
      oldMatched[positions[occurrence]] = true
      used[value] = occurrence + 1
    }
    // The elements found in both (but the fixed ones), in the new order.
    let common = new.indices.compactMap { index in
      newToOld[index].flatMap { fixed.contains(index) ? nil : (old: $0, new: index) }
    }
    let increasing = CollectionDiff.longestIncreasing(common.map(\.old))
    let sortedFixed = fixed.sorted()
    var anchors: [(old: Int, new: Int)] = sortedFixed.map { ($0, $0) }
    for (position, item) in common.enumerated() {
      // A fixed position between its old and new places: it moved across it.
      let agrees = !sortedFixed.contains { ($0 < item.old) != ($0 < item.new) }
      if increasing.contains(position) && agrees {
        anchors.append(item)
      } else {
        deletions.append(item.old)
        insertions.append(item.new)
      }
    }
    anchors.sort { $0.new < $1.new }
    for anchor in anchors where stayedModified(anchor.old, anchor.new) { modifications.append(anchor.old) }
    // Between consecutive anchors: what went and what came.
    var previous = (old: -1, new: -1)
    for anchor in anchors + [(old: old.count, new: new.count)] {
      let gone = ((previous.old + 1)..<max(previous.old + 1, anchor.old)).filter { !oldMatched[$0] }
      let came = ((previous.new + 1)..<max(previous.new + 1, anchor.new)).filter { newToOld[$0] == nil }
      let paired = pairs ? min(gone.count, came.count) : 0
      for index in 0..<paired where pairModified(gone[index], came[index]) { modifications.append(gone[index]) }
      deletions += gone.dropFirst(paired)
      insertions += came.dropFirst(paired)
      previous = anchor
    }
    deletions.sort()
    insertions.sort()
    modifications.sort()
  }
}
