import ReefBSON

/// The kind of a stored value, as a model reads it.
public enum ValueKind: Hashable, Sendable, CustomStringConvertible {
  /// BSON's null, bool, int32, int64, double, decimal128, string, date and ObjectId.
  case null, bool, int32, int64, double, decimal128, string, date, objectId
  /// A binary of subtype 4: a `UUID`.
  case uuid
  /// A binary of any other subtype: `Data`.
  case data
  /// A subdocument, an array.
  case document, array
  /// A type ReefSwift has no property type for (a regex, a timestamp, code, `undefined`…).
  case other(BSONType)

  init(_ element: Document.Element) {
    switch element.type {
    case .null: self = .null
    case .bool: self = .bool
    case .int32: self = .int32
    case .int64: self = .int64
    case .double: self = .double
    case .decimal128: self = .decimal128
    case .string: self = .string
    case .datetime: self = .date
    case .objectId: self = .objectId
    case .document: self = .document
    case .array: self = .array
    case .binary:
      if case .binary(let binary) = element.value, binary.uuidBytes != nil { self = .uuid } else { self = .data }
    default: self = .other(element.type)
    }
  }

  /// The name of the type as MongoDB's `$type` says it (`uuid` for a binary of subtype 4).
  public var description: String {
    switch self {
    case .null: "null"
    case .bool: "bool"
    case .int32: "int"
    case .int64: "long"
    case .double: "double"
    case .decimal128: "decimal"
    case .string: "string"
    case .date: "date"
    case .objectId: "objectId"
    case .uuid: "uuid"
    case .data: "binData"
    case .document: "object"
    case .array: "array"
    case .other(let type): type.name
    }
  }
}

/// The values seen at one path: how many of each kind, the merged shape of subdocuments and of
/// array elements.
public final class ValueShape {
  /// The kinds seen, with how many values of each.
  public private(set) var kinds: [ValueKind: Int] = [:]
  /// The values seen (nulls included).
  public private(set) var count = 0
  /// The subdocuments' merged shape, when a value was a document.
  public private(set) var document: DocumentShape?
  /// The array elements' merged shape, when a value was an array.
  public private(set) var elements: ValueShape?
  /// The largest magnitude of an integer value, to know whether a `Double` holds each exactly.
  public private(set) var largestInteger: UInt64 = 0

  init() {}

  /// The number of values of `kind`.
  public func count(of kind: ValueKind) -> Int { kinds[kind] ?? 0 }

  func add(_ element: Document.Element) {
    count += 1
    let kind = ValueKind(element)
    kinds[kind, default: 0] += 1
    switch kind {
    case .document:
      if let document = element.document {
        if self.document == nil { self.document = DocumentShape() }
        self.document!.add(document)
      }
    case .array:
      if let array = element.document {
        if elements == nil { elements = ValueShape() }
        for item in array { elements!.add(item) }
      }
    case .int32:
      if let value = element.int32 { largestInteger = max(largestInteger, UInt64(value.magnitude)) }
    case .int64:
      if let value = element.int64 { largestInteger = max(largestInteger, value.magnitude) }
    default:
      break
    }
  }
}
