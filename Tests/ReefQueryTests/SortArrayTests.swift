import Foundation
@_spi(ReefInternal) import ReefBSON
@_spi(ReefInternal) import ReefQuery
import Testing

/// Sorting by paths that cross arrays, against the orders MongoDB's own tests expect
/// (jstests/core/query/sort/sort_dotted_paths.js, sort_dotted_paths_numeric.js,
/// sort_dotted_paths_parallel_arrays.js and sort_array.js). Each case runs every way a sort
/// runs: in memory, as a top-k (with a limit), and spilled to temporary files.
@Suite struct SortArrayTests {
  /// The documents, from Extended JSON; each has an integer `_id`.
  static func documents(_ json: [String]) throws -> [Document] {
    try json.map { try Document(extendedJSON: $0) }
  }

  /// The `_id`s of `documents` sorted by `sort`, the same in memory, through a top-k and
  /// through a spilled sort (whose order it checks against the first).
  static func order(_ documents: [Document], _ sort: String, filter: String = "{}") throws -> [Int] {
    let specification = try SortSpecification(Document(extendedJSON: sort))
    let query = try Query(filter: Document(extendedJSON: filter))
    let inMemory = try query.find(in: documents, options: FindOptions(sort: specification))
    let topK = try query.find(in: documents, options: FindOptions(sort: specification, limit: 500))
    #expect(topK == inMemory, "top-k of \(sort)")
    var spilled = FindStream(
      IteratorSource(documents.makeIterator()), query: query,
      options: FindOptions(sort: specification, sortMemory: SortMemory(limit: 1)))
    var spilledResults: [Document] = []
    while let document = try spilled.next() { spilledResults.append(document) }
    #expect(spilledResults == inMemory, "spilled sort of \(sort)")
    return inMemory.map { document in
      guard case .int32(let id)? = document["_id"] else { return -1 }
      return Int(id)
    }
  }

  /// The error a sort ends with, in memory and as a top-k (nil when it does not fail).
  static func failure(_ documents: [Document], _ sort: String, filter: String = "{}") throws -> QueryError? {
    let specification = try SortSpecification(Document(extendedJSON: sort))
    let query = try Query(filter: Document(extendedJSON: filter))
    var errors: [QueryError] = []
    for options in [FindOptions(sort: specification), FindOptions(sort: specification, limit: 1)] {
      do {
        _ = try query.find(in: documents, options: options)
      } catch {
        errors.append(error)
      }
    }
    #expect(errors.count != 1, "the sort \(sort) failed in one way of running only: \(errors)")
    return errors.first
  }

  // sort_dotted_paths.js: undefined, null, missing, empty and nested arrays.
  static let basic = [
    #"{"_id": 1, "a": 1}"#, #"{"_id": 2, "a": {"$undefined": true}}"#, #"{"_id": 3, "a": null}"#,
    #"{"_id": 4, "a": {}}"#, #"{"_id": 5, "a": []}"#, #"{"_id": 6, "a": [1]}"#, #"{"_id": 7, "a": [[1]]}"#,
    #"{"_id": 8}"#, #"{"_id": 9, "a": [{"$undefined": true}]}"#,
  ]

  @Test func undefinedNullMissingAndNestedArrays() throws {
    let documents = try Self.documents(Self.basic)
    // An empty array sorts as undefined, below null; [[1]] sorts by its element [1], an array.
    #expect(try Self.order(documents, #"{"a": 1, "_id": 1}"#) == [2, 5, 9, 3, 8, 1, 6, 4, 7])
    #expect(try Self.order(documents, #"{"a": -1, "_id": 1}"#) == [7, 4, 1, 6, 3, 8, 2, 5, 9])
  }

  @Test func numericPathComponentOverMixedTypes() throws {
    // sort_dotted_paths_numeric.js: "a.0" of [] is missing (null), of [[1]] the array [1].
    let documents = try Self.documents(Self.basic)
    #expect(try Self.order(documents, #"{"a.0": 1, "_id": 1}"#) == [9, 1, 2, 3, 4, 5, 8, 6, 7])
    #expect(try Self.order(documents, #"{"a.0": -1, "_id": 1}"#) == [7, 6, 1, 2, 3, 4, 5, 8, 9])
  }

