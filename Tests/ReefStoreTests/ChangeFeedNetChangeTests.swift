import Foundation
import ReefBSON
import ReefTestSupport
import Testing

@testable import ReefStore

/// The feed's net change of a document changed several times in one commit, and the `_id` it
/// names when a call names the document by an equal `_id` of another number type.
@Suite struct ChangeFeedNetChangeTests {
  /// The changes of the store's last commit.
  func lastChanges(_ store: Store) throws -> [DocumentChange] {
    try store.read { transaction in
      let latest = try transaction.changeSequence()
      return try transaction.changes(after: latest - 1).commits.first?.changes ?? []
    }
  }

  @Test func severalChangesOfOneDocumentInOneCommitAreItsNetChange() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    try store.write { transaction in
      let items = transaction.collection("items")
      for id in 1...6 { try items.insert(["_id": .int32(Int32(id)), "n": 0, "s": "a"]) }
    }
    try store.write { transaction in
      let items = transaction.collection("items")
      // Changed, back, changed again (another field).
      _ = try items.updateOne(["_id": 1], ["$set": ["n": 1]])
      _ = try items.updateOne(["_id": 1], ["$set": ["n": 0]])
      _ = try items.updateOne(["_id": 1], ["$set": ["s": "b"]])
      // Modified, then deleted.
      _ = try items.updateOne(["_id": 2], ["$set": ["n": 1]])
      try items.deleteDocument(forID: 2)
      // Deleted, inserted again, modified: fields unknown.
      try items.deleteDocument(forID: 3)
      try items.insert(["_id": 3, "n": 0, "s": "a"])
      _ = try items.updateOne(["_id": 3], ["$set": ["n": 2]])
      // One update many times; the last puts it back.
      for value in [1, 2, 3, 0] {
        _ = try items.updateMany(["_id": ["$in": [4, 5]]], ["$set": ["n": .int32(Int32(value))]])
      }
      _ = try items.updateMany(["_id": 5], ["$inc": ["n": 1]])
      // Replaced, then replaced back to what it was.
      _ = try items.replaceOne(["_id": 6], with: ["n": 9])
      _ = try items.replaceOne(["_id": 6], with: ["n": 0, "s": "a"])
    }
    #expect(
      try lastChanges(store) == [
        DocumentChange(collection: "items", id: 1, kind: .modified, fields: ["s"]),
        DocumentChange(collection: "items", id: 2, kind: .deleted),
        DocumentChange(collection: "items", id: 3, kind: .modified),
        DocumentChange(collection: "items", id: 5, kind: .modified, fields: ["n"]),
      ])
  }

  @Test func callsNamingAnEqualIDOfAnotherTypeRecordTheStoredID() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    try store.write { transaction in
      let items = transaction.collection("items")
      for id in 1...3 { try items.insert(["_id": .int64(Int64(id)), "n": 0]) }
    }
    try store.write { transaction in
      let items = transaction.collection("items")
      try items.deleteDocument(forID: .double(1))
      try items.replaceDocument(forID: .decimal128(Decimal128("2")), with: ["n": 5])
    }
    let changes = try lastChanges(store)
    let stored = try store.read { try $0.collection("items").document(forID: 2)?["_id"] }
    #expect(changes.count == 2)
    #expect(changes.first == DocumentChange(collection: "items", id: .int64(1), kind: .deleted))
    #expect(changes.last?.kind == .modified && changes.last?.id == stored, "\(changes)")
    // Inserted under a Decimal128 `_id`, deleted under the equal int: no net change.
    try store.write { transaction in
      let items = transaction.collection("items")
      try items.insert(["_id": .decimal128(Decimal128("7.0")), "n": 0])
      try items.insert(["_id": 8, "n": 0])
      try items.deleteDocument(forID: .int32(7))
    }
    #expect(try lastChanges(store) == [DocumentChange(collection: "items", id: 8, kind: .inserted)])
  }

  @Test func aCommitOfMoreDocumentsThanTheLimitResetsTheCollectionEvenWhenSomeGoBack() throws {
    let temporary = try TemporaryStore(options: StoreOptions(durability: .none))
    let store = temporary.store
    try store.write { transaction in
      let items = transaction.collection("items")
      for id in 0..<(Store.changeFeedDocumentLimit + 1) { try items.insert(["_id": .int32(Int32(id))]) }
    }
    let commit = try store.read { try $0.changes(after: 0).commits.first }
    #expect(commit?.resetCollections == ["items"] && commit?.changes == [])
  }
}
