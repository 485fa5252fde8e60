import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import Testing

/// A temperature stored as a Double.
struct Celsius: CustomPersistable {
  typealias PersistedType = Double
  var degrees: Double
  init(degrees: Double) { self.degrees = degrees }
  init(persistedValue: Double) { degrees = persistedValue }
  var persistableValue: Double { degrees }
}

/// A web address stored as a String; not every string is one.
struct WebAddress: FailableCustomPersistable {
  typealias PersistedType = String
  let text: String
  init?(persistedValue: String) {
    guard persistedValue.hasPrefix("https://") else { return nil }
    text = persistedValue
  }
  var persistableValue: String { text }
}

/// An even number stored as an Int; the failable init refuses odd ones (and 0 is even, so the
/// default works).
struct EvenNumber: FailableCustomPersistable {
  typealias PersistedType = Int
  let value: Int
  init?(persistedValue: Int) {
    guard persistedValue % 2 == 0 else { return nil }
    value = persistedValue
  }
  var persistableValue: Int { value }
}

/// The storage of a ``Point``.
class PointStorage: EmbeddedObject {
  @Persisted var x = 0.0
  @Persisted var y = 0.0
}

/// A point stored as an embedded object.
struct Point: CustomPersistable {
  typealias PersistedType = PointStorage
  var x: Double
  var y: Double
  init(x: Double, y: Double) {
    self.x = x
    self.y = y
  }
  init(persistedValue: PointStorage) { (x, y) = (persistedValue.x, persistedValue.y) }
  var persistableValue: PointStorage { PointStorage(value: [x, y]) }
}

class Weather: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted(indexed: true) var temperature: Celsius
  @Persisted var optionalTemperature: Celsius?
  @Persisted var history: List<Celsius>
  @Persisted var optionalHistory: List<Celsius?>
  @Persisted var seen: MutableSet<Celsius>
  @Persisted var byCity: Map<String, Celsius>
  @Persisted var site: WebAddress?
  @Persisted var even: EvenNumber
  @Persisted var optionalEven: EvenNumber?
  @Persisted var evens: List<EvenNumber>
  @Persisted var location: Point
  @Persisted var optionalLocation: Point?
  @Persisted var track: List<Point>
  @Persisted var places: Map<String, Point>
}

/// `CustomPersistable` and `FailableCustomPersistable` types in properties, collections,
/// queries and dynamic access.
@Suite struct CustomPersistableTests {
  @Test func aMappedTypeIsStoredAsItsPersistedType() throws {
    let (reef, _) = try openReef()
    let weather = Weather()
    weather.id = 1
    weather.temperature = Celsius(degrees: 21.5)
    weather.history.append(objectsIn: [Celsius(degrees: 1), Celsius(degrees: 2)])
    weather.optionalHistory.append(objectsIn: [Celsius(degrees: 3), nil])
    weather.seen.insert(objectsIn: [Celsius(degrees: 4), Celsius(degrees: 4)])
    weather.byCity["Oslo"] = Celsius(degrees: -3)
    weather.site = WebAddress(persistedValue: "https://example.com")
    weather.even = try #require(EvenNumber(persistedValue: 4))
    weather.location = Point(x: 1, y: 2)
    weather.track.append(Point(x: 3, y: 4))
    weather.places["home"] = Point(x: 5, y: 6)
    try reef.write { reef.add(weather) }

    let stored = try #require(try reef.store.read { try $0.collection("Weather").findOne() })
    #expect(stored["temperature"] == .double(21.5) && stored["optionalTemperature"] == .null)
    #expect(stored["history"] == .array([.double(1), .double(2)]))
    #expect(stored["optionalHistory"] == .array([.double(3), .null]))
    #expect(stored["seen"] == .array([.double(4)]))
    #expect(stored["byCity"] == .document(["Oslo": .double(-3)]))
    #expect(stored["site"] == "https://example.com" && stored["even"] == .int64(4))
    #expect(stored["location"] == .document(["x": .double(1), "y": .double(2)]))
    #expect(stored["track"] == .array([.document(["x": .double(3), "y": .double(4)])]))
    #expect(stored["places"] == .document(["home": .document(["x": .double(5), "y": .double(6)])]))

    let read = try #require(reef.object(ofType: Weather.self, forPrimaryKey: 1))
    #expect(read.temperature == Celsius(degrees: 21.5) && read.optionalTemperature == nil)
    #expect(Array(read.history) == [Celsius(degrees: 1), Celsius(degrees: 2)])
    #expect(Array(read.optionalHistory) == [Celsius(degrees: 3), nil])
    #expect(Set(read.seen) == [Celsius(degrees: 4)])
    #expect(read.byCity["Oslo"] == Celsius(degrees: -3))
    #expect(read.site?.text == "https://example.com" && read.even.value == 4)
    #expect(read.location.x == 1 && read.location.y == 2 && read.optionalLocation == nil)
    #expect(read.track.map(\.y) == [4] && read.places["home"]?.x == 5)

    try reef.write {
      read.temperature = Celsius(degrees: 30)
      read.location = Point(x: 7, y: 8)
      read.optionalLocation = Point(x: 9, y: 9)
      read.places["work"] = Point(x: 10, y: 10)
    }
    #expect(read.temperature.degrees == 30 && read.location.x == 7 && read.optionalLocation?.y == 9)
    #expect(read.places.keys == ["home", "work"])
  }

