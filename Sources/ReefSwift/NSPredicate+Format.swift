import Foundation

#if !canImport(Darwin)
  import ReefQuery

  // swift-corelibs-foundation has NSPredicate but not its format strings: these initializers
  // give Linux the `NSPredicate(format:…)` that Realm's users write. The predicate keeps its
  // format and arguments in its block, and Reef reads them back by evaluating it with a
  // `PredicateFormatProbe`; evaluated with anything else, it matches Reef objects and values.

  extension NSPredicate {
    /// Creates a predicate from a format string in Realm's predicate language and the arguments
    /// for its `%@`, `%K`, `%d`, `%f`, `%s`… and `$n`, for ``Results/filter(_:)``
    /// and the other collections' `filter` and `index(matching:)`.
    ///
    /// swift-corelibs-foundation has no predicate format strings; Reef's are its own query
    /// language (see "Coming from Realm"). A format that does not parse stops here, with the
    /// column and what was expected, as Foundation raises on Apple platforms.
    ///
    /// - Parameters:
    ///   - predicateFormat: The predicate (`"age > %d AND name BEGINSWITH %@"`).
    ///   - args: The arguments, in order.
    /// - Complexity: O(*n*) in the length of the format.
    public convenience init(format predicateFormat: String, _ args: Any...) {
      self.init(format: predicateFormat, argumentArray: args)
    }

    /// Creates a predicate from a format string in Realm's predicate language and an array of
    /// arguments (see ``init(format:_:)``).
    ///
    /// - Parameters:
    ///   - predicateFormat: The predicate.
    ///   - arguments: The arguments for its placeholders, in order; nil for none.
    /// - Complexity: O(*n*) in the length of the format.
    public convenience init(format predicateFormat: String, argumentArray arguments: [Any]?) {
      let arguments = arguments ?? []
      let formatted = FilterPredicate.format(predicateFormat, arguments)
      do {
        _ = try formatted.parsed()
      } catch {
        reefStop("Unable to parse the format string \"\(predicateFormat)\": \(error)")
      }
      self.init(block: { object, _ in
        if let probe = object as? PredicateFormatProbe {
          probe.format = predicateFormat
          probe.arguments = arguments
          return false
        }
        let objectClass = (object.map { type(of: $0) }) as? ObjectBase.Type
        return CollectionElements.matcher(formatted, objectClass: objectClass)(object as Any)
      })
    }
  }

  /// What a predicate made by ``NSPredicate/init(format:argumentArray:)`` writes its format and
  /// arguments into when it is evaluated with one.
  final class PredicateFormatProbe {
    var format: String?
    var arguments: [Any] = []
  }
#endif
