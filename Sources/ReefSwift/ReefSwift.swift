// ReefSwift: Realm's object model over Reef's BSON store.
//
// What models need from the lower modules comes with `import ReefSwift`, as RealmSwift brings
// its value types: ObjectId, Decimal128 and Document from ReefBSON, and Foundation's Date, Data
// and UUID.
@_exported import Foundation

@_exported import enum ReefBSON.BSON
@_exported import struct ReefBSON.Decimal128
@_exported import struct ReefBSON.Document
@_exported import struct ReefBSON.ObjectId
@_exported import struct ReefQuery.StringOptions

extension ObjectId {
  /// A new, unique ObjectId (Realm's spelling of `ObjectId()`).
  public static func generate() -> ObjectId { ObjectId() }

  /// The ObjectId written as 24 hexadecimal digits (either case): Realm's `ObjectId(string:)`.
  /// - Parameter string: The 24 hexadecimal digits.
  /// - Throws: ``ReefError/Kind/invalidValue`` for anything else, with Realm's message
  ///   ("Invalid Object ID string 'x': must be 24 hex digits").
  public init(string: String) throws(ReefError) {
    guard let parsed = ObjectId(string) else {
      throw ReefError(.invalidValue, "Invalid Object ID string '\(string)': must be 24 hex digits")
    }
    self = parsed
  }

  /// The 24 lowercase hexadecimal digits: Realm's name for ``hex``.
  public var stringValue: String { hex }
}
