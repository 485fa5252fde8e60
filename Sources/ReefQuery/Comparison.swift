@_spi(ReefInternal) import ReefBSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// MongoDB's canonical order of BSON types: values of different canonical types compare by it,
/// and only values of the same canonical type compare by value.
@inlinable func canonicalRank(_ type: UInt8) -> Int {
  switch type {
  case 0xFF: return 0  // MinKey
  case 0x06: return 1  // undefined
  case 0x0A: return 2  // null
  case 0x01, 0x10, 0x12, 0x13: return 3  // numbers
  case 0x02, 0x0E: return 4  // string, symbol
  case 0x03: return 5
  case 0x04: return 6
  case 0x05: return 7
  case 0x07: return 8
  case 0x08: return 9
  case 0x09: return 10
  case 0x11: return 11
  case 0x0B: return 12
  case 0x0C: return 13
  case 0x0D: return 14
  case 0x0F: return 15
  default: return 16  // MaxKey
  }
}

/// The rank of numbers in `canonicalRank`.
@usableFromInline let numberRank = 3

@inlinable func isNumber(_ type: UInt8) -> Bool {
  type == 0x01 || type == 0x10 || type == 0x12 || type == 0x13
}

/// Compares two byte strings as unsigned bytes, the shorter first when one is a prefix.
@inlinable func compareBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
  let count = min(a.count, b.count)
  if count > 0 {
    let order = memcmp(a.baseAddress!, b.baseAddress!, count)
    if order != 0 { return order < 0 ? -1 : 1 }
  }
  return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
}

/// Compares two values in MongoDB's total order (the order of sorts and of `$lt` within a type).
/// Numbers compare exactly across types; NaN equals NaN and is below every other number.
@usableFromInline func compareValues(_ a: RawValue, _ b: RawValue) -> Int {
  let rankA = canonicalRank(a.type)
  let rankB = canonicalRank(b.type)
  if rankA != rankB { return rankA < rankB ? -1 : 1 }
  return compareValues(a, b, rank: rankA)
}

/// `compareValues` of two values whose canonical rank the caller has already found equal to
/// `rank`, so that it is not looked up again.
@usableFromInline func compareValues(_ a: RawValue, _ b: RawValue, rank: Int) -> Int {
  switch rank {
  case 3: return compareNumbers(a, b)
  case 4, 14: return compareBytes(a.stringBytes, b.stringBytes)
  case 5, 6: return compareDocuments(a, b)
  case 7:
    let lengthA = a.int32()
    let lengthB = b.int32()
    if lengthA != lengthB { return lengthA < lengthB ? -1 : 1 }
    let subtypeA = a.pointer.load(fromByteOffset: 4, as: UInt8.self)
    let subtypeB = b.pointer.load(fromByteOffset: 4, as: UInt8.self)
    if subtypeA != subtypeB { return subtypeA < subtypeB ? -1 : 1 }
    return compareBytes(
      UnsafeRawBufferPointer(start: a.pointer + 5, count: Int(lengthA)),
      UnsafeRawBufferPointer(start: b.pointer + 5, count: Int(lengthB)))
  case 8:
    return compareBytes(
      UnsafeRawBufferPointer(start: a.pointer, count: 12), UnsafeRawBufferPointer(start: b.pointer, count: 12))
  case 9:
    let boolA = a.pointer.load(as: UInt8.self)
    let boolB = b.pointer.load(as: UInt8.self)
    return boolA == boolB ? 0 : (boolA < boolB ? -1 : 1)
  case 10:
    let dateA = a.int64()
    let dateB = b.int64()
    return dateA == dateB ? 0 : (dateA < dateB ? -1 : 1)
  case 11:
    let stampA = UInt64(bitPattern: a.int64())
    let stampB = UInt64(bitPattern: b.int64())
    return stampA == stampB ? 0 : (stampA < stampB ? -1 : 1)
  case 12:
    let (patternA, optionsA) = regexParts(a)
    let (patternB, optionsB) = regexParts(b)
    let order = compareBytes(patternA, patternB)
    return order != 0 ? order : compareBytes(optionsA, optionsB)
  case 13:
    let order = compareBytes(a.stringBytes, b.stringBytes)
    if order != 0 { return order }
    let idA = a.pointer + 4 + Int(a.int32())
    let idB = b.pointer + 4 + Int(b.int32())
    return compareBytes(UnsafeRawBufferPointer(start: idA, count: 12), UnsafeRawBufferPointer(start: idB, count: 12))
  case 15:
    let codeA = RawValue(type: 0x02, pointer: a.pointer + 4)
    let codeB = RawValue(type: 0x02, pointer: b.pointer + 4)
    let order = compareBytes(codeA.stringBytes, codeB.stringBytes)
    if order != 0 { return order }
    return compareDocuments(
      RawValue(type: 0x03, pointer: codeA.pointer + codeA.size),
      RawValue(type: 0x03, pointer: codeB.pointer + codeB.size))
  default: return 0  // MinKey, undefined, null, MaxKey: one value each
  }
}

