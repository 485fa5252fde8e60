import ReefBSON
import ReefTestSupport
import Testing

@testable import ReefStore

/// LMDB keeps a database handle private to the transaction that opened it until that
/// transaction ends. A long-lived read transaction (a `Reef`'s snapshot) that is the first to use
/// a collection after the store opens must not leave its handles unusable for the others.
@Suite struct HandleSharingTests {
  /// A store with an indexed collection, written and closed.
  func makeStoreFile(_ directory: TemporaryDirectory) throws {
    let store = try Store(path: directory.store)
    try store.write { transaction in
      let contacts = transaction.collection("contacts")
      try contacts.createIndex(document(#"{"city": 1}"#))
      for index in 0..<40 {
        try contacts.insert(document(#"{"_id": \#(index), "city": "\#(index % 2 == 0 ? "Paris" : "Oslo")"}"#))
      }
    }
  }

  @Test func aLongReaderThatOpensACollectionFirstLeavesItUsableByOthers() throws {
    let directory = TemporaryDirectory()
    try makeStoreFile(directory)
    let store = try Store(path: directory.store)
    let long = try store.beginRead()
    defer { long.end() }
    // The long reader is the first transaction of this process to read the documents and the
    // index.
    let paris = try long.collection("contacts").find(document(#"{"city": "Paris"}"#)).toArray()
    #expect(paris.count == 20)
    // Other transactions, while it is still open: the same index, and a point read.
    let oslo = try store.read { transaction in
      try transaction.collection("contacts").find(document(#"{"city": "Oslo"}"#)).toArray()
    }
    #expect(oslo.count == 20)
    let third = try store.read { transaction in try transaction.collection("contacts").document(forID: .int32(3)) }
    #expect(third?["city"] == .string("Oslo"))
    _ = try store.write { transaction in
      try transaction.collection("contacts").insert(document(#"{"_id": 100, "city": "Oslo"}"#))
    }
    #expect(try store.read { try $0.collection("contacts").find(document(#"{"city": "Oslo"}"#)).count() } == 21)
  }

  @Test func aDamagedCatalogEntryDoesNotStopTheStoreFromOpening() throws {
    let directory = TemporaryDirectory()
    try makeStoreFile(directory)
    do {
      let store = try Store(path: directory.store)
      try store.write { transaction in
        try transaction.collection("other").insert(document(#"{"_id": 1}"#))
        // The catalog entry of `contacts`, cut to a document that cannot be read.
        let catalog = try #require(try transaction.database(Transaction.catalogName, create: false))
        _ = try transaction.lmdb.put(catalog, Array("contacts".utf8), [0x10, 0, 0, 0, 0x02])
      }
    }
    let store = try Store(path: directory.store)
    #expect(try store.read { try $0.collection("other").count() } == 1)
    #expect {
      try store.read { try $0.collection("contacts").count() }
    } throws: { error in
      (error as? StoreError)?.kind == .corrupt && "\(error)".contains("catalog entry of contacts is damaged")
    }
  }
}
