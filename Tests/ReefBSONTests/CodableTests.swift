import Foundation
import ReefBSON
import ReefTestSupport
import Testing

// MARK: - Models (Realm's embedded-object documentation: Contact, Address, Business)

private struct Address: Codable, Equatable {
  var street: String
  var city: String
  var country: String
  var postalCode: String
}

private struct Contact: Codable, Equatable {
  var name: String
  var address: Address
}

private struct Business: Codable, Equatable {
  var name: String
  var addresses: [Address]
}

private let springfield = Address(street: "123 Fake St", city: "Springfield", country: "USA", postalCode: "90710")
private let nyc = Address(street: "1633 Broadway", city: "New York City", country: "USA", postalCode: "10019")
private let paloAlto = Address(street: "3000 El Camino Real", city: "Palo Alto", country: "USA", postalCode: "94306")

private func appendAddress(_ a: Address, to builder: inout DocumentBuilder) {
  builder.append("street", a.street)
  builder.append("city", a.city)
  builder.append("country", a.country)
  builder.append("postalCode", a.postalCode)
}

/// Encodes, checks the bytes are a valid document, decodes, and returns the decoded value.
private func roundTrip<T: Codable>(
  _ value: T, encoder: BSONEncoder = BSONEncoder(), decoder: BSONDecoder = BSONDecoder()
) throws -> T {
  let bytes = try encoder.encodeBytes(value)
  let document = try Document(bytes: bytes)  // validates
  #expect(try encoder.encode(value).bytes == bytes)
  return try decoder.decode(T.self, from: document)
}

private func path(_ error: any Error) -> [String] {
  switch error {
  case let e as DecodingError:
    switch e {
    case .typeMismatch(_, let c), .valueNotFound(_, let c), .keyNotFound(_, let c), .dataCorrupted(let c):
      return c.codingPath.map(\.stringValue)
    @unknown default: return []
    }
  case let e as EncodingError:
    switch e {
    case .invalidValue(_, let c): return c.codingPath.map(\.stringValue)
    @unknown default: return []
    }
  default: return []
  }
}

private func message(_ error: any Error) -> String {
  switch error {
  case let e as DecodingError:
    switch e {
    case .typeMismatch(_, let c), .valueNotFound(_, let c), .keyNotFound(_, let c), .dataCorrupted(let c):
      return c.debugDescription
    @unknown default: return ""
    }
  case let e as EncodingError:
    switch e {
    case .invalidValue(_, let c): return c.debugDescription
    @unknown default: return ""
    }
  default: return ""
  }
}

// MARK: - Round trips and exact bytes

@Suite("Codable round trips")
struct CodableRoundTripTests {
  @Test func contactEncodesExactlyAsBuilt() throws {
    let contact = Contact(name: "Nick Riviera", address: springfield)
    var builder = DocumentBuilder()
    builder.append("name", "Nick Riviera")
    builder.appendDocument("address") { appendAddress(springfield, to: &$0) }
    #expect(try BSONEncoder().encodeBytes(contact) == builder.bytes)
    #expect(try roundTrip(contact) == contact)
    let doc = try BSONEncoder().encode(contact)
    #expect(doc["address.city"] == "Springfield")
  }

  @Test func businessWithArrayOfEmbeddedAddresses() throws {
    let business = Business(name: "MongoDB", addresses: [nyc, paloAlto])
    var builder = DocumentBuilder()
    builder.append("name", "MongoDB")
    builder.appendArray("addresses") { array in
      array.appendDocument { appendAddress(nyc, to: &$0) }
      array.appendDocument { appendAddress(paloAlto, to: &$0) }
    }
    #expect(try BSONEncoder().encodeBytes(business) == builder.bytes)
    #expect(try roundTrip(business) == business)
    #expect(try BSONEncoder().encode(business)["addresses.1.city"] == "Palo Alto")
    #expect(try roundTrip(Business(name: "Empty", addresses: [])) == Business(name: "Empty", addresses: []))
  }

  @Test func deeplyNestedCollections() throws {
    struct Nested: Codable, Equatable {
      var matrix: [[Int]]
      var byName: [String: [Address]]
      var tags: Set<String>
      var empty: [String]
      var optionalArray: [Int?]
    }
    let value = Nested(
      matrix: [[1, 2], [], [3]], byName: ["home": [springfield], "work": [nyc, paloAlto]], tags: ["a", "b"],
      empty: [], optionalArray: [1, nil, 3])
    #expect(try roundTrip(value) == value)
    let doc = try BSONEncoder().encode(value)
    #expect(doc["optionalArray.1"] == .null)
    #expect(doc["matrix.2.0"] == .int64(3))
  }

  @Test func optionalsAreOmittedOrNull() throws {
    struct Person: Codable, Equatable {
      var name: String
      var nickname: String?
      var age: Int?
      var address: Address?
    }
    let nobody = Person(name: "Ann", nickname: nil, age: nil, address: nil)
    let omitted = try BSONEncoder().encode(nobody)
    #expect(omitted.keys == ["name"])
    #expect(try roundTrip(nobody) == nobody)

    var encoder = BSONEncoder()
    encoder.nilEncodingStrategy = .null
    let nulls = try encoder.encode(nobody)
    #expect(nulls.keys == ["name", "nickname", "age", "address"])
    #expect(nulls.values == [.string("Ann"), .null, .null, .null])
    #expect(try BSONDecoder().decode(Person.self, from: nulls) == nobody)

    let someone = Person(name: "Bo", nickname: "B", age: 40, address: springfield)
    #expect(try roundTrip(someone, encoder: encoder) == someone)
    #expect(try BSONEncoder().encode(someone)["age"] == .int64(40))

    // Undefined decodes as nil too.
    let undefined: Document = ["name": "Cy", "age": .undefined]
    #expect(try BSONDecoder().decode(Person.self, from: undefined).age == nil)
  }

  @Test func enumsWithRawValuesAndAssociatedValues() throws {
    enum Color: String, Codable { case red, green }
    enum Level: Int, Codable { case low = 1, high = 9 }
    enum Shape: Codable, Equatable {
      case circle(radius: Double)
      case square(side: Int)
    }
    struct Item: Codable, Equatable {
      var color: Color
      var level: Level
      var shapes: [Shape]
    }
    let item = Item(color: .green, level: .high, shapes: [.circle(radius: 1.5), .square(side: 2)])
    let doc = try BSONEncoder().encode(item)
    #expect(doc["color"] == "green")
    #expect(doc["level"] == .int64(9))
    #expect(doc["shapes.0.circle.radius"] == 1.5)
    #expect(try roundTrip(item) == item)

    let bad: Document = ["color": "blue", "level": 1, "shapes": []]
    let error = #expect(throws: DecodingError.self) { try BSONDecoder().decode(Item.self, from: bad) }
    #expect(path(error!) == ["color"])
  }

