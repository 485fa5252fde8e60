import Foundation
import ReefStore
import ReefSwift
import ReefTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `Reef.Error` with Realm's codes: the errors of opening a `Reef` and of its file operations
/// carry the code Realm gives them, and Realm's ways of matching them compile and match.
@Suite struct ReefErrorCodeTests {
  /// A configuration of `name` in a new temporary directory.
  private func configuration(_ name: String, readOnly: Bool = false) -> Reef.Configuration {
    let directory = makeTemporaryDirectory("reef-error-code", removedAtExit: true)
    var configuration = Reef.Configuration(fileURL: URL(fileURLWithPath: directory + "/" + name))
    configuration.readOnly = readOnly
    return configuration
  }

  /// The error `body` throws (nil when it throws none or another type).
  private func thrown(_ body: () throws -> Void) -> Reef.Error? {
    do {
      try body()
    } catch let error as Reef.Error {
      return error
    } catch {
      Issue.record("threw \(error), not a Reef.Error")
    }
    return nil
  }

  @Test func aReadOnlyReefOfAMissingFileIsFileNotFound() {
    let missing = configuration("missing.reef", readOnly: true)
    var caught = false
    do {
      _ = try Reef(configuration: missing)
    } catch Reef.Error.fileNotFound {
      caught = true
    } catch {
      Issue.record("caught \(error) instead")
    }
    #expect(caught)
    let error = thrown { _ = try Reef(configuration: missing) }
    #expect(error?.code == .fileNotFound && error?.kind == .store)
    #expect(error?.storeError?.systemErrorNumber == ENOENT)
  }

  @Test func aPathThroughAFileIsFileAccess() {
    var configuration = Reef.Configuration()
    configuration.fileURL = URL(fileURLWithPath: "/dev/null/foo.reef")
    let error = thrown { _ = try Reef(configuration: configuration) }
    #expect(error?.code == .fileAccess, "\(String(describing: error))")
    switch error as (any Error)? {
    case Reef.Error.fileAccess?: break
    default: Issue.record("a switch over the error does not match Reef.Error.fileAccess")
    }
  }

  @Test func aFileThatIsNotAStoreIsFileAccess() throws {
    let notAStore = configuration("junk.reef")
    try Data("a".utf8).write(to: notAStore.fileURL!)
    let error = thrown { _ = try Reef(configuration: notAStore) }
    #expect(error?.code == .fileAccess, "\(String(describing: error))")
    #expect(error?.storeError?.kind == .corrupt)
  }

  @Test func aCopyOntoAFileIsFileExistsAndIntoAMissingDirectoryFileNotFound() throws {
    let source = configuration("source.reef")
    let reef = try Reef(configuration: source)
    try reef.write { reef.add(makePerson(1, "Ann")) }
    let directory = source.fileURL!.deletingLastPathComponent()
    let taken = directory.appendingPathComponent("taken.reef")
    try Data("x".utf8).write(to: taken)
    #expect(thrown { try reef.writeCopy(toFile: taken) }?.code == .fileExists)
    let nowhere = directory.appendingPathComponent("no-such-directory/copy.reef")
    #expect(thrown { try reef.writeCopy(toFile: nowhere) }?.code == .fileNotFound)
    let copy = directory.appendingPathComponent("copy.reef")
    try reef.writeCopy(toFile: copy)
    #expect(FileManager.default.fileExists(atPath: copy.path))
  }

  @Test func deletingTheFilesOfAnOpenReefIsAlreadyOpen() throws {
    let open = configuration("open.reef")
    var reef: Reef? = try Reef(configuration: open)
    try reef?.write { reef?.add(makePerson(1, "Ann")) }
    let error = thrown { _ = try Reef.deleteFiles(for: open) }
    #expect(error?.code == .alreadyOpen && error?.kind == .alreadyOpen)
    #expect(FileManager.default.fileExists(atPath: open.fileURL!.path), "nothing was deleted")
    reef = nil
    #expect(try Reef.deleteFiles(for: open))
    #expect(!FileManager.default.fileExists(atPath: open.fileURL!.path))
  }

  @Test func anOlderSchemaVersionThanTheFilesIsSchemaMismatch() throws {
    var newer = configuration("versions.reef")
    newer.schemaVersion = 2
    _ = try Reef(configuration: newer)
    var older = newer
    older.schemaVersion = 1
    let error = thrown { _ = try Reef(configuration: older) }
    #expect(error?.code == .schemaMismatch && error?.kind == .schemaMismatch)
  }

  @Test(.enabled(if: getuid() != 0, "root opens files whatever their permissions"))
  func aFileThisProcessMayNotOpenIsFilePermissionDenied() throws {
    let locked = configuration("locked.reef")
    _ = try Reef(configuration: locked)
    let directory = locked.fileURL!.deletingLastPathComponent().path
    for file in Store.files(at: locked.fileURL!.path) where FileManager.default.fileExists(atPath: file) {
      try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: file)
    }
    defer {
      for file in Store.files(at: locked.fileURL!.path) {
        try? FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
      }
    }
    let error = thrown { _ = try Reef(configuration: locked) }
    #expect(error?.code == .filePermissionDenied, "\(directory): \(String(describing: error))")
  }

  @Test func theStoresSystemErrorGivesTheCode() {
    func code(_ number: Int32?, _ kind: StoreError.Kind = .open) -> Reef.Error.Code {
      var storeError = StoreError(kind, "opening")
      storeError.systemErrorNumber = number
      return ReefError(.store, "opening", storeError: storeError).code
    }
    #expect(code(EACCES) == .filePermissionDenied && code(EPERM) == .filePermissionDenied)
    #expect(code(EROFS) == .filePermissionDenied)
    #expect(code(ENOENT) == .fileNotFound && code(EEXIST) == .fileExists)
    #expect(code(ENOMEM) == .addressSpaceExhausted && code(ENOSPC) == .outOfDiskSpace)
    #expect(code(ENOTDIR) == .fileAccess && code(nil) == .fileAccess && code(nil, .corrupt) == .fileAccess)
    #expect(code(nil, .full) == .outOfDiskSpace && code(nil, .duplicateKey) == .fail)
  }

  @Test func rulesBrokenInAWriteAreFailOrInvalidInput() throws {
    let (reef, _) = try openReef()
    try reef.write { reef.add(makePerson(1, "Ann")) }
    let duplicate = thrown { try reef.write { reef.add(makePerson(1, "Bob")) } }
    #expect(duplicate?.kind == .primaryKeyExists && duplicate?.code == .fail)
    var matched = false
    do {
      try reef.write { reef.add(makePerson(1, "Bob")) }
    } catch Reef.Error.fileAccess {
      Issue.record("matched another code")
    } catch Reef.Error.fail {
      matched = true
    }
    #expect(matched)
    #expect(ReefError(.invalidValue, "no").code == .invalidInput)
    #expect(Reef.Error.fileNotFound == Reef.Error.Code.fileNotFound)
    #expect(
      Reef.Error.Code.fileNotFound.rawValue == 5 && "\(Reef.Error.Code.filePermissionDenied)" == "filePermissionDenied")
    #expect(!(Reef.Error.fail ~= CocoaStyleError()), "another type of error matches no code")
  }
}

/// An error of another type.
private struct CocoaStyleError: Error {}
