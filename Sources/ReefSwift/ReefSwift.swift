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
}