  @Test func dictionaries() throws {
    let counts: [String: Int] = ["a": 1, "b": 2, "c": 3]
    struct Wrapper<T: Codable & Equatable>: Codable, Equatable { var value: T }
    #expect(try roundTrip(Wrapper(value: counts)) == Wrapper(value: counts))
    // A dictionary with String keys is itself a document, so it can be the top-level value.
    let top = try BSONEncoder().encode(counts)
    #expect(Set(top.keys) == ["a", "b", "c"])
    #expect(try BSONDecoder().decode([String: Int].self, from: top) == counts)
    let byInt: [Int: String] = [1: "one", 20: "twenty"]
    let doc = try BSONEncoder().encode(Wrapper(value: byInt))
    #expect(doc["value.20"] == "twenty")
    #expect(try roundTrip(Wrapper(value: byInt)) == Wrapper(value: byInt))
    let nested: [String: [String: Address]] = ["x": ["home": springfield]]
    #expect(try roundTrip(Wrapper(value: nested)) == Wrapper(value: nested))
  }

  @Test func keyOrderIsEncodingOrderAndDecodingIsOrderIndependent() throws {
    struct ABC: Codable, Equatable {
      var a: Int
      var b: String
      var c: Bool
    }
    #expect(try BSONEncoder().encode(ABC(a: 1, b: "x", c: true)).keys == ["a", "b", "c"])
    let reversed: Document = ["c": true, "extra": [1, 2, 3], "b": "x", "a": .int32(1)]
    #expect(try BSONDecoder().decode(ABC.self, from: reversed) == ABC(a: 1, b: "x", c: true))
    let shuffled: Document = ["b": "x", "a": .int64(1), "c": true]
    #expect(try BSONDecoder().decode(ABC.self, from: shuffled) == ABC(a: 1, b: "x", c: true))
  }

  @Test func manualContainersAndClassInheritance() throws {
    class Animal: Codable {
      var name: String
      init(name: String) { self.name = name }
    }
    final class Dog: Animal {
      var breed: String
      enum CodingKeys: String, CodingKey { case breed }
      init(name: String, breed: String) {
        self.breed = breed
        super.init(name: name)
      }
      required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        breed = try container.decode(String.self, forKey: .breed)
        try super.init(from: container.superDecoder())
      }
      override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(breed, forKey: .breed)
        try super.encode(to: container.superEncoder())
      }
    }
    let doc = try BSONEncoder().encode(Dog(name: "Rex", breed: "Lab"))
    var builder = DocumentBuilder()
    builder.append("breed", "Lab")
    builder.appendDocument("super") { $0.append("name", "Rex") }
    #expect(doc.bytes == builder.bytes)
    let dog = try BSONDecoder().decode(Dog.self, from: doc)
    #expect(dog.name == "Rex" && dog.breed == "Lab")

    // Subclass and superclass sharing one keyed container.
    final class Cat: Animal {
      var lives = 9
      enum CodingKeys: String, CodingKey { case lives }
      override init(name: String) { super.init(name: name) }
      required init(from decoder: any Decoder) throws {
        lives = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .lives)
        try super.init(from: decoder)
      }
      override func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(lives, forKey: .lives)
      }
    }
    let catDoc = try BSONEncoder().encode(Cat(name: "Tom"))
    #expect(catDoc.keys == ["name", "lives"])
    #expect(try BSONDecoder().decode(Cat.self, from: catDoc).name == "Tom")
  }

  @Test func nestedContainersWrittenInPlace() throws {
    struct Manual: Codable, Equatable {
      var x: Int32
      var point: [Double]
      enum Keys: String, CodingKey { case x, meta, point, inner }
      init(x: Int32, point: [Double]) {
        self.x = x
        self.point = point
      }
      func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        var meta = c.nestedContainer(keyedBy: Keys.self, forKey: .meta)
        try meta.encode(x, forKey: .x)
        var inner = meta.nestedUnkeyedContainer(forKey: .point)
        for p in point { try inner.encode(p) }
        var deeper = inner.nestedContainer(keyedBy: Keys.self)
        try deeper.encodeNil(forKey: .inner)
      }
      init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        let meta = try c.nestedContainer(keyedBy: Keys.self, forKey: .meta)
        x = try meta.decode(Int32.self, forKey: .x)
        var inner = try meta.nestedUnkeyedContainer(forKey: .point)
        var values: [Double] = []
        let count = inner.count ?? 0
        for _ in 0..<(count - 1) { values.append(try inner.decode(Double.self)) }
        let deeper = try inner.nestedContainer(keyedBy: Keys.self)
        #expect(try deeper.decodeNil(forKey: .inner))
        #expect(inner.isAtEnd)
        point = values
      }
    }
    let value = Manual(x: 7, point: [1, 2])
    var builder = DocumentBuilder()
    builder.appendDocument("meta") { meta in
      meta.append("x", Int32(7))
      meta.appendArray("point") { array in
        array.append(1.0)
        array.append(2.0)
        array.appendDocument { $0.appendNull("inner") }
      }
    }
    #expect(try BSONEncoder().encodeBytes(value) == builder.bytes)
    #expect(try roundTrip(value) == value)
  }

  @Test func containersUsedOutOfOrderFallBackCorrectly() throws {
    struct Split: Encodable {
      var pairs: [(Int32, String)]
      enum Keys: String, CodingKey { case numbers, names, tail }
      func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        var numbers = c.nestedUnkeyedContainer(forKey: .numbers)
        var names = c.nestedUnkeyedContainer(forKey: .names)
        for (n, s) in pairs {
          try numbers.encode(n)
          try names.encode(s)
        }
        try c.encode("end", forKey: .tail)
      }
    }
    var builder = DocumentBuilder()
    builder.appendArray("numbers") {
      $0.append(.int32(1))
      $0.append(.int32(2))
    }
    builder.appendArray("names") {
      $0.append("a")
      $0.append("b")
    }
    builder.append("tail", "end")
    #expect(try BSONEncoder().encodeBytes(Split(pairs: [(1, "a"), (2, "b")])) == builder.bytes)

    // A super encoder kept and used after its container moved on.
    struct Late: Encodable {
      enum Keys: String, CodingKey { case a, b }
      func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        let kept = c.superEncoder(forKey: .a)
        try c.encode(2, forKey: .b)
        var single = kept.singleValueContainer()
        try single.encode("late")
      }
    }
    var late = DocumentBuilder()
    late.append("a", "late")
    late.append("b", Int64(2))
    #expect(try BSONEncoder().encodeBytes(Late()) == late.bytes)
  }

  @Test func aFailedElementIsRolledBack() throws {
    struct Boom: Error {}
    struct Failing: Encodable {
      enum Keys: String, CodingKey { case partial }
      func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode("half", forKey: .partial)
        throw Boom()
      }
    }
    struct Tolerant: Encodable {
      enum Keys: String, CodingKey { case before, bad, after, list }
      func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode("x", forKey: .before)
        _ = try? c.encode(Failing(), forKey: .bad)
        _ = try? c.encode(UInt64.max, forKey: .bad)
        var list = c.nestedUnkeyedContainer(forKey: .list)
        _ = try? list.encode(Failing())
        try list.encode(true)
        try c.encode("y", forKey: .after)
      }
    }
    var builder = DocumentBuilder()
    builder.append("before", "x")
    builder.appendArray("list") { $0.append(true) }
    builder.append("after", "y")
    #expect(try BSONEncoder().encodeBytes(Tolerant()) == builder.bytes)
    #expect(throws: Boom.self) { try BSONEncoder().encode(Failing()) }
  }

  @Test func emptyValuesEncodeAsEmptyDocuments() throws {
    struct Nothing: Codable, Equatable {}
    struct Silent: Encodable { func encode(to encoder: any Encoder) throws {} }
    struct Holder<T: Encodable>: Encodable { var value: T }
    #expect(try BSONEncoder().encodeBytes(Nothing()) == [5, 0, 0, 0, 0])
    #expect(try roundTrip(Nothing()) == Nothing())
    var builder = DocumentBuilder()
    builder.appendDocument("value") { _ in }
    #expect(try BSONEncoder().encodeBytes(Holder(value: Silent())) == builder.bytes)
  }

  @Test func userInfoReachesEncodeAndDecode() throws {
    let key = CodingUserInfoKey(rawValue: "unit")!
    struct Measured: Codable, Equatable {
      var value: Double
      init(value: Double) { self.value = value }
      init(from decoder: any Decoder) throws {
        let scale = decoder.userInfo[CodingUserInfoKey(rawValue: "unit")!] as? Double ?? 1
        value = try decoder.singleValueContainer().decode(Double.self) / scale
      }
      func encode(to encoder: any Encoder) throws {
        let scale = encoder.userInfo[CodingUserInfoKey(rawValue: "unit")!] as? Double ?? 1
        var c = encoder.singleValueContainer()
        try c.encode(value * scale)
      }
    }
    struct Holder: Codable, Equatable { var m: Measured }
    var encoder = BSONEncoder()
    encoder.userInfo[key] = 100.0
    var decoder = BSONDecoder()
    decoder.userInfo[key] = 100.0
    let doc = try encoder.encode(Holder(m: Measured(value: 1.5)))
    #expect(doc["m"] == 150.0)
    #expect(try decoder.decode(Holder.self, from: doc) == Holder(m: Measured(value: 1.5)))
  }

  @Test func randomValuesRoundTrip() throws {
    struct Sample: Codable, Equatable {
      var i: Int
      var d: Double
      var s: String
      var o: Int16?
      var list: [UInt32]
      var child: [String: Bool]
    }
    var rng = SystemRandomNumberGenerator()
    for _ in 0..<200 {
      let sample = Sample(
        i: Int.random(in: .min ... .max, using: &rng), d: Double.random(in: -1e300...1e300, using: &rng),
        s: String((0..<Int.random(in: 0...20, using: &rng)).map { _ in "aé€😀\u{0}b".randomElement(using: &rng)! }),
        o: Bool.random(using: &rng) ? Int16.random(in: .min ... .max, using: &rng) : nil,
        list: (0..<Int.random(in: 0...5, using: &rng)).map { _ in UInt32.random(in: .min ... .max, using: &rng) },
        child: ["k\(Int.random(in: 0...9, using: &rng))": Bool.random(using: &rng)])
      #expect(try roundTrip(sample) == sample, "\(sample)")
    }
  }
}

