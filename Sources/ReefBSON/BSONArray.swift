/// A BSON array: a view over an embedded document whose keys are "0", "1", ….
///
/// Like ``Document``, it does not copy its bytes; elements decode lazily as you iterate.
public struct BSONArray: Sendable, Hashable, Sequence {
  /// The array's bytes as a document (keys "0", "1", …).
  public let document: Document

  /// Views a document as an array. The keys are not re-checked here; validated input has them in order.
  public init(_ document: Document) { self.document = document }

  /// An empty array.
  public init() { self.document = Document() }

  /// Builds an array from values.
  public init(_ values: some Sequence<BSON>) {
    var builder = ArrayBuilder()
    for value in values { builder.append(value) }
    self = builder.array
  }

  public struct Iterator: IteratorProtocol {
    var base: Document.Iterator
    public mutating func next() -> BSON? { base.next()?.value }
  }

  public func makeIterator() -> Iterator { Iterator(base: document.makeIterator()) }

  /// The number of elements. - Complexity: O(n).
  public var count: Int { document.count }
  /// Whether the array is empty.
  public var isEmpty: Bool { document.isEmpty }

  /// The element at `index`, or `nil` when the array is shorter. - Complexity: O(n).
  public subscript(index: Int) -> BSON? {
    guard index >= 0 else { return nil }
    var i = 0
    for element in document {
      if i == index { return element.value }
      i += 1
    }
    return nil
  }

  /// The elements with their raw positions, for code that wants keys and types too.
  public var elements: Document { document }
}

extension BSONArray: ExpressibleByArrayLiteral {
  public init(arrayLiteral elements: BSON...) { self.init(elements) }
}
