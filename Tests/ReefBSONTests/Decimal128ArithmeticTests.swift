import ReefBSON
import Testing

/// A Decimal128 parsed from a string the parser accepts.
private func d(_ text: String) -> Decimal128 { Decimal128(text)! }

/// Decimal128 as a number: literals, numeric equality and order, exact arithmetic.
@Suite("Decimal128 arithmetic")
struct Decimal128ArithmeticTests {
  // MARK: - Literals and initializers

  @Test func literalsKeepTheDigitsAsWritten() {
    let integer: Decimal128 = 123
    let float: Decimal128 = 3.14159
    let string: Decimal128 = "9.876500"
    #expect(integer.description == "123")
    #expect(float.description == "3.14159", "a float literal is its shortest decimal form, not its binary value")
    #expect(string.description == "9.876500", "a string literal keeps its exponent")
    let tenth: Decimal128 = 0.1
    #expect(tenth.description == "0.1")
    let two: Decimal128 = 2.0
    #expect(two.description == "2.0")
    let tiny: Decimal128 = 1e-7
    #expect(tiny.description == "1E-7")
    #expect(Decimal128(double: .infinity).isInfinite && Decimal128(double: .nan).isNaN)
    #expect(Decimal128(double: -0.0).description == "-0.0")
    #expect(Decimal128(float: 1.23).description == "1.23", "a Float's own shortest form")
    #expect(Decimal128().description == "0")
  }

