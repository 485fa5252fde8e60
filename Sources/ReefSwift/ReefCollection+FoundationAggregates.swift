// The aggregates of a collection of objects in Foundation's types, as Realm's `min(ofProperty:)`,
// `max(ofProperty:)` and `sum(ofProperty:)` return them when asked for an `NSNumber` or an
// `NSDate` (`collection.sum(ofProperty: "age") as NSNumber`).

extension ReefCollection {
  /// The smallest value of a numeric property among the objects, as an `NSNumber` of the
  /// property's type, or nil when there is none: Realm's `min(ofProperty:) as NSNumber?`.
  ///
  /// A property path its type does not declare stops, with Realm's message; so does a property
  /// whose values are not numbers.
  /// - Parameter property: The property's name, or a dotted path through objects.
  /// - Complexity: O(*n*) in the number of objects.
  public func min(ofProperty property: String) -> NSNumber? {
    number(property, "min") { kind in
      switch kind {
      case .int: (min(ofProperty: property) as Int?).map { NSNumber(value: $0) }
      case .float: (min(ofProperty: property) as Float?).map { NSNumber(value: $0) }
      case .double: (min(ofProperty: property) as Double?).map { NSNumber(value: $0) }
      case .bool: (min(ofProperty: property) as Bool?).map { NSNumber(value: $0) }
      }
    }
  }

  /// The largest value of a numeric property among the objects, as an `NSNumber` of the
  /// property's type, or nil when there is none: Realm's `max(ofProperty:) as NSNumber?`.
  ///
  /// A property path its type does not declare stops, with Realm's message; so does a property
  /// whose values are not numbers.
  /// - Parameter property: The property's name, or a dotted path through objects.
  /// - Complexity: O(*n*) in the number of objects.
  public func max(ofProperty property: String) -> NSNumber? {
    number(property, "max") { kind in
      switch kind {
      case .int: (max(ofProperty: property) as Int?).map { NSNumber(value: $0) }
      case .float: (max(ofProperty: property) as Float?).map { NSNumber(value: $0) }
      case .double: (max(ofProperty: property) as Double?).map { NSNumber(value: $0) }
      case .bool: (max(ofProperty: property) as Bool?).map { NSNumber(value: $0) }
      }
    }
  }

  /// The sum of a numeric property over the objects, as an `NSNumber` of the property's type
  /// (0 when there are none): Realm's `sum(ofProperty:) as NSNumber`.
  ///
  /// A property path its type does not declare stops, with Realm's message; so does a property
  /// whose values are not numbers.
  /// - Parameter property: The property's name, or a dotted path through objects.
  /// - Complexity: O(*n*) in the number of objects.
  public func sum(ofProperty property: String) -> NSNumber {
    let total = number(property, "sum") { kind in
      switch kind {
      case .int: NSNumber(value: sum(ofProperty: property) as Int)
      case .float: NSNumber(value: sum(ofProperty: property) as Float)
      case .double: NSNumber(value: sum(ofProperty: property) as Double)
      case .bool: nil
      }
    }
    guard let total else { reefStop("Cannot sum property '\(property)': its values are booleans, not numbers.") }
    return total
  }

  /// The earliest date of a date property among the objects, or nil when there is none: Realm's
  /// `min(ofProperty:) as NSDate?`.
  ///
  /// A property path its type does not declare stops, with Realm's message.
  /// - Parameter property: The property's name, or a dotted path through objects.
  /// - Complexity: O(*n*) in the number of objects.
  public func min(ofProperty property: String) -> NSDate? {
    (min(ofProperty: property) as Date?).map {
      NSDate(timeIntervalSinceReferenceDate: $0.timeIntervalSinceReferenceDate)
    }
  }

  /// The latest date of a date property among the objects, or nil when there is none: Realm's
  /// `max(ofProperty:) as NSDate?`.
  ///
  /// A property path its type does not declare stops, with Realm's message.
  /// - Parameter property: The property's name, or a dotted path through objects.
  /// - Complexity: O(*n*) in the number of objects.
  public func max(ofProperty property: String) -> NSDate? {
    (max(ofProperty: property) as Date?).map {
      NSDate(timeIntervalSinceReferenceDate: $0.timeIntervalSinceReferenceDate)
    }
  }

  /// An aggregate of a property as an `NSNumber`: `read` is given the Swift type the property's
  /// values are read as. A path that names no property is read as an `Int`, so that the generic
  /// aggregate stops with Realm's message; a property that holds no numbers stops.
  private func number(_ property: String, _ name: String, _ read: (NumberKind) -> NSNumber?) -> NSNumber? {
    guard let leaf = FoundationAggregates.property(atPath: property, of: ObjectSchema.of(Element.self)) else {
      return read(.int)
    }
    switch leaf.type {
    case .int: return read(.int)
    case .float: return read(.float)
    case .double: return read(.double)
    case .bool: return read(.bool)
    default:
      reefStop(
        "Cannot \(name) property '\(property)' as an NSNumber: it holds \(leaf.typeDescription) values."
      )
    }
  }
}

/// The Swift type an aggregate reads a numeric property as.
enum NumberKind {
  case int, float, double, bool
}

enum FoundationAggregates {
  /// The property a dotted path of `schema`'s objects ends at (through links and embedded
  /// objects), or nil when a step names no property.
  static func property(atPath path: String, of schema: ObjectSchema) -> Property? {
    var current = schema
    let steps = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    for (offset, step) in steps.enumerated() {
      guard let property = current.property(named: step) ?? current.properties.first(where: { $0.columnName == step })
      else { return nil }
      if offset == steps.count - 1 { return property }
      guard property.type == .object, let target = property.objectClass else { return nil }
      current = ObjectSchema.of(target)
    }
    return nil
  }
}