/// The pattern and options of a regular expression value.
@inlinable func regexParts(_ value: RawValue) -> (UnsafeRawBufferPointer, UnsafeRawBufferPointer) {
  var end = 0
  while value.pointer.load(fromByteOffset: end, as: UInt8.self) != 0 { end += 1 }
  var optionsEnd = end + 1
  while value.pointer.load(fromByteOffset: optionsEnd, as: UInt8.self) != 0 { optionsEnd += 1 }
  return (
    UnsafeRawBufferPointer(start: value.pointer, count: end),
    UnsafeRawBufferPointer(start: value.pointer + end + 1, count: optionsEnd - end - 1)
  )
}

/// Documents and arrays compare element by element: the canonical type of the values, then the
/// keys, then the values; a document that ends first is the smaller.
func compareDocuments(_ a: RawValue, _ b: RawValue) -> Int {
  var elementsA = RawElements(a)
  var elementsB = RawElements(b)
  while true {
    let nextA = elementsA.next()
    let nextB = elementsB.next()
    guard let elementA = nextA else { return nextB == nil ? 0 : -1 }
    guard let elementB = nextB else { return 1 }
    let rankA = canonicalRank(elementA.value.type)
    let rankB = canonicalRank(elementB.value.type)
    if rankA != rankB { return rankA < rankB ? -1 : 1 }
    let keyOrder = compareBytes(
      UnsafeRawBufferPointer(start: elementA.key, count: elementA.keyLength),
      UnsafeRawBufferPointer(start: elementB.key, count: elementB.keyLength))
    if keyOrder != 0 { return keyOrder }
    let order = compareValues(elementA.value, elementB.value, rank: rankA)
    if order != 0 { return order }
  }
}

// MARK: - Numbers

/// A number read from BSON, for exact comparison.
@usableFromInline
enum Number {
  case integer(Int64)
  case double(Double)
  case decimal(Decimal128)

  @inlinable init(_ value: RawValue) {
    switch value.type {
    case 0x10: self = .integer(Int64(value.int32()))
    case 0x12: self = .integer(value.int64())
    case 0x01: self = .double(value.double)
    default: self = .decimal(value.decimal128)
    }
  }

  var isNaN: Bool {
    switch self {
    case .integer: false
    case .double(let value): value.isNaN
    case .decimal(let value): value.isNaN
    }
  }
}

/// Whether a numeric value is NaN (double or Decimal128).
@inlinable func isNaN(_ value: RawValue) -> Bool {
  switch value.type {
  case 0x01: return value.double.isNaN
  case 0x13: return value.decimal128.isNaN
  default: return false
  }
}

@usableFromInline func compareNumbers(_ a: RawValue, _ b: RawValue) -> Int {
  // Fast paths: the common same-kind cases.
  switch (a.type, b.type) {
  case (0x10, 0x10):
    let x = a.int32()
    let y = b.int32()
    return x == y ? 0 : (x < y ? -1 : 1)
  case (0x12, 0x12), (0x10, 0x12), (0x12, 0x10):
    let x = a.type == 0x10 ? Int64(a.int32()) : a.int64()
    let y = b.type == 0x10 ? Int64(b.int32()) : b.int64()
    return x == y ? 0 : (x < y ? -1 : 1)
  default: return compareNumbers(Number(a), Number(b))
  }
}