  @Test func twoKeysEachAnArrayInSomeDocuments() throws {
    // sort_dotted_paths.js: sort({a: 1, b: 1}) where a or b (never both) is an array.
    let documents = try Self.documents([
      #"{"_id": 1, "a": 1, "b": [2]}"#, #"{"_id": 2, "a": 2, "b": []}"#, #"{"_id": 3, "a": [], "b": 4}"#,
      #"{"_id": 4, "a": [1], "b": 4}"#, #"{"_id": 5, "a": [2, 3], "b": 2}"#, #"{"_id": 6, "a": 2, "b": [3, 5]}"#,
      #"{"_id": 7, "a": 1, "b": [1, 3]}"#, #"{"_id": 8, "a": [1, 2], "b": 3}"#, #"{"_id": 9, "a": 2, "b": 3}"#,
    ])
    #expect(try Self.order(documents, #"{"a": 1, "b": 1, "_id": 1}"#) == [3, 7, 1, 8, 4, 2, 5, 6, 9])
    #expect(try Self.order(documents, #"{"a": 1, "b": -1, "_id": 1}"#) == [3, 4, 7, 8, 1, 6, 9, 5, 2])
    #expect(try Self.order(documents, #"{"a": -1, "b": 1, "_id": 1}"#) == [5, 2, 6, 8, 9, 7, 1, 4, 3])
    #expect(try Self.order(documents, #"{"a": -1, "b": -1, "_id": 1}"#) == [5, 6, 8, 9, 2, 4, 7, 1, 3])
  }

  @Test func parallelArraysFailTheSortUnlessFilteredOut() throws {
    // sort_dotted_paths_parallel_arrays.js: a document where a and b are both arrays (even
    // empty) cannot be sorted by {a, b}, wherever _id comes in the sort.
    let documents = try Self.documents([
      #"{"_id": 1, "a": [], "b": 1}"#, #"{"_id": 2, "a": 1, "b": []}"#, #"{"_id": 3, "a": [], "b": []}"#,
    ])
    for sort in [
      #"{"a": 1, "b": 1}"#, #"{"_id": 1, "a": 1, "b": 1}"#, #"{"a": 1, "_id": 1, "b": 1}"#,
      #"{"a": 1, "b": 1, "_id": 1}"#,
    ] {
      let error = try #require(try Self.failure(documents, sort), "\(sort)")
      #expect(error.kind == .sortKey)
      #expect(error.message.contains("cannot sort with keys that are parallel arrays"), "\(error)")
      #expect(error.message.contains("\"a\" and \"b\"") && error.message.contains("_id 3"), "\(error)")
      #expect(error.keyPath == ["b"])
    }
    // Without the document whose a and b are both arrays, the same sorts work.
    let filter = #"{"$or": [{"a": {"$not": {"$type": "array"}}}, {"b": {"$not": {"$type": "array"}}}]}"#
    for sort in [#"{"a": 1, "b": 1}"#, #"{"_id": 1, "a": 1, "b": 1}"#, #"{"a": 1, "b": 1, "_id": 1}"#] {
      #expect(try Self.order(documents, sort, filter: filter) == [1, 2], "\(sort)")
    }
  }