  @Test func anIntegerConvertsExactlyWhenItFits() {
    #expect(Decimal128(exactly: Int8(5))?.description == "5")
    #expect(Decimal128(exactly: -12 as Int)?.description == "-12")
    #expect(Decimal128(exactly: UInt64.max)?.description == "18446744073709551615")
    let big = UInt128(10_000_000_000_000_000_000) * 10_000_000_000_000_000_000
    #expect(
      Decimal128(exactly: big)?.description == "1.000000000000000000000000000000000E+38",
      "as few trailing zeros go into the exponent as make it fit")
    #expect(Decimal128(exactly: big) == Decimal128("1E+38"))
    #expect(Decimal128(exactly: big + 1) == nil, "39 digits do not fit in 34")
    #expect(
      Decimal128(exactly: UInt128(9_999_999_999_999_999_999_999_999_999_999_999))?.description
        == "9999999999999999999999999999999999")
  }

  @Test func anInvalidStringLiteralStops() async {
    await #expect(processExitsWith: .failure) {
      let value: Decimal128 = "1.2.3"
      print(value)
    }
  }

  // MARK: - Equality and order

  @Test func equalityComparesNumbers() {
    #expect(d("1.0") == d("1"))
    #expect(d("1.00") == 1)
    #expect(d("100") == d("1E+2"))
    #expect(d("-0") == d("0E+3"))
    #expect(d("NaN") == d("-NaN"), "a NaN equals a NaN")
    #expect(d("1.01") != d("1"))
    #expect(d("Infinity") != d("-Infinity"))
    let three: Decimal128 = 3.0
    #expect(d("2") + d("1") == three)
  }

  @Test func equalNumbersHashAlike() {
    let set: Set<Decimal128> = [d("1"), d("1.0"), d("1.000"), d("10E-1"), d("0"), d("-0.00"), d("2")]
    #expect(set.count == 3)
    #expect(set.contains(d("100E-2")))
    #expect(Set([d("NaN"), d("-NaN")]).count == 1)
  }

  @Test func bsonValuesStillCompareTheBits() {
    #expect(BSON.decimal128(d("1.0")) != .decimal128(d("1.00")))
    #expect(BSON.decimal128(d("1.0")) == .decimal128(d("1.0")))
    #expect(Set<BSON>([.decimal128(d("1.0")), .decimal128(d("1.00")), .decimal128(d("1.0"))]).count == 2)
  }

  @Test func orderIsNumericWithNaNFirst() {
    let ordered = [
      d("NaN"), d("-Infinity"), d("-1E+10"), d("-1"), d("-0.5"), d("0"), d("0.001"), d("1"), d("1.5"),
      .max, d("Infinity"),
    ]
    for (i, a) in ordered.enumerated() {
      for (j, b) in ordered.enumerated() {
        #expect((a < b) == (i < j), "\(a) < \(b)")
      }
    }
    #expect(Decimal128.min < Decimal128.max)
    #expect(Decimal128.max.description == "9.999999999999999999999999999999999E+6144")
    #expect(Decimal128.min.description == "-9.999999999999999999999999999999999E+6144")
    #expect(d("0.5") <= d("0.50") && d("0.50") >= d("0.5"))
  }

  // MARK: - Arithmetic

  @Test func sumsAndDifferencesAreExact() {
    #expect((d("1.234567") + d("9.876543")).description == "11.111110")
    #expect((d("2.5") - d("3.5")).description == "-1.0")
    #expect((d("0.1") + d("0.2")).description == "0.3")
    let a: Decimal128 = 0.1
    let b: Decimal128 = 0.2
    #expect(a + b == 0.3, "float literals add as decimals")
    #expect((d("1.5") - d("1.5")).description == "0.0", "x - x is a positive zero")
    var total: Decimal128 = 0
    for _ in 0..<10 { total += 0.1 }
    #expect(total.description == "1.0")
    total -= 1
    #expect(total == 0)
  }

  @Test func productsAreExact() {
    #expect((d("0.21") * d("0.7")).description == "0.147")
    #expect((d("7") * d("3.5")).description == "24.5")
    var value: Decimal128 = 2
    value *= 2
    #expect(value == 4)
    #expect((Decimal128.max * 10).isInfinite, "an overflow is an infinity")
  }

  @Test func exactQuotientsTakeThePreferredExponent() {
    #expect((d("7") / d("3.5")).description == "2")
    #expect((d("0.21") / d("0.7")).description == "0.3")
    #expect((d("1.00") / d("4")).description == "0.25")
    #expect((d("10") / d("4")).description == "2.5")
    #expect((d("100") / d("10")).description == "10")
    #expect((d("1E+2") / d("1")).description == "1E+2")
    #expect((d("1") / d("8")).description == "0.125")
    #expect((d("-6") / d("2")).description == "-3")
    var value: Decimal128 = 9
    value /= 3
    #expect(value.description == "3")
  }

  @Test func inexactQuotientsRoundHalfToEvenTo34Digits() {
    #expect((d("1") / d("3")).description == "0.3333333333333333333333333333333333")
    #expect((d("2") / d("3")).description == "0.6666666666666666666666666666666667")
    #expect((d("-2") / d("3")).description == "-0.6666666666666666666666666666666667")
    // 34 nines / 0.2 is 4 followed by 33 nines and a 5: a tie, rounded to the even digit (up).
    #expect(
      (d("9999999999999999999999999999999999") / d("0.2")).description == "5.000000000000000000000000000000000E+34")
    // 34 digits ending in 1, halved: exact in 34 digits, so nothing is rounded.
    #expect(
      (d("1000000000000000000000000000000001") / d("2")).description == "500000000000000000000000000000000.5",
      "35 digits are not needed: 34 hold it exactly")
    #expect((d("1E-6176") / d("10")).description == "0E-6176", "an underflow rounds to zero")
  }

  @Test func specialQuotients() {
    #expect((d("1") / d("0")) == .infinity)
    #expect((d("-1") / d("0")) == .negativeInfinity)
    #expect((d("1") / d("-0")) == .negativeInfinity)
    #expect((d("0") / d("0")).isNaN)
    #expect((d("Infinity") / d("Infinity")).isNaN)
    #expect((d("Infinity") / d("-2")) == .negativeInfinity)
    #expect((d("5") / d("Infinity")).description == "0")
    #expect((d("NaN") / d("1")).isNaN)
    #expect((d("0") / d("5")).description == "0")
    #expect((d("0.00") / d("1E-3")).description == "0E+1", "a zero quotient keeps the preferred exponent")
  }

  @Test func magnitudeNegationAndStrides() {
    let value: Decimal128 = -123.321
    #expect(value.magnitude.description == "123.321")
    #expect((-value).description == "123.321")
    #expect((-Decimal128(0)).description == "-0")
    var flipped: Decimal128 = 456.321
    flipped.negate()
    #expect(flipped.description == "-456.321")
    #expect(value.advanced(by: -123.321).description == "-246.642")
    let ten: Decimal128 = 10.0
    #expect(ten.distance(to: 5.0).description == "-5.0")
    #expect(ten.distance(to: 15.0) == 5)
    #expect(d("NaN").isSignaling && d("NaN").isSignalingNaN && !d("1").isSignaling)
  }
}