// MARK: - Numbers

@Suite("Codable numbers")
struct CodableNumberTests {
  struct Integers: Codable, Equatable {
    var i: Int
    var i8: Int8
    var i16: Int16
    var i32: Int32
    var i64: Int64
    var u: UInt
    var u8: UInt8
    var u16: UInt16
    var u32: UInt32
    var u64: UInt64
    var f: Float
    var d: Double
    var b: Bool
  }

  @Test func integerWidthsMapToBSONTypes() throws {
    let value = Integers(
      i: 1, i8: -8, i16: -16, i32: .min, i64: .max, u: 5, u8: 255, u16: 65535, u32: .max, u64: 1 << 62, f: 0.5,
      d: -0.0, b: true)
    var builder = DocumentBuilder()
    builder.append("i", Int64(1))
    builder.append("i8", Int32(-8))
    builder.append("i16", Int32(-16))
    builder.append("i32", Int32.min)
    builder.append("i64", Int64.max)
    builder.append("u", Int64(5))
    builder.append("u8", Int32(255))
    builder.append("u16", Int32(65535))
    builder.append("u32", Int64(UInt32.max))
    builder.append("u64", Int64(1 << 62))
    builder.append("f", 0.5)
    builder.append("d", -0.0)
    builder.append("b", true)
    #expect(try BSONEncoder().encodeBytes(value) == builder.bytes)
    #expect(try roundTrip(value) == value)
  }

  @Test func genericPathUsesTheSameMapping() throws {
    struct Lists: Codable, Equatable {
      var small: [Int8]
      var big: [UInt32]
      var any: [Int]
      var floats: [Float]
    }
    let lists = Lists(small: [1, -1], big: [4_000_000_000], any: [7], floats: [1.25])
    let doc = try BSONEncoder().encode(lists)
    #expect(doc["small.0"] == .int32(1))
    #expect(doc["big.0"] == .int64(4_000_000_000))
    #expect(doc["any.0"] == .int64(7))
    #expect(doc["floats.0"] == .double(1.25))
    #expect(try roundTrip(lists) == lists)
  }

  @Test func unsignedOverflowIsAnEncodingError() throws {
    struct Big: Encodable {
      var value: UInt64
      var list: [UInt]
    }
    let error = #expect(throws: EncodingError.self) { try BSONEncoder().encode(Big(value: .max, list: [])) }
    #expect(path(error!) == ["value"])
    #expect(message(error!).contains("18446744073709551615"))
    let listError = #expect(throws: EncodingError.self) {
      try BSONEncoder().encode(Big(value: 1, list: [1, UInt(Int64.max) + 1]))
    }
    #expect(path(listError!) == ["list", "1"])
    #expect(try BSONEncoder().encode(Big(value: UInt64(Int64.max), list: []))["value"] == .int64(.max))
    struct Wide: Encodable { var a: Int128 }
    #expect(throws: EncodingError.self) { try BSONEncoder().encode(Wide(a: Int128(Int64.max) + 1)) }
    #expect(try BSONEncoder().encode(Wide(a: -5))["a"] == .int64(-5))
  }

  @Test func numbersConvertWhenExactlyRepresentable() throws {
    struct D: Decodable { var v: Double }
    struct I: Decodable { var v: Int }
    struct U8: Decodable { var v: UInt8 }
    struct I32: Decodable { var v: Int32 }
    struct F: Decodable { var v: Float }
    let decoder = BSONDecoder()
    #expect(try decoder.decode(D.self, from: ["v": .int32(1)]).v == 1.0)
    #expect(try decoder.decode(D.self, from: ["v": .int64(1 << 53)]).v == 9_007_199_254_740_992)
    #expect(try decoder.decode(I.self, from: ["v": .double(2.0)]).v == 2)
    #expect(try decoder.decode(I.self, from: ["v": .int32(-3)]).v == -3)
    #expect(try decoder.decode(U8.self, from: ["v": .int64(255)]).v == 255)
    #expect(try decoder.decode(F.self, from: ["v": .double(0.1)]).v == Float(0.1))
    #expect(try decoder.decode(F.self, from: ["v": .int32(16_777_216)]).v == 16_777_216)

    let fraction = #expect(throws: DecodingError.self) { try decoder.decode(I.self, from: ["v": .double(2.5)]) }
    guard case .typeMismatch = fraction else {
      Issue.record("expected a type mismatch, got \(String(describing: fraction))")
      return
    }
    #expect(message(fraction!).contains("2.5"))
    let overflow = #expect(throws: DecodingError.self) { try decoder.decode(U8.self, from: ["v": .int32(300)]) }
    #expect(message(overflow!).contains("int32 300"))
    #expect(throws: DecodingError.self) { try decoder.decode(U8.self, from: ["v": .int32(-1)]) }
    #expect(throws: DecodingError.self) { try decoder.decode(I32.self, from: ["v": .int64(1 << 40)]) }
    #expect(throws: DecodingError.self) { try decoder.decode(D.self, from: ["v": .int64((1 << 53) + 1)]) }
    #expect(throws: DecodingError.self) { try decoder.decode(F.self, from: ["v": .double(1e300)]) }
    #expect(throws: DecodingError.self) { try decoder.decode(F.self, from: ["v": .int32(16_777_217)]) }
    #expect(throws: DecodingError.self) { try decoder.decode(I.self, from: ["v": .double(.nan)]) }
    let text = #expect(throws: DecodingError.self) { try decoder.decode(I.self, from: ["v": "1"]) }
    #expect(message(text!).contains("int32, int64 or double") && message(text!).contains("string"))
  }
}

