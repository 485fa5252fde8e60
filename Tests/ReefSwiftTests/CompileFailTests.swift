import Foundation
import Testing

/// Rules that hold by the types: models that break them must not compile. Each case type-checks
/// a small model file against the ReefSwift module this test run built (`swiftc -typecheck`,
/// a fraction of a second each) and expects the compiler's error, and a control case checks that
/// the harness compiles a correct model, so that a broken harness cannot pass.
@Suite struct CompileFailTests {
  /// What `swiftc` needs to import ReefSwift from this build: its modules and the C module maps
  /// of the system libraries under it.
  struct Toolchain {
    let swiftc: URL
    let arguments: [String]

    init() throws {
      let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
      // The test bundle sits in the build directory, beside `Modules`.
      let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
      let modules = try #require(
        [bundle.deletingLastPathComponent(), bundle.deletingLastPathComponent().deletingLastPathComponent()]
          .map { $0.appendingPathComponent("Modules") }
          .first { FileManager.default.fileExists(atPath: $0.appendingPathComponent("ReefSwift.swiftmodule").path) },
        "no Modules/ReefSwift.swiftmodule beside the test bundle \(bundle.path)")
      let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"
      swiftc = try #require(
        path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent("swiftc") }
          .first { FileManager.default.isExecutableFile(atPath: $0.path) },
        "no swiftc on PATH (\(path))")
      var arguments = ["-typecheck", "-I", modules.path]
      for library in ["CLMDB", "CPCRE2", "CZlib"] {
        arguments += ["-Xcc", "-fmodule-map-file=\(root.path)/Sources/\(library)/module.modulemap"]
      }
      self.arguments = arguments
    }

    /// Type-checks `source`: the exit status and what the compiler printed.
    func typecheck(_ source: String) throws -> (status: Int32, output: String) {
      let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reef-compile-\(UUID().uuidString)")
      try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
      defer { try? FileManager.default.removeItem(at: directory) }
      let file = directory.appendingPathComponent("Model.swift")
      try Data(source.utf8).write(to: file)
      let process = Process()
      process.executableURL = swiftc
      process.arguments = arguments + [file.path]
      let pipe = Pipe()
      process.standardOutput = pipe
      process.standardError = pipe
      try process.run()
      let output = pipe.fileHandleForReading.readDataToEndOfFile()
      process.waitUntilExit()
      return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
  }

  @Test func optionalLinksAndEmbeddedObjectsCompile() throws {
    let result = try Toolchain().typecheck(
      """
      import ReefSwift
      class Dog: Object { @Persisted var name = "" }
      class Address: EmbeddedObject { @Persisted var city = "" }
      class Person: Object {
        @Persisted var dog: Dog?
        @Persisted var address: Address?
        @Persisted var dogs: List<Dog>
        @Persisted var addresses: List<Address>
      }
      """)
    #expect(result.status == 0, "\(result.output)")
  }

  @Test func aNonOptionalLinkDoesNotCompile() throws {
    let result = try Toolchain().typecheck(
      """
      import ReefSwift
      class Dog: Object { @Persisted var name = "" }
      class Person: Object { @Persisted var dog: Dog }
      """)
    #expect(result.status != 0)
    #expect(result.output.contains("'Persisted' requires that 'Dog' conform to '_Persistable'"), "\(result.output)")
  }

  @Test func aNonOptionalEmbeddedObjectDoesNotCompile() throws {
    let result = try Toolchain().typecheck(
      """
      import ReefSwift
      class Address: EmbeddedObject { @Persisted var city = "" }
      class Contact: Object { @Persisted var address: Address }
      """)
    #expect(result.status != 0)
    #expect(
      result.output.contains("'Persisted' requires that 'Address' conform to '_Persistable'"), "\(result.output)")
  }

  @Test func persistedOutsideAnObjectDoesNotCompile() throws {
    let result = try Toolchain().typecheck(
      """
      import ReefSwift
      class Plain { @Persisted var name = "" }
      """)
    #expect(result.status != 0)
    #expect(result.output.contains("requires that 'Plain' inherit from 'ObjectBase'"), "\(result.output)")
  }
}
