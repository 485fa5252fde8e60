import ReefBSON
import ReefQuery
import ReefTestSupport
import Testing

@testable import ReefStore

/// One case of `Specs/update/*.json` (see `Specs/update/README.md`).
struct UpdateSpecCase: Sendable, CustomStringConvertible {
  var file: String
  var name: String
  var document: Document?
  var filter: Document?
  var update: Document?
  var arrayFilters: [Document]
  var isInsert: Bool
  var expected: Document?
  var error: String?

  var description: String { "\(file): \(name)" }
}

/// The repository's `Specs/update` directory.
let updateSpecDirectory = specDirectory("update")

/// Every case of every `Specs/update/*.json` file. A malformed file stops the run with its name,
/// so a broken spec can never pass as zero cases.
let updateSpecCases: [UpdateSpecCase] = {
  var cases: [UpdateSpecCase] = []
  for name in jsonFileNames(in: updateSpecDirectory) {
    let path = updateSpecDirectory + "/" + name
    guard let bytes = readFile(path) else { fatalError("cannot read \(path)") }
    do {
      let root = try Document(extendedJSON: String(decoding: bytes, as: UTF8.self))
      guard case .array(let tests)? = root["tests"] else { fatalError("\(path): needs a \"tests\" array") }
      for (index, test) in tests.enumerated() {
        guard case .document(let test) = test else { fatalError("\(path): test \(index) is not a document") }
        func document(_ key: String) -> Document? { if case .document(let d)? = test[key] { d } else { nil } }
        let description = if case .string(let text)? = test["description"] { text } else { "test \(index)" }
        let error: String? = if case .string(let text)? = test["error"] { text } else { nil }
        var arrayFilters: [Document] = []
        if let filters = test["arrayFilters"] {
          guard case .array(let filters) = filters else { fatalError("\(path): test \(index): arrayFilters") }
          for filter in filters {
            guard case .document(let filter) = filter else { fatalError("\(path): test \(index): arrayFilters") }
            arrayFilters.append(filter)
          }
        }
        let testCase = UpdateSpecCase(
          file: name, name: description, document: document("document"), filter: document("filter"),
          update: document("update"), arrayFilters: arrayFilters, isInsert: test["isInsert"] == .bool(true),
          expected: document("expected"), error: error)
        guard testCase.expected != nil || testCase.error != nil else {
          fatalError("\(testCase) has neither \"expected\" nor \"error\"")
        }
        guard testCase.document != nil || testCase.filter != nil else {
          fatalError("\(testCase) has neither \"document\" nor \"filter\"")
        }
        cases.append(testCase)
      }
    } catch {
      fatalError("\(path): \(error)")
    }
  }
  return cases
}()

/// Runs every case of `Specs/update/*.json`.
@Suite struct UpdateSpecTests {
  @Test func thereAreAtLeast80Cases() {
    print("update specs: \(updateSpecCases.count) cases")
    #expect(updateSpecCases.count >= 80)
  }

  /// A case with `document` applies `update` to it (with `isInsert`, and with `filter` as the
  /// query that selected it, for `$`); a case with only `filter` checks the upsert seed; a case
  /// with `filter` and `update` seeds, then applies as an insert. `arrayFilters` go with `update`.
  @Test(arguments: updateSpecCases)
  func specCase(_ testCase: UpdateSpecCase) throws {
    var query: Query?
    if testCase.document != nil, let filter = testCase.filter {
      query = try Query(filter: filter)
      #expect(query!.matches(testCase.document!), "\(testCase): the filter does not select the document")
    }
    let result = Result { () throws(UpdateError) -> Document in
      if let document = testCase.document {
        return try Update(testCase.update ?? Document(), arrayFilters: testCase.arrayFilters)
          .apply(to: document, isInsert: testCase.isInsert, matching: query)
      }
      let seed = Update.upsertSeed(from: testCase.filter!)
      guard let update = testCase.update else { return seed }
      return try Update(update, arrayFilters: testCase.arrayFilters).apply(to: seed, isInsert: true)
    }
    switch (result, testCase.error) {
    case (.success(let document), nil):
      #expect(
        document == testCase.expected!,
        "\(testCase): got \(document.extendedJSON(.canonical)), expected \(testCase.expected!.extendedJSON(.canonical))"
      )
    case (.success(let document), let expected?):
      Issue.record("\(testCase): expected an error mentioning \"\(expected)\", got \(document)")
    case (.failure(let error), nil):
      Issue.record("\(testCase): unexpected error \(error)")
    case (.failure(let error), let expected?):
      #expect(error.message.contains(expected), "\(testCase): error \"\(error)\" does not mention \"\(expected)\"")
    }
  }
}

/// Behaviour the spec files cannot state: the clock, error paths, identity of unchanged documents.
@Suite struct UpdateTests {
  @Test func aPullRegexPastItsLimitIsAnError() throws {
    let hostile = String(repeating: "a", count: 40) + "ba"
    let document: Document = ["_id": 1, "tags": ["x", .string(hostile)], "items": [["s": .string(hostile)]]]
    for update in [
      try Update(["$pull": ["tags": .regex(BSONRegularExpression(pattern: "^(a|aa)+b$"))]]),
      try Update(["$pull": ["items": ["s": ["$regex": "^(a|aa)+b$"]]]]),
    ] {
      do {
        _ = try update.apply(to: document)
        Issue.record("no error")
      } catch {
        #expect(error.kind == .limit && error.queryError?.kind == .regexLimit, "\(error)")
        #expect(error.message.contains("/^(a|aa)+b$/") && error.message.contains("match limit"), "\(error)")
      }
    }
    // A pattern decided quickly pulls as before.
    let pulled = try Update(["$pull": ["tags": .regex(BSONRegularExpression(pattern: "^x$"))]]).apply(to: document)
    #expect(pulled["tags"] == [.string(hostile)])
  }

