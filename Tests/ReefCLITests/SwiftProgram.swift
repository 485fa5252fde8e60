import Foundation
import ReefTestSupport

/// Compiles Swift source against the package's built ReefSwift into an executable, as a user's
/// program would be: `swiftc` with the build's module folder and the object files of ReefSwift
/// and the modules under it (ReefStore, ReefQuery, ReefBSON), from the build folder this test
/// bundle was built in. No package is resolved or built: a compile and link take a few seconds.
enum SwiftProgram {
  /// Why a program could not be built.
  struct BuildError: Error, CustomStringConvertible {
    var description: String
  }

  /// The modules a ReefSwift program links, lowest last.
  static let modules = ["ReefSwift", "ReefStore", "ReefQuery", "ReefBSON"]

  /// The build folder: where the `reef` this test runs was built.
  static var buildDirectory: URL { URL(fileURLWithPath: reefBinary).deletingLastPathComponent() }

  /// The package's root, from this file's path.
  static var packageRoot: URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
  }

  /// `swiftc`: `$SWIFTC`, or the one on the `PATH`.
  static func compiler() throws -> String {
    if let path = ProcessInfo.processInfo.environment["SWIFTC"] { return path }
    for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
      let candidate = "\(directory)/swiftc"
      if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    throw BuildError(description: "no swiftc on the PATH (set SWIFTC)")
  }

  /// The object files of `module`, as its build's output file map lists them (stale objects of
  /// deleted sources are not taken).
  static func objects(of module: String) throws -> [String] {
    let map = buildDirectory.appendingPathComponent("\(module).build/output-file-map.json")
    guard let data = FileManager.default.contents(atPath: map.path),
      let entries = try JSONSerialization.jsonObject(with: data) as? [String: [String: String]]
    else {
      throw BuildError(
        description: "\(map.path) is missing: build the package's tests first (swift build --build-tests)")
    }
    let objects = entries.values.compactMap { $0["object"] }.sorted()
    guard !objects.isEmpty else { throw BuildError(description: "\(map.path) lists no object files") }
    return objects
  }

  /// Writes `files` (name and source) into `directory` and compiles them into an executable.
  /// - Returns: the executable's path.
  /// - Throws: ``BuildError`` with the compiler's messages and the sources' numbered lines
  ///   when the program does not compile.
  static func build(_ files: [(name: String, source: String)], in directory: TemporaryDirectory) throws -> String {
    var arguments = ["-swift-version", "6", "-I", buildDirectory.appendingPathComponent("Modules").path]
    for library in ["CLMDB", "CPCRE2", "CZlib"] {
      arguments += ["-I", packageRoot.appendingPathComponent("Sources/\(library)").path]
    }
    if let sanitizer = getenvString("REEF_SANITIZER") { arguments.append("-sanitize=\(sanitizer)") }
    for (name, source) in files { arguments.append(try directory.write(name, text: source)) }
    for module in modules { arguments += try objects(of: module) }
    let executable = directory.path("program")
    arguments += ["-o", executable]
    let result = try runProcess(try compiler(), arguments)
    guard result.status == 0 else {
      var listing = ""
      for (name, source) in files {
        listing += "--- \(name)\n"
        for (number, line) in source.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
          listing += "\(number + 1)\t\(line)\n"
        }
      }
      throw BuildError(description: "swiftc failed (\(result.status)):\n\(result.stderr)\n\(listing)")
    }
    return executable
  }
}
