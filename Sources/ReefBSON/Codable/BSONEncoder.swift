#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Encodes `Encodable` values straight to BSON bytes, with no intermediate tree.
///
/// Elements are written in place as the coding containers are used: a keyed container becomes an
/// embedded document, an unkeyed container an array, and keys keep the order in which they were
/// encoded. The top-level value must encode as a document (a keyed container, or a ``Document``).
///
/// ```swift
/// struct Address: Codable { var street, city, country, postalCode: String }
/// struct Contact: Codable { var name: String; var address: Address }
/// let doc = try BSONEncoder().encode(contact)  // {"name": …, "address": {"street": …}}
/// ```
///
/// How Swift values map to BSON:
///
/// | Swift | BSON |
/// |---|---|
/// | `Bool` | bool |
/// | `String` | string |
/// | `Double`, `Float` | double |
/// | `Int8`, `Int16`, `Int32`, `UInt8`, `UInt16` | int32 |
/// | `Int`, `Int64`, `UInt32` | int64 (an `Int` is always int64, whatever its value) |
/// | `UInt`, `UInt64`, `Int128`, `UInt128` | int64 when the value fits, otherwise an error |
/// | `nil` in `encodeIfPresent` (optional properties) | omitted, or null (``nilEncodingStrategy``) |
/// | `Date`, `UUID`, `Data` | per ``dateEncodingStrategy``, ``uuidEncodingStrategy``, ``dataEncodingStrategy`` |
/// | Reef's BSON types (below) | themselves |
///
/// Reef's BSON types — ``Document``, ``BSONArray``, ``BSON``, ``ObjectId``, ``Decimal128``,
/// ``BSONDateTime``, ``BSONTimestamp``, ``Binary``, ``BSONRegularExpression``, ``DBPointer`` and
/// ``JavaScriptWithScope`` — are written as the BSON values they are.
///
/// Errors are `EncodingError.invalidValue` with the coding path: a key containing a zero byte
/// (BSON keys are C strings), an unsigned or 128-bit integer that does not fit in int64, a date
/// that cannot be represented, and a top-level value that is not a document.
///
/// Containers used out of order (a nested container written after its parent has moved on, an
/// encoder kept from `superEncoder()` and used later) are supported: the encoder notices, and
/// encodes the value again in a mode that keeps each container in its own buffer. That second
/// pass calls `encode(to:)` again, so such types' `encode(to:)` should have no side effects.
public struct BSONEncoder: Sendable {
  /// How `Date` values are encoded.
  public enum DateEncodingStrategy: Sendable {
    /// A BSON UTC datetime (int64 milliseconds since the Unix epoch, rounded to the nearest
    /// millisecond). The default.
    case bsonDateTime
    /// An int64: milliseconds since the Unix epoch, rounded to the nearest millisecond.
    case millisecondsSince1970
    /// A double: seconds since the Unix epoch.
    case secondsSince1970
    /// An ISO 8601 string with millisecond precision (`2024-05-01T12:00:00.250Z`) for years 0…9999.
    case iso8601
    /// `Date`'s own `Encodable` implementation (a double of seconds since 2001-01-01).
    case deferredToDate
    /// A closure that encodes the date through the given encoder; encoding nothing gives an empty document.
    case custom(@Sendable (Date, any Encoder) throws -> Void)
  }

  /// How `UUID` values are encoded.
  public enum UUIDEncodingStrategy: Sendable {
    /// A BSON binary of subtype 4 (UUID) holding the 16 bytes. The default.
    case binary
    /// The uppercase string form (`E621E1F8-C36C-495A-93FC-0C247A3E6E5F`).
    case string
    /// `UUID`'s own `Encodable` implementation (its string form).
    case deferredToUUID
  }

  /// How `Data` values are encoded.
  public enum DataEncodingStrategy: Sendable {
    /// A BSON binary of subtype 0 (generic). The default.
    case binary
    /// A Base64 string.
    case base64
    /// `Data`'s own `Encodable` implementation (an array of int32 bytes).
    case deferredToData
  }

