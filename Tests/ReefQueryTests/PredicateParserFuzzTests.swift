import ReefBSON
import ReefTestSupport
import Testing

@testable import ReefQuery

@Suite struct PredicateParserFuzzTests {
  static let seeds: [String] = [
    "age >= 21 AND address.city = %@",
    "name BEGINSWITH[cd] 'An' OR NOT (tags CONTAINS 'x' && score < -1.5e3)",
    "ANY tags IN {'a', \"b\", nil, true} SORT(name ASC, b.c DESC) DISTINCT(x) LIMIT(5)",
    "NONE scores BETWEEN {1, 0x10} || ALL scores != $0",
    "SUBQUERY(items, $i, $i.price > 5 AND $i.tags.@count == 2).@count > 0",
    "SUBQUERY(a, $x, SUBQUERY($x.b, $y, $y == 'q').@count >= 1).@count == 0",
    "items.@sum.price > 100 AND list.@avg <= 2.5 AND list.@size != 0",
    "d > 2024-01-02@10:00:00:500000000 AND e < T1704189600:0 AND f == 2024-01-02T10:00:00",
    "id == oid(64b7f1a2c3d4e5f601234567) OR u == uuid(3b241101-e2bb-4255-8caf-4136c566a962)",
    "b == B64\"AQID\" AND s LIKE 'a*?\\'\\u00e9' AND 'x' IN tags AND %@ IN tags",
    "TRUEPREDICATE SORT(name ASC)",
    "!(FALSEPREDICATE) AND ((((a == 1)))) AND 5 < age AND name ==[c] 'ann'",
  ]

  /// Characters that exercise every lexer path when inserted.
  static let alphabet: [Character] =
    Array(
      "()[]{}'\"\\@$%.,!=<>&|+-*?:0123456789abcxyzTBEINAOR_ \t\nécd@#~`;") + ["\u{301}", "🦀", "\r\n"]

  @Test func seedsParse() throws {
    for seed in Self.seeds {
      _ = try parsePredicate(seed, arguments: ["x", [1, 2]])
    }
  }

  @Test func mutatedPredicatesParseOrThrow() {
    var rng = SplitMix64(seed: 0x5EED_2024)
    var parsed = 0
    var rejected = 0
    for _ in 0..<20_000 {
      var chars = Array(Self.seeds[Int.random(in: 0..<Self.seeds.count, using: &rng)])
      for _ in 0..<Int.random(in: 1...4, using: &rng) {
        let i = chars.isEmpty ? 0 : Int.random(in: 0..<chars.count, using: &rng)
        switch Int.random(in: 0..<6, using: &rng) {
        case 0 where !chars.isEmpty: chars.remove(at: i)
        case 1: chars.insert(Self.alphabet.randomElement(using: &rng)!, at: i)
        case 2 where chars.count > 1 && i + 1 < chars.count: chars.swapAt(i, i + 1)
        case 3 where !chars.isEmpty: chars.removeSubrange(i..<min(chars.count, i + Int.random(in: 1...8, using: &rng)))
        case 4 where !chars.isEmpty:
          let j = Int.random(in: i..<chars.count, using: &rng)
          chars.insert(contentsOf: chars[i...j], at: j + 1)
        case 5: chars = Array(chars.prefix(i))
        default: chars.insert(Self.alphabet.randomElement(using: &rng)!, at: i)
        }
      }
      let predicate = String(chars)
      do {
        _ = try parsePredicate(predicate, arguments: ["x", [1, 2], .int64(3)])
        parsed += 1
      } catch {
        rejected += 1
        let column = error.column ?? 0
        #expect(
          column >= 1 && column <= predicate.count + 1,
          "column \(column) out of range for \(predicate.debugDescription)")
        #expect(!error.message.isEmpty)
      }
    }
    #expect(parsed > 0)
    #expect(rejected > 0)
  }

  @Test func randomStringsParseOrThrow() {
    var rng = SplitMix64(seed: 0xF00D)
    for _ in 0..<5_000 {
      let length = Int.random(in: 0...40, using: &rng)
      let predicate = String((0..<length).map { _ in Self.alphabet.randomElement(using: &rng)! })
      do {
        _ = try parsePredicate(predicate, arguments: ["x"])
      } catch {
        let column = error.column ?? 0
        #expect(
          column >= 1 && column <= predicate.count + 1,
          "column \(column) out of range for \(predicate.debugDescription)")
      }
    }
  }
}
