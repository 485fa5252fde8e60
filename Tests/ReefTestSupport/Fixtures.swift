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
public func makeTemporaryDirectory(_ prefix: String = "reef-test") -> String {
  var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
  let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
  precondition(made != nil, "mkdtemp failed (errno \(errno))")
  return String(cString: made!)
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
