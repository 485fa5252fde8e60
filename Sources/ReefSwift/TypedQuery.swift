import ReefBSON
import ReefQuery

/// A type-safe query over a model's properties, for ``Results/where(_:)``: Realm's `Query`.
///
/// ```swift
/// let angelenos = reef.objects(Contact.self).where { $0.address.city == "Los Angeles" }
/// let adults = reef.objects(Person.self).where { $0.age >= 18 && !$0.name.contains("test") }
/// ```
/// Member access follows properties (through embedded objects, to-one links, and the objects of
/// a `List` or `MutableSet`) and records their names; operators build the same query a
/// predicate string would, which runs in the store over the stored bytes. Through a collection
/// a comparison holds for any element, as the predicate's implicit `ANY`:
///
/// ```swift
/// reef.objects(Person.self).where { $0.dogs.name == "Rex" || $0.dogs.count > 2 }
/// reef.objects(Person.self).where { $0.dogs.age.avg >= 3 && $0.tags.contains("vip") }
/// ```
@dynamicMemberLookup
public struct TypedQuery<T> {
  let tracer: _PathTracer
  let path: [String]
  let traced: T?
  let node: QueryNode?
  /// For a path through a `List` or `MutableSet`: how many of `path`'s names lead to the
  /// collection (the rest is read in each element).
  let collectionDepth: Int?
  /// For a number measured of the collection at `path` rather than read there: a comparison
  /// then compares the measure.
  let measure: Measure?
  /// For a condition: the collection every comparison in it goes through (nil when one goes
  /// through none, or they go through different ones), for a subquery count.
  let elementsOf: [String]?

  /// What a numeric query measures of a collection.
  enum Measure {
    /// `list.@count`, `list.@avg.field`…: the aggregate, and the path in each element it reads.
    case aggregate(Aggregate, subpath: FieldPath?)
    /// `SUBQUERY(list, $x, condition).@count`: how many elements match the condition, whose
    /// paths start at the element.
    case matching(QueryNode)
  }

  init(
    tracer: _PathTracer, path: [String], traced: T?, node: QueryNode? = nil, collectionDepth: Int? = nil,
    measure: Measure? = nil, elementsOf: [String]? = nil
  ) {
    self.tracer = tracer
    self.path = path
    self.traced = traced
    self.node = node
    self.collectionDepth = collectionDepth
    self.measure = measure
    self.elementsOf = elementsOf
  }

  /// The query of a property of an object.
  public subscript<V>(dynamicMember keyPath: KeyPath<T, V>) -> TypedQuery<V> where T: ObjectBase {
    guard let traced else { reefStop("a query path can only continue through objects") }
    return member(keyPath, of: traced)
  }

  /// The query of a property of an optional object (an embedded object or a to-one link).
  public subscript<W: ObjectBase, V>(dynamicMember keyPath: KeyPath<W, V>) -> TypedQuery<V> where T == W? {
    guard let traced = traced ?? nil else { reefStop("a query path can only continue through objects") }
    return member(keyPath, of: traced)
  }

  /// The query of a property of each object of a `List` or `MutableSet` of objects: a
  /// comparison holds when it holds for some object (Realm's implicit `ANY`).
  public subscript<V>(dynamicMember keyPath: KeyPath<T._QueryElement, V>) -> TypedQuery<V>
  where T: _QueryCollection, T._QueryElement: ObjectBase {
    guard let element = T._QueryElement._reefTraced(tracer) else {
      reefStop("a query path can only continue through objects")
    }
    return TypedQuery(tracer: tracer, path: path, traced: traced, collectionDepth: collectionDepth ?? path.count)
      .member(keyPath, of: element)
  }

  private func member<O: ObjectBase, V>(_ keyPath: KeyPath<O, V>, of object: O) -> TypedQuery<V> {
    reefRequire(measure == nil, "a query path cannot continue after an aggregate")
    tracer.names = []
    let value = object[keyPath: keyPath]
    return TypedQuery<V>(tracer: tracer, path: path + tracer.names, traced: value, collectionDepth: collectionDepth)
  }

