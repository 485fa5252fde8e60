import ReefBSON

// MongoDB's sort key of a document: the values its sort paths reach, one per key, chosen as an
// index on those paths would list the document first in the sort's order.
//
// A path through documents only reaches one value (null when a field is missing). A path that
// meets arrays reaches many: every element of an array at its end, and the rest of the path in
// every document element of an array on the way (null for an element that is not a document or
// lacks the field). An array is expanded one level: an array inside an array is one value (it
// sorts as an array). An empty array is `undefined`, below null. Keys whose paths go through the
// same array take their values from the same element, so `{"a.c": 1, "a.b": 1}` sorts by the
// smallest pair (c, b) of one element of `a`; two keys that meet two different arrays at the same
// level are parallel arrays, which MongoDB cannot sort by. A numeric segment names an array's
// element by position when the array has one there.

/// The value a document sorts by for one key, when its path meets no array; nil when it does.
@inline(__always)
func plainSortValue(_ root: RawValue, _ segments: [FieldPath.Segment]) -> RawValue? {
  var current = root
  for segment in segments {
    guard current.type == 0x03 else { return current.type == 0x04 ? nil : nullLiteral.value }
    guard let child = current.field(segment.name) else { return nullLiteral.value }
    current = child
  }
  return current.type == 0x04 ? nil : current
}

/// The value a document sorts by for one key: the smallest the path reaches ascending, the
/// largest descending (for `DISTINCT`, whose single key cannot meet parallel arrays). A document
/// whose key cannot be computed (a numeric field inside an array's elements) sorts as null.
func sortValue(_ root: RawValue, _ key: SortKey) -> RawValue {
  if let value = plainSortValue(root, key.path.segments) { return value }
  var values: [RawValue] = []
  var extraction = SortKeyExtraction([key], root: root)
  return (try? extraction.run(into: &values)) != nil ? values[0] : nullLiteral.value
}

extension SortSpecification {
  /// Appends the document's sort values, one per key.
  /// - Throws: ``QueryError/Kind/sortKey`` for parallel arrays or an ambiguous numeric field.
  @inline(__always)
  func appendValues(_ root: RawValue, to values: inout [RawValue]) throws(QueryError) {
    let start = values.count
    for key in keys {
      guard let value = plainSortValue(root, key.path.segments) else {
        values.removeSubrange(start...)
        var extraction = SortKeyExtraction(keys, root: root)
        try extraction.run(into: &values)
        return
      }
      values.append(value)
    }
  }

  /// Appends a document's sort values, one per key; they point into its bytes, so the caller
  /// keeps the document alive while it uses them.
  /// - Throws: ``QueryError/Kind/sortKey`` for parallel arrays or an ambiguous numeric field.
  func appendValues(of document: Document, to values: inout [RawValue]) throws(QueryError) {
    let failure = document.withRawValue { root -> QueryError? in
      do throws(QueryError) {
        try appendValues(root, to: &values)
        return nil
      } catch {
        return error
      }
    }
    if let failure { throw failure }
  }

  /// Compares two documents' sort values (`keys.count` of each) in this order.
  @inline(__always)
  func compareSortValues(_ a: ArraySlice<RawValue>, _ b: ArraySlice<RawValue>) -> Int {
    var left = a.startIndex
    var right = b.startIndex
    for key in keys {
      let comparison = compareValues(a[left], b[right])
      if comparison != 0 { return key.ascending ? comparison : -comparison }
      left += 1
      right += 1
    }
    return 0
  }

  /// Compares two documents whose sort values were computed without error before (by ``sorted(_:)``
  /// or a sorter): key by key, stopping at the first that differs, with no allocation when their
  /// paths meet no array.
  func compareComputed(_ a: Document, _ b: Document) -> Int {
    let plain: Int? = a.withRawValue { rootA in
      b.withRawValue { rootB in
        for key in keys {
          guard let valueA = plainSortValue(rootA, key.path.segments),
            let valueB = plainSortValue(rootB, key.path.segments)
          else { return nil }
          let comparison = compareValues(valueA, valueB)
          if comparison != 0 { return key.ascending ? comparison : -comparison }
        }
        return 0
      }
    }
    if let plain { return plain }
    return (try? compare(a, b)) ?? 0
  }
}

/// One document's sort key through arrays, as MongoDB's index key generator finds its keys: every
/// combination the paths reach is visited, and the first in the sort's order is kept.
struct SortKeyExtraction {
  let keys: [SortKey]
  let root: RawValue
  /// Where each key's path continues: the index of its next segment (its count when done).
  var positions: [Int]
  /// Each key's value in the combination being built.
  var current: [RawValue]
  /// The first combination in the sort's order so far.
  var best: [RawValue] = []

  /// A key's path continued from the element at a numeric position of an array (MongoDB's
  /// positional path): the value found there (nil when missing) and where the path continues.
  struct Positional {
    var value: RawValue?
    var position: Int
    /// The element at that position is itself an array: an array at the path's end is then one
    /// value, not expanded.
    var elementIsArray: Bool
  }

