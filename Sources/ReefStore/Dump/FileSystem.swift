import ReefBSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The few POSIX file operations the dump code needs, with errors as ``BSONError/Kind/io``.
enum FileSystem {
  /// The text of the current `errno`.
  static func errnoText() -> String { String(cString: strerror(errno)) }

  /// What is at `path`: `nil` when nothing is.
  static func kind(_ path: String) -> FileKind? {
    var st = stat()
    guard stat(path, &st) == 0 else { return nil }
    return (st.st_mode & S_IFMT) == S_IFDIR ? .directory : .file(size: Int(st.st_size))
  }

  enum FileKind: Equatable {
    case directory
    case file(size: Int)
  }

  /// The size of a regular file, or `nil`.
  static func size(_ path: String) -> Int? {
    if case .file(let size)? = kind(path) { return size }
    return nil
  }

  /// The names in a directory, sorted by their bytes, without `.` and `..`.
  static func list(_ path: String) throws(BSONError) -> [String] {
    guard let dir = opendir(path) else { throw BSONError(.io, "cannot read directory '\(path)': \(errnoText())") }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
      }
      if name != ".", name != ".." { names.append(name) }
    }
    return names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
  }

  /// Creates a directory and its missing parents.
  static func makeDirectories(_ path: String) throws(BSONError) {
    if kind(path) == .directory { return }
    let parent = directoryName(path)
    if parent != path, !parent.isEmpty, kind(parent) == nil { try makeDirectories(parent) }
    guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
      throw BSONError(.io, "cannot create directory '\(path)': \(errnoText())")
    }
  }

  /// Removes a file, ignoring errors.
  static func remove(_ path: String) { _ = unlink(path) }

  /// Opens a file for reading.
  static func openForReading(_ path: String) throws(BSONError) -> Int32 {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw BSONError(.io, "cannot open '\(path)': \(errnoText())") }
    return fd
  }

  /// How far the descriptor's file offset is (the raw bytes read so far), or 0.
  static func offset(_ fd: Int32) -> Int { max(0, Int(lseek(fd, 0, SEEK_CUR))) }

  /// `a/b` from `a` and `b`.
  static func join(_ a: String, _ b: String) -> String { a.hasSuffix("/") ? a + b : a + "/" + b }

  /// The last path component, without trailing slashes.
  static func baseName(_ path: String) -> String {
    var trimmed = Substring(path)
    while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
    guard let slash = trimmed.lastIndex(of: "/") else { return String(trimmed) }
    return String(trimmed[trimmed.index(after: slash)...])
  }

  /// Everything before the last path component (`.` for a bare name).
  static func directoryName(_ path: String) -> String {
    var trimmed = Substring(path)
    while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
    guard let slash = trimmed.lastIndex(of: "/") else { return "." }
    return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
  }

  /// A collection name as a file name, as mongodump writes it (Go's `url.PathEscape`): bytes
  /// other than letters, digits and `-._~$&+,:;=@` become `%XX`.
  static func escape(_ name: String) -> String {
    let hex = Array("0123456789ABCDEF".utf8)
    var out: [UInt8] = []
    for byte in name.utf8 {
      switch byte {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"):
        out.append(byte)
      case _ where Array("-._~$&+,:;=@".utf8).contains(byte):
        out.append(byte)
      default:
        out.append(UInt8(ascii: "%"))
        out.append(hex[Int(byte >> 4)])
        out.append(hex[Int(byte & 0x0F)])
      }
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// Undoes ``escape(_:)`` (`%XX` sequences); a name with a malformed or non-UTF-8 escape is
  /// returned as it is, as mongorestore does.
  static func unescape(_ name: String) -> String {
    guard name.utf8.contains(UInt8(ascii: "%")) else { return name }
    let bytes = Array(name.utf8)
    var out: [UInt8] = []
    var i = 0
    while i < bytes.count {
      if bytes[i] == UInt8(ascii: "%") {
        guard i + 2 < bytes.count, let high = hexValue(bytes[i + 1]), let low = hexValue(bytes[i + 2]) else {
          return name
        }
        out.append(high << 4 | low)
        i += 3
      } else {
        out.append(bytes[i])
        i += 1
      }
    }
    return String(validating: out, as: UTF8.self) ?? name
  }

  private static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}

/// CRC-64 with the ECMA-182 polynomial, reflected, as Go's `hash/crc64` computes it with
/// `crc64.MakeTable(crc64.ECMA)` (CRC-64/XZ): the checksum mongodump writes in an archive's
/// namespace EOF blocks.
struct CRC64 {
  private(set) var value: UInt64 = 0

  private static let table: [UInt64] = (0..<256).map { i in
    var c = UInt64(i)
    for _ in 0..<8 { c = c & 1 == 1 ? (c >> 1) ^ 0xC96C_5795_D787_0F42 : c >> 1 }
    return c
  }

  /// Adds bytes to the checksum.
  mutating func update(_ bytes: UnsafeRawBufferPointer) {
    var c = ~value
    Self.table.withUnsafeBufferPointer { table in
      for byte in bytes { c = table[Int(UInt8(truncatingIfNeeded: c) ^ byte)] ^ (c >> 8) }
    }
    value = ~c
  }
}
