import ReefBSON
import ReefQuery

// Typed queries on `List`, `MutableSet` and `Map` properties. Each builds the query its
// predicate string builds (shown on each), so both run the same way in the store.

/// A `List` or `MutableSet`, for typed queries. For ReefSwift's own use.
public protocol _QueryCollection {
  associatedtype _QueryElement: _ReefValue
}

extension List: _QueryCollection {
  public typealias _QueryElement = Element
}

extension MutableSet: _QueryCollection {
  public typealias _QueryElement = Element
}

/// A `Map`, for typed queries. For ReefSwift's own use.
public protocol _QueryMap {
  associatedtype _QueryValue: _ReefValue
}

extension Map: _QueryMap {
  public typealias _QueryValue = Value
}

/// The numeric types whose collections have `min`, `max`, `sum` and `avg` in typed queries.
public protocol _QueryNumeric {}
extension Int: _QueryNumeric {}
extension Int8: _QueryNumeric {}
extension Int16: _QueryNumeric {}
extension Int32: _QueryNumeric {}
extension Int64: _QueryNumeric {}
extension Float: _QueryNumeric {}
extension Double: _QueryNumeric {}
extension Decimal128: _QueryNumeric {}
extension Optional: _QueryNumeric where Wrapped: _QueryNumeric {}

extension TypedQuery where T: _QueryCollection {
  /// The number of elements (`"dogs.@count > 2"`).
  public var count: TypedQuery<Int> {
    TypedQuery<Int>(tracer: tracer, path: path, traced: nil, measure: .aggregate(.count, subpath: nil))
  }

  /// Some element is `value` (`"%@ IN tags"`); a managed object for a collection of links.
  public func contains(_ value: T._QueryElement) -> TypedQuery<Bool> {
    bool(.match(fieldPath, .compare(.equal, Self.encode(value)), .any))
  }

  /// Some element is one of `values` (`"ANY tags IN %@"`); managed objects for a collection
  /// of links.
  public func containsAny<S: Sequence>(in values: S) -> TypedQuery<Bool> where S.Element == T._QueryElement {
    bool(.match(fieldPath, .in(values.map { Self.encode($0) }), .any))
  }
}

extension TypedQuery where T: _QueryCollection, T._QueryElement: _ReefScalar {
  /// Some element is equal to `value` (`"tags == %@"`, `ANY` implied).
  public static func == (query: TypedQuery, value: T._QueryElement) -> TypedQuery<Bool> {
    query.compare(.equal, encode(value))
  }
  /// Some element is not equal to `value` (`"tags != %@"`).
  public static func != (query: TypedQuery, value: T._QueryElement) -> TypedQuery<Bool> {
    query.compare(.notEqual, encode(value))
  }
}

extension TypedQuery where T: _QueryCollection, T._QueryElement: _ReefScalar & Comparable {
  /// Some element is less than `value` (`"scores < %@"`).
  public static func < (query: TypedQuery, value: T._QueryElement) -> TypedQuery<Bool> {
    query.compare(.less, encode(value))
  }
  /// Some element is at most `value`.
  public static func <= (query: TypedQuery, value: T._QueryElement) -> TypedQuery<Bool> {
    query.compare(.lessOrEqual, encode(value))
  }
  /// Some element is more than `value`.
  public static func > (query: TypedQuery, value: T._QueryElement) -> TypedQuery<Bool> {
    query.compare(.greater, encode(value))
  }
  /// Some element is at least `value`.
  public static func >= (query: TypedQuery, value: T._QueryElement) -> TypedQuery<Bool> {
    query.compare(.greaterOrEqual, encode(value))
  }
}

extension TypedQuery where T: _QueryCollection, T._QueryElement: _QueryNumeric {
  /// The smallest element (`"scores.@min"`); nil for an empty collection.
  public var min: TypedQuery<T._QueryElement> { collectionAggregate(.min) }
  /// The largest element (`"scores.@max"`).
  public var max: TypedQuery<T._QueryElement> { collectionAggregate(.max) }
  /// The sum of the elements (`"scores.@sum"`), 0 for an empty collection.
  public var sum: TypedQuery<T._QueryElement> { collectionAggregate(.sum) }
  /// The average of the elements (`"scores.@avg"`), computed as a `Double`; nil for an empty
  /// collection.
  public var avg: TypedQuery<Double> { collectionAggregate(.avg) }

