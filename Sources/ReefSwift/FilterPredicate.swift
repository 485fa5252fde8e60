import Foundation
import ReefBSON
import ReefQuery

/// A predicate as Reef's collections take it: a format string in Realm's predicate language
/// with its arguments, or what an `NSPredicate` holds (a format, a constant, or the AND, OR and
/// NOT of `NSCompoundPredicate`).
indirect enum FilterPredicate {
  /// A format string and the arguments for its `%@`, `%K`, `%d`… and `$n`.
  case format(String, [Any])
  /// `NSPredicate(value:)`.
  case constant(Bool)
  case and([FilterPredicate])
  case or([FilterPredicate])
  case not(FilterPredicate)

  /// What `predicate` holds.
  ///
  /// Stops for a predicate Reef cannot read (`NSPredicate(block:)`): Realm refuses one too.
  init(_ predicate: NSPredicate) {
    #if canImport(Darwin)
      // Foundation's own predicate: its format, with the arguments substituted.
      let format = predicate.predicateFormat
      if format.hasPrefix("BLOCKPREDICATE") { Self.unreadable() }
      self = .format(format, [])
    #else
      if let compound = predicate as? NSCompoundPredicate {
        let parts = compound.subpredicates.map(FilterPredicate.init)
        switch compound.compoundPredicateType {
        case .and: self = .and(parts)
        case .or: self = .or(parts)
        // Foundation's NOT of several subpredicates: NOT of their AND.
        case .not: self = .not(parts.count == 1 ? parts[0] : .and(parts))
        }
        return
      }
      let probe = PredicateFormatProbe()
      _ = predicate.evaluate(with: probe)
      if let format = probe.format {
        self = .format(format, probe.arguments)
      } else if predicate.isEqual(NSPredicate(value: true)) {
        self = .constant(true)
      } else if predicate.isEqual(NSPredicate(value: false)) {
        self = .constant(false)
      } else {
        Self.unreadable()
      }
    #endif
  }

  private static func unreadable() -> Never {
    reefStop(
      "Invalid predicate: Reef reads predicates made with NSPredicate(format:), NSPredicate(value:) and "
        + "NSCompoundPredicate; a block predicate (NSPredicate(block:)) cannot be queried")
  }

  /// The predicate parsed, with its arguments as BSON. An `NSCompoundPredicate`'s subpredicates
  /// are parsed one by one, each with its own arguments.
  /// - Throws: ``QueryError`` for an invalid format, or for `SORT`, `DISTINCT` or `LIMIT` inside a
  ///   subpredicate of a compound (only a whole predicate may have them).
  func parsed() throws(QueryError) -> ParsedPredicate {
    switch self {
    case .format(let format, let arguments):
      return try parsePredicate(format, arguments: arguments.map { BSONArgument.bson($0) ?? .null })
    case .constant(let value): return ParsedPredicate(node: .constant(value))
    case .and(let parts):
      return ParsedPredicate(node: parts.isEmpty ? .constant(true) : .and(try Self.conditions(parts)))
    case .or(let parts):
      return ParsedPredicate(node: parts.isEmpty ? .constant(false) : .or(try Self.conditions(parts)))
    case .not(let part): return ParsedPredicate(node: .not(try part.condition()))
    }
  }

  private static func conditions(_ parts: [FilterPredicate]) throws(QueryError) -> [QueryNode] {
    var nodes: [QueryNode] = []
    for part in parts { nodes.append(try part.condition()) }
    return nodes
  }

  /// The condition of a compound's subpredicate.
  private func condition() throws(QueryError) -> QueryNode {
    let parsed = try parsed()
    guard parsed.sort.isEmpty, parsed.distinct.isEmpty, parsed.limit == nil else {
      throw QueryError(
        .unsupported, "SORT(…), DISTINCT(…) and LIMIT(…) cannot be inside a subpredicate of an NSCompoundPredicate")
    }
    return parsed.node
  }
}