  @Test func currentDateSetsADateOrATimestamp() throws {
    let update = try Update(["$currentDate": ["a": true, "b": ["$type": "timestamp"], "c": ["$type": "date"]]])
    let before = currentTime(timestamp: false)
    let updated = try update.apply(to: ["_id": 1])
    guard case .datetime(let a)? = updated["a"], case .datetime(let c)? = updated["c"],
      case .timestamp(let b)? = updated["b"], case .datetime(let start) = before
    else {
      Issue.record("wrong types: \(updated)")
      return
    }
    #expect(a >= start && c >= start)
    #expect(Int64(b.timestamp) >= start.millisecondsSinceEpoch / 1000)
    #expect(updated.keys == ["_id", "a", "b", "c"])
  }

  @Test func errorsCarryTheKeyPath() {
    #expect(
      throws: UpdateError(.badValue, "Cannot increment with non-numeric argument: {a.b: \"x\"}", keyPath: ["a", "b"])
    ) {
      try Update(["$inc": ["a.b": "x"]])
    }
    do {
      _ = try Update(["$inc": ["a.b": 1]]).apply(to: ["_id": 1, "a": ["b": "text"]])
      Issue.record("expected an error")
    } catch {
      #expect(error.keyPath == ["a", "b"])
      #expect(error.message.contains("non-numeric type string"))
      #expect(error.description.hasSuffix("(at a.b)"))
    }
  }

  @Test func unchangedDocumentIsReturnedAsIs() throws {
    let document: Document = ["_id": 1, "a": 5]
    let updated = try Update(["$max": ["a": 3], "$unset": ["zz": ""]]).apply(to: document)
    #expect(updated == document)
  }

  @Test func setOnInsertOnlyOnInsert() throws {
    let update = try Update(["$setOnInsert": ["created": 1], "$set": ["a": 1]])
    #expect(try update.apply(to: ["_id": 1]) == ["_id": 1, "a": 1])
    #expect(try update.apply(to: ["_id": 1], isInsert: true) == ["_id": 1, "a": 1, "created": 1])
  }

  @Test func decimalArithmeticRounds() throws {
    let big = BSON.decimal128(Decimal128("9999999999999999999999999999999999"))
    let sum = add(big, .int32(1))
    #expect(sum == .decimal128(Decimal128("1.000000000000000000000000000000000E+34")))
    let product = multiply(.decimal128(Decimal128("1.5")), .decimal128(Decimal128("2.25")))
    #expect(product == .decimal128(Decimal128("3.375")))
    // Round half to even at the 34th digit.
    let tie = add(.decimal128(Decimal128("1000000000000000000000000000000000")), .decimal128(Decimal128("0.5")))
    #expect(tie == .decimal128(Decimal128("1000000000000000000000000000000000")))
    let above = add(.decimal128(Decimal128("1000000000000000000000000000000000")), .decimal128(Decimal128("0.51")))
    #expect(above == .decimal128(Decimal128("1000000000000000000000000000000001")))
    // A far smaller operand still rounds correctly (and carries when it should).
    let tiny = add(.decimal128(Decimal128("1E+40")), .decimal128(Decimal128("-1E-40")))
    #expect(tiny == .decimal128(Decimal128("1.000000000000000000000000000000000E+40")))
    let small = add(.decimal128(Decimal128("1E+40")), .decimal128(Decimal128("1E-40")))
    #expect(small == .decimal128(Decimal128("1.000000000000000000000000000000000E+40")))
    let below = add(.decimal128(Decimal128("1E+40")), .decimal128(Decimal128("-6E+5")))
    #expect(below == .decimal128(Decimal128("9.999999999999999999999999999999999E+39")))
    let overflow = add(
      .decimal128(Decimal128("9.999999999999999999999999999999999E+6144")), .decimal128(Decimal128("1E+6144")))
    #expect(overflow == .decimal128(.infinity))
    let lastDigit = add(.decimal128(Decimal128("1E+6111")), .decimal128(Decimal128("9E+6144")))
    #expect(lastDigit == .decimal128(Decimal128("9.000000000000000000000000000000001E+6144")))
  }

  @Test func parsedUpdatesAreSendable() async throws {
    let update = try Update(["$inc": ["n": 1]])
    let result = try await Task.detached { try update.apply(to: ["_id": 1, "n": 1]) }.value
    #expect(result == ["_id": 1, "n": 2])
  }
}

@Suite struct UpdateDocumentationTests {
  /// The example in `Update`'s documentation.
  @Test func overviewExample() throws {
    let update = try Update(["$set": ["address.city": "Paris"], "$inc": ["visits": 1]])
    let updated = try update.apply(to: ["_id": 1, "visits": 2])
    #expect(updated == ["_id": 1, "visits": 3, "address": ["city": "Paris"]])
    let raise = try Update(["$inc": ["grades.$[g].score": 5]], arrayFilters: [["g.score": ["$gte": 80]]])
    let raised = try raise.apply(to: ["_id": 1, "grades": [["score": 85], ["score": 70]]])
    #expect(raised == ["_id": 1, "grades": [["score": 90], ["score": 70]]])
  }
}