  init(_ keys: [SortKey], root: RawValue) {
    self.keys = keys
    self.root = root
    positions = Array(repeating: 0, count: keys.count)
    current = Array(repeating: nullLiteral.value, count: keys.count)
  }

  /// Finds the key and appends its values, one per key.
  mutating func run(into values: inout [RawValue]) throws(QueryError) {
    try visit(root, positional: nil)
    values.append(contentsOf: best)
  }

  /// Follows `segments` from `container` (a document, or an array for a positional path) through
  /// documents: the value at the end, or the first array on the way with where the path goes on
  /// after it; nil when a field is missing or a value on the way is neither.
  func follow(_ container: RawValue, _ segments: [FieldPath.Segment], from start: Int) -> (RawValue?, Int) {
    var node = container
    var position = start
    while true {
      guard let child = node.field(segments[position].name) else { return (nil, segments.count) }
      position += 1
      if position == segments.count || child.isArray { return (child, position) }
      guard child.isDocument else { return (nil, segments.count) }
      node = child
    }
  }

  /// One level: each unfinished key takes its next value from `object` (nil stands for an array
  /// element that is not a document); the one array they meet, if any, is expanded element by
  /// element, each continuing one level down.
  mutating func visit(_ object: RawValue?, positional: [Positional?]?) throws(QueryError) {
    var array: RawValue?
    var arrayKeys: [Int] = []
    var expandsElements = true
    for index in keys.indices {
      let segments = keys[index].path.segments
      guard positions[index] < segments.count else { continue }
      var found: RawValue?
      if let entry = positional?[index] {
        if let object, object.field(segments[positions[index]].name) != nil {
          throw ambiguousField(index)
        }
        found = entry.value
        positions[index] = entry.value == nil ? segments.count : entry.position
        if entry.elementIsArray { expandsElements = false }
      } else if let object {
        (found, positions[index]) = follow(object, segments, from: positions[index])
      } else {
        positions[index] = segments.count
      }
      guard let value = found else {
        current[index] = nullLiteral.value
        continue
      }
      guard value.isArray else {
        current[index] = value
        positions[index] = segments.count
        continue
      }
      if let other = array, other.pointer != value.pointer { throw parallelArrays(arrayKeys[0], index) }
      array = value
      arrayKeys.append(index)
    }
    guard let array else {
      offer()
      return
    }
    let ending = arrayKeys.filter { positions[$0] == keys[$0].path.segments.count }
    if array.int32() <= 5 {
      // An empty array: undefined at the end of a path, and nothing (null) past it.
      for index in ending { current[index] = emptyArrayKey.value }
      try visit(nil, positional: nil)
      return
    }
    // Keys that go on past the array; those whose next segment is one of its positions read
    // that element's path once, for every element.
    var continuing: [(index: Int, position: Int)] = []
    var subPositional: [Positional?]?
    for index in arrayKeys where positions[index] < keys[index].path.segments.count {
      let segments = keys[index].path.segments
      continuing.append((index, positions[index]))
      if let element = array.field(segments[positions[index]].name) {
        let (value, position) = follow(array, segments, from: positions[index])
        if subPositional == nil { subPositional = Array(repeating: nil, count: keys.count) }
        subPositional![index] = Positional(value: value, position: position, elementIsArray: element.isArray)
      }
    }
    var elements = RawElements(array)
    while let element = elements.next() {
      for (index, position) in continuing { positions[index] = position }
      for index in ending { current[index] = expandsElements ? element.value : array }
      try visit(element.value.isDocument ? element.value : nil, positional: subPositional)
    }
  }

  /// Keeps the combination being built when it comes first in the sort's order.
  mutating func offer() {
    guard !best.isEmpty else {
      best = current
      return
    }
    for index in keys.indices {
      let comparison = compareValues(current[index], best[index])
      if comparison == 0 { continue }
      if keys[index].ascending == (comparison < 0) {
        for copied in keys.indices { best[copied] = current[copied] }
      }
      return
    }
  }

  func parallelArrays(_ first: Int, _ second: Int) -> QueryError {
    QueryError(
      .sortKey,
      "cannot sort with keys that are parallel arrays: \"\(keys[first].path)\" and \"\(keys[second].path)\" "
        + "reach different arrays in the document with _id \(documentID)",
      keyPath: [keys[second].path.description])
  }

  func ambiguousField(_ index: Int) -> QueryError {
    QueryError(
      .sortKey,
      "ambiguous sort path \"\(keys[index].path)\": a numeric segment names both an array position and a field "
        + "of the array's documents, in the document with _id \(documentID)",
      keyPath: [keys[index].path.description])
  }

  /// The document's `_id` for an error message, shortened.
  var documentID: String {
    guard let id = root.field(Array("_id".utf8)) else { return "(none)" }
    let text = id.bson().extendedJSON(.relaxed)
    return text.count > 60 ? String(text.prefix(60)) + "…" : text
  }
}
