import ReefBSON
import ReefQuery
import ReefStore

/// A live, lazy query over one object type: Realm's `Results`.
///
/// ```swift
/// let contacts = reef.objects(Contact.self)
///     .filter("address.city = %@", "Los Angeles")
///     .sorted(byKeyPath: "address.street")
/// for contact in contacts { print(contact.name) }
/// ```
/// Nothing runs until the results are read; each read shows the `Reef`'s current state. The
/// query runs in the store over the stored bytes, with an index where the planner finds one.
/// Iterating streams the matches; ``count`` counts without making objects.
public struct Results<Element: Object>: RandomAccessCollection, CustomStringConvertible {
  /// The `Reef` the results read (a frozen one for frozen results).
  public let reef: Reef
  let schema: ObjectSchema
  let conditions: [QueryNode]
  let sortKeys: [SortKey]
  /// Stored paths whose combination of values each object must have first (``distinct(by:)``).
  let distinctPaths: [String]
  /// The collection property whose objects these results are, in its order (`list.filter(…)`);
  /// nil for results over every object of the type.
  let base: ResultsBase?
  /// The `Reef`'s ``Reef/invalidations`` when these results were made: a later
  /// ``Reef/invalidate()`` makes them ``isInvalidated``.
  let generation: Int
  /// The results' cache; also their identity (see `==`).
  let snapshot = Snapshot()

  /// The matching documents' `_id`s in order, kept for one version of the `Reef`.
  final class Snapshot {
    var version: [Int] = []
    var ids: [BSON] = []
    var countVersion: [Int] = []
    var count = 0
  }

  /// What the results depend on (see ``Reef/resultsVersion(_:structuralOnly:)``): changing an
  /// object's properties leaves the order of `objects(T.self)` as it was.
  private var currentVersion: [Int] {
    let own = reef.resultsVersion(
      schema.className,
      structuralOnly: conditions.isEmpty && sortKeys.isEmpty && distinctPaths.isEmpty && base == nil)
    guard let base else { return own }
    return own + reef.resultsVersion(base.ownerCollection, structuralOnly: false)
  }

  init(
    reef: Reef, schema: ObjectSchema, conditions: [QueryNode] = [], sortKeys: [SortKey] = [],
    distinctPaths: [String] = [], base: ResultsBase? = nil
  ) {
    self.reef = reef
    self.schema = schema
    self.conditions = conditions
    self.sortKeys = sortKeys
    self.distinctPaths = distinctPaths
    self.base = base
    generation = reef.invalidations
  }

  /// The same results with other conditions, sort or distinct paths.
  func with(conditions: [QueryNode]? = nil, sortKeys: [SortKey]? = nil, distinctPaths: [String]? = nil) -> Results {
    Results(
      reef: reef, schema: schema, conditions: conditions ?? self.conditions, sortKeys: sortKeys ?? self.sortKeys,
      distinctPaths: distinctPaths ?? self.distinctPaths, base: base)
  }

  /// What the results are, apart from the `Reef` they read: the same results are made of it in
  /// another `Reef` of the file (frozen, thawed, on another thread or queue).
  var definition: ResultsDefinition {
    ResultsDefinition(
      schema: schema, conditions: conditions, sortKeys: sortKeys, distinctPaths: distinctPaths, base: base)
  }

  /// The results a definition describes, read by `reef`.
  init(reef: Reef, definition: ResultsDefinition) {
    self.init(
      reef: reef, schema: definition.schema, conditions: definition.conditions, sortKeys: definition.sortKeys,
      distinctPaths: definition.distinctPaths, base: definition.base)
  }

  /// The conditions as one query node, not yet compiled (links are resolved first).
  private var conditionsNode: QueryNode {
    switch conditions.count {
    case 0: .constant(true)
    case 1: conditions[0]
    default: .and(conditions)
    }
  }

  /// The conditions compiled, after the links they go through are resolved (in this `Reef`'s
  /// current state).
  func compiledQuery() throws(ReefError) -> ReefQuery.Query {
    let node = try read { () throws(StoreError) in try LinkPaths.resolve(conditionsNode, schema: schema, reef: reef) }
    do {
      return try ReefQuery.Query(node)
    } catch {
      throw compileError(error)
    }
  }

  /// Runs the query in the store.
  private func cursor(sorted: Bool = true) throws(ReefError) -> Cursor {
    reef.checkThread()
    // Compiled once, after the links are resolved.
    let query = try compiledQuery()
    let sort = sorted && !sortKeys.isEmpty && !sortsThroughLinks ? SortSpecification(sortKeys) : nil
    return try read { () throws(StoreError) in
      try reef.transaction().collection(schema.className).find(query, options: FindOptions(sort: sort))
    }
  }