// MARK: - Strategies

@Suite("Codable strategies")
struct CodableStrategyTests {
  struct Stamped: Codable, Equatable { var at: Date }
  let date = Date(timeIntervalSince1970: 1_700_000_000.25)

  private func encoded(_ strategy: BSONEncoder.DateEncodingStrategy) throws -> Document {
    var encoder = BSONEncoder()
    encoder.dateEncodingStrategy = strategy
    return try encoder.encode(Stamped(at: date))
  }

  private func decoded(_ doc: Document, _ strategy: BSONDecoder.DateDecodingStrategy) throws -> Date {
    var decoder = BSONDecoder()
    decoder.dateDecodingStrategy = strategy
    return try decoder.decode(Stamped.self, from: doc).at
  }

  @Test func dateStrategies() throws {
    let ms: Int64 = 1_700_000_000_250
    let datetime = try encoded(.bsonDateTime)
    #expect(datetime["at"] == .datetime(BSONDateTime(millisecondsSinceEpoch: ms)))
    #expect(try decoded(datetime, .bsonDateTime) == date)
    #expect(try BSONEncoder().encode(Stamped(at: date)) == datetime)

    let millis = try encoded(.millisecondsSince1970)
    #expect(millis["at"] == .int64(ms))
    #expect(try decoded(millis, .millisecondsSince1970) == date)

    let seconds = try encoded(.secondsSince1970)
    #expect(seconds["at"] == .double(1_700_000_000.25))
    #expect(try decoded(seconds, .secondsSince1970) == date)
    #expect(try decoded(["at": .int32(1000)], .secondsSince1970) == Date(timeIntervalSince1970: 1000))

    let iso = try encoded(.iso8601)
    #expect(iso["at"] == "2023-11-14T22:13:20.250Z")
    #expect(try decoded(iso, .iso8601) == date)
    #expect(try decoded(["at": "2023-11-14T23:13:20.250+01:00"], .iso8601) == date)
    let badISO = #expect(throws: DecodingError.self) { try decoded(["at": "yesterday"], .iso8601) }
    #expect(path(badISO!) == ["at"])

    let deferred = try encoded(.deferredToDate)
    #expect(deferred["at"] == .double(date.timeIntervalSinceReferenceDate))
    #expect(try decoded(deferred, .deferredToDate) == date)

    let custom = try encoded(
      .custom { date, encoder in
        var c = encoder.singleValueContainer()
        try c.encode("day \(Int(date.timeIntervalSince1970 / 86400))")
      })
    #expect(custom["at"] == "day 19675")
    let parsed = try decoded(
      custom,
      .custom { decoder in
        let text = try decoder.singleValueContainer().decode(String.self)
        return Date(timeIntervalSince1970: Double(text.dropFirst(4))! * 86400)
      })
    #expect(parsed == Date(timeIntervalSince1970: 19675 * 86400))

    let mismatch = #expect(throws: DecodingError.self) { try decoded(millis, .bsonDateTime) }
    #expect(message(mismatch!).contains("datetime") && message(mismatch!).contains("int64"))
  }

  @Test func datesOutOfRangeAreErrors() throws {
    var encoder = BSONEncoder()
    #expect(throws: EncodingError.self) { try encoder.encode(Stamped(at: Date(timeIntervalSince1970: 1e300))) }
    encoder.dateEncodingStrategy = .iso8601
    #expect(throws: EncodingError.self) {
      try encoder.encode(Stamped(at: Date(timeIntervalSince1970: -70_000_000_000)))
    }
  }

  @Test func uuidStrategies() throws {
    struct Tagged: Codable, Equatable { var id: UUID }
    let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
    let binary = try BSONEncoder().encode(Tagged(id: uuid))
    let uuidBytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
    #expect(binary["id"] == .binary(Binary(subtype: .uuid, data: uuidBytes)))
    #expect(try BSONDecoder().decode(Tagged.self, from: binary) == Tagged(id: uuid))

    var encoder = BSONEncoder()
    var decoder = BSONDecoder()
    encoder.uuidEncodingStrategy = .string
    decoder.uuidDecodingStrategy = .string
    let string = try encoder.encode(Tagged(id: uuid))
    #expect(string["id"] == "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
    #expect(try decoder.decode(Tagged.self, from: string) == Tagged(id: uuid))
    #expect(try decoder.decode(Tagged.self, from: ["id": "e621e1f8-c36c-495a-93fc-0c247a3e6e5f"]) == Tagged(id: uuid))
    #expect(throws: DecodingError.self) { try decoder.decode(Tagged.self, from: ["id": "not a uuid"]) }

    encoder.uuidEncodingStrategy = .deferredToUUID
    decoder.uuidDecodingStrategy = .deferredToUUID
    let deferred = try encoder.encode(Tagged(id: uuid))
    #expect(deferred["id"] == .string(uuid.uuidString))
    #expect(try decoder.decode(Tagged.self, from: deferred) == Tagged(id: uuid))

    let wrongSubtype: Document = ["id": .binary(Binary(subtype: .generic, data: uuidBytes))]
    #expect(throws: DecodingError.self) { try BSONDecoder().decode(Tagged.self, from: wrongSubtype) }
  }

  @Test func dataStrategies() throws {
    struct Blob: Codable, Equatable { var data: Data }
    let blob = Blob(data: Data([0, 1, 2, 255]))
    let binary = try BSONEncoder().encode(blob)
    #expect(binary["data"] == .binary(Binary(subtype: .generic, data: [0, 1, 2, 255])))
    #expect(try BSONDecoder().decode(Blob.self, from: binary) == blob)
    let other: Document = ["data": .binary(Binary(subtype: .userDefined, data: [9]))]
    #expect(try BSONDecoder().decode(Blob.self, from: other) == Blob(data: Data([9])))
    let old: Document = ["data": .binary(Binary(subtype: .binaryOld, data: [7, 8]))]
    #expect(try BSONDecoder().decode(Blob.self, from: old) == Blob(data: Data([7, 8])))

    var encoder = BSONEncoder()
    var decoder = BSONDecoder()
    encoder.dataEncodingStrategy = .base64
    decoder.dataDecodingStrategy = .base64
    let base64 = try encoder.encode(blob)
    #expect(base64["data"] == "AAEC/w==")
    #expect(try decoder.decode(Blob.self, from: base64) == blob)
    #expect(throws: DecodingError.self) { try decoder.decode(Blob.self, from: ["data": "%%%"]) }

    encoder.dataEncodingStrategy = .deferredToData
    decoder.dataDecodingStrategy = .deferredToData
    let deferred = try encoder.encode(blob)
    #expect(deferred["data"]?.type == .array)
    #expect(try decoder.decode(Blob.self, from: deferred) == blob)
  }
}

