/// A string coding key for hand-written `encode(to:)` and `init(from:)` in the Codable tests.
struct AnyKey: CodingKey {
  var stringValue: String
  var intValue: Int? { nil }
  init(_ s: String) { stringValue = s }
  init(stringValue: String) { self.stringValue = stringValue }
  init?(intValue: Int) { nil }
}