  var fieldPath: FieldPath { FieldPath(path.joined(separator: ".")) }

  /// The collection this query's path goes through (or names), if any.
  var collectionPath: [String]? {
    if let collectionDepth { return Array(path[..<collectionDepth]) }
    return T.self is any _QueryCollection.Type ? path : nil
  }

  /// A condition on this query's path.
  func bool(_ node: QueryNode) -> TypedQuery<Bool> {
    TypedQuery<Bool>(tracer: tracer, path: [], traced: nil, node: node, elementsOf: collectionPath)
  }

  func compare(_ op: ComparisonOperator, _ value: BSON) -> TypedQuery<Bool> {
    switch measure {
    case .aggregate(let aggregate, let subpath)?: bool(.aggregate(fieldPath, aggregate, subpath: subpath, op, value))
    case .matching(let condition)?: bool(.subquery(fieldPath, condition, op, value))
    case nil: bool(.match(fieldPath, .compare(op, value), .any))
    }
  }

  /// A value test on this query's path (a measure: each comparison of `tests`, all holding).
  func test(_ tests: [(ComparisonOperator, BSON)]) -> TypedQuery<Bool> {
    guard measure != nil else {
      return bool(.match(fieldPath, .all(tests.map { ValueTest.compare($0.0, $0.1) }), .any))
    }
    return bool(.and(tests.map { compare($0.0, $0.1).condition }))
  }

  /// One of `values` (a measure: equal to one of them, as the predicate's `@count IN {…}`).
  func isIn(_ values: [BSON]) -> TypedQuery<Bool> {
    guard measure != nil else { return bool(.match(fieldPath, .in(values), .any)) }
    let nodes = values.map { compare(.equal, $0).condition }
    return bool(nodes.isEmpty ? .constant(false) : .or(nodes))
  }

  /// The aggregate of the values at this path through a collection, or of the collection's
  /// own values.
  func aggregated<V>(_ kind: Aggregate) -> TypedQuery<V> {
    reefRequire(measure == nil, "a query cannot aggregate an aggregate")
    guard let depth = collectionDepth else {
      reefStop(
        "'\(kind.rawValue)' aggregates a List or MutableSet: its path must go through one ($0.dogs.age.avg)")
    }
    let subpath = depth < path.count ? FieldPath(path[depth...].joined(separator: ".")) : nil
    return TypedQuery<V>(
      tracer: tracer, path: Array(path[..<depth]), traced: nil, measure: .aggregate(kind, subpath: subpath))
  }

  static func encode<V: _ReefValue>(_ value: V) -> BSON {
    if let object = value as? ObjectBase {
      // A link compares by its target's key, which only a managed object has.
      guard object is Object, let key = BSONArgument.bson(object) else {
        reefStop("an object in a typed query must be a managed Object (it compares by its primary key)")
      }
      return key
    }
    return (try? value._reefEncode(_WriteContext(reef: nil, attachments: nil, path: [], policy: .error))) ?? .null
  }
}

extension TypedQuery where T: _ReefValue {
  /// Equal to `value` (through a list: some element is).
  public static func == (query: TypedQuery, value: T) -> TypedQuery<Bool> { query.compare(.equal, encode(value)) }
  /// Not equal to `value`.
  public static func != (query: TypedQuery, value: T) -> TypedQuery<Bool> { query.compare(.notEqual, encode(value)) }
  /// One of `values`.
  public func `in`<S: Sequence>(_ values: S) -> TypedQuery<Bool> where S.Element == T {
    isIn(values.map { Self.encode($0) })
  }
}

