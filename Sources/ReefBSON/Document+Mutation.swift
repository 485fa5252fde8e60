extension Document {
  /// Creates a document from key-value pairs, in order.
  public init(_ pairs: some Sequence<(String, BSON)>) {
    var builder = DocumentBuilder()
    for (key, value) in pairs { builder.append(key, value) }
    self = builder.document
  }

  /// Rebuilds the document from its elements with `transform` applied to the list of pairs.
  private mutating func rewrite(_ transform: (inout [(String, BSON)]) -> Void) {
    var pairs = map { ($0.key, $0.value) }
    transform(&pairs)
    self = Document(pairs)
  }

  /// Appends an element at the end (a duplicate key is appended as well; use ``set(_:forKey:)`` to replace).
  /// - Complexity: O(n) in the document's bytes.
  public mutating func append(_ value: BSON, forKey key: String) {
    var writer = BSONWriter(capacity: length + key.utf8.count + 16)
    withUnsafeBytes { writer.append(UnsafeRawBufferPointer(rebasing: $0.dropLast())) }
    writer.element(key, value)
    writer.endDocument(0)
    self = writer.document()
  }

  /// Replaces the value of the first element named `key`, keeping its position, or appends it.
  /// - Complexity: O(n).
  public mutating func set(_ value: BSON, forKey key: String) {
    guard element(forKey: key) != nil else { return append(value, forKey: key) }
    rewrite { pairs in
      if let i = pairs.firstIndex(where: { $0.0 == key }) { pairs[i].1 = value }
    }
  }

  /// Inserts an element at position `index` (0 is first); `index` must be in `0...count`.
  /// - Complexity: O(n).
  public mutating func insert(_ value: BSON, forKey key: String, at index: Int) {
    rewrite { pairs in
      precondition(index >= 0 && index <= pairs.count, "insert index \(index) is outside 0...\(pairs.count)")
      pairs.insert((key, value), at: index)
    }
  }

  /// Removes the first element named `key` and returns its value, or `nil` when there is none.
  /// - Complexity: O(n).
  @discardableResult
  public mutating func removeValue(forKey key: String) -> BSON? {
    guard let old = value(forKey: key) else { return nil }
    rewrite { pairs in
      if let i = pairs.firstIndex(where: { $0.0 == key }) { pairs.remove(at: i) }
    }
    return old
  }

  /// Reads or writes the value of the exact key `key`; assigning `nil` removes it.
  public subscript(key key: String) -> BSON? {
    get { value(forKey: key) }
    set {
      if let newValue { set(newValue, forKey: key) } else { removeValue(forKey: key) }
    }
  }
}

extension Document: ExpressibleByDictionaryLiteral {
  public init(dictionaryLiteral elements: (String, BSON)...) { self.init(elements) }
}

extension BSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
  ExpressibleByBooleanLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
  public init(stringLiteral value: String) { self = .string(value) }
  /// Integer literals become `.int32` when they fit, `.int64` otherwise (as relaxed Extended JSON reads numbers).
  public init(integerLiteral value: Int) {
    self = Int32(exactly: value).map { .int32($0) } ?? .int64(Int64(value))
  }
  public init(floatLiteral value: Double) { self = .double(value) }
  public init(booleanLiteral value: Bool) { self = .bool(value) }
  public init(nilLiteral: ()) { self = .null }
  public init(arrayLiteral elements: BSON...) { self = .array(BSONArray(elements)) }
  public init(dictionaryLiteral elements: (String, BSON)...) { self = .document(Document(elements)) }
}
