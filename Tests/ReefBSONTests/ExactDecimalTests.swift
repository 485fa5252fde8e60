@_spi(ReefInternal) import ReefBSON
import Testing

/// The two halves of a Decimal128 in the normal form, built by hand (BID, exponent bias 6176).
private func bits(negative: Bool = false, _ coefficient: UInt128, biasedExponent: UInt64) -> Decimal128 {
  let high = (negative ? UInt64(1) << 63 : 0) | biasedExponent << 49 | UInt64(coefficient >> 64)
  return Decimal128(high: high, low: UInt64(truncatingIfNeeded: coefficient))
}

/// A value in the large-coefficient form (bits 126-125 set), exponent in bits 124-111.
private func largeForm(negative: Bool = false, biasedExponent: UInt64, low: UInt64) -> Decimal128 {
  let high = (negative ? UInt64(1) << 63 : 0) | 0x6000_0000_0000_0000 | biasedExponent << 47 | 0x7FFF
  return Decimal128(high: high, low: low)
}

/// A finite exact decimal.
private func exact(negative: Bool = false, _ coefficient: UInt128, _ exponent: Int) -> ExactDecimal {
  ExactDecimal(negative: negative, coefficient: coefficient, exponent: exponent)
}

/// The exact decimal of a string the Decimal128 parser accepts.
private func exact(_ text: String) -> ExactDecimal {
  ExactDecimal(Decimal128(text)!)
}

/// 10^34 - 1.
private let largestCoefficient: UInt128 = 9_999_999_999_999_999_999_999_999_999_999_999

@Suite("ExactDecimal")
struct ExactDecimalTests {
  // MARK: - Unpacking

  @Test func unpacksZerosKeepingSignAndExponent() {
    #expect(ExactDecimal(bits(0, biasedExponent: 6176)) == exact(0, 0))
    #expect(ExactDecimal(bits(0, biasedExponent: 6179)) == exact(0, 3))
    #expect(ExactDecimal(bits(negative: true, 0, biasedExponent: 6176)) == exact(negative: true, 0, 0))
    #expect(ExactDecimal(bits(negative: true, 0, biasedExponent: 6170)) == exact(negative: true, 0, -6))
  }

  @Test func unpacksTheSmallestAndLargestExponents() {
    #expect(ExactDecimal(bits(1, biasedExponent: 0)) == exact(1, -6176))
    #expect(ExactDecimal(bits(1, biasedExponent: 12287)) == exact(1, 6111))
    #expect(ExactDecimal(bits(largestCoefficient, biasedExponent: 12287)) == exact(largestCoefficient, 6111))
    #expect(ExactDecimal(bits(negative: true, largestCoefficient, biasedExponent: 0)).exponent == -6176)
  }

  @Test func unpacksTheLargestCanonicalCoefficientExactly() {
    let value = ExactDecimal(bits(largestCoefficient, biasedExponent: 6176))
    #expect(value == exact(largestCoefficient, 0))
    #expect(value.decimal128.description == "9999999999999999999999999999999999")
  }

  @Test func readsNonCanonicalCoefficientsAsZero() {
    // 10^34 and 2^113 - 1 fit the 113 coefficient bits but exceed 34 digits.
    let tenTo34 = largestCoefficient + 1
    #expect(ExactDecimal(bits(tenTo34, biasedExponent: 6176)) == exact(0, 0))
    #expect(ExactDecimal(bits(negative: true, (1 << 113) - 1, biasedExponent: 6180)) == exact(negative: true, 0, 4))
    // The large-coefficient form is always above 10^34 - 1; its exponent sits two bits lower.
    #expect(ExactDecimal(largeForm(biasedExponent: 6176, low: 42)) == exact(0, 0))
    #expect(ExactDecimal(largeForm(negative: true, biasedExponent: 6186, low: .max)) == exact(negative: true, 0, 10))
  }

