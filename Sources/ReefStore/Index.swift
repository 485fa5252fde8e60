import ReefBSON
import ReefQuery

/// A secondary index: its fields and directions, and whether it is unique or sparse.
///
/// Keys are the fields' values in the order-preserving ``KeyEncoding``, so that LMDB's byte order
/// is MongoDB's order. An array value indexes each of its elements (a multikey index); a path
/// through an array of embedded documents indexes the field of each element. A document without
/// the field is indexed under null, unless the index is sparse.
public struct IndexSpecification: Sendable, Hashable {
  /// The index's name (`address.city_1` by default, as MongoDB names it).
  public var name: String
  /// The indexed paths and directions, most significant first.
  public var keys: [SortKey]
  /// At most one document per key.
  public var unique: Bool
  /// Documents without any of the fields are left out.
  public var sparse: Bool

  /// An index from a MongoDB key document: `{"address.city": 1, "name": -1}`.
  public init(keys: Document, name: String? = nil, unique: Bool = false, sparse: Bool = false) throws(StoreError) {
    var sortKeys: [SortKey] = []
    var nameParts: [String] = []
    for element in keys {
      guard let key = SortKey(element.key, direction: element.value) else {
        throw StoreError(
          .index, "index key \(element.key) must be 1 or -1 (text, hashed and geospatial indexes are not supported)")
      }
      guard !element.key.isEmpty, !element.key.hasPrefix("$") else {
        throw StoreError(.index, "invalid index key \"\(element.key)\"")
      }
      sortKeys.append(key)
      nameParts.append("\(element.key)_\(key.ascending ? 1 : -1)")
    }
    guard !sortKeys.isEmpty else { throw StoreError(.index, "an index needs at least one key") }
    self.keys = sortKeys
    self.name = name ?? nameParts.joined(separator: "_")
    self.unique = unique
    self.sparse = sparse
    guard !self.name.isEmpty, self.name != "_id_" else {
      throw StoreError(.index, "invalid index name \"\(self.name)\"")
    }
  }

  /// An index from its specification document, as mongodump's metadata and `listIndexes` give
  /// it: `{"v": 2, "key": {…}, "name": "…", "unique": true, "sparse": true}`.
  public init(_ document: Document) throws(StoreError) {
    guard case .document(let keys)? = document["key"] else {
      throw StoreError(.index, "an index specification needs a \"key\" document: \(document)")
    }
    var name: String?
    if case .string(let value)? = document["name"] { name = value }
    func flag(_ key: String) -> Bool {
      switch document[key] {
      case .bool(let value)?: value
      case .int32(let value)?: value != 0
      case .int64(let value)?: value != 0
      case .double(let value)?: value != 0
      default: false
      }
    }
    try self.init(keys: keys, name: name, unique: flag("unique"), sparse: flag("sparse"))
  }

  /// The specification as MongoDB lists it.
  public var document: Document {
    var keyDocument = DocumentBuilder()
    for key in keys { keyDocument.append(key.path.description, .int32(key.ascending ? 1 : -1)) }
    var builder = DocumentBuilder()
    builder.append("v", .int32(2))
    builder.append("key", .document(keyDocument.document))
    builder.append("name", .string(name))
    if unique { builder.append("unique", .bool(true)) }
    if sparse { builder.append("sparse", .bool(true)) }
    return builder.document
  }

  /// The `_id` index every collection has.
  static let primary: Document = {
    var keyDocument = DocumentBuilder()
    keyDocument.append("_id", .int32(1))
    var builder = DocumentBuilder()
    builder.append("v", .int32(2))
    builder.append("key", .document(keyDocument.document))
    builder.append("name", .string("_id_"))
    return builder.document
  }()

  /// The entries of a document in this index, each with its values and their key encoding
  /// (descending components complemented): one per element of its array field, or none when the
  /// index is sparse and the document has none of the fields. Throws for parallel arrays.
  ///
  /// One pass over the fields, each value encoded once; a compound key is its fields' encodings
  /// one after another, as ``KeyEncoding/encode(_:descending:)`` makes it. A one-field index's
  /// entries are its field's, without combining.
  func entries(for document: Document) throws(StoreError) -> [(values: [BSON], key: [UInt8])] {
    try entries(for: document, keySuffix: [], withValues: true)
  }

