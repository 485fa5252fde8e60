import Foundation
import ReefBSON
import ReefQuery
import ReefTestSupport
import Testing

@testable import ReefStore

/// A store's sort by paths through arrays: MongoDB's sort keys, whether or not an index on the
/// path narrows the documents (an index never gives the order: every sort is a sort stage over
/// the matches), and parallel arrays as a query error.
@Suite struct SortArrayStoreTests {
  /// MongoDB's sort_dotted_paths.js documents for "a.b" (jstests/core/query/sort).
  static let documents = [
    #"{"_id": 1, "a": {"b": 2}}"#, #"{"_id": 2, "a": {"b": []}}"#, #"{"_id": 3, "a": {"b": [2, 3]}}"#,
    #"{"_id": 4, "a": {"c": 1}}"#, #"{"_id": 5, "a": []}"#, #"{"_id": 6, "a": [{"b": [5]}]}"#,
    #"{"_id": 7, "a": [{"b": [4, 5]}, {"b": 7}]}"#, #"{"_id": 8, "a": [{"b": [1, 3]}, {"b": [2, 5]}]}"#,
    #"{"_id": 9, "a": [{"b": []}, {"b": [1, 3]}]}"#,
  ]

  func ids(_ cursor: Cursor) throws -> [Int] {
    try cursor.toArray().map { document in
      guard case .int32(let id)? = document["_id"] else { return -1 }
      return Int(id)
    }
  }

  @Test(arguments: [false, true])
  func sortThroughArraysWithAndWithoutAnIndex(indexed: Bool) throws {
    let temporary = try TemporaryStore()
    let things = temporary.store.collection("things")
    try things.insertMany(Self.documents.map { try Document(extendedJSON: $0) })
    if indexed { try things.createIndex(["a.b": 1]) }
    func find(_ filter: String, _ sort: String, limit: Int? = nil) throws -> [Int] {
      let options = FindOptions(sort: try SortSpecification(Document(extendedJSON: sort)), limit: limit)
      return try ids(things.find(Document(extendedJSON: filter), options: options))
    }
    // sort_dotted_paths.js's orders for {"a.b": ±1, _id: ±1}.
    #expect(try find("{}", #"{"a.b": 1, "_id": 1}"#) == [2, 9, 4, 5, 8, 1, 3, 7, 6])
    #expect(try find("{}", #"{"a.b": -1, "_id": -1}"#) == [7, 8, 6, 9, 3, 1, 5, 4, 2])
    #expect(try find("{}", #"{"a.b": -1, "_id": 1}"#, limit: 4) == [7, 6, 8, 3])
    // Narrowed by a range on "a.b" (through the index when there is one), the documents still
    // sort by every value of their path, not only those in the range: 9 sorts by its [].
    let filter = #"{"a.b": {"$gte": 1}}"#
    #expect(try find(filter, #"{"a.b": 1, "_id": 1}"#) == [9, 8, 1, 3, 7, 6])
    #expect(try things.explain(Document(extendedJSON: filter)).index == (indexed ? "a.b_1" : nil))
  }

  @Test func parallelArraysEndTheCursorWithAQueryError() throws {
    let temporary = try TemporaryStore()
    let things = temporary.store.collection("things")
    try things.insertMany([
      ["_id": 1, "a": [1, 2], "b": 1], ["_id": 2, "a": 1, "b": [3]], ["_id": 3, "a": [4], "b": [5, 6]],
    ])
    let options = FindOptions(sort: try SortSpecification(["a": 1, "b": -1]))
    let error = #expect(throws: StoreError.self) { try things.find(options: options).toArray() }
    #expect(error?.kind == .invalidQuery)
    #expect(error?.queryError?.kind == .sortKey)
    let message = error?.description ?? ""
    #expect(message.contains("cannot sort with keys that are parallel arrays"), "\(message)")
    // Without the document where both are arrays, the sort runs: _id 2 sorts by (1, 3) and
    // _id 1 by (1, 1), b descending.
    let sorted = try things.find(["_id": ["$lt": 3]], options: options)
    #expect(try ids(sorted) == [2, 1])
    // A top-k fails as well: every match's keys are read.
    let limited = FindOptions(sort: options.sort, limit: 1)
    #expect(throws: StoreError.self) { try things.find(options: limited).toArray() }
  }
}