// MARK: - Native BSON types

@Suite("Codable native BSON types")
struct CodableNativeTests {
  struct Natives: Codable, Equatable {
    var id: ObjectId
    var doc: Document
    var array: BSONArray
    var any: BSON
    var decimal: Decimal128
    var when: BSONDateTime
    var timestamp: BSONTimestamp
    var binary: Binary
    var regex: BSONRegularExpression
    var pointer: DBPointer
    var code: JavaScriptWithScope
    var boundary: BSON
    var values: [BSON]
  }

  let natives = Natives(
    id: ObjectId("64b7f1a2c3d4e5f601234567")!, doc: ["a": 1, "b": ["c": "d"]], array: [1, "two", 3.0],
    any: .symbol("sym"), decimal: Decimal128(high: 0x3040_0000_0000_0000, low: 12345),
    when: BSONDateTime(millisecondsSinceEpoch: -1), timestamp: BSONTimestamp(timestamp: 7, increment: 9),
    binary: Binary(subtype: .md5, data: Array(0..<16)), regex: BSONRegularExpression(pattern: "^a.*", options: "xi"),
    pointer: DBPointer(ref: "db.c", id: ObjectId("64b7f1a2c3d4e5f601234568")!),
    code: JavaScriptWithScope(code: "x + 1", scope: ["x": 1]), boundary: .maxKey,
    values: [.null, .undefined, .minKey, .int32(1), .javascript("f()"), .bool(false)])

  @Test func nativeTypesPassThroughExactly() throws {
    let pairs: [(String, BSON)] = [
      ("id", .objectId(natives.id)), ("doc", .document(natives.doc)), ("array", .array(natives.array)),
      ("any", natives.any), ("decimal", .decimal128(natives.decimal)), ("when", .datetime(natives.when)),
      ("timestamp", .timestamp(natives.timestamp)), ("binary", .binary(natives.binary)),
      ("regex", .regex(natives.regex)), ("pointer", .dbPointer(natives.pointer)),
      ("code", .javascriptWithScope(natives.code)), ("boundary", .maxKey),
      ("values", .array(BSONArray(natives.values))),
    ]
    var builder = DocumentBuilder()
    for (key, value) in pairs { builder.append(key, value) }
    let encoded = try BSONEncoder().encodeBytes(natives)
    #expect(encoded == builder.bytes)
    #expect(try roundTrip(natives) == natives)
    #expect(try roundTrip(natives).decimal.bytes == natives.decimal.bytes, "Decimal128's == compares numbers")
  }

  @Test func documentsAtTheTopLevelPassThrough() throws {
    let doc: Document = ["x": 1, "y": [true]]
    #expect(try BSONEncoder().encode(doc) == doc)
    #expect(try BSONEncoder().encodeBytes(BSON.document(doc)) == doc.bytes)
    #expect(try BSONDecoder().decode(Document.self, from: doc) == doc)
    #expect(try BSONDecoder().decode(BSON.self, from: doc) == .document(doc))
    #expect(try BSONDecoder().decode([String: BSON].self, from: doc) == ["x": 1, "y": [true]])
  }

  @Test func decodedDocumentsAreViewsOfTheSameBytes() throws {
    struct Holder: Codable { var inner: Document }
    let outer: Document = ["inner": ["k": "v", "n": .int64(3)]]
    let holder = try BSONDecoder().decode(Holder.self, from: outer)
    #expect(holder.inner["n"] == .int64(3))
    #expect(holder.inner.bytes == (outer["inner"].flatMap { if case .document(let d) = $0 { d } else { nil } })?.bytes)
  }

  @Test func nativeMismatchesNameBothTypes() throws {
    struct OnlyId: Codable { var id: ObjectId }
    let error = #expect(throws: DecodingError.self) { try BSONDecoder().decode(OnlyId.self, from: ["id": "abc"]) }
    #expect(message(error!).contains("objectId") && message(error!).contains("string"))
    #expect(path(error!) == ["id"])
  }

  @Test func otherCodersUseDocumentedFallbacks() throws {
    struct Record: Codable, Equatable {
      var id: ObjectId
      var when: BSONDateTime
      var stamp: BSONTimestamp
      var blob: Binary
      var regex: BSONRegularExpression
    }
    let record = Record(
      id: natives.id, when: natives.when, stamp: natives.timestamp, blob: Binary(subtype: .uuid, data: [1, 2]),
      regex: natives.regex)
    let json = try JSONEncoder().encode(record)
    let object = try JSONSerialization.jsonObject(with: json) as! [String: Any]
    #expect(object["id"] as? String == "64b7f1a2c3d4e5f601234567")
    #expect(object["when"] as? Int == -1)
    #expect((object["blob"] as? [String: String]) == ["base64": "AQI=", "subType": "04"])
    #expect(try JSONDecoder().decode(Record.self, from: json) == record)

    let doc: Document = ["a": .int32(1), "b": "x", "c": [true, .null], "d": ["e": 2.5], "big": .int64(1 << 40)]
    let docJSON = try JSONEncoder().encode(doc)
    let back = try JSONDecoder().decode(Document.self, from: docJSON)
    #expect(back["a"] == .int32(1))
    #expect(back["b"] == "x")
    #expect(back["c"] == [true, .null])
    #expect(back["d.e"] == 2.5)
    #expect(back["big"] == .int64(1 << 40))
    #expect(try JSONDecoder().decode(BSON.self, from: JSONEncoder().encode(BSON.minKey)) == .minKey)
  }
}

// MARK: - Errors

