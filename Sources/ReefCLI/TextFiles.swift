import ReefBSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Reads a whole UTF-8 text file.
/// - Throws: ``BSONError/Kind/io`` naming the file when it cannot be opened or read.
func readTextFile(_ path: String) throws(BSONError) -> String {
  let source = try ByteSource(path: path, compression: .none)
  defer { source.close() }
  return String(decoding: try source.readAll(), as: UTF8.self)
}

/// Replaces a file's contents by writing a sibling and renaming it over the file, keeping the
/// file's permissions.
/// - Throws: ``BSONError/Kind/io`` naming the file when it cannot be written.
func writeTextFile(_ path: String, _ text: String) throws(BSONError) {
  var info = stat()
  let mode = stat(path, &info) == 0 ? info.st_mode & 0o7777 : 0o644
  let temporary = "\(path).reef-port-\(getpid())"
  let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
  guard descriptor >= 0 else {
    throw BSONError(.io, "cannot write '\(temporary)': \(String(cString: strerror(errno)))")
  }
  var bytes = Array(text.utf8)
  var offset = 0
  while offset < bytes.count {
    let n = bytes.withUnsafeMutableBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
    if n < 0 && errno == EINTR { continue }
    guard n > 0 else {
      let reason = String(cString: strerror(errno))
      close(descriptor)
      unlink(temporary)
      throw BSONError(.io, "cannot write '\(temporary)': \(reason)")
    }
    offset += n
  }
  bytes.removeAll()
  guard fsync(descriptor) == 0, close(descriptor) == 0, rename(temporary, path) == 0 else {
    let reason = String(cString: strerror(errno))
    unlink(temporary)
    throw BSONError(.io, "cannot replace '\(path)': \(reason)")
  }
}
