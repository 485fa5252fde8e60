import ReefBSON
import Testing

@testable import ReefQuery

/// The rendered condition of a predicate that must parse.
private func tree(_ predicate: String, _ arguments: [BSON] = []) throws -> String {
  render(try parsePredicate(predicate, arguments: arguments).node)
}

/// The error of a predicate that must not parse; `nil` (and a recorded issue) when it parses.
private func failure(
  _ predicate: String, _ arguments: [BSON] = [], sourceLocation: SourceLocation = #_sourceLocation
) -> QueryError? {
  do {
    let parsed = try parsePredicate(predicate, arguments: arguments)
    Issue.record("\(predicate.debugDescription) parsed as \(render(parsed.node))", sourceLocation: sourceLocation)
    return nil
  } catch {
    return error
  }
}

/// NSPredicate's format arguments in Realm's language: `%K` key paths and the printf-style
/// value specifiers, numbered in order with `%@`.
@Suite struct PredicateFormatArgumentTests {
  // MARK: %K

  @Test func percentKSubstitutesAStringArgumentAsAKeyPath() throws {
    #expect(try tree("%K == %@", ["name", "Jo"]) == "ANY name == \"Jo\"")
    #expect(try tree("%K == 5", ["address.city"]) == "ANY address.city == 5")
    #expect(try tree("%K.%K > 5", ["address", "zip"]) == "ANY address.zip > 5")
    #expect(try tree("address.%K.%K == 5", ["geo", "lat"]) == "ANY address.geo.lat == 5")
    #expect(try tree("%K.zip == 5", ["address"]) == "ANY address.zip == 5")
    #expect(try tree("5 < %K", ["age"]) == "ANY age > 5")
    #expect(try tree("ALL %K BEGINSWITH 'a'", ["tags"]) == "ALL tags BEGINSWITH \"a\"")
    #expect(try tree("'x' IN %K", ["tags"]) == "ANY tags == \"x\"")
  }

  @Test func aSubstitutedKeyPathIsNeverAKeyword() throws {
    #expect(try tree("%K == 1 OR %K == 2", ["and", "or"]) == "(ANY and == 1 OR ANY or == 2)")
    #expect(try tree("%K == true", ["nil"]) == "ANY nil == true")
    #expect(try tree("%K == 1", ["SORT"]) == "ANY SORT == 1")
    // Any characters but '.' make a name: a field of an imported document may have spaces.
    let parsed = try parsePredicate("%K == 1", arguments: ["first name"])
    guard case .match(let path, _, _) = parsed.node else {
      Issue.record("not a match: \(render(parsed.node))")
      return
    }
    #expect(path == FieldPath(segments: [FieldPath.Segment("first name")]))
  }

