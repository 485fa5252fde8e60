import CLMDB
import ReefBSON
import ReefQuery

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Why a store operation failed.
///
/// Switch on ``kind`` to handle a class of error; the set of kinds may grow, so a `switch` needs
/// a `default:`. ``message`` says what happened, in words. An error from a lower layer is wrapped,
/// not only flattened into the message: a filter or predicate that does not compile keeps its
/// ``queryError`` (with its kind, key path and column), an update that cannot apply keeps its
/// ``updateError``, and a document that does not validate keeps its ``bsonError``.
public struct StoreError: Error, Hashable, Sendable, CustomStringConvertible {
  /// A stable classification of a store error that callers can switch on.
  ///
  /// The set of kinds may grow; a caller can add its own with
  /// `extension StoreError.Kind { static let mine = StoreError.Kind(rawValue: "mine") }`.
  public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The kind's stable name, as it appears in ``description``.
    public let rawValue: String
    /// Creates a kind with a stable name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The kind's name.
    public var description: String { rawValue }

    /// The store could not be opened (missing file in read-only mode, permissions, not a store).
    public static let open = Kind(rawValue: "open")
    /// A second document with the same `_id`, or the same key in a unique index.
    public static let duplicateKey = Kind(rawValue: "duplicateKey")
    /// The memory map or the disk is full; nothing of the transaction was committed.
    public static let full = Kind(rawValue: "full")
    /// A document over the size limit, too deep, or otherwise not storable.
    public static let invalidDocument = Kind(rawValue: "invalidDocument")
    /// A filter, sort, projection or update that cannot be compiled or applied.
    public static let invalidQuery = Kind(rawValue: "invalidQuery")
    /// An index that cannot be created or used (bad spec, key too large, parallel arrays).
    public static let index = Kind(rawValue: "index")
    /// A write in a read-only store or read transaction.
    public static let readOnly = Kind(rawValue: "readOnly")
    /// Stored bytes that do not validate: the file is damaged.
    public static let corrupt = Kind(rawValue: "corrupt")
    /// Any other LMDB error.
    public static let storage = Kind(rawValue: "storage")
    /// A collection name that breaks the naming rules, a collection that must exist does not, or
    /// one that must not exist does (renaming).
    public static let namespace = Kind(rawValue: "namespace")
    /// Another writer changed a collection that an operation had read and was about to replace
    /// (an import swapping in its copy of a collection); nothing of the operation was written.
    public static let conflict = Kind(rawValue: "conflict")
  }

  /// What kind of error this is.
  public var kind: Kind
  /// What happened, in words.
  public var message: String
  /// The query error behind this one: a filter, predicate, sort or projection that does not
  /// compile (kind ``Kind/invalidQuery``), or a sort over its memory limit.
  public var queryError: QueryError?
  /// The update error behind this one: an update document that does not parse or cannot apply
  /// (kind ``Kind/invalidQuery``).
  public var updateError: UpdateError?
  /// The BSON error behind this one: a document that cannot be stored (kind
  /// ``Kind/invalidDocument``), stored bytes that do not validate (``Kind/corrupt``), a sort's
  /// temporary files that cannot be written or read (``Kind/storage``).
  public var bsonError: BSONError?
  /// The LMDB return code behind the error, when the store's own machinery acts on it (a map
  /// that another process grew is adopted and the transaction begun again).
  var lmdbCode: Int32?
  /// The `errno` of the system call that failed, when one did: opening, creating, copying or
  /// removing the store's files (`ENOENT` for a file that is not there, `EACCES` for one this
  /// process may not open, `EEXIST` for a copy's target that exists). The object layer reads
  /// its error code from it (Realm's `.fileNotFound`, `.filePermissionDenied`…).
  public var systemErrorNumber: Int32?

  /// Creates an error of a kind, with a message and the lower-layer error behind it, if any.
  /// - Parameters:
  ///   - kind: the class of error.
  ///   - message: what happened, in words.
  ///   - queryError: the query error behind this one.
  ///   - updateError: the update error behind this one.
  ///   - bsonError: the BSON error behind this one.
  public init(
    _ kind: Kind, _ message: String, queryError: QueryError? = nil, updateError: UpdateError? = nil,
    bsonError: BSONError? = nil
  ) {
    self.kind = kind
    self.message = message
    self.queryError = queryError
    self.updateError = updateError
    self.bsonError = bsonError
  }

  /// The same kind and wrapped errors with another message, for a caller that says where the
  /// error happened. The LMDB code is not kept: the store's machinery acts on it only where LMDB
  /// returned it (a transaction begun again after another process grew the map).
  func with(message: String) -> StoreError {
    var error = self
    error.message = message
    error.lmdbCode = nil
    return error
  }

  /// The message.
  public var description: String { message }

  /// An error of a failed system call: `code` is its `errno`, and `message` is followed by the
  /// system's text for it.
  static func system(_ kind: Kind, _ message: String, code: Int32) -> StoreError {
    var error = StoreError(kind, "\(message): \(String(cString: strerror(code)))")
    error.systemErrorNumber = code
    return error
  }

  /// The map must be adopted from another process that grew it (`MDB_MAP_RESIZED`).
  static var mapResized: StoreError {
    var error = StoreError(.storage, "the store's map was grown by another process")
    error.lmdbCode = MDB_MAP_RESIZED
    return error
  }

  /// An LMDB return code as an error.
  static func lmdb(_ code: Int32, _ doing: String) -> StoreError {
    let text = String(cString: mdb_strerror(code))
    switch code {
    case MDB_MAP_FULL:
      return StoreError(.full, "\(doing): the store's map is full (\(text)); nothing was committed")
    case ENOSPC:
      return StoreError(.full, "\(doing): the disk is full; nothing was committed")
    case EACCES where doing.hasPrefix("write"):
      return StoreError(.readOnly, "\(doing): the store is read-only")
    default:
      return StoreError(.storage, "\(doing): \(text)")
    }
  }
}
