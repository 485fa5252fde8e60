import Foundation
import ReefBSON
import ReefTestSupport
import Testing

@testable import ReefStore

/// LMDB must not open one file twice in a process: a second `Store` of an open file is an
/// error (it used to crash in LMDB, or break the first store's locks when closed).
@Suite struct StoreOpenTwiceTests {
  private func temporaryPath(_ name: String) -> String {
    let directory = makeTemporaryDirectory("reef-open-twice", removedAtExit: true)
    return directory + "/" + name
  }

  @Test func aSecondStoreOfAnOpenFileIsAnError() throws {
    let path = temporaryPath("a.reef")
    let first = try Store(path: path)
    _ = try first.write { try $0.collection("c").insert(["_id": 1, "x": "kept"]) }
    let error = try #require(throws: StoreError.self) { try Store(path: path) }
    #expect(error.kind == .open)
    #expect(error.message.contains("open in this process already"))
    // The first store is unharmed.
    #expect(try first.read { try $0.collection("c").document(forID: 1)?["x"] } == "kept")
    #expect(Store.openStore(at: path) === first)
  }

  @Test func anotherPathToTheSameFileIsRefusedToo() throws {
    let path = temporaryPath("b.reef")
    let directory = (path as NSString).deletingLastPathComponent
    let link = directory + "/link.reef"
    let first = try Store(path: path)
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
    for other in [
      link, directory + "/./b.reef", directory + "/../" + (directory as NSString).lastPathComponent + "/b.reef",
    ] {
      let error = try #require(throws: StoreError.self) { try Store(path: other) }
      #expect(error.kind == .open, "\(other)")
    }
    #expect(Store.openStore(at: link) === first)
  }

  @Test func aClosedStoreCanBeOpenedAgain() throws {
    let path = temporaryPath("c.reef")
    do {
      let first = try Store(path: path)
      _ = try first.write { try $0.collection("c").insert(["_id": 1]) }
    }
    let second = try Store(path: path)
    #expect(try second.read { try $0.collection("c").count() } == 1)
  }

  @Test func threadsOpeningAndClosingOneFileNeverOpenItTwice() async throws {
    let path = temporaryPath("d.reef")
    do { _ = try Store(path: path) }
    // Each thread opens and drops the store in a loop: an open either succeeds (no other store
    // is open) or says the file is open; it never crashes.
    let outcomes = await withTaskGroup(of: (opened: Int, refused: Int).self) { group in
      for _ in 0..<4 {
        group.addTask {
          var (opened, refused) = (0, 0)
          for _ in 0..<25 {
            do {
              let store = try Store(path: path)
              _ = try store.read { try $0.collectionNames() }
              opened += 1
            } catch let error as StoreError
              where error.kind == .open && error.message.contains("open in this process already")
            {
              refused += 1
            } catch {
              Issue.record("unexpected \(error)")
            }
          }
          return (opened, refused)
        }
      }
      var total = (opened: 0, refused: 0)
      for await outcome in group { total = (total.opened + outcome.opened, total.refused + outcome.refused) }
      return total
    }
    #expect(outcomes.opened + outcomes.refused == 100)
    #expect(outcomes.opened > 0)
  }
}