@Suite("Codable errors")
struct CodableErrorTests {
  @Test func nestedTypeMismatchHasTheFullCodingPath() throws {
    struct Inner: Decodable { var b: Int }
    struct Outer: Decodable { var a: Inner }
    let error = #expect(throws: DecodingError.self) {
      try BSONDecoder().decode(Outer.self, from: ["a": ["b": "x"]])
    }
    guard case .typeMismatch(let type, _) = error else {
      Issue.record("expected a type mismatch, got \(String(describing: error))")
      return
    }
    #expect(ObjectIdentifier(type) == ObjectIdentifier(Int.self))
    #expect(path(error!) == ["a", "b"])
    #expect(message(error!).contains("BSON string"))
  }

  @Test func pathsThroughArraysAndMissingKeys() throws {
    let doc: Document = [
      "name": "MongoDB",
      "addresses": [
        ["street": "s", "city": "c", "country": "US", "postalCode": "1"],
        ["street": "s", "city": .int32(5), "country": "US", "postalCode": "1"],
      ],
    ]
    let mismatch = #expect(throws: DecodingError.self) { try BSONDecoder().decode(Business.self, from: doc) }
    #expect(path(mismatch!) == ["addresses", "1", "city"])

    let missing = #expect(throws: DecodingError.self) {
      try BSONDecoder().decode(Business.self, from: ["name": "x", "addresses": [["street": "s"]]])
    }
    guard case .keyNotFound(let key, _) = missing else {
      Issue.record("expected keyNotFound, got \(String(describing: missing))")
      return
    }
    #expect(key.stringValue == "city")
    #expect(path(missing!) == ["addresses", "0"])

    let notArray = #expect(throws: DecodingError.self) {
      try BSONDecoder().decode(Business.self, from: ["name": "x", "addresses": ["a": 1]])
    }
    #expect(path(notArray!) == ["addresses"])
    #expect(message(notArray!).contains("array") && message(notArray!).contains("document"))

    let null = #expect(throws: DecodingError.self) {
      try BSONDecoder().decode(Contact.self, from: ["name": .null, "address": .null])
    }
    #expect(message(null!).contains("null"))

    struct Pair: Decodable {
      var first: Int
      var second: Int
      init(from decoder: any Decoder) throws {
        var c = try decoder.unkeyedContainer()
        first = try c.decode(Int.self)
        second = try c.decode(Int.self)
      }
    }
    struct Holder: Decodable { var pair: Pair }
    let short = #expect(throws: DecodingError.self) { try BSONDecoder().decode(Holder.self, from: ["pair": [1]]) }
    guard case .valueNotFound = short else {
      Issue.record("expected valueNotFound, got \(String(describing: short))")
      return
    }
    #expect(path(short!) == ["pair", "1"])
  }

  @Test func errorPathsKeepEachKeyWithItsOwnType() throws {
    struct Inner: Codable { var n: Int }
    struct Outer: Codable {
      var inner: Inner
      enum CodingKeys: Int, CodingKey { case inner = 7 }
    }
    let error = #expect(throws: DecodingError.self) {
      try BSONDecoder().decode(Outer.self, from: ["inner": ["n": "x"]])
    }
    guard case .typeMismatch(_, let context) = error else {
      Issue.record("expected typeMismatch, got \(String(describing: error))")
      return
    }
    #expect(context.codingPath.map(\.stringValue) == ["inner", "n"])
    #expect(context.codingPath.first is Outer.CodingKeys)
    #expect(context.codingPath.first?.intValue == 7)

    // Keys of a type that is not trivial (a struct holding a string), at two levels, and a
    // dictionary key under them.
    struct Dynamic: Decodable {
      init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        let nested = try c.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey("outer"))
        _ = try nested.decode([String: Inner].self, forKey: AnyKey("map"))
      }
    }
    let dynamicError = #expect(throws: DecodingError.self) {
      try BSONDecoder().decode(Dynamic.self, from: ["outer": ["map": ["k1": ["n": 1], "k2": ["n": "x"]]]])
    }
    #expect(path(dynamicError!) == ["outer", "map", "k2", "n"])
    if case .typeMismatch(_, let dynamicContext) = dynamicError {
      #expect(dynamicContext.codingPath.first is AnyKey)
    } else {
      Issue.record("expected typeMismatch, got \(String(describing: dynamicError))")
    }

    struct Overflow: Encodable {
      enum CodingKeys: Int, CodingKey { case value = 3 }
      func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(UInt64.max, forKey: .value)
      }
    }
    let encodingError = #expect(throws: EncodingError.self) { try BSONEncoder().encode(Overflow()) }
    guard case .invalidValue(_, let encodingContext) = encodingError else {
      Issue.record("expected invalidValue, got \(String(describing: encodingError))")
      return
    }
    #expect(encodingContext.codingPath.first is Overflow.CodingKeys)
    #expect(encodingContext.codingPath.first?.intValue == 3)
  }

  @Test func keysWithAZeroByteAreEncodingErrors() throws {
    struct Holder: Encodable { var map: [String: Int] }
    let error = #expect(throws: EncodingError.self) { try BSONEncoder().encode(Holder(map: ["a\u{0}b": 1])) }
    #expect(path(error!) == ["map", "a\u{0}b"])
    #expect(message(error!).contains("zero byte"))
    #expect(throws: EncodingError.self) { try BSONEncoder().encode(["\u{0}": 1]) }

    struct Nested: Encodable {
      func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: AnyKey.self)
        _ = c.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey("bad\u{0}"))
        try c.encode(1, forKey: AnyKey("fine"))
      }
    }
    let nestedError = #expect(throws: EncodingError.self) { try BSONEncoder().encode(Nested()) }
    #expect(path(nestedError!) == ["bad\u{0}"])

    struct Pattern: Encodable { var r: BSONRegularExpression }
    #expect(throws: EncodingError.self) {
      try BSONEncoder().encode(Pattern(r: BSONRegularExpression(pattern: "a\u{0}")))
    }
  }

  @Test func theTopLevelMustBeADocument() throws {
    let int = #expect(throws: EncodingError.self) { try BSONEncoder().encode(5) }
    #expect(message(int!).contains("int64"))
    let array = #expect(throws: EncodingError.self) { try BSONEncoder().encode([1, 2]) }
    #expect(message(array!).contains("array"))
    #expect(throws: EncodingError.self) { try BSONEncoder().encode(Int?.none) }
    #expect(throws: EncodingError.self) { try BSONEncoder().encode("text") }
    #expect(throws: EncodingError.self) { try BSONEncoder().encode(BSON.int32(1)) }
  }

  @Test func invalidBytesAreDataCorrupted() throws {
    let error = #expect(throws: DecodingError.self) { try BSONDecoder().decode(Contact.self, from: [1, 2, 3]) }
    guard case .dataCorrupted(let context) = error else {
      Issue.record("expected dataCorrupted, got \(String(describing: error))")
      return
    }
    #expect(context.underlyingError is BSONError)
    let good = try BSONEncoder().encodeBytes(Contact(name: "n", address: springfield))
    #expect(try BSONDecoder().decode(Contact.self, from: good).address == springfield)
  }

  @Test func encodingTheSameSingleValueTwiceIsAnError() throws {
    struct Twice: Encodable {
      func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(1)
        try c.encode(2)
      }
    }
    struct Holder: Encodable { var t: Twice }
    let error = #expect(throws: EncodingError.self) { try BSONEncoder().encode(Holder(t: Twice())) }
    #expect(path(error!) == ["t"])
  }
}

// MARK: - Decoder machinery

@Suite("Codable decoder state")
struct CodableDecoderStateTests {
  final class Node: Codable, Equatable {
    var name: String
    var children: [Node]
    init(name: String, children: [Node]) {
      self.name = name
      self.children = children
    }
    static func == (a: Node, b: Node) -> Bool { a.name == b.name && a.children == b.children }
  }

