/// A BSON UTC datetime: signed milliseconds since the Unix epoch, over the whole `Int64` range.
///
/// Reef never routes datetimes through `Date`, whose `Double` seconds lose milliseconds far
/// from the epoch; ``millisecondsSinceEpoch`` is the stored value, exactly.
public struct BSONDateTime: Hashable, Comparable, Sendable, CustomStringConvertible {
  /// Milliseconds since 1970-01-01T00:00:00Z; negative values are before the epoch.
  public var millisecondsSinceEpoch: Int64
  /// Creates a datetime from milliseconds since the Unix epoch.
  public init(millisecondsSinceEpoch: Int64) { self.millisecondsSinceEpoch = millisecondsSinceEpoch }
  public static func < (a: Self, b: Self) -> Bool { a.millisecondsSinceEpoch < b.millisecondsSinceEpoch }
  public var description: String {
    ISO8601.format(milliseconds: millisecondsSinceEpoch) ?? "\(millisecondsSinceEpoch)ms"
  }
}

/// A BSON timestamp (MongoDB's internal replication clock): seconds and an ordinal increment.
public struct BSONTimestamp: Hashable, Comparable, Sendable {
  /// Seconds since the Unix epoch (the high 32 bits of the stored value).
  public var timestamp: UInt32
  /// The ordinal within the second (the low 32 bits of the stored value).
  public var increment: UInt32
  /// Creates a timestamp.
  public init(timestamp: UInt32, increment: UInt32) {
    self.timestamp = timestamp
    self.increment = increment
  }
  public static func < (a: Self, b: Self) -> Bool { (a.timestamp, a.increment) < (b.timestamp, b.increment) }
}

/// A BSON binary value: a subtype byte and the bytes.
public struct Binary: Hashable, Sendable {
  /// A binary subtype byte. Subtypes 0x80…0xFF are user-defined.
  public struct Subtype: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let generic = Subtype(rawValue: 0x00)
    public static let function = Subtype(rawValue: 0x01)
    /// The old binary subtype: the payload is itself prefixed with an int32 length.
    public static let binaryOld = Subtype(rawValue: 0x02)
    public static let uuidOld = Subtype(rawValue: 0x03)
    public static let uuid = Subtype(rawValue: 0x04)
    public static let md5 = Subtype(rawValue: 0x05)
    public static let encrypted = Subtype(rawValue: 0x06)
    public static let column = Subtype(rawValue: 0x07)
    public static let sensitive = Subtype(rawValue: 0x08)
    public static let vector = Subtype(rawValue: 0x09)
    public static let userDefined = Subtype(rawValue: 0x80)
  }

  /// The subtype.
  public var subtype: Subtype
  /// The payload. For ``Subtype/binaryOld`` this is the inner payload, without its repeated length.
  public var data: [UInt8]

  /// Creates a binary value.
  public init(subtype: Subtype = .generic, data: [UInt8]) {
    self.subtype = subtype
    self.data = data
  }

  /// Creates a subtype 4 binary from a UUID's 16 bytes.
  public init(uuid: UUIDBytes) {
    self.init(subtype: .uuid, data: withUnsafeBytes(of: uuid) { Array($0) })
  }

  /// The UUID bytes, when this is a subtype 4 value of 16 bytes.
  public var uuidBytes: UUIDBytes? {
    guard subtype == .uuid, data.count == 16 else { return nil }
    let d = data
    return (d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8], d[9], d[10], d[11], d[12], d[13], d[14], d[15])
  }
}

/// The 16 bytes of a UUID, in the layout Foundation's `uuid_t` uses.
public typealias UUIDBytes = (
  UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
)

/// A BSON regular expression: a pattern and its option letters.
public struct BSONRegularExpression: Hashable, Sendable {
  /// The pattern, as stored (no surrounding slashes).
  public var pattern: String
  /// The option letters. BSON requires them in alphabetical order; ``init(pattern:options:)`` sorts them.
  public var options: String
  /// Creates a regular expression; the option letters are stored in alphabetical order, as BSON requires.
  public init(pattern: String, options: String = "") {
    self.pattern = pattern
    self.options = String(options.sorted())
  }
}

/// A deprecated BSON DBPointer: a namespace and an ObjectId.
public struct DBPointer: Hashable, Sendable {
  /// The namespace (`db.collection`).
  public var ref: String
  /// The id of the referenced document.
  public var id: ObjectId
  /// Creates a DBPointer.
  public init(ref: String, id: ObjectId) {
    self.ref = ref
    self.id = id
  }
}

/// JavaScript code with a scope document (deprecated in MongoDB, kept for round trips).
public struct JavaScriptWithScope: Hashable, Sendable {
  /// The code.
  public var code: String
  /// The variables in scope.
  public var scope: Document
  /// Creates code with scope.
  public init(code: String, scope: Document) {
    self.code = code
    self.scope = scope
  }
}
