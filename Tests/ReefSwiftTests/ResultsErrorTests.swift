import Foundation
import ReefBSON
import ReefQuery
import ReefSwift
import Testing

// A query that fails while it runs (a regular expression over its match limit) is an error
// from `fetch()` / `fetchCount()`, and stops the non-throwing reads with its message: never a
// silently shortened answer.

/// Forty `a`s then "ba": `^(a|aa)+b$` backtracks exponentially over them (issue 14's
/// pathological case; the "b" defeats PCRE2's required-character shortcut).
private let catastrophic = String(repeating: "a", count: 40) + "ba"

private func reefWithNames(_ names: [String]) throws -> Reef {
  let (reef, _) = try openReef()
  try reef.write {
    for (index, name) in names.enumerated() {
      let dog = Dog()
      dog.name = name
      dog.age = index
      reef.add(dog)
    }
  }
  return reef
}

@Suite struct ResultsErrorTests {
  @Test func fetchGivesTheObjectsOfTheIterationInOrder() throws {
    let reef = try reefWithNames(["Rex", "Ace", "Bo", "Rex"])
    let results = reef.objects(Dog.self).filter("age >= 1").sorted(byKeyPath: "name")
    #expect(try results.fetch().map(\.name) == ["Ace", "Bo", "Rex"])
    #expect(try results.fetch().map(\.name) == results.map(\.name))
    #expect(try results.fetchCount() == 3)
    let distinct = reef.objects(Dog.self).distinct(by: ["name"])
    #expect(try distinct.fetchCount() == 3)
    #expect(try distinct.fetch().map(\.name) == ["Rex", "Ace", "Bo"])
  }

  @Test func aRegexOverItsMatchLimitIsAnErrorFromFetch() throws {
    let reef = try reefWithNames(["ab", catastrophic, "aab"])
    let results = reef.objects(Dog.self).filter(document: ["name": ["$regex": "^(a|aa)+b$"]])
    let start = Date()
    for read in [{ _ = try results.fetch() }, { _ = try results.fetchCount() }] as [() throws -> Void] {
      do {
        try read()
        Issue.record("the query ran past the regular expression's match limit")
      } catch let error as ReefError {
        #expect(error.kind == .invalidQuery)
        #expect(error.queryError?.kind == .regexLimit, "\(error)")
        #expect(error.typeName == "Dog")
      }
    }
    #expect(Date().timeIntervalSince(start) < 5)
    // The same pattern over names it can decide answers normally.
    let fine = try reefWithNames(["ab", "aab", "b", "ac"])
    let matches = fine.objects(Dog.self).filter(document: ["name": ["$regex": "^(a|aa)+b$"]])
    #expect(try matches.fetch().map(\.name).sorted() == ["aab", "ab"])
  }

  @Test func iterationStopsWithTheErrorInsteadOfEndingEarly() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let reef = try reefWithNames(["ab", catastrophic, "aab"])
        var seen = 0
        for _ in reef.objects(Dog.self).filter(document: ["name": ["$regex": "^(a|aa)+b$"]]) { seen += 1 }
        // Not reached: ending here would mean a shortened answer.
        print("seen \(seen)")
      }
    }
    let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(text.contains("Results<Dog>") && text.contains("fetch()"), "\(text)")
  }

  @Test func countStopsWithTheErrorInsteadOfAWrongNumber() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let reef = try reefWithNames(["ab", catastrophic])
        _ = reef.objects(Dog.self).filter(document: ["name": ["$regex": "^(a|aa)+b$"]]).count
      }
    }
    let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(text.contains("Results<Dog>") && text.contains("fetch()"), "\(text)")
  }
}
