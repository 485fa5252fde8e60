import ReefBSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A sort order over documents, in MongoDB's cross-type order.
///
/// Values of different types sort by type (MinKey, null, numbers, strings, objects, arrays,
/// binary, ObjectId, bool, date, timestamp, regex, MaxKey), numbers exactly across types. A
/// missing field sorts as null. The sort is stable: documents with equal keys keep their order.
/// Keys are read from each document's bytes once.
///
/// Paths through arrays sort as in MongoDB: a document sorts by the smallest value its path
/// reaches ascending and the largest descending (`{"a.b": 1}` over `a: [{b: 3}, {b: 1}]` sorts
/// by 1); an array element without the field counts as null, an empty array as a value below
/// null, and an array inside an array as one (array) value. Keys whose paths go through the same
/// array take their values from one element (`{"a.c": 1, "a.b": 1}` sorts by the smallest pair
/// of one element), and two keys that reach two different arrays of one document ("parallel
/// arrays") cannot sort it: the sort throws ``QueryError/Kind/sortKey``, as MongoDB fails.
public struct SortSpecification: Sendable {
  /// The keys, most significant first.
  public var keys: [SortKey]

  /// A sort on these keys.
  public init(_ keys: [SortKey]) { self.keys = keys }

  /// A sort from a MongoDB sort document: `{"address.city": 1, "name": -1}`.
  public init(_ document: Document) throws(QueryError) {
    var keys: [SortKey] = []
    for element in document {
      guard let key = SortKey(element.key, direction: element.value) else {
        throw QueryError(
          .badValue,
          "sort direction must be 1 (ascending) or -1 (descending), found \(describe(element.value))",
          keyPath: [element.key])
      }
      guard !element.key.isEmpty else { throw QueryError(.badPath, "sort key cannot be empty", keyPath: [element.key]) }
      keys.append(key)
    }
    self.keys = keys
  }

  /// The documents in this order.
  /// - Throws: ``QueryError/Kind/sortKey`` when a document's keys reach parallel arrays.
  /// - Complexity: O(*n* log *n*) comparisons, after reading each document's keys once.
  public func sorted(_ documents: [Document]) throws(QueryError) -> [Document] {
    guard !keys.isEmpty, !documents.isEmpty else { return documents }
    return try withExtendedLifetime(documents) { () throws(QueryError) -> [Document] in
      let width = keys.count
      var extracted: [RawValue] = []
      extracted.reserveCapacity(documents.count * width)
      for document in documents { try appendValues(of: document, to: &extracted) }
      guard documents.count > 1 else { return documents }
      // Each document's first key as its canonical rank and an order-preserving 128-bit prefix:
      // most comparisons end there, and only equal prefixes that do not hold the whole value
      // compare the values themselves.
      var entries: [SortEntry] = []
      entries.reserveCapacity(documents.count)
      for index in documents.indices { entries.append(SortEntry(extracted[index * width], index: index)) }
      let directions = keys.map(\.ascending)
      let ascending = directions[0]
      extracted.withUnsafeBufferPointer { values in
        if width == 1 {
          entries.sort { left, right in
            if left.rank != right.rank { return ascending == (left.rank < right.rank) }
            if left.high != right.high { return ascending == (left.high < right.high) }
            if left.low != right.low { return ascending == (left.low < right.low) }
            if !(left.exact && right.exact) {
              let comparison = compareValues(values[Int(left.index)], values[Int(right.index)])
              if comparison != 0 { return ascending == (comparison < 0) }
            }
            return left.index < right.index
          }
          return
        }
        entries.sort { left, right in
          if left.rank != right.rank { return ascending == (left.rank < right.rank) }
          if left.high != right.high { return ascending == (left.high < right.high) }
          if left.low != right.low { return ascending == (left.low < right.low) }
          let first = left.exact && right.exact ? 1 : 0
          for key in first..<width {
            let comparison = compareValues(
              values[Int(left.index) * width + key], values[Int(right.index) * width + key])
            if comparison != 0 { return directions[key] == (comparison < 0) }
          }
          return left.index < right.index
        }
      }
      return entries.map { documents[Int($0.index)] }
    }
  }

