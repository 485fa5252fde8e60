extension ModelPort {
  /// Realm Swift's names that have another name in ReefSwift, as `reef port` renames them (in
  /// code only, and not after a `.` unless the module is named: `RealmSwift.List`).
  public static let renamedIdentifiers: [String: String] = [
    "Realm": "Reef",
    "RealmSwift": "ReefSwift",
    "RealmProperty": "ReefProperty",
    "RealmOptional": "ReefOptional",
    "AnyRealmValue": "AnyReefValue",
    "AnyRealmCollection": "AnyReefCollection",
    "RealmCollection": "ReefCollection",
    "RealmCollectionChange": "ReefCollectionChange",
    "RealmCollectionValue": "ReefCollectionValue",
    "RealmKeyedCollection": "ReefKeyedCollection",
    "RealmMapValue": "ReefMapValue",
    "RealmOptionalType": "ReefOptionalType",
    "RealmPropertyType": "ReefPropertyType",
    "RealmFetchable": "ReefFetchable",
    "RealmSectionedResult": "ReefSectionedResult",
    "RealmSubscribable": "ReefSubscribable",
    "RealmEnum": "PersistableEnum",
    "deleteRealmIfMigrationNeeded": "deleteReefIfMigrationNeeded",
    // The older names of the className() and propertiesMapping() overrides.
    "_realmObjectName": "className",
    "_realmColumnNames": "propertiesMapping",
  ]
}

extension Rewrite {
  /// The Reef name of the identifier at significant index `k`, when it is one of Realm's names.
  func renamed(_ k: Int) -> String? {
    let text = file.text(k)
    guard let new = ModelPort.renamedIdentifiers[text] else { return nil }
    if file.is(k - 1, "."), text != "deleteRealmIfMigrationNeeded",
      !(file.is(k - 2, "RealmSwift") || file.is(k - 2, "ReefSwift"))
    {
      return nil
    }
    return new
  }

  /// The source text of significant tokens `from` through `through` (what lies between them
  /// included), with Realm's names renamed.
  func renamedText(from: Int, through: Int) -> String {
    guard from <= through else { return "" }
    var text = ""
    var k = from
    for i in file.code[from]...file.code[through] {
      let token = file.tokens[i]
      if token.isSignificant {
        text += token.kind == .identifier ? (renamed(k) ?? file.text(of: token)) : file.text(of: token)
        k += 1
      } else {
        text += file.text(of: token)
      }
    }
    return text
  }

  /// `import RealmSwift` becomes `import ReefSwift` (by the name pass); `import Realm` goes when
  /// the file imports RealmSwift too, and becomes `import ReefSwift` otherwise; `import Realm.X`
  /// goes, with a note.
  mutating func portImports() {
    var realmImports: [(first: Int, path: Int, last: Int)] = []
    var importsSwiftModule = false
    for k in 0..<file.count where file.is(k, "import") {
      var first = k
      while first > 0, file.token(first - 1).kind == .attribute, !file.startsLine[first] { first -= 1 }
      guard file.startsLine[first] else { continue }
      var path = k + 1
      if SwiftDeclarationReader.typeKeywords.contains(file.text(path))
        || ["typealias", "func", "var", "let"].contains(
          file.text(path))
      {
        path += 1
      }
      var last = path
      while file.is(last + 1, "."), !file.startsLine[last + 1] { last += 2 }
      if file.is(path, "RealmSwift") || file.is(path, "ReefSwift") { importsSwiftModule = true }
      if file.is(path, "Realm") { realmImports.append((first, path, last)) }
    }
    for (first, path, last) in realmImports {
      if last > path {
        note(
          path,
          "import \(file.text(from: path, through: last)): Realm's Objective-C module has no Reef form; removed")
        file.deleteLines(from: first, through: last)
      } else if importsSwiftModule {
        file.deleteLines(from: first, through: last)
      } else {
        file.replace(from: path, through: path, with: "ReefSwift")
        importsSwiftModule = true
      }
      for k in first...last { handled.insert(k) }
    }
  }

  /// Renames Realm's names in code (interpolations included), and notes Realm's Objective-C
  /// names (`RLMObject`…), which have no Reef form.
  mutating func renameIdentifiers() {
    var noted = Set<String>()
    for k in 0..<file.count where !handled.contains(k) {
      let token = file.token(k)
      if token.kind == .string {
        renameInterpolations(token.interpolated)
        continue
      }
      guard token.kind == .identifier else { continue }
      if let new = renamed(k) {
        file.replace(token.range, with: new)
        continue
      }
      let text = file.text(k)
      if isObjectiveCName(text), noted.insert("\(token.line) \(text)").inserted {
        note(k, "\(text) is Realm's Objective-C API, which Reef does not have; left as is")
      }
    }
  }

  /// Renames Realm's names inside interpolations (their tokens come in order).
  mutating func renameInterpolations(_ tokens: [SwiftToken]) {
    var previous: [String] = []
    for token in tokens where token.isSignificant {
      if token.kind == .string { renameInterpolations(token.interpolated) }
      let text = file.text(of: token)
      if token.kind == .identifier, let new = ModelPort.renamedIdentifiers[text],
        previous.last != "." || previous.dropLast().last == "RealmSwift"
      {
        file.replace(token.range, with: new)
      }
      previous.append(text)
    }
  }

  /// `RLMObject`, `RLMArray`, `RLMRealm`…: Realm's Objective-C names.
  func isObjectiveCName(_ text: String) -> Bool {
    let scalars = Array(text.unicodeScalars)
    return scalars.count > 3 && text.hasPrefix("RLM") && scalars[3].properties.isUppercase
  }
}
