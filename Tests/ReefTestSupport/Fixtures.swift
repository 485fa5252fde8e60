import ReefBSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Encodes a single-element document `{key: value}` by hand: the reference layout tests compare against.
public func singleElementBytes(type: UInt8, key: String = "a", value: [UInt8]) -> [UInt8] {
  let body = [type] + Array(key.utf8) + [0] + value
  return le32(Int32(4 + body.count + 1)) + body + [0]
}

/// Little-endian bytes of an Int32.
public func le32(_ v: Int32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }

/// Little-endian bytes of an Int64.
public func le64(_ v: Int64) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }

/// The directory of the shared material (`REEF_SHARED_DIR`, default `../shared`), or `nil` with a
/// printed reason when it is absent.
public func sharedDirectory(_ what: String) -> String? {
  let dir = getenvString("REEF_SHARED_DIR") ?? "../shared"
  guard directoryExists(dir) else {
    print("REEF_SHARED_DIR (\(dir)) not found; skipping \(what)")
    return nil
  }
  return dir
}

/// An environment variable's value, or `nil`.
public func getenvString(_ name: String) -> String? {
  guard let p = getenv(name) else { return nil }
  return String(cString: p)
}

/// Whether `path` names a directory.
public func directoryExists(_ path: String) -> Bool {
  var st = stat()
  return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
}

/// Reads a whole file; `nil` when it cannot be read.
public func readFile(_ path: String) -> [UInt8]? {
  guard let f = fopen(path, "rb") else { return nil }
  defer { fclose(f) }
  var out = [UInt8]()
  var buffer = [UInt8](repeating: 0, count: 65536)
  while true {
    let n = fread(&buffer, 1, buffer.count, f)
    if n <= 0 { break }
    out.append(contentsOf: buffer[0..<n])
  }
  return out
}

/// A fresh temporary directory for one test: `/tmp/<prefix>-XXXXXX`.
///
/// With `removedAtExit`, the directory and everything in it are removed when the test process
/// exits normally: for tests whose stores stay open until their objects are released, so that
/// the test cannot remove the directory itself.
public func makeTemporaryDirectory(_ prefix: String = "reef-test", removedAtExit: Bool = false) -> String {
  var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
  let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
  precondition(made != nil, "mkdtemp failed (errno \(errno))")
  let path = String(cString: made!)
  if removedAtExit { ExitRemovals.add(path) }
  return path
}

/// The directories to remove when the process exits.
private enum ExitRemovals {
  nonisolated(unsafe) private static var paths: [String] = []
  nonisolated(unsafe) private static var installed = false
  private static let lock = PthreadLock()

  static func add(_ path: String) {
    lock.withLock {
      paths.append(path)
      guard !installed else { return }
      installed = true
      atexit { ExitRemovals.removeAll() }
    }
  }

  private static func removeAll() {
    let all = lock.withLock { paths }
    for path in all { removeTree(path) }
  }
}

/// A mutex for the test support's globals.
private final class PthreadLock: @unchecked Sendable {
  private var mutex = pthread_mutex_t()
  init() { pthread_mutex_init(&mutex, nil) }
  func withLock<T>(_ body: () -> T) -> T {
    pthread_mutex_lock(&mutex)
    defer { pthread_mutex_unlock(&mutex) }
    return body()
  }
}

/// Removes a directory and everything in it (what ``makeTemporaryDirectory(_:)`` made), or a file.
public func removeTree(_ path: String) {
  if let dir = opendir(path) {
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
      }
      guard name != ".", name != ".." else { continue }
      removeTree(path + "/" + name)
    }
    closedir(dir)
    rmdir(path)
  } else {
    unlink(path)
  }
}
