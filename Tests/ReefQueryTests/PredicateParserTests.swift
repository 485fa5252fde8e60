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

@Suite struct PredicateParserTests {
  // MARK: Comparisons

  @Test(arguments: [
    ("age == 5", "ANY age == 5"),
    ("age = 5", "ANY age == 5"),
    ("age != 5", "ANY age != 5"),
    ("age <> 5", "ANY age != 5"),
    ("age < 5", "ANY age < 5"),
    ("age <= 5", "ANY age <= 5"),
    ("age =< 5", "ANY age <= 5"),
    ("age > 5", "ANY age > 5"),
    ("age >= 5", "ANY age >= 5"),
    ("age => 5", "ANY age >= 5"),
    ("5 < age", "ANY age > 5"),
    ("5 <= age", "ANY age >= 5"),
    ("5 > age", "ANY age < 5"),
    ("5 >= age", "ANY age <= 5"),
    ("5 == age", "ANY age == 5"),
    ("'x' != name", "ANY name != \"x\""),
    ("address.city = 'Los Angeles'", "ANY address.city == \"Los Angeles\""),
    ("addresses.0.city == 'LA'", "ANY addresses.0.city == \"LA\""),
    ("name == nil", "ANY name == null"),
    ("name != NULL", "ANY name != null"),
    ("done == true", "ANY done == true"),
    ("done == FALSE", "ANY done == false"),
  ])
  func comparisons(predicate: String, expected: String) throws {
    #expect(try tree(predicate) == expected)
  }

  @Test func keyPathSegmentsAreArrayIndexesWhenNumeric() throws {
    guard case .match(let path, _, _) = try parsePredicate("addresses.0.city == 'LA'").node else {
      Issue.record("not a match")
      return
    }
    #expect(path.segments.map(\.index) == [nil, 0, nil])
  }

  @Test(arguments: [
    ("name BEGINSWITH 'an'", "ANY name BEGINSWITH \"an\""),
    ("name ENDSWITH[c] 'AN'", "ANY name ENDSWITH[c] \"AN\""),
    ("name CONTAINS[d] 'é'", "ANY name CONTAINS[d] \"é\""),
    ("name LIKE[cd] 'a*n?'", "ANY name LIKE[cd] \"a*n?\""),
    ("name like 'a*'", "ANY name LIKE \"a*\""),
    ("name beginswith[c] 'x'", "ANY name BEGINSWITH[c] \"x\""),
    ("name ==[c] 'ann'", "ANY name ==[c] \"ann\""),
    ("name !=[cd] 'ann'", "ANY name !=[cd] \"ann\""),
    ("'ann' ==[c] name", "ANY name ==[c] \"ann\""),
    ("ANY tags CONTAINS 'sw'", "ANY tags CONTAINS \"sw\""),
  ])
  func stringOperators(predicate: String, expected: String) throws {
    #expect(try tree(predicate) == expected)
  }

  @Test func inAndBetween() throws {
    #expect(try tree("age IN {1, 2, 3}") == "ANY age IN {1, 2, 3}")
    #expect(try tree("age IN {}") == "ANY age IN {}")
    #expect(try tree("name in {'a', nil, true}") == "ANY name IN {\"a\", null, true}")
    #expect(try tree("age IN $0", [[1, 2]]) == "ANY age IN {1i32, 2i32}")
    #expect(try tree("age IN %@", [["a"]]) == "ANY age IN {\"a\"}")
    #expect(try tree("age IN {$0, %@}", [7, 8]) == "ANY age IN {7i32, 7i32}")
    #expect(try tree("'x' IN tags") == "ANY tags == \"x\"")
    #expect(try tree("%@ IN tags", ["swift"]) == "ANY tags == \"swift\"")
    #expect(try tree("age BETWEEN {18, 65}") == "ANY age {>= 18 & <= 65}")
    #expect(try tree("ALL scores BETWEEN {1.5, 2}") == "ALL scores {>= 1.5 & <= 2}")
    #expect(try tree("age BETWEEN $0", [[1, 9]]) == "ANY age {>= 1i32 & <= 9i32}")
  }

