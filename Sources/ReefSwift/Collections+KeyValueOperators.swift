import ReefBSON

// Foundation's key-value coding collection operators in a collection's `value(forKeyPath:)`, as
// Realm's collections take them from `NSArray` and `NSSet`: `@count`, `@sum.x`, `@avg.x`,
// `@min.x`, `@max.x`, `@unionOfObjects.x`, `@distinctUnionOfObjects.x`, `@unionOfArrays.x` and
// `@distinctUnionOfArrays.x`.

/// A collection operator of a key path (`@sum.age`): what it computes over the values at the
/// rest of the path.
enum CollectionOperator {
  /// The value of `keyPath`, which begins with an operator, over `elements`.
  ///
  /// - `@count`: the number of elements, as an `NSNumber` (the rest of the path is not read).
  /// - `@sum.x`, `@avg.x`: the sum (0 when there are none) and the average (nil when there are
  ///   none) of the numbers at `x`, nil values left out, as an `NSNumber` (an integer sum when
  ///   every number is an integer); `Decimal128` values give a `Decimal128`.
  /// - `@min.x`, `@max.x`: the smallest and largest value at `x` (numbers, dates, strings,
  ///   `Decimal128`, `ObjectId`), nil when there are none.
  /// - `@unionOfObjects.x`, `@distinctUnionOfObjects.x`: the values at `x` as an array, nil
  ///   values left out; the distinct form keeps the first of equal values.
  /// - `@unionOfArrays.x`, `@distinctUnionOfArrays.x`: the elements of the collections at `x`,
  ///   one array.
  ///
  /// Another operator, an operator without the path it needs, or values that cannot be summed
  /// or compared stop, naming the key path.
  static func value<S: Sequence>(of elements: S, forKeyPath keyPath: String) -> Any? {
    let (name, rest) = split(keyPath)
    if name == "@count" { return NSNumber(value: Array(elements).count) }
    guard let rest else { reefStop("Unsupported KVC collection operator found in key path '\(keyPath)'") }
    switch name {
    case "@sum", "@avg", "@min", "@max":
      let values = CollectionKeyValueCoding.values(of: elements, forKeyPath: rest).compactMap(DynamicValue.unwrap)
      switch name {
      case "@sum": return sum(values, keyPath)
      case "@avg": return average(values, keyPath)
      case "@min": return extreme(values, keyPath, smallest: true)
      default: return extreme(values, keyPath, smallest: false)
      }
    case "@unionOfObjects", "@distinctUnionOfObjects":
      let values = CollectionKeyValueCoding.values(of: elements, forKeyPath: rest).compactMap(DynamicValue.unwrap)
      return name == "@unionOfObjects" ? values : distinct(values)
    case "@unionOfArrays", "@distinctUnionOfArrays":
      let values = CollectionKeyValueCoding.values(of: elements, forKeyPath: rest).compactMap(DynamicValue.unwrap)
      var flattened: [Any] = []
      for value in values {
        guard let inner = DynamicValue.elements(of: value) else {
          reefStop("\(name) in key path '\(keyPath)' needs collections at '\(rest)', not '\(type(of: value))'")
        }
        flattened.append(contentsOf: inner.compactMap(DynamicValue.unwrap))
      }
      return name == "@unionOfArrays" ? flattened : distinct(flattened)
    default:
      reefStop("Unsupported KVC collection operator found in key path '\(keyPath)'")
    }
  }

  /// The operator and the rest of the path after it (nil when there is none).
  private static func split(_ keyPath: String) -> (String, String?) {
    guard let dot = keyPath.firstIndex(of: ".") else { return (keyPath, nil) }
    return (String(keyPath[..<dot]), String(keyPath[keyPath.index(after: dot)...]))
  }

  /// A number as a value to add: an integer, a floating-point number or a decimal.
  private enum Addend {
    case integer(Int64)
    case real(Double)
    case decimal(Decimal128)
  }

  private static func addend(_ value: Any, _ keyPath: String) -> Addend {
    if let decimal = value as? Decimal128 { return .decimal(decimal) }
    if let number = value as? NSNumber, !DynamicValue.isBool(number) {
      return DynamicValue.isFloatingPoint(number) ? .real(number.doubleValue) : .integer(number.int64Value)
    }
    reefStop(
      "Cannot sum or average '\(DynamicValue.describe(value))' of type '\(type(of: value))' in key path '\(keyPath)'")
  }

  private static func sum(_ values: [Any], _ keyPath: String) -> Any {
    let addends = values.map { addend($0, keyPath) }
    if addends.contains(where: { if case .decimal = $0 { true } else { false } }) {
      return addends.reduce(Decimal128(0)) { total, addend in
        switch addend {
        case .decimal(let x): total + x
        case .integer(let x): total + Decimal128(x)
        case .real(let x): total + Decimal128(double: x)
        }
      }
    }
    if addends.allSatisfy({ if case .integer = $0 { true } else { false } }) {
      return NSNumber(value: addends.reduce(Int64(0)) { if case .integer(let x) = $1 { $0 &+ x } else { $0 } })
    }
    return NSNumber(value: addends.reduce(0.0) { total, addend in total + double(addend) })
  }

  private static func average(_ values: [Any], _ keyPath: String) -> Any? {
    guard !values.isEmpty else { return nil }
    let total = sum(values, keyPath)
    if let decimal = total as? Decimal128 { return decimal / Decimal128(Int64(values.count)) }
    return NSNumber(value: double(addend(total, keyPath)) / Double(values.count))
  }

  private static func double(_ addend: Addend) -> Double {
    switch addend {
    case .integer(let x): Double(x)
    case .real(let x): x
    case .decimal(let x): Double(x.description) ?? .nan
    }
  }

  /// The smallest (or largest) of `values`, compared as their type orders them.
  private static func extreme(_ values: [Any], _ keyPath: String, smallest: Bool) -> Any? {
    var best: Any?
    for value in values {
      guard let current = best else {
        best = value
        continue
      }
      guard let order = compare(value, current) else {
        reefStop(
          "Cannot compare '\(DynamicValue.describe(value))' and '\(DynamicValue.describe(current))' in key path '\(keyPath)'"
        )
      }
      if smallest ? order < 0 : order > 0 { best = value }
    }
    return best
  }

  /// The order of two values of one comparable kind (negative when `a` comes first), nil when
  /// they cannot be compared.
  private static func compare(_ a: Any, _ b: Any) -> Int? {
    switch (a, b) {
    case (let x as Decimal128, let y as Decimal128): return x < y ? -1 : (x == y ? 0 : 1)
    case (let x as NSNumber, let y as NSNumber): return x.compare(y).rawValue
    case (let x as Date, let y as Date): return x < y ? -1 : (x == y ? 0 : 1)
    case (let x as String, let y as String): return x < y ? -1 : (x == y ? 0 : 1)
    case (let x as ObjectId, let y as ObjectId): return x < y ? -1 : (x == y ? 0 : 1)
    case (let x as UUID, let y as UUID): return x.uuidString < y.uuidString ? -1 : (x == y ? 0 : 1)
    default: return nil
    }
  }

  /// The values without repeats, the first of equal values kept (objects compared by identity).
  private static func distinct(_ values: [Any]) -> [Any] {
    var kept: [Any] = []
    for value in values
    where !kept.contains(where: { (compare($0, value).map { $0 == 0 }) ?? CollectionElements.same($0, value) }) {
      kept.append(value)
    }
    return kept
  }
}