  @Test func deepAndWideDocuments() throws {
    var chain = Node(name: "leaf", children: [])
    for depth in 0..<45 { chain = Node(name: "n\(depth)", children: [chain]) }
    #expect(try roundTrip(chain) == chain)

    let wide = Business(name: "many", addresses: Array(repeating: springfield, count: 3000))
    #expect(try roundTrip(wide) == wide)
    // A small decode after the big one reuses the same (reset) state.
    let small = Business(name: "few", addresses: [nyc])
    #expect(try roundTrip(small) == small)

    let error = #expect(throws: DecodingError.self) {
      try BSONDecoder().decode(Node.self, from: ["name": "a", "children": [["name": "b", "children": [["name": 1]]]]])
    }
    #expect(path(error!) == ["children", "0", "children", "0", "name"])
  }

  @Test func dictionaryValuesHaveTheirKeyInThePath() throws {
    struct Holder: Decodable { var map: [String: Int] }
    let error = #expect(throws: DecodingError.self) {
      try BSONDecoder().decode(Holder.self, from: ["map": ["ok": 1, "bad": "x"]])
    }
    #expect(path(error!) == ["map", "bad"])
  }

  @Test func decodingInsideInitFromUsesAnotherState() throws {
    struct Embedded: Decodable {
      var inner: Contact
      init(from decoder: any Decoder) throws {
        let raw = try decoder.singleValueContainer().decode(Document.self)
        inner = try BSONDecoder().decode(Contact.self, from: raw)
        _ = try decoder.singleValueContainer().decode(Document.self)  // the outer state is intact
      }
    }
    struct Outer: Decodable {
      var a: Embedded
      var b: Int
    }
    let doc = try BSONEncoder().encode([
      "a": BSON.document(try BSONEncoder().encode(Contact(name: "x", address: nyc))),
      "b": .int64(2),
    ])
    let outer = try BSONDecoder().decode(Outer.self, from: doc)
    #expect(outer.a.inner.address == nyc && outer.b == 2)
  }

  @Test func concurrentDecodes() async throws {
    let business = Business(name: "MongoDB", addresses: [nyc, paloAlto, springfield])
    let document = try BSONEncoder().encode(business)
    try await withThrowingTaskGroup(of: Bool.self) { group in
      for _ in 0..<8 {
        group.addTask {
          for _ in 0..<300 where try BSONDecoder().decode(Business.self, from: document) != business { return false }
          return true
        }
      }
      for try await ok in group { #expect(ok) }
    }
  }

  @Test func concurrentEncodes() async throws {
    let business = Business(name: "MongoDB", addresses: [nyc, paloAlto, springfield])
    let expected = try BSONEncoder().encodeBytes(business)
    try await withThrowingTaskGroup(of: Bool.self) { group in
      for _ in 0..<8 {
        group.addTask {
          for _ in 0..<300 where try BSONEncoder().encodeBytes(business) != expected { return false }
          return true
        }
      }
      for try await ok in group { #expect(ok) }
    }
  }

  @Test func anEncoderKeptPastItsCallWritesNothingIntoALaterCall() throws {
    // The encoder state is reused from call to call: encoders and containers kept from an
    // earlier call must not write into a later one, nor make it start over.
    final class Kept: @unchecked Sendable {
      var encoder: (any Encoder)?
      var container: KeyedEncodingContainer<AnyKey>?
    }
    let kept = Kept()
    struct Keeper: Encodable {
      let kept: Kept
      func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: AnyKey.self)
        try c.encode(1, forKey: AnyKey("x"))
        kept.container = c
      }
    }
    struct Outer: Encodable {
      let kept: Kept
      func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: AnyKey.self)
        try c.encode(Keeper(kept: kept), forKey: AnyKey("inner"))
        kept.encoder = encoder
      }
    }
    struct Meddled: Encodable {
      let kept: Kept
      func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: AnyKey.self)
        try c.encode(1, forKey: AnyKey("a"))
        var stale = kept.container!
        try stale.encode(2, forKey: AnyKey("stale"))
        var staleRoot = kept.encoder!.container(keyedBy: AnyKey.self)
        try staleRoot.encode(3, forKey: AnyKey("staleRoot"))
        var nested = staleRoot.nestedUnkeyedContainer(forKey: AnyKey("list"))
        try nested.encode(4)
        try c.encode(5, forKey: AnyKey("b"))
      }
    }
    var first = DocumentBuilder()
    first.appendDocument("inner") { $0.append("x", Int64(1)) }
    #expect(try BSONEncoder().encodeBytes(Outer(kept: kept)) == first.bytes)
    var second = DocumentBuilder()
    second.append("a", Int64(1))
    second.append("b", Int64(5))
    #expect(try BSONEncoder().encodeBytes(Meddled(kept: kept)) == second.bytes)
    #expect(try BSONEncoder().encodeBytes(Outer(kept: kept)) == first.bytes)
  }

  @Test func aNestedEncoderKeptPastItsValueKeepsItsPath() throws {
    // The encoder's nodes for nested values are reused from value to value and from call to
    // call, and refer to their parent without retaining it while they encode: one kept past its
    // value still has its whole path after the nodes above it were used again.
    final class Kept: @unchecked Sendable {
      var encoder: (any Encoder)?
    }
    struct Leaf: Encodable {
      let kept: Kept?
      func encode(to encoder: any Encoder) throws {
        kept?.encoder = encoder
        var c = encoder.container(keyedBy: AnyKey.self)
        try c.encode(1, forKey: AnyKey("x"))
      }
    }
    /// Two nested values: `first` at `keys.0`, `second` at `keys.1`.
    struct Two<Inner: Encodable>: Encodable {
      let keys: (String, String)
      let first: Inner
      let second: Inner
      func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: AnyKey.self)
        try c.encode(first, forKey: AnyKey(keys.0))
        try c.encode(second, forKey: AnyKey(keys.1))
      }
    }
    /// `{first: {leaf, other}, second: {leaf, other}}`, keeping the encoder of `first.leaf`.
    func top(_ kept: Kept?) -> Two<Two<Leaf>> {
      func middle(_ kept: Kept?) -> Two<Leaf> {
        Two(keys: ("leaf", "other"), first: Leaf(kept: kept), second: Leaf(kept: nil))
      }
      return Two(keys: ("first", "second"), first: middle(kept), second: middle(nil))
    }
    var middle = DocumentBuilder()
    middle.appendDocument("leaf") { $0.append("x", Int64(1)) }
    middle.appendDocument("other") { $0.append("x", Int64(1)) }
    var expected = DocumentBuilder()
    expected.append("first", middle.document)
    expected.append("second", middle.document)
    let kept = Kept()
    #expect(try BSONEncoder().encodeBytes(top(kept)) == expected.bytes)
    #expect(kept.encoder?.codingPath.map(\.stringValue) == ["first", "leaf"])
    for _ in 0..<3 { #expect(try BSONEncoder().encodeBytes(top(nil)) == expected.bytes) }
    #expect(kept.encoder?.codingPath.map(\.stringValue) == ["first", "leaf"])
  }

  @Test func keyedContainersOfOneEncoderKeptPastTheirValue() throws {
    // Two keyed containers of one encoder, one of them kept: during the call the box cache does
    // not retain the nodes its boxes write to, so a node with a kept box must not be reused, and
    // the kept container must keep its node (and write nothing) once the call has ended.
    final class Kept: @unchecked Sendable {
      var containers: [KeyedEncodingContainer<AnyKey>] = []
    }
    struct Twice: Encodable {
      let keep: Int?
      let kept: Kept
      func encode(to encoder: any Encoder) throws {
        var a = encoder.container(keyedBy: AnyKey.self)
        var b = encoder.container(keyedBy: AnyKey.self)
        try a.encode(1, forKey: AnyKey("a"))
        try b.encode(2, forKey: AnyKey("b"))
        if keep == 0 { kept.containers.append(a) }
        if keep == 1 { kept.containers.append(b) }
      }
    }
    struct Outer: Encodable {
      let keep: Int?
      let kept: Kept
      func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: AnyKey.self)
        try c.encode(Twice(keep: keep, kept: kept), forKey: AnyKey("first"))
        try c.encode(Twice(keep: nil, kept: kept), forKey: AnyKey("second"))
        // The kept container's node was not taken for "second".
        if keep != nil { #expect(kept.containers.last?.codingPath.map(\.stringValue) == ["first"]) }
      }
    }
    var twice = DocumentBuilder()
    twice.append("a", Int64(1))
    twice.append("b", Int64(2))
    var outer = DocumentBuilder()
    outer.append("first", twice.document)
    outer.append("second", twice.document)
    let kept = Kept()
    for keep in [0, 1, 0, 1] {
      #expect(try BSONEncoder().encodeBytes(Outer(keep: keep, kept: kept)) == outer.bytes)
      #expect(try BSONEncoder().encodeBytes(Outer(keep: nil, kept: kept)) == outer.bytes)
    }
    #expect(kept.containers.count == 4)
    // Its path after the call: its own, also once its state was let go (another test's concurrent
    // encode can leave another state idle): a kept box keeps its node, and so the state.
    for container in kept.containers {
      #expect(container.codingPath.map(\.stringValue) == ["first"])
    }
    for index in kept.containers.indices { try kept.containers[index].encode(3, forKey: AnyKey("late")) }
    #expect(try BSONEncoder().encodeBytes(Outer(keep: nil, kept: kept)) == outer.bytes)
  }

  /// One BSON level per keyed container, so that more containers are open at once than the
  /// decoder keeps boxes for (64).
  final class Chain: Codable, Equatable {
    let value: Int
    let next: Chain?
    init(_ value: Int, _ next: Chain?) {
      self.value = value
      self.next = next
    }
    static func == (a: Chain, b: Chain) -> Bool { a.value == b.value && a.next == b.next }
  }

  @Test func keyedContainersBeyondTheReusedBoxes() throws {
    var chain = Chain(0, nil)
    for value in 1...90 { chain = Chain(value, chain) }
    let document = try BSONEncoder().encode(chain)
    // Twice: the second decode reuses the boxes the first one made.
    #expect(try BSONDecoder().decode(Chain.self, from: document) == chain)
    #expect(try BSONDecoder().decode(Chain.self, from: document) == chain)
    // An error deep inside still names its whole path (through owned and reused containers).
    var broken = try Document(extendedJSON: #"{"value": 0, "next": {"value": "x"}}"#)
    for value in 1...80 { broken = ["value": .int32(Int32(value)), "next": .document(broken)] }
    let error = #expect(throws: DecodingError.self) { try BSONDecoder().decode(Chain.self, from: broken) }
    #expect(path(error!) == Array(repeating: "next", count: 81) + ["value"])
  }

  @Test func containersOfOneKeyTypeOpenTogether() throws {
    // Two containers of the same key type are open at once, with a nested value decoded between
    // their reads: each reads its own document, never the other's box.
    struct Twice: Decodable {
      var first: Int
      var nested: Contact
      var second: Int
      init(from decoder: any Decoder) throws {
        let a = try decoder.container(keyedBy: AnyKey.self)
        let b = try decoder.container(keyedBy: AnyKey.self)
        nested = try a.decode(Contact.self, forKey: AnyKey("contact"))
        let inner = try a.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey("contact"))
        #expect(try inner.decode(String.self, forKey: AnyKey("name")) == "x")
        first = try a.decode(Int.self, forKey: AnyKey("n"))
        second = try b.decode(Int.self, forKey: AnyKey("m"))
        #expect(a.allKeys.map(\.stringValue) == ["n", "contact", "m"])
        #expect(b.codingPath.isEmpty && inner.codingPath.map(\.stringValue) == ["contact"])
      }
    }
    let contact = try BSONEncoder().encode(Contact(name: "x", address: nyc))
    let value = try BSONDecoder().decode(Twice.self, from: ["n": 1, "contact": .document(contact), "m": 2])
    #expect(value.first == 1 && value.second == 2 && value.nested == Contact(name: "x", address: nyc))
  }

  @Test func aContainerKeptPastItsCallKeepsItsBox() throws {
    // A container the caller keeps is not handed out again: later calls decode correctly.
    final class Keeper: Decodable {
      let container: KeyedDecodingContainer<AnyKey>
      let contact: Contact
      init(from decoder: any Decoder) throws {
        container = try decoder.container(keyedBy: AnyKey.self)
        contact = try container.decode(Contact.self, forKey: AnyKey("contact"))
      }
    }
    let first = try BSONEncoder().encode(Contact(name: "first", address: nyc))
    let second = try BSONEncoder().encode(Contact(name: "second", address: springfield))
    var kept: [Keeper] = []
    for round in 0..<3 {
      for document in [first, second] {
        kept.append(try BSONDecoder().decode(Keeper.self, from: ["contact": .document(document)]))
      }
      #expect(kept.suffix(2).map(\.contact.name) == ["first", "second"], "round \(round)")
    }
  }

  @Test func aContainerKeptPastItsCallWhoseStateWasLetGoWritesNothing() throws {
    final class Kept: @unchecked Sendable {
      var container: KeyedEncodingContainer<AnyKey>?
    }
    struct Inner: Encodable {
      func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: AnyKey.self)
        try c.encode("inner", forKey: AnyKey("i"))
      }
    }
    // Keeps its container, after encoding a value with another encoder inside its own call: that
    // call's state ends first and is kept for reuse, so this call's state is the one let go, with
    // the kept container's box still held (its slot keeps the node, which keeps the state).
    struct Keeper: Encodable {
      let kept: Kept
      func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: AnyKey.self)
        let inner = try BSONEncoder().encode(Inner())
        try c.encode(inner, forKey: AnyKey("nested"))
        kept.container = c
      }
    }
    let kept = Kept()
    let first = try BSONEncoder().encodeBytes(Keeper(kept: kept))
    var expected = DocumentBuilder()
    expected.appendDocument("nested") { $0.append("i", "inner") }
    #expect(first == expected.bytes)
    // The kept container writes nothing, and later calls are unaffected.
    var stale = try #require(kept.container)
    try stale.encode(1, forKey: AnyKey("late"))
    var nested = stale.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey("n"))
    try nested.encode(2, forKey: AnyKey("x"))
    #expect(stale.codingPath.isEmpty)
    #expect(try BSONEncoder().encodeBytes(Keeper(kept: kept)) == expected.bytes)
    var inner = DocumentBuilder()
    inner.append("i", "inner")
    #expect(try BSONEncoder().encodeBytes(Inner()) == inner.bytes)
  }

  @Test func aDecoderCannotOutliveItsDecodeCall() async {
    await #expect(processExitsWith: .failure) {
      final class Keeper: Decodable {
        let decoder: any Decoder
        init(from decoder: any Decoder) throws { self.decoder = decoder }
      }
      let keeper = try BSONDecoder().decode(Keeper.self, from: ["a": 1])
      _ = try BSONDecoder().decode(Keeper.self, from: ["b": 2])  // the pooled memory is reused
      _ = try keeper.decoder.container(keyedBy: AnyKey.self)
    }
  }

  @Test func aContainerCannotOutliveItsDecodeCall() async {
    await #expect(processExitsWith: .failure) {
      final class Keeper: Decodable {
        let container: KeyedDecodingContainer<AnyKey>
        init(from decoder: any Decoder) throws { container = try decoder.container(keyedBy: AnyKey.self) }
      }
      let keeper = try BSONDecoder().decode(Keeper.self, from: ["a": 1])
      _ = try keeper.container.decode(Int.self, forKey: AnyKey("a"))
    }
  }
}