  private func compileError(_ error: QueryError) -> ReefError {
    var wrapped = ReefError(
      .invalidQuery, "the query on \(schema.className) cannot be compiled: \(error)", type: schema.className)
    wrapped.queryError = error
    return wrapped
  }

  /// Runs a store read of the results, wrapping its error: a query that fails while it runs (a
  /// regular expression over its match limit, a damaged document) is an ``ReefError/Kind/invalidQuery``
  /// error with the query module's error, other store errors ``ReefError/Kind/store``.
  private func read<R>(_ body: () throws(StoreError) -> R) throws(ReefError) -> R {
    let gate = reef.enterSnapshot()
    defer { gate?.unlock() }
    do {
      return try storeCall(type: schema.className, body)
    } catch {
      guard let queryError = error.storeError?.queryError else { throw error }
      var wrapped = error
      wrapped.kind = .invalidQuery
      wrapped.queryError = queryError
      throw wrapped
    }
  }

  /// What the non-throwing reads (iteration, `count`, subscripts, aggregates) do with an error:
  /// stop, naming it. A wrong answer (the matches before the error, as if there were no more)
  /// would be worse; ``fetch()`` and ``fetchCount()`` give the error to the caller instead.
  private func stop(_ error: ReefError) -> Never {
    reefStop("reading Results<\(schema.className)> failed: \(error) (use fetch() to get the error)")
  }

  /// The matching objects in the results' order, read now; what stops the non-throwing reads
  /// is thrown instead.
  ///
  /// Use it for queries built from user input (a pathological regular expression ends at its
  /// match limit with ``ReefError/Kind/invalidQuery``).
  /// - Throws: ``ReefError/Kind/invalidQuery`` for a query that cannot be compiled or fails
  ///   while it runs (with ``ReefError/queryError``), ``ReefError/Kind/store`` for the store's
  ///   errors.
  public func fetch() throws(ReefError) -> [Element] {
    let next = try documentStream()
    var objects: [Element] = []
    while let document = try next() { objects.append(reef.object(Element.self, schema: schema, document: document)) }
    return objects
  }

  /// How many objects match, counted now; what stops ``count`` is thrown instead.
  /// - Throws: as ``fetch()``.
  public func fetchCount() throws(ReefError) -> Int {
    if distinctPaths.isEmpty && base == nil {
      let cursor = try cursor(sorted: false)
      return try read { () throws(StoreError) in try cursor.count() }
    }
    return try fetchIDs().count
  }

  /// Whether a sort key goes through a to-one link (the store cannot sort by another
  /// collection's fields: such results are sorted here).
  private var sortsThroughLinks: Bool { sortKeys.contains { LinkPaths.sortValue(of: $0.path, schema: schema) != nil } }

  /// The matching documents in the results' order, the first of each distinct combination.
  private func documents() -> AnyIterator<Document> {
    do {
      let next = try documentStream()
      return AnyIterator {
        do throws(ReefError) {
          return try next()
        } catch {
          stop(error)
        }
      }
    } catch {
      stop(error)
    }
  }

  /// The matching documents in the results' order, the first of each distinct combination, one
  /// per call (nil at the end).
  private func documentStream() throws(ReefError) -> () throws(ReefError) -> Document? {
    let sorted = try sortedDocuments()
    guard !distinctPaths.isEmpty else { return sorted }
    var seen = Set<[BSON]>()
    // A path through a to-one link reads the linked object; an object with a null link on the
    // way is left out, as Realm leaves it out.
    let paths = distinctPaths.map { path in (path, LinkPaths.distinctValue(of: FieldPath(path), schema: schema)) }
    let reef = reef
    return { () throws(ReefError) -> Document? in
      next: while let document = try sorted() {
        var values: [BSON] = []
        for (path, linked) in paths {
          guard let linked else {
            values.append(document[path] ?? .null)
            continue
          }
          guard let value = try read({ () throws(StoreError) in try linked(document, reef) }) else { continue next }
          values.append(value)
        }
        if seen.insert(values).inserted { return document }
      }
      return nil
    }
  }

  private func sortedDocuments() throws(ReefError) -> () throws(ReefError) -> Document? {
    if let base {
      var sorted = sortedHere(try baseDocuments(base)).makeIterator()
      return { () throws(ReefError) -> Document? in sorted.next() }
    }
    let cursor = try cursor()
    guard sortsThroughLinks else {
      return { () throws(ReefError) -> Document? in try read { () throws(StoreError) in try cursor.next() } }
    }
    var documents: [Document] = []
    while let document = try read({ () throws(StoreError) in try cursor.next() }) { documents.append(document) }
    var sorted = sortedHere(documents).makeIterator()
    return { () throws(ReefError) -> Document? in sorted.next() }
  }