  @Test func unpacksInfinitiesAndNaNs() {
    #expect(ExactDecimal(.infinity) == ExactDecimal(kind: .infinity))
    #expect(ExactDecimal(.negativeInfinity) == ExactDecimal(kind: .infinity, negative: true))
    #expect(ExactDecimal(.nan) == ExactDecimal(kind: .nan))
    // Negative NaN, signaling NaN (bit 121) and a payload are all NaNs; the sign is kept.
    #expect(ExactDecimal(Decimal128(high: 0xFC00_0000_0000_0000, low: 0)) == ExactDecimal(kind: .nan, negative: true))
    #expect(ExactDecimal(Decimal128(high: 0x7E00_0000_0000_0000, low: 0)).kind == .nan)
    #expect(ExactDecimal(Decimal128(high: 0x7C00_0000_0000_0000, low: 12)).kind == .nan)
    // Infinity ignores the bits below the combination field.
    #expect(ExactDecimal(Decimal128(high: 0x7800_0000_0000_0001, low: 5)) == ExactDecimal(kind: .infinity))
  }

  @Test func encodesBackToTheSameBits() {
    let values = [
      bits(0, biasedExponent: 6179), bits(negative: true, 0, biasedExponent: 6176), bits(1, biasedExponent: 0),
      bits(largestCoefficient, biasedExponent: 12287), bits(negative: true, 1270, biasedExponent: 6174),
      Decimal128.infinity, Decimal128.negativeInfinity, Decimal128.nan,
    ]
    for value in values {
      #expect(ExactDecimal(value).decimal128.bytes == value.bytes, "\(value)")
    }
    // Every NaN encodes as the positive quiet NaN.
    #expect(ExactDecimal(Decimal128(high: 0xFE00_0000_0000_0000, low: 7)).decimal128.bytes == Decimal128.nan.bytes)
  }

  @Test func integersHaveExponentZero() {
    #expect(ExactDecimal(Int64.min) == exact(negative: true, 9_223_372_036_854_775_808, 0))
    #expect(ExactDecimal(Int64(-12)).decimal128.description == "-12")
  }

  // MARK: - Order

  @Test func comparesAcrossExponentsAndSigns() {
    let ascending: [ExactDecimal] = [
      ExactDecimal(kind: .nan, negative: true),
      ExactDecimal(kind: .infinity, negative: true),
      exact(negative: true, largestCoefficient, 6111),
      exact("-1.5"),
      exact("-1E-6176"),
      exact("0"),
      exact("1E-6176"),
      exact("0.999999999999999999999999999999999"),
      exact("1"),
      ExactDecimal(Int64.max),
      exact(largestCoefficient, 0),
      exact(largestCoefficient, 6111),
      ExactDecimal(kind: .infinity),
    ]
    for (i, a) in ascending.enumerated() {
      for (j, b) in ascending.enumerated() {
        let expected = i == j ? 0 : (i < j ? -1 : 1)
        #expect(a.compare(b) == expected, "\(a) vs \(b)")
      }
    }
  }

  @Test func equalValuesWithDifferentRepresentationsCompareEqual() {
    #expect(exact("1.0").compare(exact("1")) == 0)
    #expect(exact("100").compare(exact("1E+2")) == 0)
    #expect(exact(largestCoefficient, -33).compare(exact("9.999999999999999999999999999999999")) == 0)
    #expect(exact("0E+3").compare(exact("-0")) == 0)
    #expect(exact("-0E-6176").compare(exact("0E+6111")) == 0)
    // A non-canonical value is a zero.
    #expect(ExactDecimal(largeForm(negative: true, biasedExponent: 0, low: 1)).compare(exact("0")) == 0)
    #expect(ExactDecimal(kind: .nan).compare(ExactDecimal(kind: .nan, negative: true)) == 0)
    #expect(ExactDecimal(Int64(-7)).compare(exact("-7.000")) == 0)
    #expect(ExactDecimal(Int64(-7)).compare(exact("-7.001")) == 1)
  }