  private func collectionAggregate<V>(_ kind: Aggregate) -> TypedQuery<V> {
    TypedQuery(tracer: tracer, path: path, traced: nil, collectionDepth: collectionDepth ?? path.count)
      .aggregated(kind)
  }
}

extension TypedQuery where T: _QueryCollection, T._QueryElement: _QueryNumeric & Comparable {
  /// Every element is within the bounds, both included (`"scores.@min >= 1 AND scores.@max <=
  /// 5"`, as Realm builds it); false for an empty collection.
  public func contains(_ range: ClosedRange<T._QueryElement>) -> TypedQuery<Bool> {
    within(range.lowerBound, range.upperBound, .lessOrEqual)
  }
  /// Every element is at least the lower bound and less than the upper one.
  public func contains(_ range: Range<T._QueryElement>) -> TypedQuery<Bool> {
    within(range.lowerBound, range.upperBound, .less)
  }
  private func within(_ low: T._QueryElement, _ high: T._QueryElement, _ op: ComparisonOperator) -> TypedQuery<Bool> {
    // A condition on the collection's aggregates, not on each element (no subquery count).
    min.compare(.greaterOrEqual, Self.encode(low)) && max.compare(op, Self.encode(high))
  }
}

extension TypedQuery where T: _QueryNumeric {
  /// The smallest of the values at this path in a collection's objects (`$0.dogs.age.min` is
  /// `"dogs.@min.age"`). The path must go through a `List` or `MutableSet`.
  public var min: TypedQuery<T> { aggregated(.min) }
  /// The largest of the values in a collection's objects (`"dogs.@max.age"`).
  public var max: TypedQuery<T> { aggregated(.max) }
  /// The sum of the values in a collection's objects (`"dogs.@sum.age"`).
  public var sum: TypedQuery<T> { aggregated(.sum) }
  /// The average of the values in a collection's objects (`"dogs.@avg.age"`), as a `Double`.
  public var avg: TypedQuery<Double> { aggregated(.avg) }
}

extension TypedQuery where T: _QueryMap {
  /// The value for `key` (`"phones.home == %@"`); an embedded object's properties follow
  /// (`$0.places["home"].city`). A missing key compares as null.
  public subscript(key: String) -> TypedQuery<T._QueryValue> {
    reefRequire(
      Map<String, Int>.isValidKey(key), "a Map key cannot be empty, start with $, or contain . or NUL: \"\(key)\"")
    return TypedQuery<T._QueryValue>(
      tracer: tracer, path: path + [key], traced: T._QueryValue._reefTraced(tracer), collectionDepth: collectionDepth)
  }

  /// The map's keys: `keys == "home"` holds for a map with that key.
  public var keys: TypedQuery<_QueryMapKeys> { TypedQuery<_QueryMapKeys>(tracer: tracer, path: path, traced: nil) }
}

/// The keys of a `Map` in a typed query. For ReefSwift's own use.
public enum _QueryMapKeys {}

extension TypedQuery where T == _QueryMapKeys {
  /// The map has the key (MongoDB's `{"phones.home": {$exists: true}}`).
  public static func == (query: TypedQuery, key: String) -> TypedQuery<Bool> {
    reefRequire(
      Map<String, Int>.isValidKey(key), "a Map key cannot be empty, start with $, or contain . or NUL: \"\(key)\"")
    return query.bool(.exists(FieldPath(segments: query.fieldPath.segments + [FieldPath.Segment(key)]), true))
  }
  /// The map has one of the keys.
  public func `in`<S: Sequence>(_ keys: S) -> TypedQuery<Bool> where S.Element == String {
    let nodes = keys.map { (self == $0).condition }
    return bool(nodes.isEmpty ? .constant(false) : .or(nodes))
  }
}
