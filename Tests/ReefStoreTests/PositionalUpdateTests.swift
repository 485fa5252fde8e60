import ReefBSON
import ReefQuery
import ReefTestSupport
import Testing

@testable import ReefStore

/// The update error a store call throws, or `nil` (recorded as an issue) when it throws none.
private func updateError(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) -> UpdateError? {
  do {
    try body()
    Issue.record("expected an update error", sourceLocation: sourceLocation)
  } catch let error as StoreError {
    #expect(error.kind == .invalidQuery, "\(error)", sourceLocation: sourceLocation)
    #expect(error.updateError != nil, "\(error)", sourceLocation: sourceLocation)
    return error.updateError
  } catch {
    Issue.record("expected a StoreError, got \(error)", sourceLocation: sourceLocation)
  }
  return nil
}

/// The error `body` throws, or `nil` (recorded as an issue) when it throws none.
private func applyError(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) -> UpdateError? {
  do {
    try body()
    Issue.record("expected an update error", sourceLocation: sourceLocation)
  } catch let error as UpdateError {
    return error
  } catch {
    Issue.record("expected an UpdateError, got \(error)", sourceLocation: sourceLocation)
  }
  return nil
}

/// Positional updates through the store: `updateOne`/`updateMany` with `arrayFilters`, `$` from
/// the filter, upserts, index entries, and hostile input. The document-level cases are in
/// `Specs/update/positional.json`.
@Suite struct PositionalUpdateTests {
  /// MongoDB's `$[<identifier>]` page, "Update All Array Elements That Match arrayFilters".
  @Test func updateManyWithArrayFilters() throws {
    let temporary = try TemporaryStore()
    let students = temporary.store.collection("students")
    try students.insertMany([
      ["_id": 1, "grades": [95, 92, 90]], ["_id": 2, "grades": [98, 100, 102]], ["_id": 3, "grades": [95, 110, 100]],
    ])
    let result = try students.updateMany(
      [:], ["$set": ["grades.$[element]": 100]], arrayFilters: [["element": ["$gte": 100]]])
    #expect(result == UpdateResult(matched: 3, modified: 2, upsertedID: nil))
    #expect(
      try students.find().toArray() == [
        ["_id": 1, "grades": [95, 92, 90]], ["_id": 2, "grades": [98, 100, 100]],
        ["_id": 3, "grades": [95, 100, 100]],
      ])
  }

  /// MongoDB's `$ (update)` page, "Update Values in an Array" and "Update Documents in an Array".
  @Test func updateOneWithThePositionalOfTheFilter() throws {
    let temporary = try TemporaryStore()
    let students = temporary.store.collection("students")
    try students.insertMany([
      ["_id": 1, "grades": [85, 80, 80]], ["_id": 2, "grades": [88, 90, 92]], ["_id": 3, "grades": [85, 100, 90]],
      [
        "_id": 4,
        "grades": [
          ["grade": 80, "mean": 75, "std": 8], ["grade": 85, "mean": 90, "std": 5],
          ["grade": 85, "mean": 85, "std": 8],
        ],
      ],
    ])
    #expect(try students.updateOne(["_id": 1, "grades": 80], ["$set": ["grades.$": 82]]).modified == 1)
    #expect(try students.findOne(["_id": 1]) == ["_id": 1, "grades": [85, 82, 80]])
    #expect(try students.updateOne(["_id": 4, "grades.grade": 85], ["$set": ["grades.$.std": 6]]).modified == 1)
    #expect(
      try students.findOne(["_id": 4]) == [
        "_id": 4,
        "grades": [
          ["grade": 80, "mean": 75, "std": 8], ["grade": 85, "mean": 90, "std": 6],
          ["grade": 85, "mean": 85, "std": 8],
        ],
      ])
    // updateMany: each document gets its own position.
    #expect(try students.updateMany(["grades": ["$gte": 90]], ["$inc": ["grades.$": 1]]).modified == 2)
    #expect(try students.findOne(["_id": 2]) == ["_id": 2, "grades": [88, 91, 92]])
    #expect(try students.findOne(["_id": 3]) == ["_id": 3, "grades": [85, 101, 90]])
    // The array is not in the filter: an error, and nothing is written.
    let error = try #require(updateError { try students.updateOne(["_id": 1], ["$set": ["grades.$": 0]]) })
    #expect(error.kind == .badValue && error.message.contains("did not find the match needed from the query"))
    #expect(error.keyPath == ["grades", "$"])
    #expect(try students.findOne(["_id": 1]) == ["_id": 1, "grades": [85, 82, 80]])
  }

  /// MongoDB's `$[]` and `$[<identifier>]` pages, "upsert": the filter's array equality seeds the
  /// array; without it the upsert fails and inserts nothing; `$` never upserts.
  @Test func upsertsWithPositionalPaths() throws {
    let temporary = try TemporaryStore()
    let arrays = temporary.store.collection("arrays")
    let all = try arrays.updateOne(["myArray": [5, 8]], ["$set": ["myArray.$[]": 10]], upsert: true)
    let allID = try #require(all.upsertedID)
    #expect(try arrays.findOne(["_id": allID]) == ["_id": allID, "myArray": [10, 10]])
    let filtered = try arrays.updateOne(
      ["myArray": [0, 1]], ["$set": ["myArray.$[element]": 2]], upsert: true, arrayFilters: [["element": 0]])
    let filteredID = try #require(filtered.upsertedID)
    #expect(try arrays.findOne(["_id": filteredID]) == ["_id": filteredID, "myArray": [2, 1]])

    let missing = try #require(
      updateError { try arrays.updateOne(["x": 1], ["$set": ["myArray.$[]": 10]], upsert: true) })
    #expect(missing.kind == .pathNotViable)
    #expect(missing.message.hasPrefix("The path 'myArray' must exist in the document in order to apply array updates."))
    let positional = try #require(
      updateError { try arrays.updateOne(["myArray": 7], ["$set": ["myArray.$": 10]], upsert: true) })
    #expect(positional.message.contains("did not find the match needed from the query"))
    #expect(try arrays.count() == 2)
  }

  /// An update that changes an indexed field inside array elements moves its index entries: every
  /// indexed query answers as a scan does, before and after.
  @Test func indexesFollowPositionalUpdates() throws {
    let temporary = try TemporaryStore()
    let students = temporary.store.collection("students")
    try students.createIndex(["grades.grade": 1])
    try students.createIndex(["scores": 1])
    for id in 0..<40 {
      var grades: [BSON] = []
      for n in 0..<4 {
        let grade = Int32(70 + (id + n * 7) % 30)
        let element: Document = ["grade": .int32(grade), "n": .int32(Int32(n))]
        grades.append(.document(element))
      }
      var scores: [BSON] = []
      for n in 0..<3 { scores.append(.int32(Int32((id * 3 + n) % 20))) }
      try students.insert([
        "_id": .int32(Int32(id)), "grades": .array(BSONArray(grades)), "scores": .array(BSONArray(scores)),
      ])
    }
    let filters: [Document] = [
      ["grades.grade": 100], ["grades.grade": ["$gte": 95]], ["grades.grade": 85], ["grades.grade": ["$lt": 72]],
      ["scores": 0], ["scores": ["$gt": 15]], ["scores": 19], ["scores": 1000], ["grades.grade": 1085],
    ]
    func checkIndexesAgreeWithAScan(_ stage: String) throws {
      let everything = try students.find().toArray()
      for filter in filters {
        let query = try Query(filter: filter)
        let indexed = try students.find(filter).toArray()
        #expect(try students.explain(filter).index != nil, "\(stage): \(filter) should use an index")
        let scanned = everything.filter(query.matches)
        #expect(indexed.map { $0["_id"] } == scanned.map { $0["_id"] }, "\(stage): \(filter)")
      }
    }
    try checkIndexesAgreeWithAScan("before")
    let raised = try students.updateMany(
      [:], ["$inc": ["grades.$[g].grade": 1000]], arrayFilters: [["g.grade": ["$gte": 85]]])
    #expect(raised.matched == 40 && raised.modified > 0)
    try checkIndexesAgreeWithAScan("after $[g]")
    #expect(try students.count(["grades": ["$elemMatch": ["grade": ["$gte": 85, "$lt": 1000]]]]) == 0)
    _ = try students.updateMany(["scores": ["$gte": 10]], ["$set": ["scores.$": 1000]])
    try checkIndexesAgreeWithAScan("after $")
    #expect(try students.count(["scores": 1000]) == 40 - (try students.count(["scores": ["$not": ["$gte": 10]]])))
    _ = try students.updateMany([:], ["$mul": ["scores.$[]": 2], "$unset": ["grades.$[].n": true]])
    try checkIndexesAgreeWithAScan("after $[]")
    #expect(try students.count(["grades.n": ["$exists": true]]) == 0)
  }

  /// A document of `updateMany` that fails (here a conflict of two identifiers on one element)
  /// aborts the whole update: the documents before it are not changed either.
  @Test func aFailingDocumentWritesNothing() throws {
    let temporary = try TemporaryStore()
    let items = temporary.store.collection("items")
    try items.insertMany([["_id": 1, "a": [1, 2]], ["_id": 2, "a": [3, 4]]])
    let error = try #require(
      updateError {
        try items.updateMany(
          [:], ["$set": ["a.$[x]": 0, "a.$[y]": 1]], arrayFilters: [["x": ["$gte": 3]], ["y": 4]])
      })
    #expect(error.kind == .conflictingPaths)
    #expect(error.message.hasPrefix("Update created a conflict at 'a.1'"), "\(error)")
    #expect(error.keyPath == ["a", "1"])
    #expect(try items.find().toArray() == [["_id": 1, "a": [1, 2]], ["_id": 2, "a": [3, 4]]])
  }

  /// Array filter errors name the filter: its index in `arrayFilters` is the key path.
  @Test func arrayFilterErrorsCarryWhere() throws {
    let temporary = try TemporaryStore()
    let items = temporary.store.collection("items")
    let unused = try #require(
      updateError { try items.updateOne([:], ["$set": ["a.$[i]": 1]], arrayFilters: [["i": 0], ["j": 0]]) })
    #expect(unused.kind == .arrayFilter && unused.keyPath == ["arrayFilters", "1"])
    #expect(unused.description.hasSuffix("(at arrayFilters.1)"))
    let undefined = try #require(updateError { try items.updateOne([:], ["$set": ["a.$[k].b": 1]]) })
    #expect(undefined.kind == .arrayFilter && undefined.keyPath == ["a", "$[k]", "b"])
    let bad = try #require(
      updateError { try items.updateOne([:], ["$set": ["a.$[i]": 1]], arrayFilters: [["i": ["$bogus": 1]]]) })
    #expect(bad.kind == .arrayFilter && bad.queryError != nil)
    #expect(bad.message.hasPrefix("Error parsing array filter :: caused by :: "))
  }

  /// `$currentDate` through `$[]` and `$[identifier]` (update_arrayFilters.js, "$currentDate").
  @Test func currentDateThroughPositionals() throws {
    let update = try Update(
      ["$currentDate": ["a.$[i]": true, "b.$[]": ["$type": "timestamp"]]], arrayFilters: [["i": 0]])
    let updated = try update.apply(to: ["_id": 0, "a": [0, 1], "b": [1, 2]])
    guard case .array(let a)? = updated["a"], case .array(let b)? = updated["b"] else {
      Issue.record("arrays lost: \(updated)")
      return
    }
    let first = Array(a)
    #expect(first.count == 2 && first[1] == .int32(1))
    if case .datetime = first[0] {} else { Issue.record("a.0 is not a date: \(updated)") }
    #expect(Array(b).allSatisfy { if case .timestamp = $0 { true } else { false } }, "\(updated)")
  }

  /// Which element `$` stands for, as MongoDB's match details give it.
  @Test func matchedPositionFollowsTheFilter() throws {
    func position(_ filter: Document, _ document: Document) throws -> String? {
      let query = try Query(filter: filter)
      #expect(query.matches(document), "\(filter) does not match \(document)")
      return try MatchedPositionFinder(query).position(in: document)
    }
    let grades: Document = ["_id": 1, "grades": [85, 80, 80], "tags": ["x", "y"]]
    #expect(try position(["grades": 80], grades) == "1")
    #expect(try position(["grades": ["$lt": 85]], grades) == "1")
    #expect(try position(["grades": ["$in": [80, 85]]], grades) == "0")
    // $and: the last condition that went through an array.
    #expect(try position(["tags": "y", "grades": 80], grades) == "1")
    #expect(try position(["grades": 80, "tags": "x"], grades) == "0")
    // No position: negations, whole arrays, $exists, $size, a condition without an array.
    #expect(try position(["grades": ["$ne": 1]], grades) == nil)
    #expect(try position(["grades": ["$nin": [1]]], grades) == nil)
    #expect(try position(["grades": [85, 80, 80]], grades) == nil)
    #expect(try position(["grades": ["$exists": true]], grades) == nil)
    #expect(try position(["grades": ["$size": 3]], grades) == nil)
    #expect(try position(["_id": 1], grades) == nil)
    // A whole element that is an array.
    #expect(try position(["a": [3]], ["_id": 1, "a": [[1], [3]]]) == "1")
    // $elemMatch in both forms, and nested in a path through an outer array.
    #expect(try position(["a": ["$elemMatch": ["$gt": 1, "$lt": 3]]], ["_id": 1, "a": [1, 5, 2]]) == "2")
    let nested: Document = ["_id": 1, "a": [["b": [["c": 1]]], ["b": [["c": 2], ["c": 3]]]]]
    #expect(try position(["a.b": ["$elemMatch": ["c": 3]]], nested) == "1")
    #expect(try position(["a.b.c": 3], nested) == "1")
    // $or: the first clause that matches.
    #expect(try position(["$or": [["grades": 99], ["grades": 80]]], grades) == "1")
    #expect(try position(["$or": [["_id": 1], ["grades": 80]]], grades) == nil)
  }

  /// Hostile input: huge arrays, long and deep positional paths, pathological array-filter
  /// regexes, many conflicting elements. Each ends quickly with a result or an error.
  @Test func hostileInputEndsCleanly() throws {
    // 100,000 elements through $[].
    let count = 100_000
    let big: Document = ["_id": 1, "a": .array(BSONArray((0..<count).map { BSON.int32(Int32($0)) }))]
    let incremented = try Update(["$inc": ["a.$[]": 1]]).apply(to: big)
    guard case .array(let elements)? = incremented["a"] else {
      Issue.record("no array")
      return
    }
    let values = Array(elements)
    #expect(values.count == count && values.first == .int32(1) && values.last == .int32(Int32(count)))
    // 50,000 elements, each tested by an array filter (a debug build tests about 50,000 a second).
    let filtered: Document = ["_id": 1, "a": .array(BSONArray((0..<50_000).map { BSON.int32(Int32($0)) }))]
    let even = try Update(["$set": ["a.$[x]": -1]], arrayFilters: [["x": ["$mod": [2, 0]]]]).apply(to: filtered)
    #expect(even["a.0"] == .int32(-1) && even["a.1"] == .int32(1) && even["a.49998"] == .int32(-1))
    #expect(even["a.49999"] == .int32(49_999))
    // Two identifiers that both match every one of them: one conflict error, found without a
    // pairwise comparison of the 100,000 concrete paths.
    let conflict = try #require(
      applyError {
        _ = try Update(["$set": ["a.$[x]": 0, "a.$[y]": 1]], arrayFilters: [["x": ["$gte": 0]], ["y": ["$gte": 0]]])
          .apply(to: filtered)
      })
    #expect(conflict.kind == .conflictingPaths && conflict.message.hasPrefix("Update created a conflict at 'a.0'"))

    // A path of 10,000 `$[]` on a shallow document: an error at the first scalar, no crash.
    let longPath = "a" + String(repeating: ".$[]", count: 10_000)
    let shallow = try #require(
      applyError { _ = try Update(["$set": [longPath: 1]]).apply(to: ["_id": 1, "a": [[1]]]) })
    #expect(shallow.kind == .pathNotViable)
    #expect(shallow.message.hasPrefix("Cannot apply array updates to non-array element 0: 1"), "\(shallow.message)")

    // 90 levels of arrays, each updated through $[].
    var deep = BSON.int32(0)
    for _ in 0..<90 { deep = .array([deep]) }
    let deepPath = "a" + String(repeating: ".$[]", count: 90)
    let deepUpdated = try Update(["$inc": [deepPath: 5]]).apply(to: ["_id": 1, "a": deep])
    #expect(deepUpdated["a" + String(repeating: ".0", count: 90)] == .int32(5))

    // An identifier of 10,000 characters without a filter, and a malformed positional.
    let longIdentifier = "a.$[" + String(repeating: "z", count: 10_000) + "]"
    let undefined = try #require(applyError { _ = try Update(["$set": [longIdentifier: 1]]) })
    #expect(undefined.kind == .arrayFilter)
    let malformed = try Update(["$set": ["a.$[.b": 1]]).apply(to: ["_id": 1, "a": ["$[": ["x": 0]]])
    #expect(malformed == ["_id": 1, "a": ["$[": ["x": 0, "b": 1]]])

    // 1,000 identifiers, each with its array filter and its array; then 5,000 unused filters.
    var set = DocumentBuilder()
    var target = DocumentBuilder()
    target.append("_id", .int32(1))
    var filters: [Document] = []
    for index in 0..<1_000 {
      set.append("a\(index).$[x\(index)]", .int32(-1))
      target.append("a\(index)", [0, .int32(Int32(index))])
      filters.append(["x\(index)": .int32(Int32(index))])
    }
    let many = try Update(["$set": .document(set.document)], arrayFilters: filters).apply(to: target.document)
    #expect(many["a0"] == [-1, -1] && many["a1"] == [0, -1] && many["a999"] == [0, -1])
    let unusedFilters = (0..<5_000).map { (index: Int) -> Document in ["u\(index)": 1] }
    let unused = try #require(applyError { _ = try Update(["$set": ["a": 1]], arrayFilters: unusedFilters) })
    #expect(
      unused.kind == .arrayFilter && unused.message.hasPrefix("The array filter for identifier 'u0' was not used"))

    // An array filter whose regex goes past its match limit ends with a limit error.
    let hostile = String(repeating: "a", count: 40) + "ba"
    let regex = try #require(
      applyError {
        _ = try Update(["$set": ["s.$[x]": "y"]], arrayFilters: [["x": ["$regex": "^(a|aa)+b$"]]])
          .apply(to: ["_id": 1, "s": [.string(hostile)]])
      })
    #expect(regex.kind == .limit && regex.queryError?.kind == .regexLimit, "\(regex)")
  }
}