extension TypedQuery where T: _ReefValue & Comparable {
  /// Less than `value` (MongoDB's order across numeric types).
  public static func < (query: TypedQuery, value: T) -> TypedQuery<Bool> { query.compare(.less, encode(value)) }
  /// At most `value`.
  public static func <= (query: TypedQuery, value: T) -> TypedQuery<Bool> { query.compare(.lessOrEqual, encode(value)) }
  /// More than `value`.
  public static func > (query: TypedQuery, value: T) -> TypedQuery<Bool> { query.compare(.greater, encode(value)) }
  /// At least `value`.
  public static func >= (query: TypedQuery, value: T) -> TypedQuery<Bool> {
    query.compare(.greaterOrEqual, encode(value))
  }
  /// Within the bounds, both included (`"age BETWEEN {18, 30}"`); through a list, one element is.
  public func contains(_ range: ClosedRange<T>) -> TypedQuery<Bool> {
    test([(.greaterOrEqual, Self.encode(range.lowerBound)), (.lessOrEqual, Self.encode(range.upperBound))])
  }
  /// At least the lower bound and less than the upper one; through a list, one element is.
  public func contains(_ range: Range<T>) -> TypedQuery<Bool> {
    test([(.greaterOrEqual, Self.encode(range.lowerBound)), (.less, Self.encode(range.upperBound))])
  }
}

extension TypedQuery where T == String? {
  /// Equal to `value` (nil matches a null or missing field).
  public static func == (query: TypedQuery, value: String?) -> TypedQuery<Bool> {
    query.compare(.equal, value.map(BSON.string) ?? .null)
  }
}

/// The string operators, for `String` and `String?` properties.
public protocol _QueryableString {}
extension String: _QueryableString {}
extension Optional: _QueryableString where Wrapped == String {}

extension TypedQuery where T: _QueryableString {
  /// Contains `string` (with `.caseInsensitive`, ignoring case).
  public func contains(_ string: String, options: StringOptions = []) -> TypedQuery<Bool> {
    stringTest(.contains, string, options)
  }
  /// Starts with `string`.
  public func starts(with string: String, options: StringOptions = []) -> TypedQuery<Bool> {
    stringTest(.beginsWith, string, options)
  }
  /// Ends with `string`.
  public func ends(with string: String, options: StringOptions = []) -> TypedQuery<Bool> {
    stringTest(.endsWith, string, options)
  }
  /// Matches a `LIKE` pattern (`*` any characters, `?` one).
  public func like(_ pattern: String, caseInsensitive: Bool = false) -> TypedQuery<Bool> {
    stringTest(.like, pattern, caseInsensitive ? .caseInsensitive : [])
  }
  private func stringTest(_ op: StringOperator, _ string: String, _ options: StringOptions) -> TypedQuery<Bool> {
    bool(.match(fieldPath, .string(op, string, options), .any))
  }
}

extension TypedQuery where T == Bool {
  /// Both hold.
  public static func && (a: TypedQuery, b: TypedQuery) -> TypedQuery { combine(a, b, QueryNode.and) }
  /// Either holds.
  public static func || (a: TypedQuery, b: TypedQuery) -> TypedQuery { combine(a, b, QueryNode.or) }
  /// Does not hold.
  public static prefix func ! (a: TypedQuery) -> TypedQuery {
    TypedQuery(tracer: a.tracer, path: [], traced: nil, node: .not(a.condition), elementsOf: a.conditionElementsOf)
  }
  /// The condition; a bare Bool property is `== true`.
  var condition: QueryNode { node ?? .match(fieldPath, .compare(.equal, .bool(true)), .any) }
  /// The collection every comparison of the condition goes through, if one.
  private var conditionElementsOf: [String]? { node == nil ? collectionPath : elementsOf }
  private static func combine(_ a: TypedQuery, _ b: TypedQuery, _ make: ([QueryNode]) -> QueryNode) -> TypedQuery {
    let elementsOf = a.conditionElementsOf == b.conditionElementsOf ? a.conditionElementsOf : nil
    return TypedQuery(
      tracer: a.tracer, path: [], traced: nil, node: make([a.condition, b.condition]), elementsOf: elementsOf)
  }

