import Foundation
import ReefSwift
import Testing

/// RealmSwift's Decimal128 initializers: `init(number:)`, `init(value:)`, `init(string:)`, and a
/// Decimal128 property with a literal default.
@Suite struct Decimal128ConversionTests {
  @Test func numbersConvertWithoutLoss() {
    let literal: Decimal128 = 3.14159
    #expect(Decimal128(number: 3.14159) == literal)
    #expect(Decimal128(number: 3.14159).description == "3.14159")
    #expect(Decimal128(number: 123).description == "123")
    #expect(Decimal128(number: NSNumber(value: UInt64.max)).description == "18446744073709551615")
    #expect(Decimal128(number: NSNumber(value: Int64.min)).description == "-9223372036854775808")
    #expect(Decimal128(number: NSNumber(value: Float(1.23))).description == "1.23")
    #expect(Decimal128(number: true).description == "1")
  }

  @Test func valuesOfEachSupportedTypeConvert() {
    #expect(Decimal128(value: 5).description == "5")
    #expect(Decimal128(value: Int8(-7)).description == "-7")
    #expect(Decimal128(value: UInt64.max).description == "18446744073709551615")
    #expect(Decimal128(value: 0.1).description == "0.1")
    #expect(Decimal128(value: Float(1.23)).description == "1.23", "a Float is read as a Float, not widened")
    #expect(Decimal128(value: "9.876543").description == "9.876543")
    #expect(Decimal128(value: Decimal(string: "1.50")!).description == "1.5")
    #expect(Decimal128(value: NSNumber(value: 2.5)).description == "2.5")
    let decimal: Decimal128 = "1.000"
    #expect(Decimal128(value: decimal).description == "1.000")
    #expect(Decimal128(value: NSNull()).isNaN)
    #expect(Decimal128(value: Optional<Int>.none as Any).isNaN)
  }

  @Test func aFoundationDecimalWithMoreThan34DigitsRoundsHalfToEven() {
    let decimal = Decimal(string: "1234567890123456789012345678901234.5")!
    #expect(Decimal128(value: decimal).description == "1234567890123456789012345678901234")
    let up = Decimal(string: "1234567890123456789012345678901235.5")!
    #expect(Decimal128(value: up).description == "1234567890123456789012345678901236")
  }

  @Test func aStringThatIsNotADecimal128Throws() throws {
    #expect(try Decimal128(string: "-12.50").description == "-12.50")
    for text in ["", "1.2.3", "abc", "12345678901234567890123456789012345", "1E+6145"] {
      let error = #expect(throws: ReefError.self, "\(text)") { try Decimal128(string: text) }
      #expect(error?.kind == .invalidValue, "\(text)")
      #expect(error?.message.hasPrefix("Invalid Decimal128 string") == true, "\(text)")
    }
  }

  @Test func aValueOfAnotherTypeStopsNamingIt() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = Decimal128(value: [1, 2])
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(stderr.contains("Cannot convert a Array<Int> to Decimal128"), "\(stderr)")
  }

  @Test func aStringValueThatDoesNotParseStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = Decimal128(value: "twelve")
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(stderr.contains("Invalid Decimal128 string \"twelve\""), "\(stderr)")
  }

  @Test func aPropertyWithALiteralDefaultStoresAndQueriesItsValue() throws {
    let (reef, _) = try openReef()
    try reef.write {
      let cheap = PricedItem()
      cheap.name = "pen"
      let dear = PricedItem()
      dear.name = "lamp"
      dear.price = 24.5
      reef.add([cheap, dear])
    }
    let items = reef.objects(PricedItem.self)
    #expect(items.filter("name == 'pen'").first?.price == 9.99)
    #expect(items.filter("price > %@", Decimal128(10)).map(\.name) == ["lamp"])
    #expect(items.reduce(Decimal128()) { $0 + $1.price } == Decimal128("34.49"))
  }
}

final class PricedItem: Object {
  @Persisted var name = ""
  @Persisted var price: Decimal128 = 9.99
}
