#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Decodes `Decodable` values straight from BSON bytes, with no intermediate tree.
///
/// Containers are views on the document's bytes: a keyed container finds a key by walking the
/// elements, starting just after the element it found last (so decoding keys in the order they
/// were written, as synthesized `init(from:)` does, reads each element once) and wrapping around
/// to the start when needed. Arrays and `[String: T]` dictionaries are filled directly, with
/// their capacity reserved. Beyond the decoded values, a call allocates little: one small object,
/// the standard library's box for each keyed container, and an object per unkeyed container that
/// a custom `init(from:)` asks for.
///
/// The `Decoder` and containers handed to `init(from:)` are valid until the `decode` call
/// returns; using one after that stops the program with a message (keep a ``Document`` instead,
/// and decode it later).
///
/// ```swift
/// let contact = try BSONDecoder().decode(Contact.self, from: document)
/// ```
///
/// Numbers convert between BSON int32, int64 and double when the value is exactly representable
/// in the requested type: an int32 `1` decodes as the `Double` 1.0 and a double `2.0` as the
/// `Int` 2, while `2.5` or `300` as `UInt8` are type mismatches. The one exception is `Float`,
/// which accepts any double within its range, rounded to the nearest `Float` (as `JSONDecoder`
/// does). Strings also decode from the deprecated BSON symbol type; `nil` is null or undefined.
///
/// ``Document``, ``BSONArray``, ``BSON``, ``ObjectId``, ``Decimal128``, ``BSONDateTime``,
/// ``BSONTimestamp``, ``Binary``, ``BSONRegularExpression``, ``DBPointer`` and
/// ``JavaScriptWithScope`` decode from their own BSON types; a decoded ``Document`` or
/// ``BSONArray`` is a view on the same bytes, not a copy.
///
/// Errors are `DecodingError`s with the full coding path, saying which BSON types were expected
/// and which was found (`Expected to decode Int from BSON int32, int64 or double, but found BSON
/// string`).
public struct BSONDecoder: Sendable {
  /// How `Date` values are decoded.
  public enum DateDecodingStrategy: Sendable {
    /// From a BSON UTC datetime. The default.
    case bsonDateTime
    /// From a number (int32, int64 or double) of milliseconds since the Unix epoch.
    case millisecondsSince1970
    /// From a number (int32, int64 or double) of seconds since the Unix epoch.
    case secondsSince1970
    /// From an ISO 8601 string (`2024-05-01T12:00:00.250Z`, `2024-05-01T14:00:00+02:00`); fractions
    /// beyond milliseconds are dropped.
    case iso8601
    /// With `Date`'s own `Decodable` implementation (a double of seconds since 2001-01-01).
    case deferredToDate
    /// With a closure that decodes the date from the given decoder.
    case custom(@Sendable (any Decoder) throws -> Date)
  }

  /// How `UUID` values are decoded.
  public enum UUIDDecodingStrategy: Sendable {
    /// From a BSON binary of subtype 4 holding 16 bytes. The default.
    case binary
    /// From its string form, in either case.
    case string
    /// With `UUID`'s own `Decodable` implementation (its string form).
    case deferredToUUID
  }

  /// How `Data` values are decoded.
  public enum DataDecodingStrategy: Sendable {
    /// From a BSON binary of any subtype (its payload). The default.
    case binary
    /// From a Base64 string.
    case base64
    /// With `Data`'s own `Decodable` implementation (an array of byte numbers).
    case deferredToData
  }

  /// How `Date` values are decoded; ``DateDecodingStrategy/bsonDateTime`` by default.
  public var dateDecodingStrategy: DateDecodingStrategy = .bsonDateTime
  /// How `UUID` values are decoded; ``UUIDDecodingStrategy/binary`` by default.
  public var uuidDecodingStrategy: UUIDDecodingStrategy = .binary
  /// How `Data` values are decoded; ``DataDecodingStrategy/binary`` by default.
  public var dataDecodingStrategy: DataDecodingStrategy = .binary
  /// The checks ``decode(_:from:)-([UInt8])`` applies to bytes before decoding them.
  public var validationOptions: ValidationOptions = .default
  /// Values that `init(from:)` implementations can read from `Decoder.userInfo`.
  public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

  /// Creates a decoder with the default strategies.
  public init() {}

  /// Decodes a value of type `type` from `document`.
  ///
  /// - Throws: `DecodingError` (type mismatch, missing key, unrepresentable number, malformed
  ///   string for a strategy) with the coding path of the offending value, and any error thrown
  ///   by `init(from:)`.
  /// - Complexity: O(n) in the document's size when keys are decoded in the order they are stored.
  public func decode<T: Decodable>(_ type: T.Type, from document: Document) throws -> T {
    let decoder = BSONDecoderImpl(
      storage: document.storage, options: DecodingOptions(self),
      value: BSONValueRef(type: BSONType.document.rawValue, offset: document.start, length: document.length))
    defer { decoder.finish() }
    return try decoder.decodeValue(T.self, decoder.value, parent: nil, component: .root)
  }

  /// Validates `bytes` as one BSON document (see ``validationOptions``) and decodes a value of
  /// type `type` from it.
  ///
  /// - Throws: `DecodingError.dataCorrupted` whose underlying error is the ``BSONError`` when the
  ///   bytes are not a valid document; otherwise the errors of ``decode(_:from:)-(_,Document)``.
  public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
    let document: Document
    do {
      document = try Document(bytes: bytes, options: validationOptions)
    } catch {
      throw DecodingError.dataCorrupted(
        DecodingError.Context(
          codingPath: [], debugDescription: "The bytes are not a valid BSON document: \(error)", underlyingError: error)
      )
    }
    return try decode(T.self, from: document)
  }
}

/// The decoder's settings, captured once per call.
struct DecodingOptions {
  let date: BSONDecoder.DateDecodingStrategy
  let uuid: BSONDecoder.UUIDDecodingStrategy
  let data: BSONDecoder.DataDecodingStrategy
  let userInfo: [CodingUserInfoKey: any Sendable]

  /// The defaults.
  init() { self.init(BSONDecoder()) }

  /// The defaults, made once.
  static let defaults = DecodingOptions()

  init(_ decoder: BSONDecoder) {
    date = decoder.dateDecodingStrategy
    uuid = decoder.uuidDecodingStrategy
    data = decoder.dataDecodingStrategy
    userInfo = decoder.userInfo
  }
}
