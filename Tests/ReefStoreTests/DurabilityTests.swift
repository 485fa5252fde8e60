import CLMDB
import ReefBSON
import ReefTestSupport
import Testing

@testable import ReefStore

#if canImport(Glibc)
  import Glibc
#endif

/// Durability levels (issue 4): each level commits, closes and reopens with everything there
/// (a process that ends loses nothing at any level); per-transaction levels; the environment
/// flags each level sets for LMDB; `syncOnCommit` mapped.
@Suite struct DurabilityTests {
  @Test(arguments: Durability.allCases)
  func commitsSurviveClosingAndReopening(_ durability: Durability) throws {
    let directory = makeTemporaryDirectory("reef-durability-tests")
    defer { removeTree(directory) }
    let path = directory + "/store.reef"
    do {
      let store = try Store(path: path, options: StoreOptions(durability: durability))
      #expect(store.options.durability == durability)
      for index in 0..<20 { try store.collection("c").insert(document(#"{"_id": \#(index)}"#)) }
      _ = try store.write { transaction in
        try transaction.collection("c").insertMany((20..<50).map { try document(#"{"_id": \#($0)}"#) })
      }
      if durability != .full { try store.sync() }
    }
    for reopened in Durability.allCases {
      let store = try Store(path: path, options: StoreOptions(durability: reopened))
      #expect(try store.collection("c").count() == 50, "written with \(durability), reopened with \(reopened)")
    }
    let readOnly = try Store(path: path, options: StoreOptions(readOnly: true, durability: durability))
    #expect(try readOnly.collection("c").count() == 50)
  }

  @Test(arguments: Durability.allCases)
  func oneTransactionChoosesItsOwnLevel(_ storeLevel: Durability) throws {
    let directory = makeTemporaryDirectory("reef-durability-tests")
    defer { removeTree(directory) }
    let path = directory + "/store.reef"
    do {
      let store = try Store(path: path, options: StoreOptions(durability: storeLevel))
      #expect(store.environmentFlags & UInt32(MDB_NOSYNC | MDB_NOMETASYNC) == storeLevel.environmentFlags)
      for (index, level) in Durability.allCases.enumerated() {
        try store.write(durability: level) { transaction in
          // The flags LMDB reads when this transaction commits.
          #expect(store.environmentFlags & UInt32(MDB_NOSYNC | MDB_NOMETASYNC) == level.environmentFlags)
          try transaction.collection("c").insert(document(#"{"_id": \#(index)}"#))
        }
      }
      try store.write { transaction in
        #expect(store.environmentFlags & UInt32(MDB_NOSYNC | MDB_NOMETASYNC) == storeLevel.environmentFlags)
        try transaction.collection("c").insert(document(#"{"_id": "default"}"#))
      }
      // A transaction that throws commits nothing, and the next one has the store's level again.
      #expect(throws: StoreError.self) {
        try store.write(durability: .none) { transaction in
          #expect(store.environmentFlags & UInt32(MDB_NOSYNC | MDB_NOMETASYNC) == UInt32(MDB_NOSYNC))
          try transaction.collection("c").insert(document(#"{"_id": "rolled back"}"#))
          throw StoreError(.invalidQuery, "stop")
        }
      }
      try store.write { _ in
        #expect(store.environmentFlags & UInt32(MDB_NOSYNC | MDB_NOMETASYNC) == storeLevel.environmentFlags)
      }
    }
    let store = try Store(path: path)
    #expect(try store.collection("c").count() == 4)
    #expect(try store.collection("c").findOne(["_id": "rolled back"]) == nil)
  }

  @Test func importsStillSwapInWholeWithOneFlushBatches() throws {
    let directory = makeTemporaryDirectory("reef-durability-tests")
    defer { removeTree(directory) }
    var bytes: [UInt8] = []
    for index in 0..<2_500 { bytes += try document(#"{"_id": \#(index), "n": "x"}"#).bytes }
    let input = directory + "/in.bson"
    let file = fopen(input, "wb")
    fwrite(bytes, 1, bytes.count, file)
    fclose(file)
    let path = directory + "/store.reef"
    do {
      let store = try Store(path: path)
      let report = try store.importDump(
        from: DumpSource(path: input), options: ImportOptions(collection: "c", batchDocuments: 1_000))
      #expect(report.documents == 2_500)
      // The store's own level is back after the import's batches.
      #expect(store.environmentFlags & UInt32(MDB_NOSYNC | MDB_NOMETASYNC) == 0)
    }
    #expect(try Store(path: path).collection("c").count() == 2_500)
  }

  @available(*, deprecated, message: "tests the deprecated syncOnCommit")
  @Test func syncOnCommitMapsToFullAndNone() {
    #expect(StoreOptions(syncOnCommit: true).durability == .full)
    #expect(StoreOptions(syncOnCommit: false).durability == .none)
    var options = StoreOptions(durability: .normal)
    #expect(options.syncOnCommit)
    options.syncOnCommit = false
    #expect(options.durability == .none)
    #expect(!options.syncOnCommit)
    options.syncOnCommit = true
    #expect(options.durability == .full)
  }
}
