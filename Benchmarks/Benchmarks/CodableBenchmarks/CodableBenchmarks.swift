// Codable: Reef's BSONDecoder/BSONEncoder against Foundation's JSONDecoder/JSONEncoder, on the
// same structs and the same data (BSON for Reef, plain JSON for Foundation).
//
// Datasets: DriverBench's tweet (tweet.bson / tweet.json), flat_bson (all fields but `_id`; its
// JSON side is generated from the BSON as plain JSON) and deep_bson (a binary tree of classes).
// Reef's decode includes validating the bytes (Document(bytesNoCopy:owner:)), as JSONDecoder's
// includes parsing.

import BenchSupport
import Benchmark
import Foundation
import ReefBSON

#if canImport(Glibc)
  import Glibc
#endif

struct Tweet: Codable, Equatable {
  struct Entities: Codable, Equatable {
    struct Mention: Codable, Equatable {
      var indices: [Int]
      var screen_name: String
      var name: String
      var id: Int
    }
    var user_mentions: [Mention]
    var urls: [String]
    var hashtags: [String]
  }
  struct User: Codable, Equatable {
    var friends_count: Int
    var profile_sidebar_fill_color: String
    var location: String
    var verified: Bool
    var follow_request_sent: Bool?
    var favourites_count: Int
    var profile_sidebar_border_color: String
    var profile_image_url: String
    var geo_enabled: Bool
    var created_at: String
    var description: String
    var time_zone: String
    var url: String
    var screen_name: String
    var notifications: Bool?
    var profile_background_color: String
    var listed_count: Int
    var lang: String
    var profile_background_image_url: String
    var statuses_count: Int
    var following: Bool?
    var profile_text_color: String
    var protected: Bool
    var show_all_inline_media: Bool
    var profile_background_tile: Bool
    var name: String
    var contributors_enabled: Bool
    var profile_link_color: String
    var followers_count: Int
    var id: Int
    var profile_use_background_image: Bool
    var utc_offset: Int
  }
  var text: String
  var in_reply_to_status_id: Int
  var retweet_count: Int?
  var contributors: [String]?
  var created_at: String
  var geo: String?
  var source: String
  var coordinates: [Double]?
  var in_reply_to_screen_name: String
  var truncated: Bool
  var entities: Entities
  var retweeted: Bool
  var place: String?
  var user: User
  var favorited: Bool
  var in_reply_to_user_id: Int
  var id: Int
}

/// DriverBench's DEEP_BSON: a balanced binary tree whose leaves hold two strings.
final class TreeNode: Codable, Equatable {
  let right: TreeNode?
  let left: TreeNode?
  let rightValue: String?
  let leftValue: String?

  static func == (a: TreeNode, b: TreeNode) -> Bool {
    a.right == b.right && a.left == b.left && a.rightValue == b.rightValue && a.leftValue == b.leftValue
  }
}

/// A dataset in both encodings: BSON for Reef, plain JSON with the same content for Foundation.
struct CodableCase {
  let name: String
  let bson: [UInt8]
  let json: [UInt8]
}

func codableCases() -> [CodableCase] {
  var cases = [CodableCase]()
  if let bson = SharedData.load("benchdata/single_and_multi_document/tweet.bson"),
    let json = SharedData.load("benchdata/single_and_multi_document/tweet.json")
  {
    cases.append(CodableCase(name: "tweet", bson: bson, json: json))
  }
  if let flat = Dataset.extended("flat") {
    let withoutId = removingKeys(["_id"], from: try! Document(bytes: flat.bson))
    cases.append(CodableCase(name: "flat", bson: withoutId.bytes, json: plainJSON(withoutId)))
  }
  if let deep = Dataset.extended("deep") {
    cases.append(CodableCase(name: "deep", bson: deep.bson, json: deep.json))
  }
  return cases
}

func register<T: Codable & Equatable>(_ type: T.Type, _ c: CodableCase) {
  let data = Data(c.json)
  let jsonDecoder = JSONDecoder()
  let jsonEncoder = JSONEncoder()
  let value = try! jsonDecoder.decode(T.self, from: data)
  check(try! jsonDecoder.decode(T.self, from: jsonEncoder.encode(value)) == value, "JSON round trip of \(c.name)")

  let jsonDecode: () -> Void = { blackHole(try? jsonDecoder.decode(T.self, from: data)) }
  let jsonEncode: () -> Void = { blackHole(try? jsonEncoder.encode(value)) }
  var decoders: KeyValuePairs<String, () -> Void> = ["foundation-JSONDecoder": jsonDecode]
  var encoders: KeyValuePairs<String, () -> Void> = ["foundation-JSONEncoder": jsonEncode]

  let pinned = UnsafeMutableRawBufferPointer.allocate(byteCount: c.bson.count, alignment: 16)
  pinned.copyBytes(from: c.bson)
  nonisolated(unsafe) let bytes = UnsafeRawBufferPointer(pinned)
  let bsonDecoder = BSONDecoder()
  let bsonEncoder = BSONEncoder()
  let document = try! Document(bytesNoCopy: bytes, owner: nil)
  do {
    let decoded = try bsonDecoder.decode(T.self, from: document)
    if decoded != value {
      printError("reef benchmarks: MISMATCH: BSONDecoder's \(c.name) differs from JSONDecoder's")
    }
    let encoded = try bsonEncoder.encode(value)
    if try bsonDecoder.decode(T.self, from: encoded) != value {
      printError("reef benchmarks: MISMATCH: BSONEncoder/BSONDecoder round trip of \(c.name)")
    }
  } catch {
    printError("reef benchmarks: MISMATCH: BSON Codable failed on \(c.name): \(error)")
  }

  decoders = [
    "reef-BSONDecoder": {
      blackHole(try? bsonDecoder.decode(T.self, from: Document(bytesNoCopy: bytes, owner: nil)))
    },
    "reef-BSONDecoder-prevalidated": { blackHole(try? bsonDecoder.decode(T.self, from: document)) },
    "foundation-JSONDecoder": jsonDecode,
  ]
  encoders = [
    "reef-BSONEncoder": { blackHole(try? bsonEncoder.encode(value)) },
    "foundation-JSONEncoder": jsonEncode,
  ]
  registerGroup(
    "codable-decode", c.name, decoders,
    pairs: [
      ("reef-BSONDecoder", "foundation-JSONDecoder"), ("reef-BSONDecoder-prevalidated", "foundation-JSONDecoder"),
    ])
  registerGroup("codable-encode", c.name, encoders, pairs: [("reef-BSONEncoder", "foundation-JSONEncoder")])
}

let benchmarks: @Sendable () -> Void = {
  Benchmark.defaultConfiguration = reefBenchmarkConfiguration

  for c in codableCases() {
    switch c.name {
    case "tweet": register(Tweet.self, c)
    case "flat": register(FlatRecord.self, c)
    case "deep": register(TreeNode.self, c)
    default: break
    }
  }
}
