#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Where the shared DriverBench datasets live: `$REEF_SHARED_DIR`, or `../shared` beside the
/// repository root (the root is two folders above this package's `Sources/BenchSupport`).
/// Nothing is copied into the repository; the files are read in place.
public enum SharedData {
  public static let directory: String = {
    if let dir = getenv("REEF_SHARED_DIR").map({ String(cString: $0) }), !dir.isEmpty { return dir }
    // #filePath = <root>/Benchmarks/Sources/BenchSupport/Datasets.swift
    var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(4)
    let root = parts.joined(separator: "/")
    let candidate = root + "/../shared"
    if access(candidate, F_OK) == 0 { return candidate }
    return "../../shared"  // relative to Benchmarks/, where the benchmark plugin runs
  }()

  /// The bytes of `relativePath` under the shared directory, or `nil` (with a message) when absent.
  public static func load(_ relativePath: String) -> [UInt8]? {
    let path = directory + "/" + relativePath
    guard let file = fopen(path, "rb") else {
      warnOnce("reef benchmarks: \(path) not found (set REEF_SHARED_DIR); skipping benchmarks that need it")
      return nil
    }
    defer { fclose(file) }
    var bytes = [UInt8]()
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let n = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
      if n == 0 { break }
      bytes.append(contentsOf: chunk[0..<n])
    }
    return bytes
  }

  nonisolated(unsafe) private static var warned = Set<String>()
  static func warnOnce(_ message: String) {
    guard !warned.contains(message) else { return }
    warned.insert(message)
    printError(message)
  }
}

/// One of DriverBench's extended_bson datasets, as BSON and as its original Extended JSON.
public struct Dataset: Sendable {
  public let name: String
  /// The `.bson` file (pymongo's encoding of the JSON file).
  public let bson: [UInt8]
  /// The `.json` file, canonical Extended JSON as DriverBench ships it.
  public let json: [UInt8]
  /// The per-document task size the DriverBench spec scores with (its MB per 10,000 operations).
  public let specBytes: Int

  public var jsonString: String { String(decoding: json, as: UTF8.self) }

  /// DriverBench's three extended_bson datasets, those that are present.
  public static let extended: [Dataset] = ["flat", "deep", "full"].compactMap(Dataset.extended(_:))

  public static func extended(_ name: String) -> Dataset? {
    guard let bson = SharedData.load("benchdata/extended_bson/\(name)_bson.bson"),
      let json = SharedData.load("benchdata/extended_bson/\(name)_bson.json")
    else { return nil }
    return Dataset(name: name, bson: bson, json: json, specBytes: specTaskBytes[name] ?? bson.count)
  }

  /// DriverBench's task sizes: flat 75.31 MB, deep 22.84 MB, full 57.34 MB per 10,000 operations.
  public static let specTaskBytes: [String: Int] = ["flat": 7531, "deep": 2284, "full": 5734]
}

/// Keeps a value alive and opaque to the optimizer without the benchmark library (used by the
/// sanity checks, which run outside measurement).
@inline(never)
public func consume<T>(_ value: T) { withExtendedLifetime(value) {} }

/// Prints a failed sanity check to stderr and exits: a benchmark comparing against wrong output
/// would be worse than none.
public func check(_ condition: Bool, _ message: @autoclosure () -> String) {
  if !condition {
    printError("reef benchmarks: sanity check failed: \(message())")
    exit(1)
  }
}

/// Writes a line to standard error.
public func printError(_ message: String) {
  var line = message + "\n"
  line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}