func compareNumbers(_ a: Number, _ b: Number) -> Int {
  let nanA = a.isNaN
  let nanB = b.isNaN
  if nanA || nanB { return nanA == nanB ? 0 : (nanA ? -1 : 1) }
  switch (a, b) {
  case (.integer(let x), .integer(let y)): return x == y ? 0 : (x < y ? -1 : 1)
  case (.double(let x), .double(let y)): return x == y ? 0 : (x < y ? -1 : 1)
  case (.integer(let x), .double(let y)): return compareIntegerToDouble(x, y)
  case (.double(let x), .integer(let y)): return -compareIntegerToDouble(y, x)
  case (.double(let x), .decimal(let y)): return ExactNumber(x).compare(ExactNumber(ExactDecimal(y)))
  case (.decimal(let x), .double(let y)): return ExactNumber(ExactDecimal(x)).compare(ExactNumber(y))
  case (.integer(let x), .decimal(let y)): return ExactDecimal(x).compare(ExactDecimal(y))
  case (.decimal(let x), .integer(let y)): return ExactDecimal(x).compare(ExactDecimal(y))
  case (.decimal(let x), .decimal(let y)): return ExactDecimal(x).compare(ExactDecimal(y))
  }
}

/// Compares an integer with a (non-NaN) double exactly, without rounding the integer.
func compareIntegerToDouble(_ integer: Int64, _ double: Double) -> Int {
  if double >= 9_223_372_036_854_775_808.0 { return -1 }
  if double < -9_223_372_036_854_775_808.0 { return 1 }
  let whole = Int64(double.rounded(.towardZero))
  if integer != whole { return integer < whole ? -1 : 1 }
  let fraction = double - Double(whole)
  return fraction == 0 ? 0 : (fraction > 0 ? -1 : 1)
}

/// A number as sign × coefficient × 10^exponent, or an infinity; exact for every BSON number,
/// for comparing a double with a Decimal128 (whose exact decimal expansion may need hundreds of
/// digits, more than ``ExactDecimal`` holds).
struct ExactNumber {
  var infinity: Int = 0  // -1, 0 or 1
  var negative = false
  var coefficient = BigUInt(0)
  var exponent = 0

  /// The exact value of a double (m × 2^e written as m × 5^-e × 10^e when e < 0).
  init(_ value: Double) {
    if value.isInfinite {
      infinity = value < 0 ? -1 : 1
      return
    }
    negative = value < 0
    let significand = value.significandBitPattern | (value.isNormal ? 1 << 52 : 0)
    let binaryExponent = value.isNormal ? Int(value.exponent) - 52 : -1074
    guard significand != 0 else { return }
    coefficient = BigUInt(UInt128(significand))
    if binaryExponent >= 0 {
      coefficient.shiftLeft(binaryExponent)
    } else {
      // m × 2^-k = m × 5^k × 10^-k
      for _ in 0..<(-binaryExponent) { coefficient.multiply(by: 5) }
      exponent = binaryExponent
    }
  }

  /// A Decimal128's value; a NaN reads as 0 (callers order NaNs before they get here).
  init(_ value: ExactDecimal) {
    switch value.kind {
    case .infinity: infinity = value.negative ? -1 : 1
    case .finite:
      negative = value.negative
      coefficient = BigUInt(value.coefficient)
      exponent = value.exponent
    case .nan: break
    }
  }

  var sign: Int { infinity != 0 ? infinity : (coefficient.isZero ? 0 : (negative ? -1 : 1)) }

  func compare(_ other: ExactNumber) -> Int {
    if infinity != 0 || other.infinity != 0 {
      return infinity == other.infinity ? 0 : (infinity < other.infinity ? -1 : 1)
    }
    let signA = sign
    let signB = other.sign
    if signA != signB { return signA < signB ? -1 : 1 }
    if signA == 0 { return 0 }
    let magnitude = ExactNumber.compareMagnitudes(self, other)
    return signA < 0 ? -magnitude : magnitude
  }

