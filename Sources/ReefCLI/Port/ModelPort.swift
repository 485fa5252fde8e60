/// `reef port`'s rewrite: Realm Swift source into ReefSwift source.
///
/// It rewrites Realm's older model declarations into the `@Persisted` form and Realm's names
/// into Reef's, as the conversion table of "Coming from Realm" lists them:
/// - in a model class (a subclass of `Object` or `EmbeddedObject`, or of another model class of
///   the files ported together): `@objc dynamic var` and `dynamic var` become `@Persisted var`
///   (`= nil` after an optional type and `= ObjectId.generate()` are dropped: they are the
///   defaults); `let x = List<T>()`, `MutableSet<T>()` and `Map<K, V>()` become
///   `@Persisted var x: List<T>`…; `let x = RealmOptional<T>()` and `RealmProperty<T?>()`
///   become `@Persisted var x: ReefProperty<T?>` (so that `x.value` still compiles);
///   `let x = LinkingObjects(fromType: T.self, property: "p")` becomes
///   `@Persisted(originProperty: "p") var x: LinkingObjects<T>`;
/// - the `primaryKey()`, `indexedProperties()` and `ignoredProperties()` overrides become
///   `@Persisted(primaryKey: true)`, `@Persisted(indexed: true)` and plain properties, and are
///   removed; `@objcMembers` and `@objc` go (Linux has no Objective-C runtime);
/// - `import RealmSwift` becomes `import ReefSwift` (`import Realm` goes), and Realm's type
///   names become Reef's (``ModelPort/renamedIdentifiers``), in code only: strings, comments
///   and `realm` variables are left as they are.
///
/// What it cannot rewrite is left as it was, with a ``Note`` saying why.
public struct ModelPort {
  /// Something the port could not do, at a line of the original file.
  public struct Note: Sendable, Equatable, CustomStringConvertible {
    /// The 1-based line in the file as it was.
    public var line: Int
    /// What was left as it was, and why.
    public var message: String

    /// Creates a note.
    public init(line: Int, _ message: String) {
      self.line = line
      self.message = message
    }

    /// `line: message`.
    public var description: String { "\(line): \(message)" }
  }

  /// One file's port.
  public struct FileResult: Sendable {
    /// The file's path, as given.
    public var path: String
    /// The ported source; the original when nothing changed.
    public var source: String
    /// Whether the source changed.
    public var changed: Bool
    /// What could not be ported, in line order.
    public var notes: [Note]
  }

  /// The model base classes: a class inheriting one of them, or another model class, is a model.
  static let modelBases: Set<String> = [
    "Object", "EmbeddedObject", "RealmSwift.Object", "RealmSwift.EmbeddedObject", "ReefSwift.Object",
    "ReefSwift.EmbeddedObject",
  ]

  /// Ports one file.
  /// - Parameters:
  ///   - source: the file's text.
  ///   - path: its name, for the result.
  /// - Throws: ``SwiftSourceError`` when the source cannot be read (a string or comment that
  ///   does not end).
  /// - Complexity: O(n) in the length of the source, plus the size of each model class.
  public static func port(_ source: String, path: String = "<source>") throws(SwiftSourceError) -> FileResult {
    let results = port([(path, source)])
    switch results[0].result {
    case .success(let result): return result
    case .failure(let error): throw error
    }
  }

  /// Ports several files together, so that a model whose superclass is a model of another of
  /// the files is found.
  /// - Parameter files: each file's path and text.
  /// - Returns: for each file in order, its port, or the error that stopped its reading.
  /// - Complexity: O(n) in the total length of the sources.
  public static func port(_ files: [(path: String, source: String)]) -> [(
    path: String, result: Result<FileResult, SwiftSourceError>
  )] {
    var parsed: [(path: String, result: Result<(SwiftSourceFile, [SwiftMember]), SwiftSourceError>)] = []
    for (path, source) in files {
      do throws(SwiftSourceError) {
        let file = try SwiftSourceFile(source)
        let members = SwiftDeclarationReader(file: file).members(from: 0, to: file.count)
        parsed.append((path, .success((file, members))))
      } catch {
        parsed.append((path, .failure(error)))
      }
    }
    // Model classes: those inheriting a model base, then their subclasses, to a fixed point.
    var classes: [(name: String, base: String)] = []
    for case .success(let (file, members)) in parsed.map(\.result) {
      forEachType(in: members) { member, type in
        guard type.keyword == "class", let first = type.inherited.first else { return }
        classes.append((file.text(type.name), compact(file.text(from: first.lowerBound, through: first.upperBound))))
      }
    }
    var models = Set<String>()
    var grew = true
    while grew {
      grew = false
      for (name, base) in classes where !models.contains(name) {
        if modelBases.contains(base) || models.contains(base) {
          models.insert(name)
          grew = true
        }
      }
    }
    return parsed.map { path, result in
      switch result {
      case .failure(let error): return (path, .failure(error))
      case .success(let (file, members)):
        var rewrite = Rewrite(file: file, models: models)
        rewrite.run(members)
        let source = rewrite.file.rewritten()
        let original = String(decoding: file.bytes, as: UTF8.self)
        let notes = rewrite.notes.sorted { $0.line < $1.line }
        return (path, .success(FileResult(path: path, source: source, changed: source != original, notes: notes)))
      }
    }
  }