  @Test func theDefaultIsMadeFromThePersistedTypesDefault() {
    let weather = Weather()
    #expect(weather.temperature == Celsius(degrees: 0) && weather.even.value == 0)
    #expect(weather.location.x == 0 && weather.optionalTemperature == nil && weather.site == nil)
  }

  @Test func theSchemaHasThePersistedType() throws {
    let schema = try #require(Weather.sharedSchema())
    #expect(schema["temperature"]?.type == .double && schema["temperature"]?.isIndexed == true)
    #expect(schema["optionalTemperature"]?.isOptional == true && schema["history"]?.isArray == true)
    #expect(schema["site"]?.type == .string && schema["even"]?.type == .int)
    #expect(schema["location"]?.type == .object && schema["location"]?.objectClassName == "PointStorage")
    #expect(schema["places"]?.isMap == true)
    _ = try openReef(types: [Weather.self])
  }

  @Test func queriesComparePersistedValues() throws {
    let (reef, _) = try openReef()
    try reef.write {
      for (id, degrees) in [(1, 10.0), (2, 20.0), (3, 30.0)] {
        reef.create(Weather.self, value: ["id": id, "temperature": Celsius(degrees: degrees), "history": [degrees]])
      }
    }
    let warm = reef.objects(Weather.self).where { $0.temperature == Celsius(degrees: 20) }
    #expect(warm.map(\.id) == [2])
    #expect(reef.objects(Weather.self).where { $0.temperature != Celsius(degrees: 20) }.count == 2)
    #expect(reef.objects(Weather.self).where { $0.history == Celsius(degrees: 30) }.map(\.id) == [3])
    #expect(reef.objects(Weather.self).filter("temperature == %@", Celsius(degrees: 10)).map(\.id) == [1])
    #expect(reef.objects(Weather.self).filter("temperature > %@", 15.0).count == 2)
    #expect(reef.objects(Weather.self).sorted(byKeyPath: "temperature", ascending: false).first?.id == 3)
  }

  @Test func dynamicAccessReadsAndTakesThePersistedValue() throws {
    let weather = Weather(value: ["temperature": 12.5, "history": [1.5], "byCity": ["a": 2], "location": [1, 2]])
    #expect(weather.temperature.degrees == 12.5 && weather.history.first?.degrees == 1.5)
    #expect(weather.byCity["a"]?.degrees == 2 && weather.location.y == 2)
    #expect(weather["temperature"] as? Double == 12.5)
    weather["temperature"] = Celsius(degrees: 3)
    #expect(weather.temperature.degrees == 3)
    weather["optionalEven"] = 3
    #expect(weather.optionalEven == nil, "a value the failable init refuses is nil in an optional")
    weather["optionalEven"] = 6
    #expect(weather.optionalEven?.value == 6 && weather["optionalEven"] as? Int == 6)
    let (reef, _) = try openReef()
    try reef.write { reef.add(weather) }
    try reef.write { weather["even"] = 8 }
    #expect(weather.even.value == 8 && weather.value(forKey: "even") as? Int == 8)
  }

  @Test func anOptionalReadsAStoredValueTheFailableInitRefusesAsNil() throws {
    let (reef, _) = try openReef()
    try reef.write { reef.create(Weather.self, value: ["id": 1, "site": "https://a.example"]) }
    try reef.store.write { transaction in
      try transaction.collection("Weather").updateOne(["id": 1], ["$set": ["site": "ftp://old.example"]])
    }
    reef.refresh()
    let weather = try #require(reef.object(ofType: Weather.self, forPrimaryKey: 1))
    #expect(weather.site == nil)
  }

  @Test func aValueTheFailableInitRefusesStopsInANonOptionalProperty() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      Weather()["even"] = 3
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("Could not convert value '3' to type 'EvenNumber'."), "\(message)")
  }
}
