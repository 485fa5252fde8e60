import Foundation
import ReefSwift
import Testing

/// A model that links to its own type, by a link and in a list.
final class CycleNode: Object {
  @Persisted var name = ""
  @Persisted var next: CycleNode?
  @Persisted var children: List<CycleNode>
}

/// Object graphs with cycles: an object whose list holds itself, two objects that link to each
/// other. Describing them ends (at Realm's depth), and adding them stores each object once.
@Suite struct CyclicGraphTests {
  /// The lines of `text` that hold `part`.
  private func lines(of text: String, containing part: String) -> [Substring] {
    text.split(separator: "\n", omittingEmptySubsequences: false).filter { $0.contains(part) }
  }

  @Test func anObjectWhoseListHoldsItselfIsDescribedToRealmsDepth() throws {
    let node = CycleNode()
    node.name = "loop"
    node.children.append(node)
    // The object, its list, the object in it, that one's list, the object in it: five levels;
    // the last object's list is not described.
    let check = { (description: String) in
      #expect(self.lines(of: description, containing: "CycleNode {").count == 3, "\(description)")
      #expect(self.lines(of: description, containing: "List<CycleNode> <0x").count == 2, "\(description)")
      #expect(
        self.lines(of: description, containing: "<Maximum depth exceeded>") == [
          "\t\t\t\t\tchildren = <Maximum depth exceeded>;"
        ], "\(description)")
    }
    check(node.description)
    let (reef, _) = try openReef()
    try reef.write { reef.add(node) }
    #expect(node.children.first?.isSameObject(as: node) == true)
    check(node.description)
    check(reef.objects(CycleNode.self)[0].description)
  }

  @Test func objectsThatLinkToEachOtherAreDescribedToRealmsDepth() throws {
    let first = CycleNode()
    let second = CycleNode()
    first.next = second
    second.next = first
    // Five objects, each the next of the one above; the fifth's link and list are not
    // described.
    let check = { (description: String) in
      #expect(self.lines(of: description, containing: "CycleNode {").count == 5, "\(description)")
      #expect(
        self.lines(of: description, containing: "<Maximum depth exceeded>") == [
          "\t\t\t\t\tnext = <Maximum depth exceeded>;", "\t\t\t\t\tchildren = <Maximum depth exceeded>;",
        ], "\(description)")
    }
    check(first.description)
    let (reef, _) = try openReef()
    try reef.write { reef.add(first) }
    check(first.description)
    check(String(describing: reef.objects(CycleNode.self).first))
  }

  @Test func aCollectionIsTheFirstLevelOfItsDescription() throws {
    let (reef, _) = try openReef()
    let node = CycleNode()
    node.children.append(node)
    try reef.write { reef.add(node) }
    // The results, the object, its list, the object in it, that one's list: five levels.
    let description = reef.objects(CycleNode.self).description
    #expect(lines(of: description, containing: "CycleNode {").count == 2, "\(description)")
    #expect(
      lines(of: description, containing: "<Maximum depth exceeded>") == ["\t\t\t\t\t[0] <Maximum depth exceeded>"],
      "\(description)")
  }

  @Test func addingAGraphWithACycleManagesEveryObjectOfIt() throws {
    let (reef, _) = try openReef()
    weak var weakFirst: CycleNode?
    weak var weakSecond: CycleNode?
    do {
      let first = CycleNode()
      first.name = "first"
      let second = CycleNode(value: ["second", first, [first]])
      first.next = second
      first.children.append(second)
      weakFirst = first
      weakSecond = second
      try reef.write { reef.add(first) }
      #expect(first.reef === reef)
      #expect(second.reef === reef)
      #expect(first.next?.name == "second")
      #expect(second.next?.name == "first")
      #expect(first.children.map(\.name) == ["second"])
      #expect(second.children.map(\.name) == ["first"])
    }
    #expect(weakFirst == nil, "a managed object holds no unmanaged references")
    #expect(weakSecond == nil, "a managed object holds no unmanaged references")
    let stored = reef.objects(CycleNode.self).sorted(byKeyPath: "name")
    #expect(stored.map(\.name) == ["first", "second"])
    #expect(stored[0].next?.next?.name == "first")
    #expect(stored[1].children.first?.children.first?.name == "second")
  }
}
