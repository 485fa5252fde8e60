import Foundation
import ReefCLI
import ReefTestSupport
import Testing

/// `reef port`'s diff: the unified format `diff -u` prints, which `patch` applies.
@Suite("reef port: unified diffs")
struct UnifiedDiffTests {
  static let old = (1...20).map { "line \($0)\n" }.joined()

  @Test("equal texts have no diff")
  func equal() {
    #expect(UnifiedDiff.diff(Self.old, Self.old, oldName: "a", newName: "a") == "")
  }

  @Test("one changed line: headers, a hunk with three lines of context")
  func oneChange() {
    let new = Self.old.replacingOccurrences(of: "line 10\n", with: "line ten\n")
    #expect(
      UnifiedDiff.diff(Self.old, new, oldName: "Dog.swift", newName: "Dog.swift") == """
        --- Dog.swift
        +++ Dog.swift
        @@ -7,7 +7,7 @@
         line 7
         line 8
         line 9
        -line 10
        +line ten
         line 11
         line 12
         line 13

        """)
  }

  @Test("changes far apart make two hunks, close ones one")
  func hunks() {
    var lines = Self.old.split(separator: "\n").map(String.init)
    lines[1] = "two"
    lines[17] = "eighteen"
    let far = UnifiedDiff.diff(Self.old, lines.joined(separator: "\n") + "\n", oldName: "a", newName: "a")
    #expect(far.components(separatedBy: "\n@@ ").count == 3)
    #expect(far.contains("@@ -1,5 +1,5 @@") && far.contains("@@ -15,6 +15,6 @@"))
    lines = Self.old.split(separator: "\n").map(String.init)
    lines[5] = "six"
    lines[11] = "twelve"
    let close = UnifiedDiff.diff(Self.old, lines.joined(separator: "\n") + "\n", oldName: "a", newName: "a")
    #expect(close.contains("@@ -3,13 +3,13 @@") && close.components(separatedBy: "\n@@ ").count == 2)
  }

  @Test("insertions at the start and end, and a text without a final newline")
  func edges() {
    let diff = UnifiedDiff.diff("b\nc", "a\nb\nc\nd\n", oldName: "x", newName: "x")
    #expect(diff == "--- x\n+++ x\n@@ -1,2 +1,4 @@\n+a\n b\n-c\n\\ No newline at end of file\n+c\n+d\n")
    #expect(UnifiedDiff.diff("", "a\n", oldName: "x", newName: "x") == "--- x\n+++ x\n@@ -0,0 +1 @@\n+a\n")
    #expect(UnifiedDiff.diff("a\n", "", oldName: "x", newName: "x") == "--- x\n+++ x\n@@ -1 +0,0 @@\n-a\n")
  }

  @Test("patch -p0 turns the old text into the new one", arguments: 0..<12)
  func patchApplies(seed: Int) throws {
    var generator = SplitMix64(seed: UInt64(seed))
    var lines = (0..<(5 + seed * 7)).map { "line \($0)" }
    let old = lines.joined(separator: "\n") + (seed % 3 == 0 ? "" : "\n")
    for _ in 0..<(1 + seed % 5) {
      let at = Int(generator.next() % UInt64(lines.count + 1))
      switch generator.next() % 3 {
      case 0: lines.insert("inserted \(at)", at: at)
      case 1 where at < lines.count: lines.remove(at: at)
      default: if at < lines.count { lines[at] = "changed \(at)" }
      }
    }
    let new = lines.joined(separator: "\n") + (seed % 4 == 0 ? "" : "\n")
    let directory = try TemporaryDirectory()
    try directory.write("file.swift", text: old)
    let patchFile = try directory.write(
      "change.diff", text: UnifiedDiff.diff(old, new, oldName: "file.swift", newName: "file.swift"))
    let result = try runProcess("/bin/sh", ["-c", "cd '\(directory.url.path)' && patch -s -p0 < '\(patchFile)'"])
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(try String(contentsOfFile: directory.path("file.swift"), encoding: .utf8) == new)
  }
}
