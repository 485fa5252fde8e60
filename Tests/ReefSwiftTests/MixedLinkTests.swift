import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import Testing

/// Links held by `AnyReefValue`s (stored as DBRefs) go when their target is deleted, as Realm's
/// `AnyRealmValue` links do: a value becomes null, a list loses the element, a map keeps the key
/// with null.
@Suite struct MixedLinkTests {
  @Test func anAnyReefValueHoldingADeletedTargetBecomesNull() throws {
    let (reef, _) = try openReef()
    let (shelf, roper) = (Shelf(value: ["id": 1]), Landlord(value: ["name": "Roper"]))
    try reef.write {
      reef.add(shelf)
      shelf.item = .object(roper)
    }
    #expect(try storedShelf(reef)?["item"] == .document(["$ref": "Landlord", "$id": "Roper"]))
    try reef.write {
      reef.delete(roper)
      #expect(shelf.item == AnyReefValue.none, "within the transaction")
    }
    #expect(shelf.item == AnyReefValue.none)
    #expect(try storedShelf(reef)?["item"] == .null)
  }

  @Test func aListOfAnyReefValueLosesADeletedTarget() throws {
    let (reef, _) = try openReef()
    let (shelf, roper) = (Shelf(value: ["id": 1]), Landlord(value: ["name": "Roper"]))
    try reef.write {
      reef.add(shelf)
      shelf.items.append(objectsIn: [.int(1), .object(roper), .string("x"), .object(roper)])
    }
    try reef.write { reef.delete(roper) }
    #expect(Array(shelf.items) == [.int(1), .string("x")])
    #expect(try storedShelf(reef)?["items"] == .array([.int64(1), "x"]))
  }

  @Test func aMapOfAnyReefValueKeepsTheKeyOfADeletedTargetWithNull() throws {
    let (reef, _) = try openReef()
    let (shelf, roper) = (Shelf(value: ["id": 1]), Landlord(value: ["name": "Roper"]))
    try reef.write {
      reef.add(shelf)
      shelf.byName["landlord"] = .object(roper)
      shelf.byName["count"] = .int(2)
    }
    try reef.write { reef.delete(roper) }
    #expect(shelf.byName.keys == ["landlord", "count"])
    #expect(shelf.byName["landlord"] == AnyReefValue.none)
    #expect(try storedShelf(reef)?["byName"] == .document(["landlord": .null, "count": .int64(2)]))
  }

  @Test func aDeletedTargetLeavesListsAndDictionariesNestedInAnAnyReefValue() throws {
    let (reef, _) = try openReef()
    let (shelf, roper) = (Shelf(value: ["id": 1]), Landlord(value: ["name": "Roper"]))
    try reef.write {
      reef.add(shelf)
      shelf.item = .list([.object(roper), .dictionary(["who": .object(roper)]), .int(3)])
    }
    try reef.write { reef.delete(roper) }
    #expect(shelf.item == .list([.dictionary(["who": AnyReefValue.none]), .int(3)]))
  }

  @Test func aDBRefInAListOfEmbeddedObjectsBecomesNull() throws {
    let (reef, _) = try openReef()
    let (row, roper) = (ShelfRow(), Landlord(value: ["name": "Roper"]))
    let label = ShelfLabel()
    label.note = .object(roper)
    row.labels.append(label)
    try reef.write { reef.add(row) }
    try reef.write { reef.delete(roper) }
    #expect(row.labels.first?.note == AnyReefValue.none)
    let stored = try reef.store.read { try $0.collection("ShelfRow").findOne() }
    #expect(stored?["labels"] == .array([.document(["note": .null])]))
  }

  @Test func aDBRefInAMapOfEmbeddedObjectsBecomesNull() throws {
    let (reef, _) = try openReef()
    let (cabinet, roper) = (ShelfCabinet(), Landlord(value: ["name": "Roper"]))
    let (top, bottom) = (ShelfLabel(), ShelfLabel())
    top.note = .object(roper)
    bottom.note = .string("keep")
    cabinet.labels["top"] = top
    cabinet.labels["bottom"] = bottom
    try reef.write { reef.add(cabinet) }
    try reef.write { reef.delete(roper) }
    #expect(cabinet.labels["top"]??.note == AnyReefValue.none)
    #expect(cabinet.labels["bottom"]??.note == .string("keep"))
    let stored = try reef.store.read { try $0.collection("ShelfCabinet").findOne() }
    #expect(stored?["labels"] == .document(["top": .document(["note": .null]), "bottom": .document(["note": "keep"])]))
  }