  /// Compares two documents in this order: negative, zero or positive.
  /// - Throws: ``QueryError/Kind/sortKey`` when either document's keys reach parallel arrays.
  public func compare(_ a: Document, _ b: Document) throws(QueryError) -> Int {
    var values: [RawValue] = []
    values.reserveCapacity(2 * keys.count)
    return try withExtendedLifetime((a, b)) { () throws(QueryError) -> Int in
      try appendValues(of: a, to: &values)
      try appendValues(of: b, to: &values)
      return compareSortValues(values[..<keys.count], values[keys.count...])
    }
  }

  /// A document's sort values, one per key (MongoDB's sort key: through arrays, the smallest
  /// value ascending or the largest descending; a missing field is null), kept apart from the
  /// document so that its place can be found again after the document changed.
  /// - Throws: ``QueryError/Kind/sortKey`` when the keys reach parallel arrays.
  public func sortValues(of document: Document) throws(QueryError) -> [BSON] {
    var values: [RawValue] = []
    values.reserveCapacity(keys.count)
    return try withExtendedLifetime(document) { () throws(QueryError) -> [BSON] in
      try appendValues(of: document, to: &values)
      return values.map { $0.bson() }
    }
  }

  /// Compares two documents by their ``sortValues(of:)`` in this order: negative, zero or
  /// positive, as ``compare(_:_:)`` compares the documents.
  public func compare(sortValues a: [BSON], _ b: [BSON]) -> Int {
    for (index, key) in keys.enumerated() {
      let comparison = compareBSON(a[index], b[index])
      if comparison != 0 { return key.ascending ? comparison : -comparison }
    }
    return 0
  }
}

/// The empty array's sort key: below null, as MongoDB sorts it.
let emptyArrayKey = Literal(.undefined)

/// A document's place in a sort, by its first key: the key's canonical rank and 128 bits whose
/// unsigned order agrees with `compareValues` between values of that rank wherever they differ.
/// `exact` says the bits hold the whole value, so equal bits mean equal values.
struct SortEntry {
  var rank: UInt8
  var exact: Bool
  var index: Int32
  var high: UInt64
  var low: UInt64

  init(_ value: RawValue, index: Int) {
    rank = UInt8(canonicalRank(value.type))
    self.index = Int32(index)
    high = 0
    low = 0
    exact = true
    switch value.type {
    case 0x02, 0x0E:
      // The first 16 bytes, zero-padded; whole when the string is that short and has no zero.
      let count = Int(value.int32()) - 1
      for offset in 0..<min(16, count) {
        let byte = UInt64(value.pointer.load(fromByteOffset: 4 + offset, as: UInt8.self))
        if byte == 0 { exact = false }
        if offset < 8 { high |= byte << (56 - 8 * offset) } else { low |= byte << (120 - 8 * offset) }
      }
      if count > 16 { exact = false }
    case 0x01, 0x10, 0x12, 0x13:
      // An order-preserving image of the value as a double (NaN lowest); whole for doubles
      // and for integers a double holds exactly.
      let number: Double
      switch Number(value) {
      case .integer(let integer):
        number = Double(integer)
        exact = integer.magnitude <= 1 << 53
      case .double(let double): number = double
      case .decimal(let decimal):
        number = Double(decimal.description) ?? .nan
        exact = false
      }
      if number.isNaN {
        high = 0
      } else {
        let bits = (number == 0 ? 0.0 : number).bitPattern
        high = bits >> 63 == 1 ? ~bits : bits | (1 << 63)
      }
    case 0x09:
      high = UInt64(bitPattern: value.int64()) ^ (1 << 63)
    case 0x07:
      for offset in 0..<12 {
        let byte = UInt64(value.pointer.load(fromByteOffset: offset, as: UInt8.self))
        if offset < 8 { high |= byte << (56 - 8 * offset) } else { low |= byte << (120 - 8 * offset) }
      }
    case 0x08:
      high = UInt64(value.pointer.load(as: UInt8.self))
    case 0xFF, 0x06, 0x0A, 0x7F:
      break  // one value per type
    default:
      exact = false
    }
  }
}