  @Test func quantifiers() throws {
    #expect(try tree("ANY tags == 'a'") == "ANY tags == \"a\"")
    #expect(try tree("SOME tags == 'a'") == "ANY tags == \"a\"")
    #expect(try tree("all scores > 5") == "ALL scores > 5")
    #expect(try tree("NONE scores > 5") == "NONE scores > 5")
    #expect(try tree("5 < ALL scores") == "ALL scores > 5")
    #expect(try tree("NONE tags IN {'a', 'b'}") == "NONE tags IN {\"a\", \"b\"}")
  }

  // MARK: Logic

  @Test(arguments: [
    ("a == 1 OR b == 2 AND NOT c == 3", "(ANY a == 1 OR (ANY b == 2 AND NOT ANY c == 3))"),
    ("a == 1 || b == 2 && !c == 3", "(ANY a == 1 OR (ANY b == 2 AND NOT ANY c == 3))"),
    ("(a == 1 or b == 2) and c == 3", "((ANY a == 1 OR ANY b == 2) AND ANY c == 3)"),
    ("a == 1 AND b == 2 AND c == 3", "(ANY a == 1 AND ANY b == 2 AND ANY c == 3)"),
    ("NOT (a == 1 OR b == 2)", "NOT (ANY a == 1 OR ANY b == 2)"),
    ("NOT NOT a == 1", "ANY a == 1"),
    ("!!!a == 1", "NOT ANY a == 1"),
    ("((((a == 1))))", "ANY a == 1"),
    ("TRUEPREDICATE", "TRUE"),
    ("falsepredicate OR a == 1", "(FALSE OR ANY a == 1)"),
    ("NOT TRUEPREDICATE", "NOT TRUE"),
  ])
  func logic(predicate: String, expected: String) throws {
    #expect(try tree(predicate) == expected)
  }

  // MARK: Arguments

  @Test func arguments() throws {
    #expect(try tree("address.city = %@", ["Los Angeles"]) == "ANY address.city == \"Los Angeles\"")
    #expect(try tree("a == %@ AND b == %@", [1, "x"]) == "(ANY a == 1i32 AND ANY b == \"x\")")
    #expect(try tree("a == $1 AND b == $0", [1, "x"]) == "(ANY a == \"x\" AND ANY b == 1i32)")
    #expect(try tree("a == $0 AND b == $0", [.int64(3)]) == "(ANY a == 3 AND ANY b == 3)")
    #expect(try tree("name BEGINSWITH[c] $0", ["Jo"]) == "ANY name BEGINSWITH[c] \"Jo\"")
  }

  @Test func missingArgumentsAreNamed() {
    let sequential = failure("a == %@ AND b == %@", [1])
    #expect(sequential?.message == "no argument for '%@' number 2: 1 argument(s) were given")
    #expect(sequential?.column == 18)
    let indexed = failure("a == $3", [1, 2])
    #expect(indexed?.message == "no argument for '$3': 2 argument(s) were given")
    #expect(indexed?.column == 6)
  }

  // MARK: Aggregates and subqueries

  @Test(arguments: [
    ("tags.@count > 2", "tags.@count > 2"),
    ("tags.@size == 0", "tags.@count == 0"),
    ("3 <= tags.@count", "tags.@count >= 3"),
    ("scores.@min >= 1.5", "scores.@min >= 1.5"),
    ("scores.@max < 10", "scores.@max < 10"),
    ("scores.@avg == 5", "scores.@avg == 5"),
    ("items.@sum.price > 100", "items.@sum.price > 100"),
    ("orders.@max.placed > 2024-01-02@10:00:00", "orders.@max.placed > date(1704189600000)"),
    ("tags.@count IN {1, 2}", "(tags.@count == 1 OR tags.@count == 2)"),
    ("tags.@count BETWEEN {1, 2}", "(tags.@count >= 1 AND tags.@count <= 2)"),
  ])
  func aggregates(predicate: String, expected: String) throws {
    #expect(try tree(predicate) == expected)
  }

