import Foundation
import Testing

/// A stop keeps its message in a release build: ReefSwift's stop function (`Stop.swift`, which
/// imports nothing) is compiled alone with `swiftc -O` into a program that stops, and the
/// program's standard error must hold the message. The same program written with
/// `preconditionFailure` is the control: `-O` drops that message, so a harness that did not
/// build with optimization (or a stop function that went back to `precondition`) fails here.
@Suite struct ReleaseStopTests {
  /// Builds `main` with ReefSwift's `Stop.swift` under `-O` and runs it: its exit status and
  /// standard error.
  private func runOptimized(_ main: String) throws -> (status: Int32, stderr: String) {
    let toolchain = try CompileFailTests.Toolchain()
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reef-release-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let mainFile = directory.appendingPathComponent("main.swift")
    try Data(main.utf8).write(to: mainFile)
    let program = directory.appendingPathComponent("stops")
    let compile = Process()
    compile.executableURL = toolchain.swiftc
    compile.arguments = [
      "-O", "-module-name", "ReleaseStop", root.appendingPathComponent("Sources/ReefSwift/Stop.swift").path,
      mainFile.path, "-o", program.path,
    ]
    let compileOutput = Pipe()
    compile.standardOutput = compileOutput
    compile.standardError = compileOutput
    try compile.run()
    let compilerText = String(decoding: compileOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    compile.waitUntilExit()
    try #require(compile.terminationStatus == 0, "swiftc -O failed: \(compilerText)")
    let run = Process()
    run.executableURL = program
    let errors = Pipe()
    run.standardError = errors
    run.standardOutput = Pipe()
    try run.run()
    let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    run.waitUntilExit()
    return (run.terminationStatus, stderr)
  }

  @Test func aStopKeepsItsMessageInAReleaseBuild() throws {
    let result = try runOptimized(
      """
      let count = CommandLine.arguments.count
      reefRequire(count == 0, "Index \\(count) is out of bounds (count 0)")
      print("not stopped")
      """)
    #expect(result.status != 0)
    #expect(result.stderr.contains("Index 1 is out of bounds (count 0)"), "\(result.stderr)")
  }

  /// Every stop of ReefSwift goes through `Stop.swift`: its sources call no `precondition`,
  /// `preconditionFailure` or `assert` (whose messages `-O` drops, or which `-O` removes), and
  /// `fatalError` only for the abstract members of base classes (never reached).
  @Test func reefSwiftStopsOnlyThroughItsStopFunction() throws {
    let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Sources/ReefSwift")
    let files = try FileManager.default.contentsOfDirectory(atPath: sources.path).filter { $0.hasSuffix(".swift") }
    #expect(files.count > 50, "the sources were found: \(files.count) files")
    let forbidden = try Regex(#"\b(precondition|preconditionFailure|assert|assertionFailure)\("#)
    let fatal = try Regex(#"\bfatalError\("#)
    var found: [String] = []
    for file in files where file != "Stop.swift" {
      let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
      for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        let code = line.trimmingCharacters(in: .whitespaces)
        guard !code.hasPrefix("//") else { continue }
        let abstract = line.contains(#"fatalError("abstract")"#) || line.contains("fatalError()")
        if line.contains(forbidden) || (line.contains(fatal) && !abstract) {
          found.append("\(file):\(number + 1): \(code)")
        }
      }
    }
    #expect(found.isEmpty, "stops that do not go through reefStop/reefRequire:\n\(found.joined(separator: "\n"))")
  }

  @Test func preconditionDropsItsMessageInAReleaseBuild() throws {
    let result = try runOptimized(
      """
      let count = CommandLine.arguments.count
      precondition(count == 0, "Index \\(count) is out of bounds (count 0)")
      print("not stopped")
      """)
    #expect(result.status != 0)
    #expect(!result.stderr.contains("out of bounds"), "\(result.stderr)")
  }
}