  @Test func percentKTakesAggregatesSubqueriesAndClauses() throws {
    #expect(try tree("%K > 2", ["tags.@count"]) == "tags.@count > 2")
    #expect(try tree("%K.@sum.%K > 2", ["items", "price"]) == "items.@sum.price > 2")
    #expect(
      try tree("SUBQUERY(%K, $x, $x.%K == 3).@count > 0", ["items", "qty"])
        == "SUBQUERY(items; ANY qty == 3).@count > 0")
    let sorted = try parsePredicate("TRUEPREDICATE SORT(%K DESC) DISTINCT(%K)", arguments: ["age", "name"])
    #expect(sorted.sort == [SortKey(FieldPath("age"), ascending: false)])
    #expect(sorted.distinct == [FieldPath("name")])
  }

  @Test func placeholdersCountInOrderAndDollarArgumentsApart() throws {
    #expect(
      try tree("%K == %@ AND %K > %d", ["city", "Oslo", "age", .int64(40)])
        == "(ANY city == \"Oslo\" AND ANY age > 40)")
    #expect(try tree("%K == $1", ["name", "Ann"]) == "ANY name == \"Ann\"")
    #expect(try tree("%K == $0", ["name"]) == "ANY name == \"name\"")
    // Extra arguments are ignored, as NSPredicate ignores them.
    #expect(try tree("%K == %@", ["name", "Jo", "unused"]) == "ANY name == \"Jo\"")
  }

  @Test func inQuotesPlaceholdersAreText() throws {
    #expect(
      try tree("name == '%K' OR name == \"%@\" OR name == '%d%%'")
        == "(ANY name == \"%K\" OR ANY name == \"%@\" OR ANY name == \"%d%%\")")
  }

  // MARK: printf-style specifiers

  @Test(arguments: [
    "%d", "%i", "%o", "%u", "%x", "%X", "%ld", "%lld", "%lu", "%llu", "%hd", "%hhd", "%qd", "%zd", "%td", "%jd",
  ])
  func integerSpecifiersTakeAnInteger(specifier: String) throws {
    #expect(try tree("age == \(specifier)", [.int64(5)]) == "ANY age == 5", "\(specifier)")
    #expect(try tree("age == \(specifier)", [.int32(5)]) == "ANY age == 5i32", "\(specifier)")
  }

  @Test func anIntegerSpecifierTakesABoolAsItIs() throws {
    #expect(try tree("done == %d", [true]) == "ANY done == true")
  }

  @Test(arguments: ["%f", "%F", "%e", "%E", "%g", "%G", "%a", "%A", "%lf", "%Lf", "%lg"])
  func floatingPointSpecifiersTakeANumber(specifier: String) throws {
    #expect(try tree("score > \(specifier)", [2.5]) == "ANY score > 2.5", "\(specifier)")
    #expect(try tree("score > \(specifier)", [.int64(3)]) == "ANY score > 3", "\(specifier)")
  }

  @Test func stringSpecifiersTakeAString() throws {
    #expect(try tree("name == %s", ["Jo"]) == "ANY name == \"Jo\"")
    #expect(try tree("name BEGINSWITH[c] %S", ["jo"]) == "ANY name BEGINSWITH[c] \"jo\"")
  }

  @Test func specifiersWorkInListsAndLimits() throws {
    #expect(try tree("age IN {%d, %ld}", [.int64(1), .int64(2)]) == "ANY age IN {1, 2}")
    #expect(try tree("age BETWEEN {%f, %g}", [1.5, 2.5]) == "ANY age {>= 1.5 & <= 2.5}")
    #expect(try parsePredicate("TRUEPREDICATE LIMIT(%d)", arguments: [.int64(3)]).limit == 3)
  }

  // MARK: Errors

  @Test(arguments: [
    ("%K == 1", [] as [BSON], 1, "no argument for '%K' number 1: 0 argument(s) were given"),
    ("%K == 1", [.int64(1)], 1, "the argument for '%K' number 1 must be a string naming a key path but is an integer"),
    (
      "a == %@ AND %K == 1", ["x", .null], 13,
      "the argument for '%K' number 2 must be a string naming a key path but is null"
    ),
    (
      "a.%K == 1", [.bool(true)], 3, "the argument for '%K' number 1 must be a string naming a key path but is a bool"
    ),
    (
      "%K == 1", ["a..b"], 1,
      "the argument for '%K' number 1 is \"a..b\", which is not a key path: expected names separated by '.'"
    ),
    (
      "%K == 1", [""], 1,
      "the argument for '%K' number 1 is \"\", which is not a key path: expected names separated by '.'"
    ),
    (
      "%K == 1", ["$x"], 1,
      "the argument for '%K' number 1 is \"$x\", which is not a key path: expected names separated by '.'"
    ),
    ("a == %d", ["five"], 6, "the argument for '%d' number 1 must be an integer or a Bool but is a string"),
    ("a == %ld", [2.5], 6, "the argument for '%ld' number 1 must be an integer or a Bool but is a double"),
    ("a > %f", ["x"], 5, "the argument for '%f' number 1 must be a number but is a string"),
    ("a > %lf", [true], 5, "the argument for '%lf' number 1 must be a number but is a bool"),
    ("a == %s", [.int64(1)], 6, "the argument for '%s' number 1 must be a string but is an integer"),
    ("a == %d AND b == %d", [.int64(1)], 18, "no argument for '%d' number 2: 1 argument(s) were given"),
    ("a IN {%d, %s}", [.int64(1), .int64(2)], 11, "the argument for '%s' number 2 must be a string but is an integer"),
    (
      "a == %%", [], 6, "'%%' stands for a percent sign, which a predicate can hold only inside a quoted string ('50%')"
    ),
    (
      "a == %5d", [.int64(1)], 6,
      "'%5d': flags, widths and precisions are not supported in a predicate's format specifiers "
        + "(an argument is substituted as a value); write the specifier alone, as '%d' or '%f'"
    ),
    (
      "a == %.2f", [1.5], 6,
      "'%.2f': flags, widths and precisions are not supported in a predicate's format specifiers "
        + "(an argument is substituted as a value); write the specifier alone, as '%d' or '%f'"
    ),
    ("a == %c", ["x"], 6, "'%c' is not supported in a predicate; give the value as a String or a number with '%@'"),
    ("a == %p", ["x"], 6, "'%p' is not supported in a predicate; give the value as a String or a number with '%@'"),
    ("a == %y", [], 6, "expected a format specifier (%@, %K, %d, %i, %u, %ld, %lld, %f, %lf, %g, %s) but found '%y'"),
    ("a == %Ld", [], 6, "expected a format specifier (%@, %K, %d, %i, %u, %ld, %lld, %f, %lf, %g, %s) but found '%Ld'"),
    ("a == %ls", [], 6, "expected a format specifier (%@, %K, %d, %i, %u, %ld, %lld, %f, %lf, %g, %s) but found '%ls'"),
    ("a == %", [], 6, "expected a format specifier (%@, %K, %d, %i, %u, %ld, %lld, %f, %lf, %g, %s) but found '%'"),
  ])
  func wrongArgumentsAreNamedAtTheirColumn(predicate: String, arguments: [BSON], column: Int, message: String) {
    let error = failure(predicate, arguments)
    #expect(error?.message == message, "\(predicate.debugDescription)")
    #expect(error?.column == column, "\(predicate.debugDescription)")
  }

  @Test func wrongArgumentsHaveTheArgumentKind() {
    #expect(failure("%K == 1", [.int64(1)])?.kind == .argument)
    #expect(failure("%K == 1")?.kind == .argument)
    #expect(failure("a == %d", ["x"])?.kind == .argument)
    #expect(failure("a == %c", ["x"])?.kind == .unsupported)
    #expect(failure("a == %%")?.kind == .syntax)
  }
}
