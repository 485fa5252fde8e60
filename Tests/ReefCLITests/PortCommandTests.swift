import Foundation
import Testing

/// The built `reef port` on files: a diff by default, `--in-place`, one line per change it could
/// not make on standard error, exit code 1 only for errors.
@Suite("reef binary: port")
struct PortCommandTests {
  static let dog = """
    import RealmSwift

    class Dog: Object {
        @objc dynamic var name = ""
        @objc dynamic var a = 0, b = 0
    }

    """

  static let ported = """
    import ReefSwift

    class Dog: Object {
        @Persisted var name = ""
        @objc dynamic var a = 0, b = 0
    }

    """

  @Test("prints a unified diff that patch -p0 applies, leaves the file, and notes what it could not port")
  func diff() throws {
    let directory = try TemporaryDirectory()
    let path = try directory.write("Dog.swift", text: Self.dog)
    let result = try reef("port", path)
    #expect(result.status == 0)
    #expect(
      result.stdout == """
        --- \(path)
        +++ \(path)
        @@ -1,6 +1,6 @@
        -import RealmSwift
        +import ReefSwift
         
         class Dog: Object {
        -    @objc dynamic var name = ""
        +    @Persisted var name = ""
             @objc dynamic var a = 0, b = 0
         }

        """)
    #expect(
      result.stderr
        == "\(path):5: several properties in one declaration: declare each on its own to port it; left as is\n")
    #expect(try String(contentsOfFile: path, encoding: .utf8) == Self.dog)
    // As a user runs it: in the sources' folder, piped into patch.
    let piped = try runProcess(
      "/bin/sh", ["-c", "cd '\(directory.url.path)' && '\(reefBinary)' port Dog.swift 2>/dev/null | patch -s -p0"])
    #expect(piped.status == 0, "\(piped.stdout)\(piped.stderr)")
    #expect(try String(contentsOfFile: path, encoding: .utf8) == Self.ported)
  }

  @Test("--in-place writes the ported files, keeps their permissions, and leaves files with nothing to port")
  func inPlace() throws {
    let directory = try TemporaryDirectory()
    let dog = try directory.write("Dog.swift", text: Self.dog)
    let plain = try directory.write("Plain.swift", text: "let x = 1\n")
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: dog)
    let before = try FileManager.default.attributesOfItem(atPath: plain)[.modificationDate] as? Date
    let result = try reef("port", "--in-place", dog, plain)
    #expect(result.status == 0)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.hasPrefix("\(dog):5: several properties"))
    #expect(try String(contentsOfFile: dog, encoding: .utf8) == Self.ported)
    let mode = try FileManager.default.attributesOfItem(atPath: dog)[.posixPermissions] as? Int
    #expect(mode == 0o600)
    #expect(try FileManager.default.attributesOfItem(atPath: plain)[.modificationDate] as? Date == before)
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == ["Dog.swift", "Plain.swift"])
  }

  @Test("a file that cannot be read or lexed is an error (exit 1); the other files are still ported")
  func errors() throws {
    let directory = try TemporaryDirectory()
    let broken = try directory.write("Broken.swift", text: "let a = 1\nlet s = \"open\n")
    let dog = try directory.write("Dog.swift", text: Self.dog)
    let missing = directory.path("Missing.swift")
    let result = try reef("port", "--in-place", missing, broken, dog)
    #expect(result.status == 1)
    let lines = result.stderr.split(separator: "\n")
    #expect(lines.first == "reef: error: io: cannot open '\(missing)': No such file or directory")
    #expect(lines.contains("reef: error: \(broken):2: a string does not end"))
    #expect(try String(contentsOfFile: dog, encoding: .utf8) == Self.ported)
  }

  @Test("--help says what it rewrites and what the exit codes mean; no file is a usage error")
  func help() throws {
    let help = try reef("port", "--help")
    #expect(help.status == 0)
    for phrase in ["@Persisted", "LinkingObjects", "--in-place", "FILE:LINE", "The exit code is 1 only for an error"] {
      #expect(help.stdout.contains(phrase), "\(phrase)")
    }
    let none = try reef("port")
    #expect(none.status == 64)
  }
}
