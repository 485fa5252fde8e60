import ReefBSON
import ReefTestSupport
import Testing

@testable import ReefStore

#if canImport(Glibc)
  import Glibc
#endif

/// The insert path without indexes (the duplicate check is the write) and read transactions
/// kept between reads (reset and renewed).
@Suite struct StoreFastPathTests {
  @Test func aDuplicateIDWithoutIndexesWritesNothingAndTheTransactionGoesOn() throws {
    let temporary = try TemporaryStore()
    let id = ObjectId()
    for first: BSON in [.objectId(id), "key", .int64(7)] {
      let name = "c\(first.type.rawValue)"
      try temporary.store.write { transaction in
        let collection = transaction.collection(name)
        try collection.insert(["_id": first, "n": 1])
        do {
          try collection.insert(["_id": first, "n": 2])
          Issue.record("a duplicate _id \(first) was accepted")
        } catch let error as StoreError {
          #expect(error.kind == .duplicateKey)
          #expect(error.message.contains(name) && error.message.contains("_id_"), "\(error)")
        }
        try collection.insert(["n": 3])
      }
      let collection = temporary.store.collection(name)
      #expect(try collection.count() == 2)
      #expect(try collection.document(forID: first) == ["_id": first, "n": 1])
    }
  }

  @Test func withAUniqueIndexADuplicateIDIsStillReportedForItsID() throws {
    let temporary = try TemporaryStore()
    let people = temporary.store.collection("people")
    try people.createIndex(["email": 1], unique: true)
    try people.insert(["_id": 1, "email": "a@example.com"])
    do {
      try people.insert(["_id": 1, "email": "a@example.com"])
      Issue.record("a duplicate was accepted")
    } catch let error as StoreError {
      #expect(error.kind == .duplicateKey)
      #expect(error.message.contains("index: _id_"), "\(error)")
    }
    #expect(try people.count() == 1)
  }

  @Test func aDocumentValidatedLenientlyIsValidatedAgainWhenStored() throws {
    let temporary = try TemporaryStore()
    // {"_id": 1, "s": "\xff"}: invalid UTF-8, accepted only when UTF-8 is not checked. (With an
    // `_id`, so that the document is stored as it is, not rebuilt.)
    let bytes: [UInt8] = [23, 0, 0, 0, 0x10, 0x5F, 0x69, 0x64, 0, 1, 0, 0, 0, 2, 0x73, 0, 2, 0, 0, 0, 0xFF, 0, 0]
    let lenient = try Document(bytes: bytes, options: ValidationOptions(checksUTF8: false))
    do {
      try temporary.store.collection("c").insert(lenient)
      Issue.record("a document with invalid UTF-8 was stored")
    } catch let error as StoreError {
      #expect(error.kind == .invalidDocument)
    }
    #expect(try temporary.store.collection("c").count() == 0)
  }

  @Test func droppingAndRecreatingACollectionInOneTransaction() throws {
    let temporary = try TemporaryStore()
    try temporary.store.write { transaction in
      let items = transaction.collection("items")
      try items.insert(["_id": 1])
      try items.insert(["_id": 2])
      #expect(try items.drop())
      try items.insert(["_id": 3])
      #expect(try items.count() == 1)
    }
    #expect(try temporary.store.collection("items").find().toArray() == [["_id": 3]])
  }

  @Test func readsBetweenWritesSeeTheNewestCommit() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    let items = store.collection("items")
    #expect(try items.document(forID: 0) == nil)  // before the collection exists
    for index in 0..<50 {
      try items.insert(["_id": .int32(Int32(index))])
      #expect(try items.document(forID: .int32(Int32(index))) == ["_id": .int32(Int32(index))])
      #expect(try items.count() == index + 1)
      // A collection made after readers were kept is found by them.
      if index == 25 { try store.collection("late").insert(["_id": 1]) }
      if index >= 25 { #expect(try store.collection("late").count() == 1) }
    }
    #expect(store.idleReaders.count >= 1 && store.idleReaders.count <= 4)
  }

  @Test func noReadersAreKeptWhenReaderSlotsAreScarce() throws {
    let temporary = try TemporaryStore(options: StoreOptions(maximumReaders: 4))
    let items = temporary.store.collection("items")
    try items.insert(["_id": 1])
    for _ in 0..<10 { #expect(try items.document(forID: 1) != nil) }
    #expect(temporary.store.idleReaders.isEmpty)
  }

  @Test func theMapGrowsWhileReadersAreKept() throws {
    let temporary = try TemporaryStore(options: StoreOptions(initialMapSize: 1 << 20))
    let store = temporary.store
    let items = store.collection("items")
    let blob = BSON.binary(Binary(data: [UInt8](repeating: 1, count: 20_000)))
    for index in 0..<300 {
      try items.insert(["_id": .int32(Int32(index)), "blob": blob])
      #expect(try items.document(forID: .int32(Int32(index)))?["blob"] == blob)
    }
    #expect(try items.count() == 300)
    #expect(store.fileSize > 6_000_000)
  }

  @Test func readersOnSeveralThreadsWhileAWriterCommits() throws {
    let temporary = try TemporaryStore()
    let store = temporary.store
    let items = store.collection("items")
    try items.insert(["_id": 0])
    final class Context: @unchecked Sendable {
      let store: Store
      var failures = 0
      let lock = Mutex()
      init(_ store: Store) { self.store = store }
    }
    let context = Context(store)
    var threads: [pthread_t] = []
    for _ in 0..<4 {
      var thread = pthread_t()
      pthread_create(
        &thread, nil,
        { argument in
          let context = Unmanaged<Context>.fromOpaque(argument!).takeUnretainedValue()
          for _ in 0..<300 {
            let found = try? context.store.collection("items").document(forID: 0)
            if found != ["_id": 0] { context.lock.withLock { context.failures += 1 } }
          }
          return nil
        }, Unmanaged.passUnretained(context).toOpaque())
      threads.append(thread)
    }
    for index in 1...100 { try items.insert(["_id": .int32(Int32(index))]) }
    for thread in threads { pthread_join(thread, nil) }
    #expect(context.failures == 0)
    #expect(try items.count() == 101)
    #expect(store.idleReaders.count <= 4)
  }
}
