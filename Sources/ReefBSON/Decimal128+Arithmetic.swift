// Decimal128 as a number, as RealmSwift's Decimal128 is one: literals, numeric comparison and
// equality, and exact arithmetic (ExactDecimal+Arithmetic.swift does the work).

extension Decimal128: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral {
  /// Zero (`"0"`), as Realm's `Decimal128()`.
  public init() { self = .zero }

  /// The exact value of an integer literal (`let d: Decimal128 = 123`).
  public init(integerLiteral value: Int64) { self.init(value) }

  /// The decimal a floating-point literal (or any `Double`) is written as: its shortest decimal
  /// form that reads back as the same `Double` (`3.14159` is `"3.14159"`, `0.1` is `"0.1"`,
  /// `2.0` is `"2.0"`), exactly. Infinities and NaN convert to themselves.
  public init(floatLiteral value: Double) { self.init(double: value) }

  /// Parses a string literal (`let d: Decimal128 = "9.876543"`).
  ///
  /// A literal that is not a Decimal128, or cannot be stored exactly, stops the program with the
  /// reason, as Realm's does (``parse(_:)`` throws it instead).
  public init(stringLiteral value: String) {
    do {
      self = try Decimal128.parse(value)
    } catch {
      fatalError("Invalid Decimal128 string literal \(String(reflecting: value)): \(error)")
    }
  }

  /// The shortest decimal form of `value` that reads back as it, exactly.
  public init(double value: Double) {
    // Swift prints a Double's shortest round-trip form ("3.14159", "1e-07", "inf", "nan"): at
    // most 17 digits and an exponent within ±324, which a Decimal128 holds exactly.
    guard let parsed = Decimal128(value.description) else {
      fatalError("Decimal128: \(value.description) did not parse")  // Not reached: see above.
    }
    self = parsed
  }

  /// The shortest decimal form of `value` that reads back as it, exactly.
  public init(float value: Float) {
    guard let parsed = Decimal128(value.description) else {
      fatalError("Decimal128: \(value.description) did not parse")  // Not reached: as a Double's.
    }
    self = parsed
  }

  /// The exact value of an integer, or nil when it needs more than 34 digits. Trailing zeros
  /// beyond 34 digits go into the exponent, as few as make it fit (`10^40` is
  /// `1.000000000000000000000000000000000E+40`).
  ///
  /// - Complexity: O(*d*) in the number of trailing zeros removed.
  public init?<T: BinaryInteger>(exactly source: T) {
    var magnitude = source.magnitude
    var exponent = 0
    while true {
      if let coefficient = UInt128(exactly: magnitude), coefficient <= ExactDecimal.maxCoefficient {
        self.init(negative: source < 0, coefficient: coefficient, exponent: exponent)
        return
      }
      let (quotient, remainder) = magnitude.quotientAndRemainder(dividingBy: 10)
      guard remainder == 0 else { return nil }
      magnitude = quotient
      exponent += 1
    }
  }

  /// The largest finite value, `9.999999999999999999999999999999999E+6144`.
  public static var max: Decimal128 {
    Decimal128(negative: false, coefficient: ExactDecimal.maxCoefficient, exponent: ExactDecimal.maxExponent)
  }

  /// The lowest finite value, `-9.999999999999999999999999999999999E+6144`.
  public static var min: Decimal128 {
    Decimal128(negative: true, coefficient: ExactDecimal.maxCoefficient, exponent: ExactDecimal.maxExponent)
  }

  /// Whether the value is a NaN: as Realm's, which names it so; Reef's arithmetic does not tell
  /// signaling NaNs from quiet ones (every NaN gives NaN).
  public var isSignaling: Bool { isNaN }

  /// Whether the value is a NaN (see ``isSignaling``).
  public var isSignalingNaN: Bool { isNaN }
}

extension Decimal128: Comparable {
  /// Whether the two are the same number, as Realm's `==`: `1.0 == 1`, `0 == -0E+3`. A NaN
  /// equals a NaN (so that equality stays reflexive, as MongoDB's order has it). BSON values
  /// (``BSON``) still compare Decimal128 values by their bits.
  public static func == (lhs: Decimal128, rhs: Decimal128) -> Bool {
    ExactDecimal(lhs).compare(ExactDecimal(rhs)) == 0
  }

  /// Whether `lhs` is the smaller number; a NaN is below every other value (MongoDB's order).
  public static func < (lhs: Decimal128, rhs: Decimal128) -> Bool {
    ExactDecimal(lhs).compare(ExactDecimal(rhs)) < 0
  }

  /// Hashes the number, so that equal numbers (`1.0` and `1`) hash alike.
  ///
  /// - Complexity: O(*d*) in the number of trailing zeros of the coefficient.
  public func hash(into hasher: inout Hasher) {
    var value = ExactDecimal(self)
    switch value.kind {
    case .nan:
      hasher.combine(0 as UInt8)
    case .infinity:
      hasher.combine(value.negative ? 1 as UInt8 : 2)
    case .finite:
      guard value.coefficient != 0 else {
        hasher.combine(3 as UInt8)
        return
      }
      while value.coefficient % 10 == 0 {
        value.coefficient /= 10
        value.exponent += 1
      }
      hasher.combine(4 as UInt8)
      hasher.combine(value.negative)
      hasher.combine(value.coefficient)
      hasher.combine(value.exponent)
    }
  }
}

extension Decimal128: SignedNumeric, Strideable {
  /// The absolute value (the sign bit cleared).
  public var magnitude: Decimal128 { Decimal128(high: high & ~(1 << 63), low: low) }

  /// The value with the other sign (the sign bit flipped: `-0` for `0`, a NaN stays a NaN).
  public static prefix func - (operand: Decimal128) -> Decimal128 {
    Decimal128(high: operand.high ^ (1 << 63), low: operand.low)
  }

  /// Flips the sign.
  public mutating func negate() { self = -self }

  /// The exact sum, rounded half to even to 34 digits.
  public static func + (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
    ExactDecimal(lhs).adding(ExactDecimal(rhs)).decimal128
  }

  /// The exact difference, rounded half to even to 34 digits.
  public static func - (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
    ExactDecimal(lhs).adding(ExactDecimal(-rhs)).decimal128
  }

  /// The exact product, rounded half to even to 34 digits.
  public static func * (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
    ExactDecimal(lhs).multiplied(by: ExactDecimal(rhs)).decimal128
  }

  /// The quotient, rounded half to even to 34 digits (`7 / 3.5` is `2`; `1 / 3` is
  /// `0.3333333333333333333333333333333333`); a non-zero value divided by zero is an infinity,
  /// `0 / 0` is NaN.
  public static func / (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
    ExactDecimal(lhs).dividing(by: ExactDecimal(rhs)).decimal128
  }

  /// Adds `rhs` to `lhs`.
  public static func += (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs + rhs }
  /// Subtracts `rhs` from `lhs`.
  public static func -= (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs - rhs }
  /// Multiplies `lhs` by `rhs`.
  public static func *= (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs * rhs }
  /// Divides `lhs` by `rhs`.
  public static func /= (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs / rhs }

  /// `other - self`.
  public func distance(to other: Decimal128) -> Decimal128 { other - self }

  /// `self + n`.
  public func advanced(by n: Decimal128) -> Decimal128 { self + n }
}