  // MARK: - Arithmetic

  @Test func addsExactlyAndRoundsHalfToEven() {
    #expect(exact("1.1").adding(exact("2.25")).decimal128.description == "3.35")
    let carried = exact(largestCoefficient, 0).adding(exact("1")).decimal128.description
    #expect(carried == "1.000000000000000000000000000000000E+34")
    // Ties go to the even coefficient: …98.5 stays at …98, …99.5 goes up to 10^34; …99.4 goes down.
    #expect(exact(largestCoefficient - 1, 0).adding(exact("0.5")) == exact(largestCoefficient - 1, 0))
    let tenTo33: UInt128 = 1_000_000_000_000_000_000_000_000_000_000_000
    #expect(exact(largestCoefficient, 0).adding(exact("0.5")) == exact(tenTo33, 1))
    #expect(exact(largestCoefficient, 0).adding(exact("0.4")) == exact(largestCoefficient, 0))
    // A far smaller operand only rounds: 1E+40 + 1 keeps 34 digits of the larger one.
    #expect(exact("1E+40").adding(exact("1")).decimal128.description == "1.000000000000000000000000000000000E+40")
  }

  @Test func addsSignsAndSpecialValuesAsIEEE() {
    #expect(exact("1").adding(exact("-1")).decimal128.description == "0")
    #expect(exact("-0").adding(exact("-0")).decimal128.description == "-0")
    #expect(exact("-2").adding(exact("0.5")).decimal128.description == "-1.5")
    let infinity = ExactDecimal(kind: .infinity)
    let negativeInfinity = ExactDecimal(kind: .infinity, negative: true)
    #expect(infinity.adding(negativeInfinity).kind == .nan)
    #expect(infinity.adding(exact("-1E+6144")) == infinity)
    #expect(exact("3").adding(negativeInfinity) == negativeInfinity)
    #expect(ExactDecimal.nan.adding(exact("1")).kind == .nan)
  }

  @Test func multipliesWithRoundingOverflowAndUnderflow() {
    #expect(exact("1.5").multiplied(by: exact("-0.2")).decimal128.description == "-0.30")
    // Ties at the smallest exponent go to even: 0.5, 1.5, 2.5 units of 1E-6176.
    #expect(exact("5E-6176").multiplied(by: exact("0.1")).decimal128.description == "0E-6176")
    #expect(exact("15E-6176").multiplied(by: exact("0.1")).decimal128.description == "2E-6176")
    #expect(exact("25E-6176").multiplied(by: exact("0.1")).decimal128.description == "2E-6176")
    // Above the largest finite value: infinity with the product's sign.
    let largest = exact(largestCoefficient, 6111)
    #expect(largest.multiplied(by: exact("-10")) == ExactDecimal(kind: .infinity, negative: true))
    // 34 digits times 34 digits: the 256-bit product rounds to 34 digits.
    #expect(
      exact(largestCoefficient, 0).multiplied(by: exact(largestCoefficient, 0)).decimal128.description
        == "9.999999999999999999999999999999998E+67")
    #expect(ExactDecimal(kind: .infinity).multiplied(by: exact("0E+5")).kind == .nan)
    #expect(ExactDecimal(kind: .infinity).multiplied(by: exact("-2")) == ExactDecimal(kind: .infinity, negative: true))
  }

  @Test func roundingClampsLargeExponentsByAddingZeros() {
    #expect(exact(1, 6120).rounded().decimal128.description == "1.000000000E+6120")
    #expect(exact(1, 6120).rounded() == exact(1_000_000_000, 6111))
    #expect(exact(0, 7000).rounded() == exact(0, 6111))
    #expect(exact(0, -7000).rounded() == exact(0, -6176))
    #expect(exact(10, 6145).rounded() == ExactDecimal(kind: .infinity))
  }
}