  /// ``entries(for:)`` with `keySuffix` appended to each key (reserved for from the start), and
  /// the values only `withValues` (each entry's is an array: writes need the keys only).
  private func entries(for document: Document, keySuffix: [UInt8], withValues: Bool) throws(StoreError)
    -> [(values: [BSON], key: [UInt8])]
  {
    var combinations: [(values: [BSON], key: [UInt8])] = []
    /// The positions of the fields that reached an array (named only in the error).
    var arrayFields: [Int] = []
    var anyPresent = false
    for (position, field) in keys.enumerated() {
      var values: [BSON] = []
      var missing = false
      var sawArray = false
      collect(.document(document), field.path.segments[...], &values, &missing, &sawArray)
      if !values.isEmpty { anyPresent = true }
      if missing || values.isEmpty { values.append(.null) }
      if sawArray { arrayFields.append(position) }
      // Parallel arrays are reported below (unless the index is sparse and leaves the document
      // out): the rest of the fields are read only for whether they are present.
      if arrayFields.count > 1 { continue }
      let descending = !field.ascending
      let isLast = position == keys.count - 1
      var encoded: [(values: [BSON], key: [UInt8])] = []
      encoded.reserveCapacity(values.count)
      // One entry per distinct value: equal values (1, 1.0, …) have the same encoding
      // (complemented bytes too, for a descending field). A few are searched in place, more in
      // a set (a large array stays linear).
      var seen: Set<[UInt8]> = []
      for value in values {
        var key: [UInt8] = []
        key.reserveCapacity(KeyEncoding.estimatedCount(value) + (isLast ? keySuffix.count : 0))
        KeyEncoding.append(value, descending: descending, to: &key)
        if encoded.count < 8 {
          if encoded.contains(where: { $0.key == key }) { continue }
        } else {
          if seen.isEmpty { seen = Set(encoded.lazy.map(\.key)) }
          guard seen.insert(key).inserted else { continue }
        }
        encoded.append((withValues ? [value] : [], key))
      }
      if position == 0 {
        combinations = encoded
      } else {
        combinations = combinations.flatMap { prefix in
          encoded.map { (values: prefix.values + $0.values, key: prefix.key + $0.key) }
        }
      }
    }
    if sparse && !anyPresent { return [] }
    if arrayFields.count > 1 {
      let names = arrayFields.map { keys[$0].path.description }
      throw StoreError(.index, "cannot index parallel arrays [\(names.joined(separator: "] ["))] in index \(name)")
    }
    if !keySuffix.isEmpty {
      for index in combinations.indices { combinations[index].key += keySuffix }
    }
    return combinations
  }

  /// The keys of `document`'s entries as this index's database holds them: the values' encoding
  /// followed by `primaryKey` (the document's key in its collection, which is also the entry's
  /// value) unless the index is unique. Throws for parallel arrays. (``values(ofKey:in:)`` names
  /// an entry's values for a message.)
  func storedKeys(for document: Document, primaryKey: [UInt8]) throws(StoreError) -> [[UInt8]] {
    // The common case, a one-field index whose path meets no array: one key, made without
    // the intermediate values and combinations.
    if keys.count == 1, let value = Self.plainValue(document, keys[0].path.segments) {
      var key: [UInt8] = []
      key.reserveCapacity(KeyEncoding.estimatedCount(value) &+ (unique ? 0 : primaryKey.count))
      KeyEncoding.append(value, descending: !keys[0].ascending, to: &key)
      if !unique { key.append(contentsOf: primaryKey) }
      return [key]
    }
    return try entries(for: document, keySuffix: unique ? [] : primaryKey, withValues: false).map(\.key)
  }

  /// The value at `segments` when the path goes through subdocuments only and ends on a value
  /// that is not an array; nil otherwise (a missing field too: ``entries(for:)`` decides).
  private static func plainValue(_ document: Document, _ segments: [FieldPath.Segment]) -> BSON? {
    var current = document
    var remaining = segments.count
    for segment in segments {
      guard let element = current.element(forKeyBytes: segment.name) else { return nil }
      remaining &-= 1
      if remaining == 0 {
        // Not `type == .array ? nil : value`: BSON is ExpressibleByNilLiteral, so that nil
        // would be BSON's null.
        if element.type == .array { return nil }
        return element.value
      }
      guard element.type == .document, let inner = element.document else { return nil }
      current = inner
    }
    return nil
  }

  /// The values of `document`'s entry whose key (without a primary-key suffix) is `key`, for an
  /// error message.
  func values(ofKey key: [UInt8], in document: Document) -> [BSON] {
    ((try? entries(for: document)) ?? []).first { $0.key == key }?.values ?? []
  }

  /// The values at `segments`, as an index sees them (array elements, fields of array elements).
  private func collect(
    _ value: BSON, _ segments: ArraySlice<FieldPath.Segment>, _ values: inout [BSON], _ missing: inout Bool,
    _ sawArray: inout Bool
  ) {
    guard let segment = segments.first else {
      if case .array(let array) = value {
        sawArray = true
        if array.isEmpty { values.append(.undefined) }  // MongoDB indexes [] as undefined
        values.append(contentsOf: array)
      } else {
        values.append(value)
      }
      return
    }
    let name = String(decoding: segment.name, as: UTF8.self)
    switch value {
    case .document(let document):
      if let child = document.value(forKey: name) {
        collect(child, segments.dropFirst(), &values, &missing, &sawArray)
      } else {
        missing = true
      }
    case .array(let array):
      sawArray = true
      if let index = segment.index, let child = array[index] {
        collect(child, segments.dropFirst(), &values, &missing, &sawArray)
      }
      for element in array {
        guard case .document(let document) = element else { continue }
        if let child = document.value(forKey: name) {
          collect(child, segments.dropFirst(), &values, &missing, &sawArray)
        } else {
          missing = true
        }
      }
    default:
      missing = true
    }
  }
}
