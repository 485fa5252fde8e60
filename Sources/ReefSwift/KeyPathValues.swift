import ReefBSON
import ReefStore

/// The values a stored key path names in a document, through arrays as MongoDB reads them:
/// `addresses.city` names the `city` of each element of `addresses`; `addresses.1.city` the one
/// of the second.
enum KeyPathValues {
  /// The values at `path` in `value`: a list, in document order, with `nil` for a path that
  /// leads nowhere (so that a missing value and a null one differ).
  static func values(at path: String, in value: BSON?) -> [BSON?] {
    var found: [BSON?] = []
    collect(value, path.split(separator: ".", omittingEmptySubsequences: false)[...], into: &found)
    return found
  }

  private static func collect(_ value: BSON?, _ parts: ArraySlice<Substring>, into found: inout [BSON?]) {
    guard let part = parts.first else {
      found.append(value)
      return
    }
    switch value {
    case .document(let document)?:
      collect(document.value(forKey: String(part)), parts.dropFirst(), into: &found)
    case .array(let array)?:
      if let index = Int(part), index >= 0 {
        collect(array.dropFirst(index).first { _ in true }, parts.dropFirst(), into: &found)
      } else {
        for element in array { collect(element, parts, into: &found) }
      }
    default:
      found.append(nil)
    }
  }

  /// Whether `old` and `new` differ at the stored key path `path`.
  static func differ(_ old: Document, _ new: Document, at path: String) -> Bool {
    values(at: path, in: .document(old)) != values(at: path, in: .document(new))
  }

  /// Whether two values differ at any of `paths` (relative to the values, which are an
  /// embedded object's subdocuments); without paths, whether they differ at all.
  static func differ(_ old: BSON, _ new: BSON, at paths: [String]?) -> Bool {
    guard old != new else { return false }
    guard let paths else { return true }
    return paths.contains { values(at: $0, in: old) != values(at: $0, in: new) }
  }
}

extension ChangePaths {
  /// The `_id` of the object of `schema` a link value names (its primary key, or its `_id`);
  /// nil when it does not exist.
  static func linkedID(_ identity: BSON, schema: ObjectSchema, reef: Reef) -> BSON? {
    guard schema.primaryKeyProperty != nil, !schema.primaryKeyIsID else { return identity }
    return (try? reef.document(of: schema, identity: identity))?["_id"]
  }

  /// The link values a stored field holds: a to-one link's, or each element of a list, set or
  /// map of links.
  static func linkValues(_ value: BSON?) -> [BSON] {
    switch value {
    case nil, .null?: []
    case .array(let array)?: Array(array)
    case .document(let document)?: document.map(\.value)
    case let single?: [single]
    }
  }

  /// Whether any commit of `batch` changed `collection` (or may have).
  static func touches(_ collection: String, batch: ChangeBatch) -> Bool {
    !batch.isComplete || batch.commits.contains { $0.touches(collection) }
  }
}
