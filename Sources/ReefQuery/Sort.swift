import ReefBSON

/// A sort order over documents, in MongoDB's cross-type order.
///
/// Values of different types sort by type (MinKey, null, numbers, strings, objects, arrays,
/// binary, ObjectId, bool, date, timestamp, regex, MaxKey), numbers exactly across types. A
/// missing field sorts as null; an array sorts by its smallest element ascending and by its
/// largest descending, and an empty array below null. The sort is stable: documents with equal
/// keys keep their order. Keys are read from each document's bytes once.
public struct SortSpecification: Sendable {
  /// The keys, most significant first.
  public var keys: [SortKey]

  /// A sort on these keys.
  public init(_ keys: [SortKey]) { self.keys = keys }

  /// A sort from a MongoDB sort document: `{"address.city": 1, "name": -1}`.
  public init(_ document: Document) throws(QueryError) {
    var keys: [SortKey] = []
    for element in document {
      let direction: Double? =
        switch element.value {
        case .int32(let value): Double(value)
        case .int64(let value): Double(value)
        case .double(let value): value
        default: nil
        }
      guard let direction, direction == 1 || direction == -1 else {
        throw QueryError(
          "sort direction must be 1 (ascending) or -1 (descending), found \(describe(element.value))",
          keyPath: [element.key])
      }
      guard !element.key.isEmpty else { throw QueryError("sort key cannot be empty", keyPath: [element.key]) }
      keys.append(SortKey(FieldPath(element.key), ascending: direction == 1))
    }
    self.keys = keys
  }

  /// The documents in this order.
  public func sorted(_ documents: [Document]) -> [Document] {
    guard !keys.isEmpty, documents.count > 1 else { return documents }
    return withExtendedLifetime(documents) {
      let width = keys.count
      var extracted: [RawValue] = []
      extracted.reserveCapacity(documents.count * width)
      for document in documents {
        document.withUnsafeBytes { bytes in
          let root = RawValue(type: 0x03, pointer: bytes.baseAddress!)
          for key in keys { extracted.append(sortValue(root, key)) }
        }
      }
      let directions = keys.map(\.ascending)
      var order = Array(documents.indices)
      extracted.withUnsafeBufferPointer { values in
        order.sort { left, right in
          for index in 0..<width {
            let comparison = compareValues(values[left * width + index], values[right * width + index])
            if comparison != 0 { return directions[index] ? comparison < 0 : comparison > 0 }
          }
          return left < right
        }
      }
      return order.map { documents[$0] }
    }
  }

  /// Compares two documents in this order: negative, zero or positive.
  public func compare(_ a: Document, _ b: Document) -> Int {
    a.withUnsafeBytes { bytesA in
      b.withUnsafeBytes { bytesB in
        let rootA = RawValue(type: 0x03, pointer: bytesA.baseAddress!)
        let rootB = RawValue(type: 0x03, pointer: bytesB.baseAddress!)
        for key in keys {
          let comparison = compareValues(sortValue(rootA, key), sortValue(rootB, key))
          if comparison != 0 { return key.ascending ? comparison : -comparison }
        }
        return 0
      }
    }
  }
}

/// The empty array's sort key: below null, as MongoDB sorts it.
let emptyArrayKey = Literal(.undefined)

/// The value a document sorts by for one key.
func sortValue(_ root: RawValue, _ key: SortKey) -> RawValue {
  var state = PathWalk()
  var best: RawValue?
  _ = walk(root, key.path.segments[...], .elements, &state) { value in
    if let current = best {
      let comparison = compareValues(value, current)
      if key.ascending ? comparison < 0 : comparison > 0 { best = value }
    } else {
      best = value
    }
    return false
  }
  if let best { return best }
  // An empty array at the end of the path (and nothing else) sorts below null.
  return state.found ? emptyArrayKey.value : nullLiteral.value
}