  /// What `encodeIfPresent` does with `nil` (synthesized `Encodable` uses it for optional properties).
  public enum NilEncodingStrategy: Sendable {
    /// Leave the key out, as `JSONEncoder` does. The default.
    case omit
    /// Write the key with a BSON null.
    case null
  }

  /// How `Date` values are encoded; ``DateEncodingStrategy/bsonDateTime`` by default.
  public var dateEncodingStrategy: DateEncodingStrategy = .bsonDateTime
  /// How `UUID` values are encoded; ``UUIDEncodingStrategy/binary`` by default.
  public var uuidEncodingStrategy: UUIDEncodingStrategy = .binary
  /// How `Data` values are encoded; ``DataEncodingStrategy/binary`` by default.
  public var dataEncodingStrategy: DataEncodingStrategy = .binary
  /// What `encodeIfPresent` does with `nil`; ``NilEncodingStrategy/omit`` by default.
  public var nilEncodingStrategy: NilEncodingStrategy = .omit
  /// Values that `encode(to:)` implementations can read from `Encoder.userInfo`.
  public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

  /// Creates an encoder with the default strategies.
  public init() {}

  /// Encodes `value` as a BSON document.
  ///
  /// - Throws: `EncodingError.invalidValue` when `value` does not encode as a document, when a key
  ///   contains a zero byte, or when a value cannot be represented in BSON (see ``BSONEncoder``);
  ///   and any error thrown by `value`'s `encode(to:)`.
  /// - Complexity: O(n) in the size of the output, for values whose containers are used in order.
  public func encode<T: Encodable>(_ value: T) throws -> Document {
    // Only a `Document` or an optional can cast to `Document`; a cast of any other value would
    // copy (and then destroy) the whole value.
    if T.self == Document.self || T.self is any OptionalMarker.Type, let document = value as? Document {
      return document
    }
    return try encodeWriter(value).document(from: 0)
  }

  /// Encodes `value` as the bytes of one BSON document.
  ///
  /// - Throws: the same errors as ``encode(_:)``.
  public func encodeBytes<T: Encodable>(_ value: T) throws -> [UInt8] {
    try encodeWriter(value).bytes
  }

  /// Encodes `value` into a writer holding exactly one finished document.
  func encodeWriter<T: Encodable>(_ value: T) throws -> BSONWriter {
    let options = EncodingOptions(self)
    let fast = EncodingState.fast(options: options, root: T.self)
    defer { fast.endFast() }
    do {
      try fast.makeRoot().encodeSingle(value)
    } catch {
      if let recorded = fast.error { throw recorded }
      if !fast.needsTreeMode { throw error }
    }
    if let recorded = fast.error { throw recorded }
    if !fast.needsTreeMode {
      let writer = fast.finishFast()
      fast.recordSize(writer.count, of: T.self)
      return writer
    }
    return try Self.encodeInTreeMode(value, options: options)
  }

  /// The second pass, for values whose containers were not used in order.
  @inline(never)
  static func encodeInTreeMode<T: Encodable>(_ value: T, options: EncodingOptions) throws -> BSONWriter {
    let tree = EncodingState.tree(options: options)
    let root = tree.makeRoot()
    defer { root.tearDown() }
    do {
      try root.encodeSingle(value)
    } catch {
      throw tree.error ?? error
    }
    if let recorded = tree.error { throw recorded }
    return tree.finishTree(root)
  }
}

/// The encoder's settings, captured once per call.
struct EncodingOptions {
  /// The settings an idle state holds (so that it keeps no `userInfo` values alive).
  static let cleared = EncodingOptions(BSONEncoder())

  let date: BSONEncoder.DateEncodingStrategy
  let uuid: BSONEncoder.UUIDEncodingStrategy
  let data: BSONEncoder.DataEncodingStrategy
  let encodesNil: Bool
  let userInfo: [CodingUserInfoKey: any Sendable]

  init(_ encoder: BSONEncoder) {
    date = encoder.dateEncodingStrategy
    uuid = encoder.uuidEncodingStrategy
    data = encoder.dataEncodingStrategy
    encodesNil = {
      switch encoder.nilEncodingStrategy {
      case .omit: false
      case .null: true
      }
    }()
    userInfo = encoder.userInfo
  }
}
