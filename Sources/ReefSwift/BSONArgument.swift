import ReefBSON

/// Converts between Swift values given to queries and dynamic access, and BSON.
enum BSONArgument {
  /// ``bson(_:)`` of a value of a static type: the usual primary-key types without a dynamic
  /// cast (a cast per lookup cost a tenth of reading an object by its key).
  @inline(__always)
  static func bson<Value>(typed value: Value) -> BSON? {
    if Value.self == ObjectId.self { return .objectId(unsafeBitCast(value, to: ObjectId.self)) }
    if Value.self == String.self { return .string(unsafeBitCast(value, to: String.self)) }
    if Value.self == Int.self { return .int64(Int64(unsafeBitCast(value, to: Int.self))) }
    if Value.self == UUID.self { return .binary(Binary(uuid: unsafeBitCast(value, to: UUID.self).uuid)) }
    return bson(value)
  }

  /// The BSON form of a query argument or primary key; nil for a type that has none.
  static func bson(_ value: Any) -> BSON? {
    switch value {
    case let value as BSON: return value
    case is NSNull: return .null
    case let value as String: return .string(value)
    case let value as Bool: return .bool(value)
    case let value as Int: return .int64(Int64(value))
    case let value as Int8: return .int64(Int64(value))
    case let value as Int16: return .int64(Int64(value))
    case let value as Int32: return .int64(Int64(value))
    case let value as Int64: return .int64(value)
    case let value as UInt8: return .int64(Int64(value))
    case let value as UInt16: return .int64(Int64(value))
    case let value as UInt32: return .int64(Int64(value))
    case let value as Double: return .double(value)
    case let value as Float: return .double(Double(value))
    case let value as Date:
      return .datetime(BSONDateTime(millisecondsSinceEpoch: Int64((value.timeIntervalSince1970 * 1000).rounded(.down))))
    case let value as Data: return .binary(Binary(subtype: .generic, data: Array(value)))
    case let value as ObjectId: return .objectId(value)
    case let value as UUID: return .binary(Binary(uuid: value.uuid))
    case let value as Decimal128: return .decimal128(value)
    case let value as Document: return .document(value)
    case let value as Object:
      guard let managed = value._managed, let document = managed.currentDocument() else { return nil }
      return managed.reef.identity(of: managed.schema, document: document)
    case let value as any _CustomPersistable: return bson(value._reefPersistedAny)
    case let value as any RawRepresentable: return bson(value.rawValue)
    case let value as [Any]: return .array(BSONArray(value.map { bson($0) ?? .null }))
    // Results or a collection of objects (`"ANY dogs IN %@", reef.objects(Dog.self)`): their
    // identities.
    case let collection as any ReefCollection: return identities(collection)
    default:
      let mirror = Mirror(reflecting: value)
      if mirror.displayStyle == .optional {
        guard let wrapped = mirror.children.first?.value else { return .null }
        return bson(wrapped)
      }
      return nil
    }
  }

  /// The identities of a collection's objects, as an array.
  private static func identities<C: ReefCollection>(_ collection: C) -> BSON {
    .array(BSONArray(collection.map { bson($0) ?? .null }))
  }
}