  @Test func aggregateSubpathIsAFieldPath() throws {
    guard
      case .aggregate(let path, .sum, let subpath?, .greater, .int64(100)) =
        try parsePredicate("order.items.@sum.price > 100").node
    else {
      Issue.record("not a @sum aggregate")
      return
    }
    #expect(path == FieldPath("order.items"))
    #expect(subpath == FieldPath("price"))
  }

  @Test func subqueries() throws {
    #expect(
      try tree("SUBQUERY(items, $item, $item.price > 5 AND $item.name BEGINSWITH 'a').@count > 0")
        == "SUBQUERY(items; (ANY price > 5 AND ANY name BEGINSWITH \"a\")).@count > 0")
    #expect(try tree("SUBQUERY(tags, $t, $t == 'x').@count == 2") == "SUBQUERY(tags; ANY $ == \"x\").@count == 2")
    #expect(try tree("subquery(tags, $t, $t IN {1, 2}).@size >= 1") == "SUBQUERY(tags; ANY $ IN {1, 2}).@count >= 1")
    #expect(try tree("0 < SUBQUERY(tags, $t, $t == 1).@count") == "SUBQUERY(tags; ANY $ == 1).@count > 0")
    #expect(
      try tree("SUBQUERY(a, $x, SUBQUERY($x.b, $y, $y.c == 1).@count > 0).@count == 1")
        == "SUBQUERY(a; SUBQUERY(b; ANY c == 1).@count > 0).@count == 1")
    #expect(
      try tree("SUBQUERY(a, $x, $x.b.@count > 1 OR NOT $x.c == 2).@count > 0 AND d == 1")
        == "(SUBQUERY(a; (b.@count > 1 OR NOT ANY c == 2)).@count > 0 AND ANY d == 1)")
    #expect(
      try tree("SUBQUERY(a, $x, $x == %@).@count == $1", ["v", .int64(4)])
        == "SUBQUERY(a; ANY $ == \"v\").@count == 4")
    guard
      case .subquery(_, .match(let path, _, _), _, _) = try parsePredicate("SUBQUERY(l, $x, $x > 1).@count > 0").node
    else {
      Issue.record("not a subquery")
      return
    }
    #expect(path == FieldPath(""))
  }

  // MARK: Literals

  @Test(arguments: [
    ("s == 'it\\'s'", "ANY s == \"it's\""),
    ("s == \"say \\\"hi\\\"\"", "ANY s == \"say \\\"hi\\\"\""),
    ("s == 'a\\nb\\t\\\\'", "ANY s == \"a\\nb\\t\\\\\""),
    ("s == '\\u00e9'", "ANY s == \"é\""),
    ("s == 'ünï €'", "ANY s == \"ünï €\""),
    ("s == ''", "ANY s == \"\""),
    ("n == 42", "ANY n == 42"),
    ("n == -42", "ANY n == -42"),
    ("n == +7", "ANY n == 7"),
    ("n == 9223372036854775807", "ANY n == 9223372036854775807"),
    ("n == -9223372036854775808", "ANY n == -9223372036854775808"),
    ("n == 0x1F", "ANY n == 31"),
    ("n == -0x10", "ANY n == -16"),
    ("n == 1.5", "ANY n == 1.5"),
    ("n == -0.25", "ANY n == -0.25"),
    ("n == .5", "ANY n == 0.5"),
    ("n == 1e3", "ANY n == 1000.0"),
    ("n == 2.5E-2", "ANY n == 0.025"),
    ("id == oid(64b7f1a2c3d4e5f601234567)", "ANY id == oid(64b7f1a2c3d4e5f601234567)"),
    ("d == 2024-01-02@10:00:00", "ANY d == date(1704189600000)"),
    ("d == 2024-01-02@10:00:00:500000000", "ANY d == date(1704189600500)"),
    ("d == 2024-1-2@10:0:0", "ANY d == date(1704189600000)"),
    ("d == 2024-01-02T10:00:00", "ANY d == date(1704189600000)"),
    ("d == 1969-12-31@23:59:59", "ANY d == date(-1000)"),
    ("d == 2024-02-29@00:00:00", "ANY d == date(1709164800000)"),
    ("d == T1704189600:0", "ANY d == date(1704189600000)"),
    ("d == T1704189600:250000000", "ANY d == date(1704189600250)"),
    ("d == T-1:-500000000", "ANY d == date(-1500)"),
    ("u == uuid(3b241101-e2bb-4255-8caf-4136c566a962)", "ANY u == bin(4:3b241101e2bb42558caf4136c566a962)"),
    ("b == B64\"AQID\"", "ANY b == bin(0:010203)"),
    ("b == B64\"AQ==\"", "ANY b == bin(0:01)"),
    ("T1 == 5", "ANY T1 == 5"),
  ])
  func literals(predicate: String, expected: String) throws {
    #expect(try tree(predicate) == expected)
  }

  // MARK: Trailing clauses

  @Test func trailingClauses() throws {
    let parsed = try parsePredicate("age > 5 SORT(name ASC, address.city DESC) DISTINCT(name) LIMIT(10)")
    #expect(render(parsed.node) == "ANY age > 5")
    #expect(parsed.sort == [SortKey(FieldPath("name")), SortKey(FieldPath("address.city"), ascending: false)])
    #expect(parsed.distinct == [FieldPath("name")])
    #expect(parsed.limit == 10)

    let only = try parsePredicate("TRUEPREDICATE SORT(name ASC)")
    #expect(render(only.node) == "TRUE")
    #expect(only.sort == [SortKey(FieldPath("name"))])
    #expect(only.limit == nil)

    let repeated = try parsePredicate(
      "a == 1 LIMIT(5) sort(b ascending) DISTINCT(c, d.e) SORT(f DESCENDING) limit(3) LIMIT(4) DISTINCT(g)")
    #expect(repeated.sort == [SortKey(FieldPath("b")), SortKey(FieldPath("f"), ascending: false)])
    #expect(repeated.distinct == [FieldPath("c"), FieldPath("d.e"), FieldPath("g")])
    #expect(repeated.limit == 3)
    #expect(try parsePredicate("TRUEPREDICATE LIMIT($0)", arguments: [.int32(2)]).limit == 2)
  }

  /// The example in `parsePredicate`'s documentation.
  @Test func documentedExample() throws {
    let parsed = try parsePredicate(
      "address.city = %@ AND age >= 21 SORT(name ASC) LIMIT(10)", arguments: ["Los Angeles"])
    #expect(render(parsed.node) == "(ANY address.city == \"Los Angeles\" AND ANY age >= 21)")
    #expect(parsed.sort == [SortKey(FieldPath("name"))])
    #expect(parsed.limit == 10)
  }

  // MARK: Errors

  @Test(arguments: [
    ("", 1, "expected a predicate but found end of predicate"),
    ("age ==", 7, "expected a value after '==' but found end of predicate"),
    ("age == AND b == 1", 8, "expected a value after '==' but found 'AND'"),
    (
      "age", 4,
      "expected an operator (==, !=, <, <=, >, >=, BEGINSWITH, ENDSWITH, CONTAINS, LIKE, IN, BETWEEN) after 'age' but found end of predicate"
    ),
    (
      "age MATCHES 'x'", 5,
      "expected an operator (==, !=, <, <=, >, >=, BEGINSWITH, ENDSWITH, CONTAINS, LIKE, IN, BETWEEN) after 'age' but found 'MATCHES'"
    ),
    ("age =~ 5", 6, "unexpected character '~'"),
    ("a == 1 & b == 2", 8, "expected '&&' but found '&' followed by ' '"),
    ("(a == 1", 8, "expected ')' to close the '(' at column 1 but found end of predicate"),
    ("a == 1)", 7, "expected AND, OR, SORT(…), DISTINCT(…), LIMIT(…) or the end of the predicate but found ')'"),
    ("a == 1 b == 2", 8, "expected AND, OR, SORT(…), DISTINCT(…), LIMIT(…) or the end of the predicate but found 'b'"),
    ("()", 2, "expected a key path or a value but found ')'"),
    ("a == 'abc", 6, "unterminated string: expected a closing ' but found end of predicate"),
    ("a == 'a\\q'", 8, "unknown escape '\\q' in string; expected one of \\\\ \\' \\\" \\n \\t \\r \\b \\f \\0 \\uXXXX"),
    ("a == 99999999999999999999", 6, "the integer '99999999999999999999' does not fit in 64 bits"),
    ("a == 5abc", 7, "unexpected 'a' after the number '5'"),
    ("a BETWEEN {1}", 11, "BETWEEN needs exactly two values {low, high} but found 1"),
    ("a BETWEEN {1, 2, 3}", 11, "BETWEEN needs exactly two values {low, high} but found 3"),
    ("a BETWEEN 5", 11, "expected a list {…} or an array argument after 'BETWEEN' but found '5'"),
    ("a IN 5", 6, "expected a list {…} or an array argument after 'IN' but found '5'"),
    ("a IN {1, 2", 11, "expected ',' or '}' in the list at column 6 but found end of predicate"),
    ("a == {1, 2}", 6, "a list {…} can only follow IN or BETWEEN, not '=='"),
    ("a < 'x' AND b <[c] 'y'", 16, "the modifier [c] applies only to string operators, not to '<'"),
    ("a ==[x] 'y'", 6, "unknown modifier '[x]': expected [c], [d] or [cd]"),
    ("a ==[c] 5", 9, "expected a string after '==[c]' but found '5'"),
    ("a BEGINSWITH 5", 14, "expected a string after 'BEGINSWITH' but found '5'"),
    (
      "'a' BEGINSWITH name", 1,
      "'BEGINSWITH' needs the key path on its left, as in 'name BEGINSWITH value', but found 'a'"
    ),
    ("1 == 2", 1, "expected a key path on one side of '==' but found the values '1' and '2'"),
    ("a == b", 6, "comparing two key paths ('a' and 'b') is not supported; compare a key path with a value"),
    ("ANY 5 == a", 5, "expected a key path after 'ANY' but found '5'"),
    ("ANY tags.@count == 1", 1, "'ANY' applies to a key path, not to the aggregate 'tags.@count'"),
    ("id == oid(123)", 7, "malformed ObjectId 'oid(123)': expected 24 hexadecimal digits in oid(…)"),
    (
      "id == oid(64b7f1a2c3d4e5f60123456z)", 7,
      "malformed ObjectId 'oid(64b7f1a2c3d4e5f60123456z)': expected 24 hexadecimal digits in oid(…)"
    ),
    ("id == oid(64b7f1a2c3d4e5f601234567", 7, "expected ')' to close 'oid(' but found end of predicate"),
    (
      "u == uuid(3b241101-e2bb-4255-8caf)", 6,
      "malformed UUID 'uuid(3b241101-e2bb-4255-8caf)': expected uuid(xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx) with hexadecimal digits"
    ),
    ("d == 2024-01-02", 6, "malformed date '2024-01-02': expected YYYY-MM-DD@HH:MM:SS with optional :NANOSECONDS"),
    ("d == 2024-13-02@10:00:00", 6, "'2024-13-02@10:00:00' is not a valid date: there is no day 2 in month 13"),
    ("d == 2023-02-29@10:00:00", 6, "'2023-02-29@10:00:00' is not a valid date: there is no day 29 in month 2"),
    (
      "d == 2024-01-02@24:00:00", 6,
      "'2024-01-02@24:00:00' is not a valid time: expected hours 0-23, minutes and seconds 0-59"
    ),
    (
      "d == T1:1000000000", 6, "malformed timestamp 'T1:1000000000': expected T<seconds>:<nanoseconds below 1000000000>"
    ),
    ("b == B64\"A\"", 6, "malformed base64 in 'B64\"A\"'"),
    ("a IN $0", 6, "the argument $0 after 'IN' must be an array but is a string"),
    ("tags.@count == 'a'", 16, "expected a number to compare with '@count' but found 'a'"),
    ("tags.@count.x == 1", 1, "expected nothing after '@count' in 'tags.@count.x' but found '.x'"),
    (
      "tags.@first == 1", 1,
      "unknown aggregate '@first': expected @count, @size, @min, @max, @sum, @avg, @allKeys or @allValues"
    ),
    ("a.@sum.b.@max == 1", 1, "only one aggregate is allowed in a key path, but 'a.@sum.b.@max' also has '@max'"),
    (
      "tags.@count BEGINSWITH 'a'", 13,
      "'BEGINSWITH' does not apply to '@count'; use ==, !=, <, <=, >, >=, IN or BETWEEN"
    ),
    ("$x.a == 1", 1, "unknown variable '$x': variables are declared by SUBQUERY(list, $x, predicate)"),
    (
      "SUBQUERY(l, $x, a == 1).@count > 0", 17,
      "expected a key path starting with '$x' inside its SUBQUERY but found 'a'"
    ),
    ("SUBQUERY(l, $x, $x == 1) > 0", 26, "expected '.@count' after SUBQUERY(…) but found '>'"),
    (
      "SUBQUERY(l, x, x == 1).@count > 0", 13,
      "expected a variable such as '$x' as the second argument of SUBQUERY but found 'x'"
    ),
    ("SUBQUERY(l, $x, $x == 1).@count > 'a'", 35, "expected a number to compare with SUBQUERY(…).@count but found 'a'"),
    (
      "SUBQUERY(a, $x, SUBQUERY($x.b, $y, $x.c == 1).@count > 0).@count > 0", 36,
      "'$x.c' uses the outer SUBQUERY variable '$x' inside the SUBQUERY of '$y', which is not supported"
    ),
    (
      "SUBQUERY(a, $x, SUBQUERY($x.b, $x, $x == 1).@count > 0).@count > 0", 32,
      "the variable '$x' is already used by an enclosing SUBQUERY"
    ),
    ("a == 1 SORT(name)", 17, "expected ASC or DESC after 'name' in SORT(…) but found ')'"),
    ("a == 1 SORT(name ASC", 21, "expected ',' or ')' in SORT(…) but found end of predicate"),
    ("a == 1 DISTINCT()", 17, "expected a key path in DISTINCT(…) but found ')'"),
    ("a == 1 LIMIT(-1)", 14, "expected a count of zero or more in LIMIT(…) but found '-1'"),
    ("a == 1 LIMIT(1.5)", 14, "expected a whole number in LIMIT(…) but found '1.5'"),
    ("a == 1 LIMIT(2", 15, "expected ')' to close LIMIT(…) but found end of predicate"),
    (
      "a == %K", 6,
      "comparing two key paths ('a' and 'string argument') is not supported; compare a key path with a value"
    ),
    ("a == $", 6, "expected an argument number or a variable name after '$' but found end of predicate"),
  ])
  func errors(predicate: String, column: Int, message: String) {
    let error = failure(predicate, ["string argument"])
    #expect(error?.message == message, "\(predicate.debugDescription)")
    #expect(error?.column == column, "\(predicate.debugDescription)")
  }

  @Test func errorDescriptionIncludesTheColumn() {
    #expect(failure("age ==")?.description == "expected a value after '==' but found end of predicate (at column 7)")
  }

  @Test func nestingIsCapped() throws {
    let deep = String(repeating: "(", count: 10_000) + "a == 1" + String(repeating: ")", count: 10_000)
    let error = failure(deep)
    #expect(error?.column == PredicateParser.maximumDepth + 1)
    #expect(error?.message == "the predicate nests more than 200 levels of parentheses or SUBQUERY")
    let unclosed = failure(String(repeating: "(", count: 10_000))
    #expect(unclosed?.column == PredicateParser.maximumDepth + 1)
    let allowed = String(repeating: "(", count: 200) + "a == 1" + String(repeating: ")", count: 200)
    #expect(try tree(allowed) == "ANY a == 1")
    #expect(try tree(String(repeating: "!", count: 10_000) + "a == 1") == "ANY a == 1")
    var subqueries = "SUBQUERY(l, $v0, "
    for level in 1..<300 { subqueries += "SUBQUERY($v\(level - 1).l, $v\(level), " }
    #expect(failure(subqueries)?.message == "the predicate nests more than 200 levels of parentheses or SUBQUERY")
  }
}
