import ReefBSON
import ReefQuery

/// A type-safe query over a model's properties, for ``Results/where(_:)``: Realm's `Query`.
///
/// ```swift
/// let angelenos = reef.objects(Contact.self).where { $0.address.city == "Los Angeles" }
/// let adults = reef.objects(Person.self).where { $0.age >= 18 && !$0.name.contains("test") }
/// ```
/// Member access follows properties (through embedded objects and to-one links) and records
/// their names; operators build the same query a predicate string would, which runs in the
/// store over the stored bytes.
@dynamicMemberLookup
public struct TypedQuery<T> {
  let tracer: _PathTracer
  let path: [String]
  let traced: T?
  let node: QueryNode?

  init(tracer: _PathTracer, path: [String], traced: T?, node: QueryNode? = nil) {
    self.tracer = tracer
    self.path = path
    self.traced = traced
    self.node = node
  }

  /// The query of a property of an object.
  public subscript<V>(dynamicMember keyPath: KeyPath<T, V>) -> TypedQuery<V> where T: ObjectBase {
    guard let traced else { preconditionFailure("a query path can only continue through objects") }
    tracer.names = []
    let value = traced[keyPath: keyPath]
    return TypedQuery<V>(tracer: tracer, path: path + tracer.names, traced: value)
  }

  /// The query of a property of an optional object (an embedded object or a to-one link).
  public subscript<W: ObjectBase, V>(dynamicMember keyPath: KeyPath<W, V>) -> TypedQuery<V> where T == W? {
    guard let traced = traced ?? nil else { preconditionFailure("a query path can only continue through objects") }
    tracer.names = []
    let value = traced[keyPath: keyPath]
    return TypedQuery<V>(tracer: tracer, path: path + tracer.names, traced: value)
  }

  var fieldPath: FieldPath { FieldPath(path.joined(separator: ".")) }

  func compare(_ op: ComparisonOperator, _ value: BSON) -> TypedQuery<Bool> {
    TypedQuery<Bool>(tracer: tracer, path: [], traced: nil, node: .match(fieldPath, .compare(op, value), .any))
  }

  static func encode<V: _ReefValue>(_ value: V) -> BSON {
    (try? value._reefEncode(_WriteContext(reef: nil, attachments: nil, path: [], policy: .error))) ?? .null
  }
}

extension TypedQuery where T: _ReefValue {
  /// Equal to `value` (through a list: some element is).
  public static func == (query: TypedQuery, value: T) -> TypedQuery<Bool> { query.compare(.equal, encode(value)) }
  /// Not equal to `value`.
  public static func != (query: TypedQuery, value: T) -> TypedQuery<Bool> { query.compare(.notEqual, encode(value)) }
  /// One of `values`.
  public func `in`<S: Sequence>(_ values: S) -> TypedQuery<Bool> where S.Element == T {
    TypedQuery<Bool>(
      tracer: tracer, path: [], traced: nil, node: .match(fieldPath, .in(values.map(Self.encode)), .any))
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
    TypedQuery<Bool>(tracer: tracer, path: [], traced: nil, node: .match(fieldPath, .string(op, string, options), .any))
  }
}

extension TypedQuery where T == Bool {
  /// Both hold.
  public static func && (a: TypedQuery, b: TypedQuery) -> TypedQuery { combine(a, b, QueryNode.and) }
  /// Either holds.
  public static func || (a: TypedQuery, b: TypedQuery) -> TypedQuery { combine(a, b, QueryNode.or) }
  /// Does not hold.
  public static prefix func ! (a: TypedQuery) -> TypedQuery {
    TypedQuery(tracer: a.tracer, path: [], traced: nil, node: .not(a.condition))
  }
  /// The condition; a bare Bool property is `== true`.
  var condition: QueryNode { node ?? .match(fieldPath, .compare(.equal, .bool(true)), .any) }
  private static func combine(_ a: TypedQuery, _ b: TypedQuery, _ make: ([QueryNode]) -> QueryNode) -> TypedQuery {
    TypedQuery(tracer: a.tracer, path: [], traced: nil, node: make([a.condition, b.condition]))
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
      preconditionFailure("\(V.self) cannot be used in a typed query path")
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