  @Test func deletingManyObjectsAtOnceRemovesEveryLinkToThem() throws {
    let (reef, _) = try openReef()
    // More than eight, so that the identities are searched by halves; 7 and 12 stay.
    let landlords = (0..<20).map { Landlord(value: ["name": "L\($0)"]) }
    let shelf = Shelf(value: ["id": 1])
    let tenants = landlords.indices.map { Tenant(value: ["id": $0, "landlord": landlords[$0]]) }
    let kept = [7, 12]
    try reef.write {
      reef.add(tenants)
      reef.add(shelf)
      shelf.items.append(objectsIn: landlords.map { .object($0) })
      shelf.byName["first"] = .object(landlords[0])
      shelf.byName["kept"] = .object(landlords[7])
      shelf.item = .object(landlords[19])
    }
    try reef.write {
      reef.delete(reef.objects(Landlord.self).filter("NOT name IN %@", kept.map { "L\($0)" }))
    }
    #expect(reef.objects(Landlord.self).map(\.name).sorted() == ["L12", "L7"])
    #expect(shelf.items.map { $0.object(Landlord.self)?.name } == ["L7", "L12"])
    #expect(shelf.byName["first"] == AnyReefValue.none)
    #expect(shelf.byName["kept"]?.object(Landlord.self)?.name == "L7")
    #expect(shelf.item == AnyReefValue.none)
    #expect(tenants.map { $0.landlord?.name } == landlords.indices.map { kept.contains($0) ? "L\($0)" : nil })
  }

  @Test func aDeleteThatIsRolledBackKeepsTheDBRefs() throws {
    let (reef, _) = try openReef()
    let (shelf, roper) = (Shelf(value: ["id": 1]), Landlord(value: ["name": "Roper"]))
    try reef.write {
      reef.add(shelf)
      shelf.item = .object(roper)
      shelf.items.append(.object(roper))
      shelf.byName["landlord"] = .object(roper)
    }
    let before = try storedShelf(reef)
    _ = try? reef.write {
      reef.delete(roper)
      #expect(shelf.item == AnyReefValue.none)
      throw DeliberateFailure()
    }
    #expect(try storedShelf(reef) == before)
    #expect(shelf.item.object(Landlord.self)?.name == "Roper")
    #expect(shelf.items.first?.object(Landlord.self)?.name == "Roper")
    #expect(shelf.byName["landlord"]?.object(Landlord.self)?.name == "Roper")
  }

  @Test func dBRefsToOtherObjectsStay() throws {
    let (reef, _) = try openReef()
    let shelf = Shelf(value: ["id": 1])
    let roper = Landlord(value: ["name": "Roper"])
    // Another object of the same type, and an object of another type with the same primary key.
    let other = Landlord(value: ["name": "Other"])
    let budgie = Budgie(value: ["name": "Roper"])
    try reef.write {
      reef.add([roper, other])
      reef.add(shelf)
      shelf.item = .object(budgie)
      shelf.items.append(objectsIn: [.object(other), .object(budgie)])
      shelf.byName["other"] = .object(other)
      shelf.byName["budgie"] = .object(budgie)
    }
    let before = try storedShelf(reef)
    try reef.write { reef.delete(roper) }
    #expect(try storedShelf(reef) == before)
    #expect(shelf.item.object(Budgie.self)?.name == "Roper")
    #expect(shelf.items.count == 2)
    #expect(shelf.byName["other"]?.object(Landlord.self)?.name == "Other")
  }

  @Test func aReefThatDoesNotKnowTheHolderRemovesItsDBRefs() throws {
    let (reef, path) = try openReef()
    let shelf = Shelf(value: ["id": 1])
    try reef.write {
      reef.add(shelf)
      shelf.items.append(.object(Budgie(value: ["name": "Joey"])))
    }
    // Another Reef on another thread knows only Budgie when it deletes.
    let failure = onAnotherThread { () throws in
      let other = try Reef(fileURL: URL(fileURLWithPath: path))
      try other.write { other.delete(other.object(ofType: Budgie.self, forPrimaryKey: "Joey")!) }
    }
    #expect(failure == nil)
    reef.refresh()
    #expect(shelf.items.isEmpty)
  }
}

/// A holder of `AnyReefValue`s: alone, in a list and in a map.
class Shelf: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var item: AnyReefValue
  @Persisted var items: List<AnyReefValue>
  @Persisted var byName: Map<String, AnyReefValue>
}

/// An embedded object holding an `AnyReefValue`, in a list.
class ShelfLabel: EmbeddedObject {
  @Persisted var note: AnyReefValue
}

class ShelfRow: Object {
  @Persisted var labels: List<ShelfLabel>
}

class ShelfCabinet: Object {
  @Persisted var labels: Map<String, ShelfLabel?>
}

private func storedShelf(_ reef: Reef) throws -> Document? {
  try reef.store.read { try $0.collection("Shelf").findOne() }
}
