// Documents generated from the Examples' models: contacts with an embedded address, businesses
// with a list of addresses (QueryBenchmarks, StoreBenchmarks, ReefStoreStream).

import ReefBSON

/// A deterministic generator (SplitMix64), so every run scans the same documents.
public struct SplitMix {
  public var state: UInt64
  public init(state: UInt64) { self.state = state }
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
  public mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

public let cities = [
  "Los Angeles", "New York City", "Springfield", "Arlington", "Paris", "London", "Berlin", "Tokyo", "Sydney",
  "Toronto", "Chicago", "Houston", "Phoenix", "Philadelphia", "San Antonio", "San Diego", "Dallas", "San Jose",
  "Austin", "Jacksonville", "Fort Worth", "Columbus", "Charlotte", "Indianapolis", "Seattle", "Denver", "Boston",
  "Nashville", "Detroit", "Portland", "Las Vegas", "Memphis", "Louisville", "Baltimore", "Milwaukee", "Albuquerque",
  "Tucson", "Fresno", "Sacramento", "Mesa",
]
public let streets = ["Main St", "Broadway", "Oak Ave", "Pine St", "Maple Dr", "Cedar Ln", "Elm St", "Navy Way"]
public let names = ["Ann", "Bob", "Grace", "Nick", "Ada", "Linus", "Barbara", "Ken", "Margaret", "Dennis"]

/// The model's address, as an embedded document.
public func appendAddress(_ builder: inout DocumentBuilder, _ random: inout SplitMix) {
  builder.append("street", "\(1 + random.below(9_999)) \(streets[random.below(streets.count)])")
  builder.append("city", cities[random.below(cities.count)])
  builder.append("country", "USA")
  builder.append("postalCode", String(10_000 + random.below(89_999)))
}

/// `count` contacts and businesses (two contacts to one business), as one BSON stream; document
/// `index` (from `first`) has a unique ObjectId `_id` derived from `index`, so streams made with
/// different `first` do not share ids. The same arguments give the same bytes.
public func generateStream(count: Int, first: Int = 0) -> (bytes: [UInt8], offsets: [Int]) {
  var random = SplitMix(state: 2024 &+ UInt64(first))
  var bytes: [UInt8] = []
  var offsets: [Int] = []
  for index in first..<(first + count) {
    var builder = DocumentBuilder()
    var id = [UInt8](repeating: 0, count: 12)
    for byte in 0..<12 { id[byte] = UInt8(truncatingIfNeeded: (index &* 2_654_435_761) >> (byte % 4 * 8) &+ byte) }
    builder.append("_id", ObjectId(bytes: id)!)
    let name = "\(names[random.below(names.count)]) \(index)"
    if index % 3 == 2 {
      builder.append("type", "Business")
      builder.append("name", name + " Inc.")
      builder.appendArray("addresses") { list in
        for _ in 0..<(1 + random.below(4)) {
          list.appendDocument { address in appendAddress(&address, &random) }
        }
      }
      builder.append("employees", Int64(random.below(50_000)))
    } else {
      builder.append("type", "Contact")
      builder.append("name", name)
      builder.appendDocument("address") { address in appendAddress(&address, &random) }
      if random.below(2) == 0 { builder.append("phone", "+1 555 \(1_000 + random.below(8_999))") }
      builder.append(
        "createdAt", .datetime(BSONDateTime(millisecondsSinceEpoch: 1_700_000_000_000 + Int64(index) * 60_000)))
    }
    offsets.append(bytes.count)
    bytes += builder.document.bytes
  }
  return (bytes, offsets)
}
