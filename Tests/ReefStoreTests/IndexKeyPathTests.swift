import ReefBSON
import Testing

@testable import ReefStore

/// A one-field index makes the key of a value reached through subdocuments only without the
/// general path's values and combinations: both ways must give the same keys, for every shape
/// of document (the first version of the short way indexed every array under null).
@Suite struct IndexKeyPathTests {
  static let documents = [
    #"{"_id": 1, "a": {"b": {"c": 5}}}"#, #"{"_id": 2, "a": {"b": {"c": [1, 2, 2]}}}"#,
    #"{"_id": 3, "a": {"b": [{"c": 1}, {"c": 7}]}}"#, #"{"_id": 4, "a": [{"b": {"c": 3}}]}"#,
    #"{"_id": 5, "a": {"b": {}}}"#, #"{"_id": 6, "a": {"b": 4}}"#, #"{"_id": 7}"#,
    #"{"_id": 8, "a": {"b": {"c": null}}}"#, #"{"_id": 9, "a": {"b": {"c": []}}}"#,
    #"{"_id": 10, "a": {"b": {"c": {"d": "x"}}}}"#, #"{"_id": 11, "a": "text"}"#,
    #"{"_id": 12, "a": {"0": {"c": 1}, "b": {"c": "s"}}}"#, #"{"_id": 13, "a": [[{"b": {"c": 1}}]]}"#,
  ]

  @Test(arguments: [
    #"{"a.b.c": 1}"#, #"{"a.b.c": -1}"#, #"{"a.b": 1}"#, #"{"a": 1}"#, #"{"a.0.c": 1}"#, #"{"_id": 1}"#,
  ])
  func theShortWayGivesTheGeneralKeys(keys: String) throws {
    for unique in [false, true] {
      for sparse in [false, true] {
        let index = try IndexSpecification(keys: Document(extendedJSON: keys), unique: unique, sparse: sparse)
        for json in Self.documents {
          let document = try Document(extendedJSON: json)
          let primaryKey = KeyEncoding.encode([document["_id"]!])
          let general = try index.entries(for: document).map { unique ? $0.key : $0.key + primaryKey }
          let stored = try index.storedKeys(for: document, primaryKey: primaryKey)
          #expect(stored == general, "\(keys) unique \(unique) sparse \(sparse): \(json)")
        }
      }
    }
  }
}
