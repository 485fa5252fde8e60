import Foundation
import ReefCLI
import Testing

/// `reef port`'s rules, one by one: what each rewrites, what it leaves (strings, comments,
/// `realm` variables, code it does not recognise) and what it refuses, with its line.
@Suite("reef port: the rewrite rules")
struct ModelPortTests {
  /// The port of `source`; its notes as `line: message`.
  static func port(_ source: String) throws -> (source: String, notes: [String]) {
    let result = try ModelPort.port(source)
    return (result.source, result.notes.map(\.description))
  }

  /// `body` as the body of a model class.
  static func model(_ body: String, base: String = "Object") -> String {
    "class Dog: \(base) {\n" + body + "}\n"
  }

  @Test("@objc dynamic var and dynamic var become @Persisted var")
  func scalarProperties() throws {
    let (source, notes) = try Self.port(
      Self.model(
        """
          @objc dynamic var name = ""
          @objc dynamic var age: Int = 0
          dynamic var weight = 1.5
          @objc public dynamic var tag = "a"
          @objc dynamic private(set) var secret = 0

        """))
    #expect(
      source
        == Self.model(
          """
            @Persisted var name = ""
            @Persisted var age: Int = 0
            @Persisted var weight = 1.5
            @Persisted public var tag = "a"
            @Persisted private(set) var secret = 0

          """))
    #expect(notes.isEmpty)
  }

  @Test("= nil after an optional type and = ObjectId.generate() are dropped: they are the defaults")
  func defaultsDropped() throws {
    let (source, _) = try Self.port(
      Self.model(
        """
          @objc dynamic var breed: String? = nil
          @objc dynamic var owner: Person? = nil
          @objc dynamic var note: String?
          @objc dynamic var _id = ObjectId.generate()
          @objc dynamic var other: ObjectId = ObjectId.generate()
          @objc dynamic var kept = ObjectId()

        """))
    #expect(
      source
        == Self.model(
          """
            @Persisted var breed: String?
            @Persisted var owner: Person?
            @Persisted var note: String?
            @Persisted var _id: ObjectId
            @Persisted var other: ObjectId
            @Persisted var kept = ObjectId()

          """))
  }

  @Test("let x = List<T>(), MutableSet<T>() and Map<K, V>() become @Persisted var x: List<T>…")
  func collections() throws {
    let (source, notes) = try Self.port(
      Self.model(
        """
          let dogs = List<Dog>()
          var tags = MutableSet<String>()
          let scores = Map<String, Int?>()
          let friends: List<Dog> = List<Dog>()
          public let qualified = RealmSwift.List<AnyRealmValue>()

        """))
    #expect(
      source
        == Self.model(
          """
            @Persisted var dogs: List<Dog>
            @Persisted var tags: MutableSet<String>
            @Persisted var scores: Map<String, Int?>
            @Persisted var friends: List<Dog>
            @Persisted public var qualified: List<AnyReefValue>

          """))
    #expect(notes.isEmpty)
  }

  @Test("RealmOptional<T>() and RealmProperty<T?>() become ReefProperty<T?>, read through .value as before")
  func optionals() throws {
    let (source, notes) = try Self.port(
      Self.model(
        """
          let age = RealmOptional<Int>()
          let weight: RealmOptional<Double> = RealmOptional()
          let rank = RealmProperty<Int?>()
          let flag = RealmProperty<Bool>()

        """))
    #expect(
      source
        == Self.model(
          """
            @Persisted var age: ReefProperty<Int?>
            @Persisted var weight: ReefProperty<Double?>
            @Persisted var rank: ReefProperty<Int?>
            @Persisted var flag: ReefProperty<Bool>

          """))
    #expect(notes.isEmpty)
  }

  @Test("LinkingObjects(fromType:property:) becomes @Persisted(originProperty:) var x: LinkingObjects<T>")
  func linkingObjects() throws {
    let (source, _) = try Self.port(
      Self.model(
        """
          let owners = LinkingObjects(fromType: Person.self, property: "dogs")
          let clubs = LinkingObjects<DogClub>(fromType: DogClub.self, property: "members")

        """))
    #expect(
      source
        == Self.model(
          """
            @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
            @Persisted(originProperty: "members") var clubs: LinkingObjects<DogClub>

          """))
  }

  @Test("primaryKey() becomes @Persisted(primaryKey: true), and its lines go")
  func primaryKey() throws {
    for body in [
      "  override static func primaryKey() -> String? {\n    return \"_id\"\n  }\n",
      "  override class func primaryKey() -> String? { \"_id\" }\n",
      "  public override static func primaryKey() -> String? {\n    \"_id\"\n  }\n",
    ] {
      let (source, notes) = try Self.port(Self.model("  @objc dynamic var _id = ObjectId.generate()\n\n" + body))
      #expect(source == Self.model("  @Persisted(primaryKey: true) var _id: ObjectId\n"), "\(body)")
      #expect(notes.isEmpty)
    }
    // A property already in the @Persisted form gets the argument too.
    let (persisted, _) = try Self.port(
      Self.model("  @Persisted var id = 0\n  override static func primaryKey() -> String? { \"id\" }\n"))
    #expect(persisted == Self.model("  @Persisted(primaryKey: true) var id = 0\n"))
    // `nil` names no primary key.
    let (none, _) = try Self.port(
      Self.model("  @objc dynamic var a = 0\n  override static func primaryKey() -> String? { nil }\n"))
    #expect(none == Self.model("  @Persisted var a = 0\n"))
  }

  @Test("indexedProperties() becomes @Persisted(indexed: true) on each; ignoredProperties() leaves them plain")
  func indexedAndIgnored() throws {
    let (source, notes) = try Self.port(
      Self.model(
        """
          @objc dynamic var id = 0
          @objc dynamic var name = ""
          @objc dynamic var city = ""
          @objc dynamic var cache = 0
          override static func primaryKey() -> String? { "id" }
          override static func indexedProperties() -> [String] {
            return ["name", "city", "id"]
          }
          override static func ignoredProperties() -> [String] { ["cache"] }

        """))
    #expect(
      source
        == Self.model(
          """
            @Persisted(primaryKey: true) var id = 0
            @Persisted(indexed: true) var name = ""
            @Persisted(indexed: true) var city = ""
            var cache = 0

          """))
    #expect(notes.isEmpty)
  }

  @Test("the overrides apply to RealmOptional and RealmProperty too; Objective-C types become Swift's")
  func overridesOnOptionalsAndFoundationTypes() throws {
    let (source, notes) = try Self.port(
      Self.model(
        """
          let id = RealmOptional<Int>()
          let extra = RealmProperty<AnyRealmValue>()
          @objc dynamic var label: NSString?
          @objc dynamic var taken: NSDate? = nil
          @objc dynamic var raw: NSData?
          @objc dynamic var note: String!

          override class func primaryKey() -> String? { return "id" }

          override class func indexedProperties() -> [String] { ["extra"] }
          override class func ignoredProperties() -> [String] { [] }

        """))
    #expect(
      source
        == Self.model(
          """
            @Persisted(primaryKey: true) var id: ReefProperty<Int?>
            @Persisted(indexed: true) var extra: ReefProperty<AnyReefValue>
            @Persisted var label: String?
            @Persisted var taken: Date?
            @Persisted var raw: Data?
            @Persisted var note: String!

          """))
    #expect(notes.isEmpty)
  }

  @Test(
    "Realm's older override names _realmObjectName() and _realmColumnNames() become className() and propertiesMapping()"
  )
  func olderOverrideNames() throws {
    let (source, _) = try Self.port(
      Self.model(
        """
          override class func _realmObjectName() -> String { "Dog Thing" }
          override class func _realmColumnNames() -> [String: String] { ["name": "dog name"] }

        """))
    #expect(
      source
        == Self.model(
          """
            override class func className() -> String { "Dog Thing" }
            override class func propertiesMapping() -> [String: String] { ["name": "dog name"] }

          """))
  }

  @Test("@objcMembers and @objc go from models; computed, lazy and observed properties are handled")
  func objcMembersAndAccessors() throws {
    let (source, _) = try Self.port(
      """
      @objcMembers class Dog: Object {
        dynamic var name = ""
        dynamic var count = 0 {
          didSet { print(count) }
        }
        @objc dynamic var label: String { name.uppercased() }
        @objc dynamic lazy var cached = name
        @objc func bark() {}
      }

      """)
    #expect(
      source == """
        class Dog: Object {
          @Persisted var name = ""
          @Persisted var count = 0 {
            didSet { print(count) }
          }
          var label: String { name.uppercased() }
          lazy var cached = name
          func bark() {}
        }

        """)
  }

  @Test("static properties and a method's local variables are not properties of the objects")
  func staticsAndLocals() throws {
    let source = Self.model(
      """
        static let defaults = List<Int>()
        static var count = 0
        func make() -> Int {
          let local = List<Dog>()
          return local.count
        }
        var closure: () -> Int = {
          let inside = MutableSet<Int>()
          return inside.count
        }

      """)
    let result = try ModelPort.port(source)
    #expect(!result.changed && result.notes.isEmpty)
  }

  @Test("in an extension of a model, @objc and dynamic go")
  func modelExtension() throws {
    let (source, notes) = try Self.port(
      "class Dog: Object {}\nextension Dog {\n  @objc func bark() {}\n  @objc dynamic var loud: Bool { true }\n}\n"
        + "extension String {\n  @objc func kept() {}\n}\n")
    #expect(
      source
        == "class Dog: Object {}\nextension Dog {\n  func bark() {}\n  var loud: Bool { true }\n}\n"
        + "extension String {\n  @objc func kept() {}\n}\n")
    #expect(notes.isEmpty)
  }

  @Test("a declaration over several lines is ported as one")
  func multiLineDeclarations() throws {
    let (source, _) = try Self.port(
      Self.model(
        """
          @objc
          dynamic var name:
            String = ""
          let dogs =
            List<Dog>()
          @objc dynamic var total = 1 +
            2
          override static func primaryKey()
            -> String?
          {
            return "name"
          }

        """))
    #expect(
      source
        == Self.model(
          """
            @Persisted(primaryKey: true)
            var name:
              String = ""
            @Persisted var dogs: List<Dog>
            @Persisted var total = 1 +
              2

          """))
  }

  @Test("Realm's names become Reef's in code only: strings, comments, realm variables and members stay")
  func names() throws {
    let (source, notes) = try Self.port(
      #"""
      import RealmSwift

      // Realm() opens the default Realm; "RealmSwift" stays in comments
      let realm = try! Realm()
      let configuration = Realm.Configuration(deleteRealmIfMigrationNeeded: true)
      let text = "Realm and RealmSwift.List<Int>() stay in strings"
      let value: AnyRealmValue = .string("\(Realm.self) \("Realm")")
      let property = RealmProperty<Int?>()
      let change: RealmCollectionChange<Results<Dog>>? = nil
      let qualified = RealmSwift.Realm.self
      let member = realm.Realm
      func flag(_ c: inout Realm.Configuration) { c.deleteRealmIfMigrationNeeded = false }
      /* Realm in a block comment */

      """#)
    #expect(
      source == #"""
        import ReefSwift

        // Realm() opens the default Realm; "RealmSwift" stays in comments
        let realm = try! Reef()
        let configuration = Reef.Configuration(deleteReefIfMigrationNeeded: true)
        let text = "Realm and RealmSwift.List<Int>() stay in strings"
        let value: AnyReefValue = .string("\(Reef.self) \("Realm")")
        let property = ReefProperty<Int?>()
        let change: ReefCollectionChange<Results<Dog>>? = nil
        let qualified = ReefSwift.Reef.self
        let member = realm.Realm
        func flag(_ c: inout Reef.Configuration) { c.deleteReefIfMigrationNeeded = false }
        /* Realm in a block comment */

        """#)
    #expect(notes.isEmpty)
  }

  @Test("import Realm goes beside import RealmSwift, becomes import ReefSwift alone; import Realm.X goes with a note")
  func imports() throws {
    #expect(
      try Self.port("import Foundation\nimport Realm\nimport RealmSwift\n").source
        == "import Foundation\nimport ReefSwift\n")
    #expect(try Self.port("import Realm\n\nlet x = 1\n").source == "import ReefSwift\n\nlet x = 1\n")
    #expect(try Self.port("@testable import RealmSwift\n").source == "@testable import ReefSwift\n")
    let (source, notes) = try Self.port("import Realm.Private\nimport RealmSwift\n")
    #expect(source == "import ReefSwift\n")
    #expect(notes == ["1: import Realm.Private: Realm's Objective-C module has no Reef form; removed"])
  }

  @Test("a model subclass, a model nested in a type, and RealmEnum enums are ported")
  func otherModels() throws {
    let (source, _) = try Self.port(
      """
      enum Zoo {
        class Animal: Object {
          @objc dynamic var name = ""
        }
        class Cat: Animal {
          @objc dynamic var lives = 9
        }
      }
      @objc enum Mood: Int, RealmEnum {
        case calm
      }

      """)
    #expect(
      source == """
        enum Zoo {
          class Animal: Object {
            @Persisted var name = ""
          }
          class Cat: Animal {
            @Persisted var lives = 9
          }
        }
        enum Mood: Int, PersistableEnum {
          case calm
        }

        """)
  }

  @Test("files ported together: a model whose superclass is in another file is a model")
  func superclassInAnotherFile() throws {
    let results = ModelPort.port([
      ("Puppy.swift", "class Puppy: Dog {\n  @objc dynamic var toy = \"\"\n}\n"),
      ("Dog.swift", "class Dog: Object {\n  @objc dynamic var name = \"\"\n}\n"),
    ])
    let sources = try results.map { try $0.result.get().source }
    #expect(
      sources == [
        "class Puppy: Dog {\n  @Persisted var toy = \"\"\n}\n",
        "class Dog: Object {\n  @Persisted var name = \"\"\n}\n",
      ])
    // Alone, Puppy's superclass is unknown: its properties are left, with a note.
    let alone = try ModelPort.port("class Puppy: Dog {\n  @objc dynamic var toy = \"\"\n}\n")
    #expect(!alone.changed)
    #expect(
      alone.notes.map(\.description) == [
        "1: class Puppy: its superclass Dog is not known to be a Realm model (port the file that declares it with this one); its @objc dynamic properties are left as they are"
      ])
  }

  @Test("what cannot be ported is left as it was, with a note at its line")
  func refusals() throws {
    let source = Self.model(
      """
        @objc dynamic var a = 0, b = 1
        let age = RealmOptional<Int>(3)
        let owners = LinkingObjects(fromType: Person.self, property: key)
        override static func primaryKey() -> String? { return Self.keyName }
        override static func indexedProperties() -> [String] { ["missing"] }
        @objc dynamic var weight = 0

      """)
    let result = try ModelPort.port(source)
    #expect(
      result.notes.map(\.description) == [
        "2: several properties in one declaration: declare each on its own to port it; left as is",
        "3: RealmOptional with an initial value: declare @Persisted var age: Int? = value instead, and read it without .value; left as is",
        "4: LinkingObjects(fromType: Person.self, property: key) is not (fromType: T.self, property: \"name\"); left as is",
        "5: primaryKey() does not return string literals, so it is left as is",
        "6: indexedProperties() names 'missing', which Dog does not declare (a superclass's?), so it is left as is",
      ])
    let lines = result.source.split(separator: "\n", omittingEmptySubsequences: false)
    #expect(lines[1] == "  @objc dynamic var a = 0, b = 1")
    #expect(lines[2] == "  let age = RealmOptional<Int>(3)")
    #expect(lines[3] == "  let owners = LinkingObjects(fromType: Person.self, property: key)")
    #expect(lines[4] == "  override static func primaryKey() -> String? { return Self.keyName }")
    #expect(lines[5] == "  override static func indexedProperties() -> [String] { [\"missing\"] }")
    #expect(lines[6] == "  @Persisted var weight = 0")
  }

  @Test("Objective-C: @objc outside models, RLM names and @objc(Name) are noted")
  func objectiveC() throws {
    let result = try ModelPort.port(
      """
      @objc protocol Barking {}
      @objc(RLMDog) class Dog: Object {
        @objc dynamic var name = ""
      }
      let array: RLMArray<RLMObject>? = nil

      """)
    #expect(
      result.notes.map(\.description) == [
        "1: @objc on Barking: Linux has no Objective-C runtime, so it does not compile there; left as is",
        "2: @objc(RLMDog) named this type RLMDog in the Realm file; in Reef it is Dog (override className() to return \"RLMDog\" to read such a file's data)",
        "5: RLMArray is Realm's Objective-C API, which Reef does not have; left as is",
        "5: RLMObject is Realm's Objective-C API, which Reef does not have; left as is",
      ])
    #expect(result.source.hasPrefix("@objc protocol Barking {}\nclass Dog: Object {\n  @Persisted var name = \"\"\n"))
  }

  @Test("the conversion table of Coming from Realm is what the tool does, row by row")
  func conversionTable() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    let article = try String(
      contentsOf: root.appendingPathComponent("Sources/ReefSwift/ReefSwift.docc/ComingFromRealm.md"), encoding: .utf8)
    let table = try #require(article.range(of: "| Realm's older form | Reef |\n|---|---|\n"))
    let rows = article[table.upperBound...].split(separator: "\n", omittingEmptySubsequences: false)
      .prefix { $0.hasPrefix("|") }
    /// The first code span of a cell.
    func code(_ cell: Substring) -> String? {
      guard let open = cell.firstIndex(of: "`") else { return nil }
      let rest = cell[cell.index(after: open)...]
      return rest.firstIndex(of: "`").map { String(rest[..<$0]) }
    }
    #expect(rows.count >= 15)
    for row in rows {
      let cells = row.split(separator: "|")
      guard let older = code(cells[0]), let reef = code(cells[1]) else {
        Issue.record("a row without code: \(row)")
        continue
      }
      var source: String
      if older.hasPrefix("import") {
        source = older + "\n"
      } else if older.contains("enum ") || older.contains("class ") {
        source = older + " {}\n"
      } else if older.hasPrefix("override") {
        // The property the override names, in the older form.
        var property = reef
        if property.hasPrefix("@Persisted") {
          property = String(property[property.range(of: "var ")!.lowerBound...])
        }
        source = Self.model("  @objc dynamic \(property)\n  \(older)\n")
      } else {
        source = Self.model("  \(older)\n")
      }
      let ported = try ModelPort.port(source)
      #expect(ported.source.contains(reef), "\(older) -> \(ported.source)")
      #expect(ported.notes.isEmpty, "\(older): \(ported.notes)")
    }
  }

  @Test("source with nothing to port comes back unchanged, byte for byte")
  func nothingToPort() throws {
    let source = "import Foundation\n\nstruct Point {\n  var x = 0 // dynamic\n  let s = \"@objc dynamic var\"\n}\n"
    let result = try ModelPort.port(source)
    #expect(!result.changed && result.source == source && result.notes.isEmpty)
  }

  @Test("source that does not lex is an error with its line")
  func lexError() {
    #expect(throws: SwiftSourceError(line: 2, "a string does not end")) {
      try ModelPort.port("class Dog: Object {\n  @objc dynamic var name = \"open\n}\n")
    }
  }
}
