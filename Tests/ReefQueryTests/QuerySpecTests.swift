import ReefBSON
import ReefTestSupport
import Testing

@testable import ReefQuery

/// Runs every case of `Specs/query/*.json` through the library.
@Suite struct QuerySpecTests {
  static let files = loadQuerySpecs()

  @Test func thereAreAtLeast300Cases() {
    let count = QuerySpecTests.files.reduce(0) { $0 + $1.cases.count }
    print("query specs: \(count) cases in \(QuerySpecTests.files.count) files")
    #expect(count >= 300)
  }

  @Test(arguments: QuerySpecTests.files.map(\.name))
  func specFile(_ name: String) throws {
    let file = try #require(QuerySpecTests.files.first { $0.name == name })
    for testCase in file.cases {
      try run(testCase, on: file.documents)
    }
  }

  /// Compiles the case's filter and predicate; each must fail when the case expects an error,
  /// otherwise each must produce the expected result.
  func run(_ testCase: QuerySpecCase, on documents: [Document]) throws {
    var queries: [(String, Result<Query, QueryError>)] = []
    if let filter = testCase.filter {
      queries.append(("filter", Result { () throws(QueryError) in try Query(filter: filter) }))
    }
    if let predicate = testCase.predicate {
      queries.append(
        (
          "predicate",
          Result { () throws(QueryError) in try Query(predicate: predicate, arguments: testCase.arguments) }
        ))
    }
    let options: FindOptions
    do {
      options = FindOptions(
        sort: try testCase.sort.map { document throws(QueryError) in try SortSpecification(document) },
        skip: testCase.skip, limit: testCase.limit,
        projection: try testCase.projection.map { document throws(QueryError) in try Projection(document) })
    } catch {
      if let expectedError = testCase.error {
        #expect(error.description.contains(expectedError), "\(testCase.name): error \"\(error)\"")
      } else {
        Issue.record("\(testCase.name): unexpected error \(error)")
      }
      return
    }
    /// An error is right when the case expects one that it mentions.
    func check(_ error: QueryError, _ language: String) {
      if let expectedError = testCase.error {
        #expect(
          error.description.contains(expectedError),
          "\(testCase.name) [\(language)]: error \"\(error)\" does not mention \"\(expectedError)\"")
      } else {
        Issue.record("\(testCase.name) [\(language)]: unexpected error: \(error)")
      }
    }
    for (language, compiled) in queries {
      switch compiled {
      case .failure(let error):
        check(error, language)
      case .success(let query):
        let results: [Document]
        do {
          results = try query.find(in: documents, options: options)
        } catch {
          // A regular expression past its limits ends the find, not the compile.
          check(error, language)
          continue
        }
        if testCase.error != nil {
          Issue.record(
            "\(testCase.name) [\(language)]: ran, but an error mentioning \"\(testCase.error!)\" was expected")
          continue
        }
        var unprojected = options
        unprojected.projection = nil
        if let expected = testCase.expected {
          // The _ids of the results before projection (a projection may drop _id).
          let ids = try query.find(in: documents, options: unprojected).map { $0["_id"] ?? .null }
          #expect(ids == expected, "\(testCase.name) [\(language)]")
        }
        if let expectedDocuments = testCase.expectedDocuments {
          #expect(
            results == expectedDocuments,
            "\(testCase.name) [\(language)]: \(results.map(\.description)) != \(expectedDocuments.map(\.description))")
        }
      }
    }
  }
}