  /// How many elements of a collection match this condition, whose comparisons all go
  /// through that collection: `($0.dogs.age > 2 && $0.dogs.name.starts(with: "R")).count > 1`
  /// is `"SUBQUERY(dogs, $d, $d.age > 2 AND $d.name BEGINSWITH 'R').@count > 1"`.
  public var count: TypedQuery<Int> {
    guard let list = conditionElementsOf else {
      reefStop(
        "a subquery count needs conditions that all go through one List or MutableSet: ($0.dogs.age > 2).count")
    }
    return TypedQuery<Int>(
      tracer: tracer, path: list, traced: nil,
      measure: .matching(Self.relative(condition, to: FieldPath(segments: list.map(FieldPath.Segment.init)))))
  }

  /// The condition with each path starting at an element of the collection at `prefix`.
  private static func relative(_ node: QueryNode, to prefix: FieldPath) -> QueryNode {
    func strip(_ path: FieldPath) -> FieldPath {
      reefRequire(path.segments.starts(with: prefix.segments), "\(path) is not in \(prefix)")
      return FieldPath(segments: Array(path.segments.dropFirst(prefix.segments.count)))
    }
    switch node {
    case .constant: return node
    case .and(let nodes): return .and(nodes.map { relative($0, to: prefix) })
    case .or(let nodes): return .or(nodes.map { relative($0, to: prefix) })
    case .nor(let nodes): return .nor(nodes.map { relative($0, to: prefix) })
    case .not(let inner): return .not(relative(inner, to: prefix))
    case .match(let path, let test, let quantifier): return .match(strip(path), test, quantifier)
    case .exists(let path, let exists): return .exists(strip(path), exists)
    case .size(let path, let size): return .size(strip(path), size)
    case .elementMatch(let path, let inner): return .elementMatch(strip(path), inner)
    case .elementMatchValue(let path, let tests): return .elementMatchValue(strip(path), tests)
    case .aggregate(let path, let aggregate, let subpath, let op, let value):
      return .aggregate(strip(path), aggregate, subpath: subpath, op, value)
    case .subquery(let path, let inner, let op, let value): return .subquery(strip(path), inner, op, value)
    }
  }
}

/// Records the names of the properties a query's key paths read. For ReefSwift's own use.
public final class _PathTracer {
  var names: [String] = []

  /// A tracing instance of `objectClass`: reading its properties records their names.
  func instance<O: ObjectBase>(_ objectClass: O.Type) -> O {
    let thread = ThreadState.current
    let saved = thread.constructingManaged
    thread.constructingManaged = ObjectIdentifier(objectClass)
    defer { thread.constructingManaged = saved }
    let object = objectClass.init()
    object._tracer = self
    return object
  }

  /// Records the property read and returns a stand-in for its value.
  @usableFromInline func trace<V: _Persistable>(_ object: ObjectBase, ordinal: Int, as type: V.Type) -> V {
    names.append(object.objectSchema.property(ordinal: ordinal).name)
    guard let value = V._reefTraced(self) else {
      reefStop("\(V.self) cannot be used in a typed query path")
    }
    return value
  }
}

extension _ReefValue {
  public static func _reefTraced(_ tracer: _PathTracer) -> Self? { nil }
}

extension _Persistable {
  public static func _reefTraced(_ tracer: _PathTracer) -> Self? { _reefDefault() }
}

extension Optional where Wrapped: _ReefOptionalWrappable {
  public static func _reefTraced(_ tracer: _PathTracer) -> Self? { .some(Wrapped._reefTraced(tracer)) }
}

extension Object {
  public static func _reefTraced(_ tracer: _PathTracer) -> Self? { tracer.instance(Self.self) }
}

extension EmbeddedObject {
  public static func _reefTraced(_ tracer: _PathTracer) -> Self? { tracer.instance(Self.self) }
}

extension Results {
  /// The results that also match a type-safe query built from the model's properties.
  ///
  /// ```swift
  /// reef.objects(Contact.self).where { $0.address.city == "Los Angeles" }
  /// ```
  public func `where`(_ isIncluded: (TypedQuery<Element>) -> TypedQuery<Bool>) -> Results {
    let tracer = _PathTracer()
    let root = TypedQuery<Element>(tracer: tracer, path: [], traced: tracer.instance(Element.self))
    let node = isIncluded(root).condition
    return with(conditions: conditions + [FieldMapping(schema).map(node)])
  }
}
