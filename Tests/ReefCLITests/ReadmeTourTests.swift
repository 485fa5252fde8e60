import Foundation
import Testing

/// The README's tour is the code of `Examples/Tour/main.swift`, which the build compiles.
@Suite struct ReadmeTourTests {
  @Test func readmeTourIsTheCompiledExample() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
    let example = try String(contentsOf: root.appendingPathComponent("Examples/Tour/main.swift"), encoding: .utf8)
    let start = try #require(readme.range(of: "```swift\nimport Dispatch"))
    let rest = readme[start.upperBound...]
    let end = try #require(rest.range(of: "```\n"))
    let tour = "import Dispatch" + rest[..<end.lowerBound]
    let code = try #require(example.range(of: "import Dispatch"))
    #expect(
      tour.trimmingCharacters(in: .whitespacesAndNewlines)
        == example[code.lowerBound...].trimmingCharacters(in: .whitespacesAndNewlines))
  }

  /// The README's tour of objects is the code of `Examples/ObjectTour/main.swift`.
  @Test func readmeObjectTourIsTheCompiledExample() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
    let example = try String(
      contentsOf: root.appendingPathComponent("Examples/ObjectTour/main.swift"), encoding: .utf8)
    let start = try #require(readme.range(of: "```swift\nimport ReefStore\nimport ReefSwift"))
    let rest = readme[readme.index(start.lowerBound, offsetBy: "```swift\n".count)...]
    let end = try #require(rest.range(of: "```\n"))
    let code = try #require(example.range(of: "import ReefStore"))
    #expect(
      rest[..<end.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
        == example[code.lowerBound...].trimmingCharacters(in: .whitespacesAndNewlines))
  }
}
