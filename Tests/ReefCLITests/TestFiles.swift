import Foundation
import ReefBSON

/// A fresh temporary directory for one test, removed when the value is deinitialised.
final class TemporaryDirectory {
  let url: URL

  init() throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent("reef-cli-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  deinit { try? FileManager.default.removeItem(at: url) }

  /// The path of `name` inside the directory.
  func path(_ name: String) -> String { url.appendingPathComponent(name).path }

  /// Writes `bytes` to `name` and returns its path.
  @discardableResult
  func write(_ name: String, _ bytes: [UInt8]) throws -> String {
    let path = path(name)
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return path
  }

  /// Writes UTF-8 text to `name` and returns its path.
  @discardableResult
  func write(_ name: String, text: String) throws -> String { try write(name, Array(text.utf8)) }

  /// The bytes of `name`.
  func read(_ name: String) throws -> [UInt8] { try [UInt8](Data(contentsOf: URL(fileURLWithPath: path(name)))) }
}

/// Small documents of several types, for streams.
func sampleDocuments(count: Int) -> [Document] {
  (0..<count).map { i in
    var b = DocumentBuilder()
    b.append("_id", i)
    b.append("name", "person \(i)")
    b.append("score", Double(i) / 4)
    b.append("active", i % 2 == 0)
    b.appendDocument("address") { a in
      a.append("city", i % 3 == 0 ? "London" : "Zürich")
      a.append("zip", Int64(10_000 + i))
    }
    b.appendArray("tags") { t in
      t.append(.string("a"))
      t.append(.int32(Int32(i)))
    }
    return b.document
  }
}

/// The concatenated bytes of `documents`.
func stream(_ documents: [Document]) -> [UInt8] { documents.flatMap(\.bytes) }

/// A document of exactly `size` bytes (at least 25): an `_id` and one long string.
func largeDocument(size: Int) -> Document {
  var b = DocumentBuilder(capacity: size + 64)
  b.append("_id", 1)
  b.append("blob", String(repeating: "x", count: max(0, size - 25)))
  return b.document
}

/// gzip-compresses `bytes` with the system's `gzip`.
func gzipped(_ bytes: [UInt8], in directory: TemporaryDirectory) throws -> [UInt8] {
  let name = "gz-\(UUID().uuidString)"
  try directory.write(name, bytes)
  let result = try runProcess("/bin/gzip", ["-c", directory.path(name)])
  precondition(result.status == 0, "gzip failed: \(result.stderr)")
  return result.stdoutBytes
}

/// What a finished subprocess did.
struct ProcessResult {
  var status: Int32
  var stdoutBytes: [UInt8]
  var stderr: String
  var stdout: String { String(decoding: stdoutBytes, as: UTF8.self) }
  var stdoutLines: [Substring] { stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast() }
}

/// Runs `executable` with `arguments`, optionally feeding a file to standard input; standard
/// output and error go to temporary files so that neither pipe can fill up and block.
func runProcess(_ executable: String, _ arguments: [String], stdinPath: String? = nil) throws -> ProcessResult {
  let directory = try TemporaryDirectory()
  let outPath = directory.path("stdout")
  let errPath = directory.path("stderr")
  _ = FileManager.default.createFile(atPath: outPath, contents: nil)
  _ = FileManager.default.createFile(atPath: errPath, contents: nil)
  let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
  let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
  let process = Process()
  process.executableURL = URL(fileURLWithPath: executable)
  process.arguments = arguments
  process.standardOutput = out
  process.standardError = err
  if let stdinPath {
    process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: stdinPath))
  } else {
    process.standardInput = FileHandle.nullDevice
  }
  try process.run()
  process.waitUntilExit()
  try out.close()
  try err.close()
  return ProcessResult(
    status: process.terminationStatus, stdoutBytes: try directory.read("stdout"),
    stderr: String(decoding: try directory.read("stderr"), as: UTF8.self))
}

/// The built `reef` executable: `$REEF_BINARY`, or `reef` next to the test bundle (both are
/// build products of the same build directory).
let reefBinary: String = {
  if let path = ProcessInfo.processInfo.environment["REEF_BINARY"] { return path }
  var candidates: [URL] = []
  let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
  candidates.append(bundle.deletingLastPathComponent().appendingPathComponent("reef"))
  candidates.append(Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("reef"))
  for url in Bundle.allBundles.map(\.bundleURL) where url.pathExtension == "xctest" {
    candidates.append(url.deletingLastPathComponent().appendingPathComponent("reef"))
  }
  // Tests/ReefCLITests/TestFiles.swift -> package root -> .build/debug/reef
  let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
  candidates.append(root.appendingPathComponent(".build/debug/reef"))
  let found = candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
  return (found ?? candidates[0]).path
}()

/// Runs the built `reef` with `arguments`.
func reef(_ arguments: String..., stdin: String? = nil) throws -> ProcessResult {
  try runProcess(reefBinary, arguments, stdinPath: stdin)
}