  static func compareMagnitudes(_ a: ExactNumber, _ b: ExactNumber) -> Int {
    // Orders of magnitude first: the number of digits plus the exponent decides unless they
    // are within one of each other.
    let magnitudeA = a.coefficient.decimalDigitEstimate + a.exponent
    let magnitudeB = b.coefficient.decimalDigitEstimate + b.exponent
    if magnitudeA > magnitudeB + 1 { return 1 }
    if magnitudeB > magnitudeA + 1 { return -1 }
    var scaledA = a.coefficient
    var scaledB = b.coefficient
    if a.exponent > b.exponent {
      for _ in 0..<(a.exponent - b.exponent) { scaledA.multiply(by: 10) }
    } else {
      for _ in 0..<(b.exponent - a.exponent) { scaledB.multiply(by: 10) }
    }
    return scaledA.compare(scaledB)
  }
}

/// A small unsigned big integer, for the exact comparisons of doubles with Decimal128s.
struct BigUInt: Equatable {
  /// Little-endian 32-bit limbs, without high zero limbs.
  var limbs: [UInt32]

  init(_ value: UInt128) {
    limbs = (0..<4).map { UInt32(truncatingIfNeeded: value >> (32 * $0)) }
    trim()
  }

  var isZero: Bool { limbs.isEmpty }

  mutating func trim() {
    while let last = limbs.last, last == 0 { limbs.removeLast() }
  }

  mutating func multiply(by factor: UInt32) {
    var carry: UInt64 = 0
    for index in limbs.indices {
      let product = UInt64(limbs[index]) * UInt64(factor) + carry
      limbs[index] = UInt32(truncatingIfNeeded: product)
      carry = product >> 32
    }
    if carry != 0 { limbs.append(UInt32(carry)) }
  }

  mutating func shiftLeft(_ bits: Int) {
    guard !isZero, bits > 0 else { return }
    let whole = bits / 32
    let part = bits % 32
    if part > 0 {
      var carry: UInt32 = 0
      for index in limbs.indices {
        let limb = limbs[index]
        limbs[index] = (limb << UInt32(part)) | carry
        carry = limb >> UInt32(32 - part)
      }
      if carry != 0 { limbs.append(carry) }
    }
    limbs.insert(contentsOf: repeatElement(0, count: whole), at: 0)
  }

  /// The number of decimal digits, to within one.
  var decimalDigitEstimate: Int {
    guard let top = limbs.last else { return 0 }
    let bits = (limbs.count - 1) * 32 + (32 - top.leadingZeroBitCount)
    return bits * 30_103 / 100_000 + 1
  }

  func compare(_ other: BigUInt) -> Int {
    if limbs.count != other.limbs.count { return limbs.count < other.limbs.count ? -1 : 1 }
    for index in limbs.indices.reversed() where limbs[index] != other.limbs[index] {
      return limbs[index] < other.limbs[index] ? -1 : 1
    }
    return 0
  }
}

/// Compares two values in MongoDB's order: by canonical type first (MinKey, null, numbers,
/// strings, objects, arrays, binary, ObjectId, bool, date, timestamp, regex, MaxKey), then by
/// value; numbers compare exactly across int32, int64, double and Decimal128, and NaN equals NaN
/// below every other number. Returns a negative number, zero or a positive number.
public func compareBSON(_ a: BSON, _ b: BSON) -> Int {
  let left = Literal(a)
  let right = Literal(b)
  return withExtendedLifetime((left, right)) { compareValues(left.value, right.value) }
}

extension BSON {
  /// The value's place in MongoDB's order of types (MinKey 0, undefined, null, numbers, strings
  /// and symbols, objects, arrays, binary, ObjectId, bool, date, timestamp, regex, DBPointer,
  /// code, code with scope, MaxKey 16): values of different ranks compare by rank alone.
  public var canonicalTypeRank: Int { canonicalRank(type.rawValue) }
}
