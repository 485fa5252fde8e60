@_spi(ReefInternal) import ReefBSON

// RealmSwift's Decimal128 initializers that take Foundation's types (ReefBSON does not use
// Foundation) or throw, where Realm's throw, a ReefError.

extension Decimal128 {
  /// The exact value of a number: Realm's `init(number:)`, which cannot fail and is never lossy.
  /// An integer keeps its digits; a floating-point number becomes its shortest decimal form that
  /// reads back as it (`3.14159` is `"3.14159"`); a `Bool` is 1 or 0.
  public init(number: NSNumber) {
    switch String(cString: number.objCType) {
    case "f": self.init(float: number.floatValue)
    case "d": self.init(double: number.doubleValue)
    case "Q": self.init(exactly: number.uint64Value)!  // Safe: 20 digits at most.
    default: self.init(number.int64Value)
    }
  }

  /// Converts a value: Realm's `init(value:)`. Takes a `Decimal128`, an integer of any width (of
  /// at most 34 digits, trailing zeros aside), a
  /// `Float` or `Double` (their shortest decimal form), a `String` (parsed), an `NSNumber`, a
  /// Foundation `Decimal` (rounded half to even to 34 digits when it has more), and `nil` or
  /// `NSNull`, which are NaN (Realm's null Decimal128).
  ///
  /// Another type, or a string that is not a Decimal128, stops the program naming it, as Realm's
  /// does; ``init(string:)`` throws for a string instead.
  public init(value: Any) {
    // By the value's own type: Foundation bridges numbers both ways (`5 as Any` casts to
    // NSNumber, an NSNumber to Double), which would read a Float as a Double and so on.
    func exactly<T>(_ type: T.Type) -> T? { Swift.type(of: value) == type ? value as? T : nil }
    if let value = exactly(Decimal128.self) {
      self = value
    } else if let value = exactly(String.self) {
      do {
        self = try Decimal128(string: value)
      } catch {
        reefStop(error.description)
      }
    } else if let value = exactly(Double.self) {
      self.init(double: value)
    } else if let value = exactly(Float.self) {
      self.init(float: value)
    } else if let integer = value as? any BinaryInteger, !(Swift.type(of: value) is NSNumber.Type) {
      guard let exact = Decimal128(exactly: integer) else {
        reefStop("\(integer) has more than 34 digits: a Decimal128 cannot hold it exactly")
      }
      self = exact
    } else if let value = exactly(Decimal.self) {
      self.init(foundationDecimal: value)
    } else if Swift.type(of: value) is NSNumber.Type, let value = value as? NSNumber {
      self.init(number: value)
    } else if value is NSNull {
      self = .nan
    } else if case Optional<Any>.none = value {
      self = .nan
    } else {
      reefStop("Cannot convert a \(Swift.type(of: value)) to Decimal128 (\(value))")
    }
  }

  /// Parses a string: Realm's `init(string:)`.
  ///
  /// Accepted as ``init(_:)-(String)`` accepts them: an optional sign, digits with an optional
  /// decimal point and exponent, `Infinity`, `Inf` or `NaN`.
  /// - Throws: ``ReefError/Kind/invalidValue`` for a string that is not a Decimal128, or whose
  ///   value cannot be stored exactly (more than 34 digits to round, an exponent out of range).
  /// - Complexity: O(*n*) in the length of the string.
  public init(string: String) throws(ReefError) {
    do {
      self = try Decimal128.parse(string)
    } catch {
      throw ReefError(.invalidValue, "Invalid Decimal128 string \(String(reflecting: string)): \(error.message)")
    }
  }

  /// A Foundation `Decimal`, rounded half to even to 34 digits when it has more.
  init(foundationDecimal value: Decimal) {
    if value.isNaN {
      self = .nan
      return
    }
    // Its description is plain: an optional "-", digits, an optional "." and digits.
    let text = value.description
    let negative = text.hasPrefix("-")
    let unsigned = negative ? text.dropFirst() : Substring(text)
    let parts = unsigned.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
    var digits = Substring(parts.joined())
    var exponent = parts.count == 2 ? -parts[1].count : 0
    while digits.count > 1, digits.last == "0" {
      digits = digits.dropLast()
      exponent += 1
    }
    // At most 39 digits: a Decimal's mantissa has 128 bits.
    guard let coefficient = UInt128(digits) else { reefStop("Cannot convert the Decimal \(text) to Decimal128") }
    self = ExactDecimal(negative: negative, coefficient: coefficient, exponent: exponent).rounded().decimal128
  }
}