  /// Calls `body` for every type declared in `members`, nested ones included.
  static func forEachType(in members: [SwiftMember], _ body: (SwiftMember, SwiftMember.TypeDeclaration) -> Void) {
    for member in members {
      guard case .type(let type) = member.kind else { continue }
      body(member, type)
      forEachType(in: type.members, body)
    }
  }

  /// `text` without spaces (`RealmSwift . Object` is `RealmSwift.Object`).
  static func compact(_ text: String) -> String { text.filter { $0 != " " && $0 != "\t" && $0 != "\n" } }
}

/// The rewrite of one file.
struct Rewrite {
  var file: SwiftSourceFile
  let models: Set<String>
  var notes: [ModelPort.Note] = []
  /// Significant tokens already rewritten by a declaration rule (the name pass skips them).
  var handled = Set<Int>()

  init(file: SwiftSourceFile, models: Set<String>) {
    self.file = file
    self.models = models
  }

  mutating func note(_ k: Int, _ message: String) { notes.append(ModelPort.Note(line: file.line(k), message)) }

  mutating func run(_ members: [SwiftMember]) {
    portImports()
    portTypes(members)
    renameIdentifiers()
  }

  /// Ports every type of `members`: model classes, `@objc` enums, and `@objc` elsewhere.
  mutating func portTypes(_ members: [SwiftMember]) {
    for member in members {
      guard case .type(let type) = member.kind else { continue }
      let name = file.text(type.name)
      if type.keyword == "class" && models.contains(name) {
        portModel(member, type)
      } else if type.keyword == "extension" && models.contains(name) {
        portModelExtension(type)
      } else {
        portOtherType(member, type)
      }
      portTypes(type.members)
    }
  }

  /// An enum or class that is not a model: `@objc` on a `RealmEnum` goes; other `@objc` and
  /// `dynamic` properties are noted.
  mutating func portOtherType(_ member: SwiftMember, _ type: SwiftMember.TypeDeclaration) {
    let inherited = type.inherited.map { ModelPort.compact(file.text(from: $0.lowerBound, through: $0.upperBound)) }
    let name = file.text(type.name)
    if type.keyword == "enum" && inherited.contains(where: { $0 == "RealmEnum" || $0 == "RealmSwift.RealmEnum" }) {
      for attribute in member.attributes where attribute.name == "@objc" { deleteAttribute(attribute) }
      return
    }
    for attribute in member.attributes where attribute.name.hasPrefix("@objc") {
      note(
        attribute.index,
        "\(attribute.name) on \(name): Linux has no Objective-C runtime, so it does not compile there; left as is")
    }
    guard type.keyword == "class" else { return }
    var older = false
    for inner in type.members {
      if case .variable = inner.kind, inner.has(modifier: "dynamic") || inner.attribute("@objc") != nil { older = true }
    }
    if older, let base = inherited.first {
      note(
        type.name,
        "class \(name): its superclass \(base) is not known to be a Realm model (port the file that declares it with this one); its @objc dynamic properties are left as they are"
      )
    }
  }

  /// An extension of a model: `@objc` and `dynamic` go from its members (it declares no stored
  /// properties, so nothing becomes `@Persisted`).
  mutating func portModelExtension(_ type: SwiftMember.TypeDeclaration) {
    for inner in type.members {
      if case .type = inner.kind { continue }
      for attribute in inner.attributes where attribute.name == "@objc" { deleteAttribute(attribute) }
      for modifier in inner.modifiers where modifier.name == "dynamic" {
        file.delete(from: modifier.index, through: modifier.last)
      }
    }
  }

  /// Deletes an attribute and its arguments, with the spaces after them.
  mutating func deleteAttribute(_ attribute: SwiftMember.Attribute) {
    file.delete(from: attribute.index, through: attribute.last)
    for k in attribute.index...attribute.last { handled.insert(k) }
  }
}