  /// `documents` sorted here by the results' sort keys (stable: equal ones keep their order).
  private func sortedHere(_ documents: [Document]) -> [Document] {
    guard !sortKeys.isEmpty else { return documents }
    var keyed: [(keys: [BSON], position: Int, document: Document)] = []
    for (position, document) in documents.enumerated() {
      let keys = sortKeys.map { key in
        LinkPaths.sortValue(of: key.path, schema: schema)?(document, reef) ?? document[key.path.description] ?? .null
      }
      keyed.append((keys, position, document))
    }
    keyed.sort { a, b in
      for (index, key) in sortKeys.enumerated() {
        let order = compareBSON(a.keys[index], b.keys[index])
        if order != 0 { return key.ascending ? order < 0 : order > 0 }
      }
      return a.position < b.position
    }
    return keyed.map(\.document)
  }

  /// The documents of the base collection's objects that match the conditions, in the
  /// collection's order (an object the collection holds twice comes twice).
  private func baseDocuments(_ base: ResultsBase) throws(ReefError) -> [Document] {
    let identities = base.identities(in: reef)
    guard !identities.isEmpty else { return [] }
    let restriction: QueryNode
    do {
      restriction = try Query(filter: [schema.identityColumn: ["$in": .array(BSONArray(identities))]]).node
    } catch {
      throw compileError(error)
    }
    let matching = Results(
      reef: reef, schema: schema, conditions: conditions + [restriction], sortKeys: [], distinctPaths: [])
    let cursor = try matching.cursor(sorted: false)
    var byIdentity: [BSON: Document] = [:]
    while let document = try read({ () throws(StoreError) in try cursor.next() }) {
      byIdentity[DocumentChange.identity(of: reef.identity(of: schema, document: document))] = document
    }
    return identities.compactMap { byIdentity[DocumentChange.identity(of: $0)] }
  }

  func ids() -> [BSON] {
    do {
      return try fetchIDs()
    } catch {
      stop(error)
    }
  }

  /// Calls `body` with each matching document, in the results' order (the first of each
  /// distinct combination).
  func forEachDocument(_ body: (Document) throws(ReefError) -> Void) throws(ReefError) {
    let next = try documentStream()
    while let document = try next() { try body(document) }
  }

  /// Reads a stored failure the way the results' reads do (a query error is
  /// ``ReefError/Kind/invalidQuery``).
  func readDocument(id: BSON) throws(ReefError) -> Document? {
    try read { () throws(StoreError) in try reef.transaction().collection(schema.className).document(forID: id) }
  }

  func fetchIDs() throws(ReefError) -> [BSON] {
    let gate = reef.enterSnapshot()
    defer { gate?.unlock() }
    let version = currentVersion
    if snapshot.version == version { return snapshot.ids }
    let next = try documentStream()
    var ids: [BSON] = []
    while let document = try next() { ids.append(document["_id"] ?? .null) }
    snapshot.ids = ids
    snapshot.version = version
    return ids
  }

  // MARK: Collection

  public var startIndex: Int { 0 }
  public var endIndex: Int { count }

  /// How many objects match, counted in the store.
  public var count: Int {
    let gate = reef.enterSnapshot()
    defer { gate?.unlock() }
    let version = currentVersion
    if snapshot.version == version { return snapshot.ids.count }
    if snapshot.countVersion == version { return snapshot.count }
    reef.checkThread()
    let count: Int
    do {
      count = try fetchCount()
    } catch {
      stop(error)
    }
    snapshot.count = count
    snapshot.countVersion = version
    return count
  }

  /// The object at `position` in the results' order.
  ///
  /// A position out of bounds stops with Realm's message.
  public subscript(position: Int) -> Element {
    let gate = reef.enterSnapshot()
    defer { gate?.unlock() }
    let ids = ids()
    CollectionElements.checkIndex(position, below: ids.count)
    let document: Document?
    do {
      document = try readDocument(id: ids[position])
    } catch {
      stop(error)
    }
    guard let document else { reefStop("the object at \(position) of the results is gone") }
    return reef.object(Element.self, schema: schema, document: document)
  }

  /// An iterator that streams the matches from the store.
  public struct Iterator: IteratorProtocol {
    let results: Results
    let documents: AnyIterator<Document>
    public mutating func next() -> Element? {
      guard let document = documents.next() else { return nil }
      return results.reef.object(Element.self, schema: results.schema, document: document)
    }
  }