  @Test func parallelArraysBelowACommonDocument() throws {
    // sort_dotted_paths_parallel_arrays.js: a.b and a.c both arrays; a.b and c.d both arrays.
    let sameParent = try Self.documents([#"{"_id": 1, "a": {"b": [1, 2], "c": [3, 4]}}"#])
    #expect(try Self.failure(sameParent, #"{"a.b": 1, "a.c": 1}"#)?.kind == .sortKey)
    let apart = try Self.documents([#"{"_id": 1, "a": {"b": [1, 2]}, "c": {"d": [3, 4]}}"#])
    #expect(try Self.failure(apart, #"{"a.b": 1, "c.d": 1}"#)?.kind == .sortKey)
    // Two arrays inside the elements of one array are parallel too.
    let inElements = try Self.documents([#"{"_id": 1, "a": [{"b": [1], "c": [2]}]}"#])
    #expect(try Self.failure(inElements, #"{"a.b": 1, "a.c": -1}"#)?.kind == .sortKey)
    // A single document fails too: a sort of one still reads its keys.
    #expect(try Self.failure(apart, #"{"c.d": 1, "a.b": -1}"#) != nil)
  }

  @Test func pathOfLengthTwoThroughArrays() throws {
    // sort_dotted_paths.js: "a.b" where a is a document or an array of documents.
    let documents = try Self.documents([
      #"{"_id": 1, "a": {"b": 2}}"#, #"{"_id": 2, "a": {"b": []}}"#, #"{"_id": 3, "a": {"b": [2, 3]}}"#,
      #"{"_id": 4, "a": {"c": 1}}"#, #"{"_id": 5, "a": []}"#, #"{"_id": 6, "a": [{"b": [5]}]}"#,
      #"{"_id": 7, "a": [{"b": [4, 5]}, {"b": 7}]}"#, #"{"_id": 8, "a": [{"b": [1, 3]}, {"b": [2, 5]}]}"#,
      #"{"_id": 9, "a": [{"b": []}, {"b": [1, 3]}]}"#,
    ])
    #expect(try Self.order(documents, #"{"a.b": 1, "_id": 1}"#) == [2, 9, 4, 5, 8, 1, 3, 7, 6])
    #expect(try Self.order(documents, #"{"a.b": 1, "_id": -1}"#) == [9, 2, 5, 4, 8, 3, 1, 7, 6])
    #expect(try Self.order(documents, #"{"a.b": -1, "_id": 1}"#) == [7, 6, 8, 3, 9, 1, 4, 5, 2])
    #expect(try Self.order(documents, #"{"a.b": -1, "_id": -1}"#) == [7, 8, 6, 9, 3, 1, 5, 4, 2])
  }

  @Test func twoPathsWithACommonPrefixTakeOneElement() throws {
    // sort_dotted_paths.js: {"a.c", "a.b"} and {"a.c", "a"} sort by one element's pair.
    let documents = try Self.documents([
      #"{"_id": 1, "a": [{"b": 4, "c": 1}, {"b": 1, "c": 2}]}"#,
      #"{"_id": 2, "a": [{"b": 2, "c": 1}, {"b": 4, "c": 2}]}"#,
      #"{"_id": 3, "a": [{"b": 6, "c": 1}, {"b": 9, "c": 2}]}"#,
      #"{"_id": 4, "a": [{"b": 4, "c": 1}, {"b": 5, "c": 3}]}"#,
      #"{"_id": 5, "a": [{"b": 2, "c": 1}, {"b": 7, "c": 3}]}"#,
      #"{"_id": 6, "a": [{"b": 5, "c": 1}, {"b": 3, "c": 3}]}"#,
      #"{"_id": 7, "a": [{"b": 7, "c": 2}, {"b": 2, "c": 3}]}"#,
      #"{"_id": 8, "a": [{"b": 3, "c": 2}, {"b": 8, "c": 3}]}"#,
      #"{"_id": 9, "a": [{"b": 8, "c": 2}, {"b": 6, "c": 3}]}"#,
    ])
    let ascending = [2, 5, 1, 4, 6, 3, 8, 7, 9]
    let cAscendingBDescending = [3, 6, 1, 4, 2, 5, 9, 7, 8]
    let cDescendingBAscending = [7, 6, 4, 9, 5, 8, 1, 2, 3]
    let descending = [8, 5, 9, 4, 6, 7, 3, 2, 1]
    #expect(try Self.order(documents, #"{"a.c": 1, "a.b": 1, "_id": 1}"#) == ascending)
    #expect(try Self.order(documents, #"{"a.c": 1, "a.b": -1, "_id": 1}"#) == cAscendingBDescending)
    #expect(try Self.order(documents, #"{"a.c": -1, "a.b": 1, "_id": 1}"#) == cDescendingBAscending)
    #expect(try Self.order(documents, #"{"a.c": -1, "a.b": -1, "_id": 1}"#) == descending)
    // "a" is the element itself, which begins with b: the same orders.
    #expect(try Self.order(documents, #"{"a.c": 1, "a": 1, "_id": 1}"#) == ascending)
    #expect(try Self.order(documents, #"{"a.c": 1, "a": -1, "_id": 1}"#) == cAscendingBDescending)
    #expect(try Self.order(documents, #"{"a.c": -1, "a": 1, "_id": 1}"#) == cDescendingBAscending)
    #expect(try Self.order(documents, #"{"a.c": -1, "a": -1, "_id": 1}"#) == descending)
  }

  static let commonPrefixWithInnerArrays = [
    #"{"_id": 1, "a": [{"b": [4, 1], "c": 1}, {"b": [1, 5], "c": 2}]}"#,
    #"{"_id": 2, "a": [{"b": 2, "c": [1, 3]}, {"b": 4, "c": [2, 4]}]}"#,
    #"{"_id": 3, "a": [{"b": [6, 4], "c": 1}, {"b": [9, 7], "c": 2}]}"#,
    #"{"_id": 4, "a": [{"b": 4, "c": [1, 2]}, {"b": 5, "c": [3, 2]}]}"#,
    #"{"_id": 5, "a": [{"b": [2, 3], "c": 1}, {"b": [7, 6], "c": 3}]}"#,
    #"{"_id": 6, "a": [{"b": 5, "c": []}, {"b": 3, "c": 3}]}"#,
    #"{"_id": 7, "a": [{"b": [], "c": 2}, {"b": 2, "c": 3}]}"#,
    #"{"_id": 8, "a": [{"b": 3, "c": [2]}, {"b": 8, "c": [3]}]}"#,
    #"{"_id": 9, "a": [{"b": [8], "c": 2}, {"b": [6], "c": 3}]}"#,
  ]

  @Test func twoPathsWithACommonPrefixAndArraysInside() throws {
    // sort_dotted_paths.js: the same with arrays inside the elements.
    let documents = try Self.documents(Self.commonPrefixWithInnerArrays)
    #expect(try Self.order(documents, #"{"a.c": 1, "a.b": 1, "_id": 1}"#) == [6, 1, 2, 5, 3, 4, 7, 8, 9])
    #expect(try Self.order(documents, #"{"a.c": 1, "a.b": -1, "_id": 1}"#) == [6, 3, 1, 4, 5, 2, 9, 8, 7])
    #expect(try Self.order(documents, #"{"a.c": -1, "a.b": 1, "_id": 1}"#) == [2, 7, 6, 4, 5, 9, 8, 1, 3])
    #expect(try Self.order(documents, #"{"a.c": -1, "a.b": -1, "_id": 1}"#) == [2, 8, 5, 9, 4, 6, 7, 3, 1])
    #expect(try Self.order(documents, #"{"a.b": 1, "a": 1, "_id": 1}"#) == [7, 1, 2, 5, 6, 8, 4, 3, 9])
    #expect(try Self.order(documents, #"{"a.b": 1, "a": -1, "_id": 1}"#) == [7, 1, 5, 2, 8, 6, 3, 4, 9])
    #expect(try Self.order(documents, #"{"a.b": -1, "a": 1, "_id": 1}"#) == [3, 8, 9, 5, 6, 4, 1, 2, 7])
    #expect(try Self.order(documents, #"{"a.b": -1, "a": -1, "_id": 1}"#) == [3, 9, 8, 5, 1, 4, 6, 2, 7])
  }

  @Test func positionalPathThroughArrays() throws {
    // sort_dotted_paths.js and sort_dotted_paths_numeric.js: "a.0.b" reads the first element.
    let documents = try Self.documents(Self.commonPrefixWithInnerArrays)
    #expect(try Self.order(documents, #"{"a.0.b": 1, "_id": 1}"#) == [7, 1, 2, 5, 8, 3, 4, 6, 9])
    #expect(try Self.order(documents, #"{"a.0.b": 1, "_id": -1}"#) == [7, 1, 5, 2, 8, 4, 3, 6, 9])
    #expect(try Self.order(documents, #"{"a.0.b": -1, "_id": 1}"#) == [9, 3, 6, 1, 4, 5, 8, 2, 7])
    #expect(try Self.order(documents, #"{"a.0.b": -1, "_id": -1}"#) == [9, 3, 6, 4, 1, 8, 5, 2, 7])
  }

  @Test func twoPathsWithoutACommonPrefix() throws {
    // sort_dotted_paths.js: "a.b" and "c.d", one of them through arrays in each document.
    let documents = try Self.documents([
      #"{"_id": 1, "a": {"b": 1}, "c": [{"d": [4, 1]}, {"d": [1, 5]}]}"#,
      #"{"_id": 2, "a": [{"b": [1, 3]}, {"b": [2, 4]}], "c": {"d": 2}}"#,
      #"{"_id": 3, "a": {"b": 1}, "c": [{"d": [6, 4]}, {"d": [9, 7]}]}"#,
      #"{"_id": 4, "a": [{"b": [2]}, {"b": [3, 2]}], "c": {"d": 4}}"#,
      #"{"_id": 5, "a": {"b": 1}, "c": [{"d": [2, 3]}, {"d": [7, 6]}]}"#,
      #"{"_id": 6, "a": [{"b": []}, {"b": 3}], "c": {"d": 4}}"#,
      #"{"_id": 7, "a": {"b": 2}, "c": [{"d": []}, {"d": 2}]}"#,
      #"{"_id": 8, "a": [{"b": [2]}, {"b": [3]}], "c": {"d": 3}}"#,
      #"{"_id": 9, "a": {"b": 3}, "c": [{"d": [8]}, {"d": [6]}]}"#,
    ])
    #expect(try Self.order(documents, #"{"a.b": 1, "c.d": 1, "_id": 1}"#) == [6, 1, 2, 5, 3, 7, 8, 4, 9])
    #expect(try Self.order(documents, #"{"a.b": 1, "c.d": -1, "_id": 1}"#) == [6, 3, 5, 1, 2, 4, 8, 7, 9])
    #expect(try Self.order(documents, #"{"a.b": -1, "c.d": 1, "_id": 1}"#) == [2, 8, 4, 6, 9, 7, 1, 5, 3])
    #expect(try Self.order(documents, #"{"a.b": -1, "c.d": -1, "_id": 1}"#) == [2, 9, 4, 6, 8, 7, 3, 5, 1])
  }

  @Test func pathOfLengthThreeOverNestedArrays() throws {
    // sort_dotted_paths.js: "a.b.c"; an element without c counts as null.
    let documents = try Self.documents([
      #"{"_id": 1, "a": {"b": {"c": 2}}}"#, #"{"_id": 2, "a": {"b": {"c": []}}}"#,
      #"{"_id": 3, "a": [{"b": []}, {"b": {"c": []}}]}"#, #"{"_id": 4, "a": [{"b": {"c": 1}}]}"#,
      #"{"_id": 5, "a": {"b": [{"c": 3}, {"d": 1}]}}"#, #"{"_id": 6, "a": {"b": [{"c": [5]}]}}"#,
      #"{"_id": 7, "a": []}"#, #"{"_id": 8, "a": {"b": [{"c": [1, 3]}, {"c": [2, 5]}]}}"#,
      #"{"_id": 9, "a": [{"b": [{"c": []}, {"c": [1, 3]}]}]}"#,
    ])
    #expect(try Self.order(documents, #"{"a.b.c": 1, "_id": 1}"#) == [2, 3, 9, 5, 7, 4, 8, 1, 6])
    #expect(try Self.order(documents, #"{"a.b.c": 1, "_id": -1}"#) == [9, 3, 2, 7, 5, 8, 4, 1, 6])
    #expect(try Self.order(documents, #"{"a.b.c": -1, "_id": 1}"#) == [6, 8, 5, 9, 1, 4, 3, 7, 2])
    #expect(try Self.order(documents, #"{"a.b.c": -1, "_id": -1}"#) == [8, 6, 9, 5, 1, 4, 7, 3, 2])
  }

  @Test func sortArrayCases() throws {
    // sort_array.js: the smallest element ascending, the largest descending.
    let ascending = try Self.documents([#"{"_id": 0, "a": [3, 0, 1]}"#, #"{"_id": 1, "a": [8, 4, -1]}"#])
    #expect(try Self.order(ascending, #"{"a": 1}"#, filter: #"{"a": {"$gte": 2}}"#) == [1, 0])
    let descending = try Self.documents([#"{"_id": 0, "a": [3, 0, 1]}"#, #"{"_id": 1, "a": [0, 4, -1]}"#])
    #expect(try Self.order(descending, #"{"a": -1}"#, filter: #"{"a": {"$gte": 2}}"#) == [1, 0])
    // Mixed directions over one array: _id 0 sorts by (0, 9), _id 1 by (0, 8) ascending-then-
    // descending, and by (4, 7) and (1, 7) descending-then-ascending.
    let mixed = try Self.documents([
      #"{"_id": 0, "x": [{"y": [4, 0, 1], "z": 7}, {"y": 0, "z": 9}]}"#,
      #"{"_id": 1, "x": [{"y": 1, "z": 7}, {"y": 0, "z": [8, 6]}]}"#,
    ])
    #expect(try Self.order(mixed, #"{"x.y": 1, "x.z": -1}"#) == [0, 1])
    #expect(try Self.order(mixed, #"{"x.y": -1, "x.z": 1}"#) == [0, 1])
    // Fields beside the sort's path do not matter.
    let beside = try Self.documents([
      #"{"_id": 0, "a": 1, "b": {"c": 1}, "d": [{"e": {"f": 1, "g": [6, 5, 4]}}, {"e": {"g": [3, 2, 1]}}]}"#,
      #"{"_id": 1, "a": 2, "b": {"c": 2}, "d": [{"e": {"f": 2, "g": [5, 4, 3]}}, {"e": {"g": [2, 1, 0]}}]}"#,
    ])
    #expect(try Self.order(beside, #"{"d.e.g": 1}"#) == [1, 0])
    // SERVER-31858: a filter on "a.b" and a sort on "a.c" of the same array.
    let shared = try Self.documents([
      #"{"_id": 2, "a": [{"b": 1, "c": 2}, {"b": 2, "c": 3}]}"#,
      #"{"_id": 0, "a": [{"b": 2, "c": 0}, {"b": 1, "c": 4}]}"#,
      #"{"_id": 1, "a": [{"b": 1, "c": 5}, {"b": 2, "c": 1}]}"#,
    ])
    #expect(try Self.order(shared, #"{"a.c": 1}"#, filter: #"{"a.b": 1}"#) == [0, 1, 2])
  }

  @Test func elementsThatAreNotDocumentsCountAsNull() throws {
    // As MongoDB's index keys: [1, {b: 2}] reaches null (from 1) and 2 along "a.b"; an array
    // inside the array is not searched for "b".
    let documents = try Self.documents([
      #"{"_id": 1, "a": [1, {"b": 2}]}"#, #"{"_id": 2, "a": [{"b": 0}]}"#, #"{"_id": 3, "a": [[{"b": -1}]]}"#,
      #"{"_id": 4, "a": [{"b": 3}, {"c": 1}]}"#,
    ])
    #expect(try Self.order(documents, #"{"a.b": 1}"#) == [1, 3, 4, 2])
    #expect(try Self.order(documents, #"{"a.b": -1}"#) == [4, 1, 2, 3])
  }

  @Test func hostileShapesEndQuickly() throws {
    // A wide array (100,000 elements), nesting through arrays, and an element whose numeric
    // field is also a position: sorted or rejected, never a crash.
    var wide = DocumentBuilder()
    wide.append("_id", .int32(1))
    wide.append("a", .array(BSONArray((0..<100_000).map { .document(["b": .int32(Int32(100_000 - $0))]) })))
    let narrow = try Document(extendedJSON: #"{"_id": 2, "a": [{"b": 5}]}"#)
    #expect(try Self.order([wide.document, narrow], #"{"a.b": 1}"#) == [1, 2])
    #expect(try Self.order([wide.document, narrow], #"{"a.b": -1}"#) == [1, 2])
    // 45 arrays of documents, each inside the last (90 levels, under the default limit of 100).
    var deep: BSON = .int32(1)
    for _ in 0..<45 { deep = .array([.document(["a": deep])]) }
    let nested: Document = ["_id": .int32(3), "a": deep]
    let path = Array(repeating: "a", count: 46).joined(separator: ".")
    #expect(try Self.order([nested, narrow], #"{"\#(path)": 1}"#) == [2, 3])
    let ambiguous = try Document(extendedJSON: #"{"_id": 4, "a": [{"0": 1}, {"0": 2}]}"#)
    let error = try #require(try Self.failure([ambiguous], #"{"a.0": 1}"#))
    #expect(error.kind == .sortKey && error.message.contains("ambiguous") && error.keyPath == ["a.0"], "\(error)")
  }
}
