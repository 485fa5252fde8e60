import ReefStore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension Reef {
  /// Realm's `Realm.Error`: in Reef, the same type as ``ReefError``, so that Realm's code
  /// catches what Reef throws (`catch Reef.Error.fileNotFound`,
  /// `catch let error as Reef.Error { error.code }`), and Reef's ``ReefError/kind``, type,
  /// property and wrapped store error stay on it.
  public typealias Error = ReefError
}

extension ReefError {
  /// Realm's classification of an error (`Realm.Error.Code`, its `RLMError` codes), read from
  /// the error's ``ReefError/kind`` and the store's error it wraps; extensible.
  ///
  /// Realm reports most rules broken with exceptions, not errors, so the codes are about files:
  /// opening a `Reef`, copying and deleting its files. Every other error is ``fail``, but
  /// ``ReefError/Kind/invalidValue`` and ``ReefError/Kind/invalidQuery``, which are
  /// ``invalidInput``.
  public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// Realm's number for the code (`RLMError`'s raw value).
    public let rawValue: Int
    /// A code by Realm's number.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// No more specific code.
    public static let fail = Code(rawValue: 1)
    /// The file cannot be opened or created: not a store, a path through a file, damaged.
    public static let fileAccess = Code(rawValue: 2)
    /// This process may not open or create the file (`EACCES`, `EPERM`, `EROFS`).
    public static let filePermissionDenied = Code(rawValue: 3)
    /// A file is already there (the target of ``Reef/writeCopy(toFile:)``).
    public static let fileExists = Code(rawValue: 4)
    /// No file is there: a read-only `Reef` of a file that does not exist, or a copy into a
    /// directory that does not exist.
    public static let fileNotFound = Code(rawValue: 5)
    /// The file needs a format upgrade that was not allowed (Reef has no older formats: never
    /// reported today).
    public static let fileFormatUpgradeRequired = Code(rawValue: 6)
    /// The file's lock is held in a way this process cannot share.
    public static let incompatibleLockFile = Code(rawValue: 8)
    /// The file cannot be mapped: no address space left (`ENOMEM`).
    public static let addressSpaceExhausted = Code(rawValue: 9)
    /// The stored schema differs from the classes and no migration was given
    /// (``ReefError/Kind/schemaMismatch``).
    public static let schemaMismatch = Code(rawValue: 10)
    /// The operation needs the file closed, and it is open.
    public static let alreadyOpen = Code(rawValue: 12)
    /// A value or a query that does not fit (``ReefError/Kind/invalidValue``,
    /// ``ReefError/Kind/invalidQuery``).
    public static let invalidInput = Code(rawValue: 13)
    /// The disk (or the store's map) is full; nothing of the write was kept.
    public static let outOfDiskSpace = Code(rawValue: 14)

    public var description: String {
      switch self {
      case .fail: "fail"
      case .fileAccess: "fileAccess"
      case .filePermissionDenied: "filePermissionDenied"
      case .fileExists: "fileExists"
      case .fileNotFound: "fileNotFound"
      case .fileFormatUpgradeRequired: "fileFormatUpgradeRequired"
      case .incompatibleLockFile: "incompatibleLockFile"
      case .addressSpaceExhausted: "addressSpaceExhausted"
      case .schemaMismatch: "schemaMismatch"
      case .alreadyOpen: "alreadyOpen"
      case .invalidInput: "invalidInput"
      case .outOfDiskSpace: "outOfDiskSpace"
      default: "code \(rawValue)"
      }
    }
  }

  /// Realm's code of this error (see ``Code``): for an error of the store, from what the store
  /// reports (the failed system call's `errno`, a damaged or full file).
  public var code: Code {
    switch kind {
    case .schemaMismatch: return .schemaMismatch
    case .alreadyOpen: return .alreadyOpen
    case .invalidValue, .invalidQuery: return .invalidInput
    case .store: return storeError.map(ReefError.code) ?? .fail
    default: return .fail
    }
  }

  /// The code of a store's error.
  private static func code(of error: StoreError) -> Code {
    if let number = error.systemErrorNumber {
      switch number {
      case ENOENT: return .fileNotFound
      case EACCES, EPERM, EROFS: return .filePermissionDenied
      case EEXIST: return .fileExists
      case ENOMEM: return .addressSpaceExhausted
      case ENOSPC: return .outOfDiskSpace
      case EAGAIN, EWOULDBLOCK: return .incompatibleLockFile
      default: return .fileAccess
      }
    }
    switch error.kind {
    case .open, .corrupt: return .fileAccess
    case .full: return .outOfDiskSpace
    default: return .fail
    }
  }

  // Realm's spellings: `Realm.Error.fileAccess` is a code, matched against an error by `~=`
  // (`catch Reef.Error.fileAccess`).

  /// ``Code/fail``.
  public static let fail = Code.fail
  /// ``Code/fileAccess``.
  public static let fileAccess = Code.fileAccess
  /// ``Code/filePermissionDenied``.
  public static let filePermissionDenied = Code.filePermissionDenied
  /// ``Code/fileExists``.
  public static let fileExists = Code.fileExists
  /// ``Code/fileNotFound``.
  public static let fileNotFound = Code.fileNotFound
  /// ``Code/fileFormatUpgradeRequired``.
  public static let fileFormatUpgradeRequired = Code.fileFormatUpgradeRequired
  /// ``Code/incompatibleLockFile``.
  public static let incompatibleLockFile = Code.incompatibleLockFile
  /// ``Code/addressSpaceExhausted``.
  public static let addressSpaceExhausted = Code.addressSpaceExhausted
  /// ``Code/schemaMismatch``.
  public static let schemaMismatch = Code.schemaMismatch
  /// ``Code/alreadyOpen``.
  public static let alreadyOpen = Code.alreadyOpen
  /// ``Code/invalidInput``.
  public static let invalidInput = Code.invalidInput
  /// ``Code/outOfDiskSpace``.
  public static let outOfDiskSpace = Code.outOfDiskSpace
}

/// Whether `error` is a ``ReefError`` with `code`: Realm's pattern,
/// `catch Reef.Error.fileNotFound { … }`, or `case Reef.Error.fileAccess` in a `switch` over an
/// error.
public func ~= (code: ReefError.Code, error: any Error) -> Bool {
  (error as? ReefError)?.code == code
}