  /// Streams the matching objects. In a write transaction, iterates the results as they were
  /// when the loop began (a loop that changes or deletes the objects it reads sees each once).
  public func makeIterator() -> Iterator {
    guard reef.isInWriteTransaction else { return Iterator(results: self, documents: documents()) }
    var ids = ids().makeIterator()
    let collection = schema.className
    let reef = reef
    return Iterator(
      results: self,
      documents: AnyIterator {
        while let id = ids.next() {
          let document: Document?
          do {
            document = try storeCall(type: collection) { () throws(StoreError) in
              try reef.transaction().collection(collection).document(forID: id)
            }
          } catch {
            reefStop("reading Results<\(collection)> failed: \(error)")
          }
          if let document { return document }
        }
        return nil
      })
  }

  /// The first object, or nil.
  public var first: Element? {
    var iterator = makeIterator()
    return iterator.next()
  }

  /// The last object, or nil.
  public var last: Element? { isEmpty ? nil : self[count - 1] }

  /// Whether no object matches.
  public var isEmpty: Bool { first == nil }

  // MARK: Refining

  /// The results that also match a predicate in Realm's language (`"address.city == %@"`,
  /// `"age > $0"`, `"ANY dogs.name BEGINSWITH[c] 'f'"`), with its arguments: `String`,
  /// numbers, `Bool`, `Date`, `Data`, `ObjectId`, `UUID`, `Decimal128`, objects (their
  /// primary keys), arrays of these, nil.
  ///
  /// An invalid predicate, or one naming a property its type does not declare, stops the
  /// program at the call, as Realm's does ("Property 'x' not found in object of type 'T'"); use
  /// ``filter(validating:_:)`` to get it as an error.
  public func filter(_ predicateFormat: String, _ args: Any...) -> Results { filter(predicateFormat, args) }

  /// The results that also match an `NSPredicate`: one made with `NSPredicate(format:…)`
  /// (Reef's own on Linux, where swift-corelibs-foundation has none), `NSPredicate(value:)`, or
  /// an `NSCompoundPredicate` of these.
  ///
  /// An invalid predicate stops with the query's message, as ``filter(_:_:)``; so
  /// does a block predicate (`NSPredicate(block:)`), which Reef cannot read.
  public func filter(_ predicate: NSPredicate) -> Results { filter(FilterPredicate(predicate)) }

  func filter(_ predicateFormat: String, _ args: [Any]) -> Results { filter(.format(predicateFormat, args)) }

  func filter(_ predicate: FilterPredicate) -> Results {
    do {
      return try filter(validating: predicate)
    } catch {
      reefStop("\(error)")
    }
  }

  /// ``filter(_:_:)`` that throws for an invalid predicate instead of stopping.
  /// - Throws: ``ReefError/Kind/invalidQuery`` with the query module's message (and column),
  ///   or Realm's for a property name the type does not declare.
  public func filter(validating predicateFormat: String, _ args: [Any]) throws(ReefError) -> Results {
    try filter(validating: .format(predicateFormat, args))
  }

  func filter(validating predicate: FilterPredicate) throws(ReefError) -> Results {
    let query: Query
    do {
      query = try Query(predicate.parsed())
    } catch {
      var wrapped = ReefError(.invalidQuery, error.description, type: schema.className)
      wrapped.queryError = error
      throw wrapped
    }
    if let unknown = KeyPathCheck.unknown(in: query.node, of: schema)
      ?? query.sort.lazy.compactMap({ KeyPathCheck.unknown(in: $0.path, of: schema) }).first
    {
      throw ReefError(
        .invalidQuery, "Property '\(unknown.name)' not found in object of type '\(unknown.typeName)'",
        type: unknown.typeName, property: unknown.name)
    }
    var results = with(conditions: conditions + [FieldMapping(schema).map(query.node)])
    if !query.sort.isEmpty { results = results.sorted(by: query.sort) }
    return results
  }

  /// The results that also match a MongoDB filter document (`["address.city": "Los Angeles"]`).
  public func filter(document filter: Document) -> Results {
    do {
      let node = try Query(filter: filter).node
      return with(conditions: conditions + [FieldMapping(schema).map(node)])
    } catch {
      reefStop("\(error)")
    }
  }

  /// The results sorted by a property (dotted paths go through embedded objects and links).
  ///
  /// A key path naming a property its type does not declare stops at the call, with Realm's
  /// message ("Cannot sort on key path 'x': property 'T.x' does not exist.").
  public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results {
    schema.requireSortable(keyPath)
    return sorted(by: [SortKey(FieldMapping(schema).map(FieldPath(keyPath)), ascending: ascending)])
  }

