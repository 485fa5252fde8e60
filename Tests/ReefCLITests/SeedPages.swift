import Foundation
import ReefTestSupport

/// The Realm documentation pages of `$REEF_SHARED_DIR/seeds` (default `../shared`), read in
/// place: their Swift models in Realm's older form and their Swift snippets.
enum SeedPages {
  /// The seeds folder, or nil (with a printed reason) when the shared material is absent.
  static let directory: String? = {
    guard let shared = sharedDirectory("the seed pages' models") else { return nil }
    let directory = shared + "/seeds"
    return FileManager.default.fileExists(atPath: directory + "/realm-objects.txt") ? directory : nil
  }()

  /// A page's text.
  static func page(_ name: String) throws -> String {
    guard let directory else { throw SwiftProgram.BuildError(description: "no seeds folder") }
    return try String(contentsOfFile: directory + "/" + name, encoding: .utf8)
  }

  /// The page's Swift model classes (`class X: Object {` or `: EmbeddedObject {` to its closing
  /// brace) that are in the older form (`@objc dynamic var`), in groups in which no class name
  /// repeats (the Realm Objects page declares `Person` twice), in page order.
  static func olderModels(_ page: String) -> [[(name: String, source: String)]] {
    let lines = page.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    var groups: [[(name: String, source: String)]] = [[]]
    var i = 0
    while i < lines.count {
      let line = lines[i]
      guard line.hasPrefix("class "), line.hasSuffix("Object {"), let colon = line.firstIndex(of: ":") else {
        i += 1
        continue
      }
      let name = String(line[line.index(line.startIndex, offsetBy: 6)..<colon])
      var depth = 0
      var block: [String] = []
      repeat {
        block.append(lines[i])
        depth += lines[i].filter { $0 == "{" }.count - lines[i].filter { $0 == "}" }.count
        i += 1
      } while depth > 0 && i < lines.count
      let source = block.joined(separator: "\n") + "\n"
      guard source.contains("@objc dynamic var") else { continue }
      if groups[groups.count - 1].contains(where: { $0.name == name }) { groups.append([]) }
      groups[groups.count - 1].append((name, source))
    }
    return groups.filter { !$0.isEmpty }
  }

  /// The page's Swift snippets: from a line starting with `let ` to the line before the next
  /// Objective-C snippet (`RLMRealm *realm`), blank lines at the end trimmed.
  static func snippets(_ page: String) -> [String] {
    let lines = page.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    var snippets: [String] = []
    var i = 0
    while i < lines.count {
      guard lines[i].hasPrefix("let ") else {
        i += 1
        continue
      }
      var block: [String] = []
      while i < lines.count && !lines[i].hasPrefix("RLMRealm") {
        block.append(lines[i])
        i += 1
      }
      while block.last?.trimmingCharacters(in: .whitespaces).isEmpty == true { block.removeLast() }
      snippets.append(block.joined(separator: "\n") + "\n")
    }
    return snippets
  }
}
