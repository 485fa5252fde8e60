import ReefQuery
import ReefStore

/// Why the object layer refused a schema, a write or a read.
///
/// As ``ReefStore/StoreError``, it has a ``kind`` to switch on and says which rule was broken,
/// on which type and property and, for an object, its primary key. An error from the store is
/// wrapped in ``storeError``, not flattened.
public struct ReefError: Error, Hashable, Sendable, CustomStringConvertible {
  /// A stable classification of the error that callers can switch on; extensible.
  public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// A model class that breaks a schema rule (an unsupported type, a primary key on an
    /// embedded type, a `LinkingObjects` whose origin does not exist…).
    public static let schema = Kind(rawValue: "schema")
    /// The stored schema differs from the classes and no migration was given for it.
    public static let schemaMismatch = Kind(rawValue: "schemaMismatch")
    /// A second object with the same primary key (`add` with `.error`, `create` without update).
    public static let primaryKeyExists = Kind(rawValue: "primaryKeyExists")
    /// A managed object's primary key was changed.
    public static let primaryKeyChanged = Kind(rawValue: "primaryKeyChanged")
    /// A managed embedded object was given a second parent.
    public static let embeddedObjectHasParent = Kind(rawValue: "embeddedObjectHasParent")
    /// An embedded object was added to a `Reef` directly.
    public static let embeddedObjectAdded = Kind(rawValue: "embeddedObjectAdded")
    /// An object of another `Reef`, or an invalidated (deleted) object, was used.
    public static let wrongReef = Kind(rawValue: "wrongReef")
    /// A deleted object was used.
    public static let invalidated = Kind(rawValue: "invalidated")
    /// A value that does not fit its property (`create(_:value:)` with a wrong type, a missing
    /// required value).
    public static let invalidValue = Kind(rawValue: "invalidValue")
    /// A query (predicate, filter or key path) that cannot be compiled for the type.
    public static let invalidQuery = Kind(rawValue: "invalidQuery")
    /// A stored document that does not fit its type's schema.
    public static let documentMismatch = Kind(rawValue: "documentMismatch")
    /// The store failed; ``ReefError/storeError`` says how.
    public static let store = Kind(rawValue: "store")
    /// A write outside a write transaction, or a write transaction begun twice.
    public static let transaction = Kind(rawValue: "transaction")
    /// An operation that needs the file closed, while this process has it open
    /// (``Reef/deleteFiles(for:)``).
    public static let alreadyOpen = Kind(rawValue: "alreadyOpen")
    /// A `Reef` opened or used outside what it is confined to (its thread, queue or actor), or
    /// an operation its confinement does not allow (async writes on a thread-confined `Reef`).
    public static let confinement = Kind(rawValue: "confinement")
  }

  /// What went wrong.
  public var kind: Kind
  /// The message: what was expected and what was found.
  public var message: String
  /// The object type the error is about, when there is one.
  public var typeName: String?
  /// The property the error is about, when there is one.
  public var property: String?
  /// The primary key (or hidden `_id`) of the object the error is about, when there is one.
  public var primaryKey: BSON?
  /// The store's error, when the store failed.
  public var storeError: StoreError?
  /// The query module's error, for a predicate or filter that does not compile (its kind, and
  /// the column or key path of the problem).
  public var queryError: QueryError?

  /// Creates an error.
  public init(
    _ kind: Kind, _ message: String, type typeName: String? = nil, property: String? = nil, primaryKey: BSON? = nil,
    storeError: StoreError? = nil
  ) {
    self.kind = kind
    self.message = message
    self.typeName = typeName
    self.property = property
    self.primaryKey = primaryKey
    self.storeError = storeError
  }

  /// Wraps a store error.
  init(_ error: StoreError, type typeName: String? = nil) {
    self.init(.store, error.message, type: typeName, storeError: error)
  }

  public var description: String {
    var where_: [String] = []
    if let typeName { where_.append(property.map { "\(typeName).\($0)" } ?? typeName) }
    if let primaryKey { where_.append("primary key \(primaryKey)") }
    return where_.isEmpty ? message : "\(message) (\(where_.joined(separator: ", ")))"
  }
}

/// Runs a store call, wrapping what it throws.
@inline(__always)
func storeCall<R>(type typeName: String? = nil, _ body: () throws(StoreError) -> R) throws(ReefError) -> R {
  do {
    return try body()
  } catch {
    throw ReefError(error, type: typeName)
  }
}