  /// The results sorted by several properties, the first deciding first (each key path as in
  /// ``sorted(byKeyPath:ascending:)``).
  public func sorted<S: Sequence>(by keyPaths: S) -> Results where S.Element == SortDescriptor {
    let descriptors = Array(keyPaths)
    for descriptor in descriptors { schema.requireSortable(descriptor.keyPath) }
    return sorted(
      by: descriptors.map { SortKey(FieldMapping(schema).map(FieldPath($0.keyPath)), ascending: $0.ascending) })
  }

  private func sorted(by keys: [SortKey]) -> Results { with(sortKeys: keys) }

  // MARK: Aggregates

  /// The non-null values of a property among the results, each with its element (decoded into
  /// a Swift value only where one is needed).
  ///
  /// A property path its type does not declare stops, with Realm's message.
  private func values(of property: String) -> [(value: BSON, element: Document.Element)] {
    schema.requireProperty(property)
    let path = FieldMapping(schema).map(FieldPath(property)).description
    var values: [(value: BSON, element: Document.Element)] = []
    func take(_ document: Document) {
      if let element = document.element(atPath: path), element.type != .null {
        values.append((element.value, element))
      }
    }
    do {
      if base != nil {
        // Each of the collection's objects as often as it holds it.
        try forEachDocument { take($0) }
      } else {
        let cursor = try cursor(sorted: false)
        while let document = try read({ () throws(StoreError) in try cursor.next() }) { take(document) }
      }
    } catch {
      stop(error)
    }
    return values
  }

  /// A scalar read from a stored element (scalars need no owner).
  private func scalar<T: _ReefScalar>(_ element: Document.Element, as type: T.Type) -> T? {
    T._reefDecode(element, _ReadContext(owner: nil, field: "", index: nil))
  }

  /// The smallest value of a property among the results, or nil when there is none.
  public func min<T: _ReefScalar>(ofProperty property: String) -> T? {
    values(of: property).min { compareBSON($0.value, $1.value) < 0 }.flatMap { scalar($0.element, as: T.self) }
  }

  /// The largest value of a property among the results, or nil when there is none.
  public func max<T: _ReefScalar>(ofProperty property: String) -> T? {
    values(of: property).max { compareBSON($0.value, $1.value) < 0 }.flatMap { scalar($0.element, as: T.self) }
  }

  /// The sum of a numeric property over the results.
  public func sum<T: _ReefScalar & AdditiveArithmetic>(ofProperty property: String) -> T {
    values(of: property).compactMap { scalar($0.element, as: T.self) }.reduce(.zero, +)
  }

  /// The average of a numeric property over the results, or nil when there is none.
  public func average<T: BinaryFloatingPoint>(ofProperty property: String) -> T? {
    let numbers = values(of: property).compactMap { scalar($0.element, as: Double.self) }
    return numbers.isEmpty ? nil : T(numbers.reduce(0, +) / Double(numbers.count))
  }

  /// The results with only the first object of each distinct combination of values of the
  /// properties (dotted paths go through embedded objects), in the results' order.
  ///
  /// A key path naming a property its type does not declare stops at the call, with Realm's
  /// message.
  public func distinct<S: Sequence>(by keyPaths: S) -> Results where S.Element == String {
    let paths = Array(keyPaths)
    for path in paths { schema.requireSortable(path, distinct: true) }
    return with(distinctPaths: paths.map { FieldMapping(schema).map(FieldPath($0)).description })
  }

  /// Realm's description: `Results<Dog> <0x…> (\n\t[0] Dog {…}\n)`, the first 100 objects,
  /// each indented one level.
  public var description: String { description(depth: CollectionElements.descriptionDepth) }

  func description(depth: Int) -> String {
    CollectionElements.describe("Results", schema.className, address: snapshot, count: count, prefix(100), depth: depth)
  }
}

extension Results: DepthDescribable {}

/// A sort key for ``Results/sorted(by:)``: a property path and a direction.
public struct SortDescriptor: Hashable, Sendable, ExpressibleByStringLiteral {
  /// The property, or a dotted path through embedded objects.
  public var keyPath: String
  /// Whether smaller values come first.
  public var ascending: Bool
  /// A sort by `keyPath`.
  public init(keyPath: String, ascending: Bool = true) {
    self.keyPath = keyPath
    self.ascending = ascending
  }
  /// An ascending sort by the property named by the literal.
  public init(stringLiteral value: String) { self.init(keyPath: value) }
}
