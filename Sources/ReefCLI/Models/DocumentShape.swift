import ReefBSON

/// What the documents of a collection (or the subdocuments at one path) hold: each field's
/// values, merged over every document, fields in the order they were first seen.
public final class DocumentShape {
  /// The documents seen.
  public private(set) var count = 0
  /// The fields in the order they were first seen.
  public private(set) var order: [String] = []
  /// Each field's values.
  public private(set) var fields: [String: ValueShape] = [:]

  /// An empty shape.
  public init() {}

  /// Adds a document's fields.
  /// - Complexity: O(n) in the size of the document.
  public func add(_ document: Document) {
    count += 1
    for element in document {
      let key = element.key
      let shape: ValueShape
      if let known = fields[key] {
        shape = known
      } else {
        shape = ValueShape()
        fields[key] = shape
        order.append(key)
      }
      shape.add(element)
    }
  }
}
