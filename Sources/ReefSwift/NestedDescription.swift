/// A value whose description holds the descriptions of others: an object (its links and
/// collections) or a collection (its elements).
///
/// Descriptions nest to a depth, as Realm's (`RLMDescriptionMaxDepth`): the value described
/// is the first level, and what lies deeper than ``DescriptionDepth/maximum`` levels reads
/// `<Maximum depth exceeded>`. So a graph with a cycle (an object whose list holds itself, two
/// objects that link to each other) has a finite description.
protocol NestedDescription {
  /// The description, nesting at most `depth` levels of objects and collections (this value
  /// being the first); `<Maximum depth exceeded>` when `depth` is 0.
  func description(depth: Int) -> String
}

/// How deep descriptions nest (see ``NestedDescription``).
enum DescriptionDepth {
  /// Realm's depth: an object, its list, an object of that list, its list, and an object of it.
  static let maximum = 5
  /// What stands for a value nested deeper.
  static let exceeded = "<Maximum depth exceeded>"

  /// The value as a ``NestedDescription``: an object, a collection, or the object an
  /// ``AnyReefValue`` holds; nil for a value whose description holds no others.
  static func nestedValue(_ value: Any) -> NestedDescription? {
    if let mixed = value as? AnyReefValue, case .object(let object) = mixed { return object }
    return value as? NestedDescription
  }

  /// The description of a value nested in another described at `depth`, indented one level
  /// (its lines after the first start with a tab).
  static func nested(_ value: NestedDescription, below depth: Int) -> String {
    value.description(depth: depth - 1).replacingOccurrences(of: "\n", with: "\n\t")
  }
}
