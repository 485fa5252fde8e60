import ReefBSON
import ReefQuery
import ReefTestSupport
import Testing

@testable import ReefStore

#if canImport(Glibc)
  import Glibc
#endif

/// A fresh temporary directory, removed afterwards, for a test that opens and closes its store
/// itself (``TemporaryStore`` keeps one open).
final class TemporaryDirectory {
  let path: String
  /// Where the test's store goes: `store.reef` in the directory.
  var store: String { path + "/store.reef" }

  init() { path = makeTemporaryDirectory("reef-store-tests") }

  deinit { removeTree(path) }
}

/// A store in a fresh temporary directory, removed afterwards.
final class TemporaryStore {
  let directory: String
  let path: String
  let store: Store

  init(options: StoreOptions = StoreOptions()) throws {
    directory = makeTemporaryDirectory("reef-store-tests")
    path = directory + "/test.reef"
    store = try Store(path: path, options: options)
  }

  deinit { removeTree(directory) }
}

func document(_ json: String) throws -> Document { try Document(extendedJSON: json) }

@Suite struct StoreTests {
  @Test func insertFindCountAndGeneratedIDs() throws {
    let temporary = try TemporaryStore()
    let contacts = temporary.store.collection("contacts")
    #expect(try contacts.count() == 0)
    #expect(try contacts.find().toArray().isEmpty)
    let id = try contacts.insert(document(#"{"name": "Ann", "address": {"city": "Los Angeles"}}"#))
    guard case .objectId = id else {
      Issue.record("expected an ObjectId, found \(id)")
      return
    }
    try contacts.insert(document(#"{"_id": 2, "name": "Bob", "address": {"city": "Paris"}}"#))
    let ann = try #require(try contacts.findOne(document(#"{"address.city": "Los Angeles"}"#)))
    #expect(ann.keys == ["_id", "name", "address"])
    #expect(ann["_id"] == id)
    #expect(try contacts.count() == 2)
    #expect(try contacts.count(document(#"{"name": {"$gt": "Az"}}"#)) == 1)
    #expect(try temporary.store.collectionNames() == ["contacts"])
  }

  @Test func duplicateIDsAreErrorsNamingTheCollectionAndKey() throws {
    let temporary = try TemporaryStore()
    let people = temporary.store.collection("people")
    try people.insert(document(#"{"_id": 1, "name": "Ann"}"#))
    do {
      try people.insert(document(#"{"_id": 1.0, "name": "Bob"}"#))
      Issue.record("a duplicate _id was accepted")
    } catch let error as StoreError {
      #expect(error.kind == .duplicateKey)
      #expect(error.message.contains("people"), "\(error)")
      #expect(error.message.contains("_id: 1"), "\(error)")
    }
    #expect(try people.find().toArray() == [try document(#"{"_id": 1, "name": "Ann"}"#)])
  }

  @Test func aFailingWriteTransactionCommitsNothing() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    try store.collection("a").insert(document(#"{"_id": 0}"#))
    #expect(throws: StoreError.self) {
      try store.write { transaction in
        try transaction.collection("a").insert(document(#"{"_id": 1}"#))
        try transaction.collection("b").insert(document(#"{"_id": 1}"#))
        try transaction.collection("a").insert(document(#"{"_id": 0}"#))  // duplicate: everything rolls back
      }
    }
    #expect(try store.collection("a").count() == 1)
    #expect(try store.collection("b").count() == 0)
    #expect(try store.collectionNames() == ["a"])
  }

  @Test func readTransactionsSeeASnapshot() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    try store.collection("c").insert(document(#"{"_id": 1}"#))
    try store.read { (snapshot: Transaction) throws in
      // A writer on another thread is not blocked by this reader, and this reader does not see it.
      var thread = pthread_t()
      let box = Unmanaged.passRetained(store)
      pthread_create(
        &thread, nil,
        { argument in
          let store = Unmanaged<Store>.fromOpaque(argument!).takeRetainedValue()
          _ = try? store.collection("c").insert(try! Document(extendedJSON: #"{"_id": 2}"#))
          return nil
        }, box.toOpaque())
      pthread_join(thread, nil)
      #expect(try snapshot.collection("c").count() == 1)
    }
    #expect(try store.collection("c").count() == 2)
  }

  @Test func documentsOverTheLimitsAreRejectedBeforeAnythingIsWritten() throws {
    let temporary = try TemporaryStore()
    let big = temporary.store.collection("big")
    var builder = DocumentBuilder()
    builder.append("blob", .binary(Binary(data: [UInt8](repeating: 7, count: 16 * 1024 * 1024 + 20_000))))
    #expect(throws: StoreError.self) { try big.insert(builder.document) }
    var deep: BSON = .int32(1)
    for _ in 0..<120 { deep = .document(["d": deep]) }
    var nested = DocumentBuilder()
    nested.append("root", deep)
    do {
      try big.insert(nested.document)
      Issue.record("a 121-deep document was stored")
    } catch let error as StoreError {
      #expect(error.kind == .invalidDocument)
    }
    #expect(try big.count() == 0)
  }

  @Test func deleteReplaceAndDrop() throws {
    let temporary = try TemporaryStore()
    let items = temporary.store.collection("items")
    try items.insertMany(try (1...5).map { try document(#"{"_id": \#($0), "n": \#($0 % 2)}"#) })
    #expect(try items.deleteOne(document(#"{"n": 1}"#)) == 1)
    #expect(try items.find().toArray().map { $0["_id"]! } == [2, 3, 4, 5])
    #expect(try items.deleteMany(document(#"{"n": 0}"#)) == 2)
    let result = try items.replaceOne(document(#"{"_id": 3}"#), with: document(#"{"n": 30}"#))
    #expect(result == UpdateResult(matched: 1, modified: 1, upsertedID: nil))
    #expect(try items.findOne(document(#"{"_id": 3}"#)) == (try document(#"{"_id": 3, "n": 30}"#)))
    let upsert = try items.replaceOne(document(#"{"_id": 9}"#), with: document(#"{"n": 90}"#), upsert: true)
    #expect(upsert.upsertedID == 9)
    #expect(try items.drop())
    #expect(try items.count() == 0)
    #expect(try temporary.store.collectionNames().isEmpty)
  }

  @Test func readOnlyStoresRefuseWrites() throws {
    let directory = makeTemporaryDirectory("reef-store-tests")
    defer { removeTree(directory) }
    let path = directory + "/test.reef"
    // Closed before the read-only store opens the file (one store per file in a process).
    do { try Store(path: path).collection("x").insert(document(#"{"_id": 1}"#)) }
    let readOnly = try Store(path: path, options: StoreOptions(readOnly: true))
    #expect(try readOnly.collection("x").count() == 1)
    do {
      try readOnly.collection("x").insert(document(#"{"_id": 2}"#))
      Issue.record("a read-only store accepted a write")
    } catch let error as StoreError {
      #expect(error.kind == .readOnly)
    }
  }

  @Test func theMapGrowsAndAFullMapCommitsNothing() throws {
    let temporary = try TemporaryStore(options: StoreOptions(initialMapSize: 1 << 20, maximumMapSize: 64 << 20))
    let blobs = temporary.store.collection("blobs")
    for index in 0..<40 {
      var builder = DocumentBuilder()
      builder.append("_id", .int32(Int32(index)))
      builder.append("blob", .binary(Binary(data: [UInt8](repeating: UInt8(index), count: 256 * 1024))))
      try blobs.insert(builder.document)
    }
    #expect(try blobs.count() == 40)

    let small = try TemporaryStore(options: StoreOptions(initialMapSize: 1 << 20, maximumMapSize: 1 << 20))
    do {
      try small.store.write { transaction in
        for index in 0..<20 {
          var builder = DocumentBuilder()
          builder.append("_id", .int32(Int32(index)))
          builder.append("blob", .binary(Binary(data: [UInt8](repeating: 1, count: 128 * 1024))))
          try transaction.collection("blobs").insert(builder.document)
        }
      }
      Issue.record("2.5 MiB fitted in a 1 MiB map")
    } catch let error as StoreError {
      #expect(error.kind == .full, "\(error)")
    }
    #expect(try small.store.collection("blobs").count() == 0)
  }

  struct Contact: Codable, Equatable {
    var _id: Int
    var name: String
    var city: String
  }

  @Test func typedCollections() throws {
    let temporary = try TemporaryStore()
    let contacts = temporary.store.collection("contacts", as: Contact.self)
    try contacts.insert(Contact(_id: 1, name: "Ann", city: "Los Angeles"))
    try contacts.insert(Contact(_id: 2, name: "Bob", city: "Paris"))
    #expect(try contacts.find(document(#"{"city": "Paris"}"#)) == [Contact(_id: 2, name: "Bob", city: "Paris")])
    #expect(try contacts.find(predicate: "name BEGINSWITH 'A'").map(\.name) == ["Ann"])
  }

  @Test func dataSurvivesReopening() throws {
    let directory = makeTemporaryDirectory("reef-store-tests")
    defer { removeTree(directory) }
    let path = directory + "/test.reef"
    do {
      let store = try Store(path: path)
      try store.collection("kept").insert(document(#"{"_id": 1, "v": "x"}"#))
      try store.collection("kept").createIndex(document(#"{"v": 1}"#))
    }
    let reopened = try Store(path: path)
    #expect(try reopened.collection("kept").find(document(#"{"v": "x"}"#)).toArray().count == 1)
    #expect(try reopened.collection("kept").listIndexes().count == 2)
  }
}

@Suite struct PrimaryKeyReadTests {
  @Test func documentForIDReadsByPrimaryKey() throws {
    let temporary = try TemporaryStore()
    let items = temporary.store.collection("items")
    #expect(try items.document(forID: 1) == nil)
    try items.insertMany(try [#"{"_id": 1, "v": "a"}"#, #"{"_id": "k", "v": "b"}"#].map(document))
    #expect(try items.document(forID: .int64(1))?["v"] == "a")
    #expect(try items.document(forID: .double(1.0))?["v"] == "a")
    #expect(try items.document(forID: "k")?["v"] == "b")
    #expect(try items.document(forID: 2) == nil)
  }
}

@Suite struct DistinctTests {
  @Test func distinctValuesInMongoOrderWithArrayElementsOneByOne() throws {
    let temporary = try TemporaryStore()
    let people = temporary.store.collection("people")
    try people.insertMany(
      try [
        #"{"_id": 1, "tag": "b"}"#, #"{"_id": 2, "tag": ["a", "b"]}"#, #"{"_id": 3, "tag": 1}"#,
        #"{"_id": 4, "tag": 1.0}"#, #"{"_id": 5}"#, #"{"_id": 6, "tag": null}"#,
      ].map(document))
    #expect(try people.distinct("tag") == [.null, .int32(1), "a", "b"])
    #expect(try people.distinct("tag", filter: document(#"{"_id": {"$lte": 2}}"#)) == ["a", "b"])
  }
}
