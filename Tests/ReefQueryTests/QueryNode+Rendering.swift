import ReefBSON

@testable import ReefQuery

/// A compact, unambiguous text form of query trees for test assertions:
/// `(ANY age > 5 AND ALL tags BEGINSWITH[c] "a")`, `items.@sum.price >= 10`,
/// `SUBQUERY(items; ANY $ == 3).@count > 0`. Integers are `.int64` unless suffixed (`5i32`);
/// doubles always show a fraction or exponent (`5.0`); the empty path is `$`.
func render(_ node: QueryNode) -> String {
  switch node {
  case .constant(let value): return value ? "TRUE" : "FALSE"
  case .and(let nodes): return "(" + nodes.map(render).joined(separator: " AND ") + ")"
  case .or(let nodes): return "(" + nodes.map(render).joined(separator: " OR ") + ")"
  case .nor(let nodes): return "NOR(" + nodes.map(render).joined(separator: ", ") + ")"
  case .not(let node): return "NOT " + render(node)
  case .match(let path, let test, let quantifier):
    let q =
      switch quantifier {
      case .mongo: "MONGO"
      case .any: "ANY"
      case .all: "ALL"
      case .none: "NONE"
      }
    return "\(q) \(render(path)) \(render(test))"
  case .exists(let path, let exists): return "EXISTS(\(render(path)), \(exists))"
  case .size(let path, let size): return "SIZE(\(render(path)), \(size))"
  case .elementMatch(let path, let node): return "ELEMMATCH(\(render(path)); \(render(node)))"
  case .elementMatchValue(let path, let tests):
    return "ELEMMATCH(\(render(path)); \(tests.map(render).joined(separator: ", ")))"
  case .aggregate(let path, let aggregate, let subpath, let op, let value):
    let prefix = path.segments.isEmpty ? "" : render(path) + "."
    let suffix = subpath.map { "." + render($0) } ?? ""
    return "\(prefix)\(aggregate.rawValue)\(suffix) \(op.rawValue) \(render(value))"
  case .subquery(let path, let node, let op, let value):
    return "SUBQUERY(\(render(path)); \(render(node))).@count \(op.rawValue) \(render(value))"
  }
}

func render(_ path: FieldPath) -> String { path.segments.isEmpty ? "$" : path.description }

func render(_ test: ValueTest) -> String {
  switch test {
  case .compare(let op, let value): return "\(op.rawValue) \(render(value))"
  case .in(let values): return "IN {" + values.map(render).joined(separator: ", ") + "}"
  case .regex(let pattern, let options): return "REGEX /\(pattern)/\(options)"
  case .type(let types): return "TYPE(" + types.map(\.name).joined(separator: ", ") + ")"
  case .mod(let divisor, let remainder): return "MOD(\(divisor), \(remainder))"
  case .string(let op, let s, let options):
    var modifier = ""
    if options.contains(.caseInsensitive) { modifier += "c" }
    if options.contains(.diacriticInsensitive) { modifier += "d" }
    return op.rawValue + (modifier.isEmpty ? "" : "[\(modifier)]") + " " + render(.string(s))
  case .all(let tests): return "{" + tests.map(render).joined(separator: " & ") + "}"
  case .elementMatch(let tests): return "ELEMMATCH{" + tests.map(render).joined(separator: " & ") + "}"
  case .elementMatchQuery(let query): return "ELEMMATCH{" + render(query) + "}"
  case .exists(let exists): return "EXISTS(\(exists))"
  case .size(let size): return "SIZE(\(size))"
  case .not(let test): return "NOT " + render(test)
  case .anyFieldValue(let test): return "ANYVALUE{" + render(test) + "}"
  case .anyFieldName(let test): return "ANYKEY{" + render(test) + "}"
  }
}

func render(_ value: BSON) -> String {
  switch value {
  case .int64(let n): return "\(n)"
  case .int32(let n): return "\(n)i32"
  case .double(let d): return "\(d)"
  case .string(let s):
    var quoted = "\""
    for c in s {
      switch c {
      case "\\": quoted += "\\\\"
      case "\"": quoted += "\\\""
      case "\n": quoted += "\\n"
      case "\t": quoted += "\\t"
      default: quoted.append(c)
      }
    }
    return quoted + "\""
  case .bool(let b): return "\(b)"
  case .null: return "null"
  case .objectId(let id): return "oid(\(id.hex))"
  case .datetime(let date): return "date(\(date.millisecondsSinceEpoch))"
  case .binary(let binary):
    let hex = binary.data.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    return "bin(\(binary.subtype.rawValue):\(hex))"
  case .array(let array): return "[" + array.map(render).joined(separator: ", ") + "]"
  default: return "<\(value.type.name)>"
  }
}
