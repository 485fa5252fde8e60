import Foundation
import Testing

/// The seed pages' models in Realm's older form (`@objc dynamic var`, `let x = List<T>()`,
/// `LinkingObjects(fromType:property:)`, `RealmOptional`, `primaryKey()`), and the Embedded
/// Objects page's snippets, run through the built `reef port --in-place`, then compiled against
/// the built ReefSwift and run: they compile and behave as the pages say. A hand-written file
/// in the older form adds the rules the pages do not use (sets, maps, `RealmProperty`,
/// `indexedProperties()`, `ignoredProperties()`, `@objcMembers`, `RealmEnum`, a model
/// subclass, Realm's names in code, strings and comments).
@Suite("reef port: the seed pages' older models compile and behave as the pages say")
struct SeedModelPortTests {
  /// Each group of the pages' older models, in the namespace it is compiled in.
  struct Group {
    var namespace: String
    var page: String
    var names: [String]
    var source: String
  }

  static func groups() throws -> [Group] {
    var groups: [Group] = []
    for (page, prefix) in [
      ("realm-objects.txt", "RealmObjectsPage"), ("embedded-objects.txt", "EmbeddedObjectsPage"),
      ("model-relationships.txt", "ModelRelationshipsPage"),
    ] {
      for (n, group) in SeedPages.olderModels(try SeedPages.page(page)).enumerated() {
        groups.append(
          Group(
            namespace: "\(prefix)\(n + 1)", page: page, names: group.map(\.name),
            source: group.map(\.source).joined(separator: "\n")))
      }
    }
    return groups
  }

  /// A file in the older form for the rules the pages do not use.
  static let rulesSource = #"""
    import RealmSwift

    @objc enum Mood: Int, RealmEnum {
      case calm, busy
    }

    @objcMembers class Gadget: Object {
      dynamic var _id = ObjectId.generate()
      dynamic var serial = ""  // Realm's name in a comment stays
      dynamic var label = "made by Realm"
      dynamic var mood = Mood.calm
      dynamic var scratch = 0
      let tags = MutableSet<String>()
      let prices = Map<String, Double>()
      let rating = RealmProperty<Int?>()
      let parts = List<Part>()
      @objc
      dynamic var note:
        String? = nil
      var summary: String { "\(serial): \(label)" }

      override class func primaryKey() -> String? { "_id" }
      override class func indexedProperties() -> [String] { ["serial"] }
      override class func ignoredProperties() -> [String] {
        return ["scratch"]
      }
    }

    class Part: EmbeddedObject {
      @objc dynamic var name = ""
      @objc dynamic var weight: Double = 0
    }

    class SmallGadget: Gadget {
      @objc dynamic var size = 1
    }

    struct GadgetStore {
      static let handleName = "\(Realm.self)"

      static func open(_ url: URL) throws -> Realm {
        var configuration = Realm.Configuration(fileURL: url)
        configuration.deleteRealmIfMigrationNeeded = true
        return try Realm(configuration: configuration)
      }

      static func label(_ value: AnyRealmValue) -> String { value.stringValue ?? "-" }
    }
    """#

  /// `source` inside `enum namespace { … }`, its imports moved before it.
  static func wrapped(_ source: String, in namespace: String) -> (imports: [String], body: String) {
    var imports: [String] = []
    var body = "enum \(namespace) {\n"
    for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
      if line.hasPrefix("import ") { imports.append(String(line)) } else { body += "  \(line)\n" }
    }
    return (imports, body + "}\n")
  }

  @Test("the pages hold the older models and snippets this test ports", .enabled(if: SeedPages.directory != nil))
  func pagesHoldTheModels() throws {
    let groups = try Self.groups()
    #expect(
      groups.map(\.names) == [["Dog", "Person"], ["Person"], ["Address", "Contact", "Business"], ["User", "Task"]])
    let snippets = SeedPages.snippets(try SeedPages.page("embedded-objects.txt"))
    #expect(snippets.count == 4)
    #expect(snippets.first?.hasPrefix("let realm = try! Realm()") == true)
  }

  @Test(
    "ported with reef port --in-place, the models compile against ReefSwift and behave as the pages say",
    .enabled(if: SeedPages.directory != nil))
  func portedModelsCompileAndBehave() throws {
    let directory = try TemporaryDirectory()
    let groups = try Self.groups()
    let snippets = SeedPages.snippets(try SeedPages.page("embedded-objects.txt"))
    // The files as a Realm user has them, ported together in place by the built tool.
    var paths: [String] = []
    for group in groups { paths.append(try directory.write("\(group.namespace).swift", text: group.source)) }
    for (n, snippet) in snippets.enumerated() {
      paths.append(try directory.write("snippet\(n + 1).swift", text: snippet))
    }
    paths.append(try directory.write("Rules.swift", text: Self.rulesSource))
    let port = try runProcess(reefBinary, ["port", "--in-place"] + paths)
    #expect(port.status == 0, "\(port.stderr)")
    #expect(port.stderr.isEmpty, "notes: \(port.stderr)")
    #expect(port.stdout.isEmpty)

    let ported = try paths.map { try String(contentsOfFile: $0, encoding: .utf8) }
    for (path, text) in zip(paths, ported) {
      for older in ["@objc", "dynamic ", "RealmOptional", "LinkingObjects(fromType", "primaryKey()", "Realm()"] {
        #expect(!text.contains(older), "\(path) still holds \(older):\n\(text)")
      }
    }
    // What must stay: strings and comments.
    #expect(ported.last!.contains(#"// Realm's name in a comment stays"#))
    #expect(ported.last!.contains(#"label = "made by Realm""#))

    // Each group in its namespace; the snippets in the Embedded Objects page's.
    var imports = Set(["import ReefSwift"])
    var pages = ""
    for (group, text) in zip(groups, ported) {
      let (found, body) = Self.wrapped(text, in: group.namespace)
      imports.formUnion(found)
      pages += body + "\n"
    }
    let snippetTexts = ported[groups.count..<(groups.count + snippets.count)]
    pages += "extension EmbeddedObjectsPage1 {\n  static func runSnippets() {\n    let realm = try! Reef()\n"
    for text in snippetTexts { pages += "    do {\n" + text + "    }\n" }
    pages += "    _ = realm\n  }\n}\n\n"
    let (found, rules) = Self.wrapped(ported.last!, in: "PortRules")
    imports.formUnion(found)
    pages += rules
    #expect(imports == ["import ReefSwift"])
    let program = try SwiftProgram.build(
      [("main.swift", Self.harness), ("Pages.swift", imports.sorted().joined(separator: "\n") + "\n\n" + pages)],
      in: directory)
    let run = try runProcess(program, [directory.path("stores")])
    let failed = run.stdout.split(separator: "\n").filter { !$0.hasPrefix("ok ") && $0.hasPrefix("FAILED") }
    #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
    #expect(failed.isEmpty, "\(failed.joined(separator: "\n"))")
    #expect(run.stdout.split(separator: "\n").filter { $0.hasPrefix("ok ") }.count == Self.checkCount, "\(run.stdout)")
  }

  /// The number of checks that ``harness`` makes: its `check(` calls but the declaration and the
  /// one that reports an error thrown.
  static let checkCount = harness.components(separatedBy: "check(").count - 3

  /// The program that uses the ported models as the pages do and checks what they say.
  static let harness = #"""
    import Foundation
    import ReefStore
    import ReefSwift

    final class Checks {
      nonisolated(unsafe) static var failures = 0
    }

    func check(_ condition: Bool, _ what: String) {
      print(condition ? "ok \(what)" : "FAILED \(what)")
      if !condition { Checks.failures += 1 }
    }

    /// Runs `body` with a fresh folder `name` of the stores' folder as the working directory, and
    /// its `default.reef` as the file `try! Reef()` opens.
    func inFolder(_ name: String, _ body: () throws -> Void) {
      let folder = CommandLine.arguments[1] + "/" + name
      try! FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
      _ = FileManager.default.changeCurrentDirectoryPath(folder)
      Reef.Configuration.defaultConfiguration.fileURL = URL(fileURLWithPath: folder + "/default.reef")
      do { try body() } catch { check(false, "\(name): \(error)") }
    }

    // Realm Objects: "Every Dog object must include a name and age and may optionally include the
    // dog's breed and a reference to a Person object"; Person's primary key is _id; `dogs` are the
    // dogs whose owner it is.
    inFolder("realm-objects") {
      typealias Dog = RealmObjectsPage1.Dog
      typealias Person = RealmObjectsPage1.Person
      let realm = try Reef()
      let blank = Dog()
      check(blank.name == "" && blank.age == 0 && blank.breed == nil && blank.owner == nil, "a new Dog's defaults")
      let ann = Person()
      ann.name = "Ann"
      let rex = Dog()
      rex.name = "Rex"
      rex.age = 3
      rex.breed = "Beagle"
      rex.owner = ann
      let fido = Dog()
      fido.name = "Fido"
      fido.owner = ann
      try realm.write {
        realm.add(rex)
        realm.add(fido)
      }
      check(realm.objects(Dog.self).count == 2 && realm.objects(Person.self).count == 1, "dogs and their owner stored")
      let stored = realm.objects(Dog.self).filter("name == 'Rex'").first
      check(stored?.age == 3 && stored?.breed == "Beagle" && stored?.owner?.name == "Ann", "a dog's properties read back")
      check(realm.objects(Dog.self).filter("breed == nil").first?.name == "Fido", "an optional breed stays nil")
      let owner = realm.object(ofType: Person.self, forPrimaryKey: ann._id)
      check(owner?.name == "Ann", "a person found by its primary key _id")
      check(Set(owner?.dogs.map(\.name) ?? []) == ["Rex", "Fido"], "LinkingObjects: the dogs whose owner is Ann")
      check(Person().objectSchema.primaryKeyProperty?.name == "_id", "Person's primary key is _id")
      let twin = Person()
      twin._id = ann._id
      var refused = false
      do { try realm.write { realm.add(twin) } } catch { refused = true }
      check(refused, "a second Person with the same _id is refused")
    }

    // Realm Objects, optional properties: name required, address optional, age an optional integer.
    inFolder("optional-properties") {
      typealias Person = RealmObjectsPage2.Person
      let realm = try Reef()
      let person = Person()
      check(person.name == "" && person.address == nil && person.age.value == nil, "a new Person's defaults")
      person.name = "Bo"
      try realm.write { realm.add(person) }
      check(realm.objects(Person.self).first?.age.value == nil, "age stored as nil")
      try realm.write { person.age.value = 42 }
      check(try Reef().objects(Person.self).first?.age.value == 42, "age stored as 42, read by another Reef")
      let age = person.objectSchema["age"]
      check(age?.isOptional == true && age?.type == .int, "age is an optional Int property")
      check(person.objectSchema["address"]?.isOptional == true, "address is optional")
      check(person.objectSchema["name"]?.isOptional == false, "name is required")
    }

    // Embedded Objects: the page's snippets; an address lives inside its contact's document.
    inFolder("embedded-objects") {
      typealias Contact = EmbeddedObjectsPage1.Contact
      typealias Address = EmbeddedObjectsPage1.Address
      typealias Business = EmbeddedObjectsPage1.Business
      let realm = try Reef()
      // The contact the update and overwrite snippets look up by their "arbitrary id".
      let known = Contact(name: "Known", address: Address())
      known._id = ObjectId("5f47f4811060b1aa6cc71272")!
      known.address?.city = "Springfield"
      try realm.write { realm.add(known) }
      EmbeddedObjectsPage1.runSnippets()
      realm.refresh()
      check(realm.objects(Contact.self).count == 2, "the create snippet added Nick Riviera")
      let nick = realm.objects(Contact.self).filter("name == %@", "Nick Riviera").first
      check(nick?.address?.street == "123 Fake St." && nick?.address?.postalCode == "90710", "Nick's embedded address")
      let updated = realm.object(ofType: Contact.self, forPrimaryKey: known._id)?.address
      check(
        updated?.street == "Hollywood Upstairs Medical College" && updated?.city == "Los Angeles"
          && updated?.country == "USA" && updated?.postalCode == "90210", "the update and overwrite snippets")
      let losAngeles = realm.objects(Contact.self).filter("address.city = %@", "Los Angeles")
        .sorted(byKeyPath: "address.street")
      check(losAngeles.map(\.name) == ["Known"], "the query snippet's contacts")
      var isSubdocument = false
      try realm.store.read { transaction in
        try transaction.collection("Contact").forEach { document in
          if case .document(let address)? = document["address"], address["city"] != nil { isSubdocument = true }
          return true
        }
      }
      check(isSubdocument, "an address is stored inside its contact's document")
      check(Contact().objectSchema.primaryKeyProperty?.name == "_id", "Contact's primary key is _id")
      let a = Address()
      a.city = "Oslo"
      let b = Address()
      b.city = "Bergen"
      let shop = Business(name: "Fjord", addresses: [a, b])
      try realm.write { realm.add(shop) }
      let stored = realm.objects(Business.self).first
      check(stored?.addresses.map { $0.city ?? "" } == ["Oslo", "Bergen"], "a Business's list of embedded addresses")
      try realm.write { realm.delete(stored!) }
      check(realm.objects(Business.self).isEmpty, "deleting the business deletes its addresses with it")
    }

    // Model Relationships, the older User and Task: a user's tasks, and each task's assignee backlink.
    inFolder("model-relationships") {
      typealias User = ModelRelationshipsPage1.User
      typealias Task = ModelRelationshipsPage1.Task
      let realm = try Reef()
      let user = User()
      user.name = "Lee"
      let task = Task()
      task.text = "Write the port"
      try realm.write {
        realm.add(user)
        user.tasks.append(task)
      }
      check(user._partition == "" && task._partition == "", "_partition defaults to an empty string")
      check(realm.object(ofType: User.self, forPrimaryKey: user._id)?.tasks.first?.text == "Write the port", "a user's tasks")
      check(realm.objects(Task.self).first?.assignee.first?.name == "Lee", "a task's assignee backlink")
      check(user._id != task._id, "each object gets its own ObjectId _id")
    }

    // The rules the pages do not use.
    inFolder("rules") {
      typealias Gadget = PortRules.Gadget
      typealias SmallGadget = PortRules.SmallGadget
      let url = URL(fileURLWithPath: "gadgets.reef")
      let realm = try PortRules.GadgetStore.open(url)
      let schema = Gadget().objectSchema
      check(schema.primaryKeyProperty?.name == "_id", "primaryKey() became @Persisted(primaryKey: true)")
      check(schema["serial"]?.isIndexed == true, "indexedProperties() became @Persisted(indexed: true)")
      check(schema["scratch"] == nil && schema["summary"] == nil, "ignored and computed properties are not stored")
      check(schema["tags"]?.isSet == true && schema["prices"]?.isMap == true, "MutableSet and Map properties")
      check(schema["note"]?.isOptional == true && schema["rating"]?.isOptional == true, "optional properties")
      let gadget = Gadget()
      gadget.serial = "G-1"
      gadget.scratch = 5
      gadget.mood = .busy
      gadget.tags.insert("new")
      gadget.prices["eur"] = 9.5
      gadget.rating.value = 4
      let part = PortRules.Part()
      part.name = "bolt"
      part.weight = 0.25
      gadget.parts.append(part)
      let small = SmallGadget()
      small.serial = "S-1"
      small.size = 3
      try realm.write {
        realm.add(gadget)
        realm.add(small)
      }
      let again = try PortRules.GadgetStore.open(url)
      let read = again.object(ofType: Gadget.self, forPrimaryKey: gadget._id)
      check(read?.serial == "G-1" && read?.label == "made by Realm", "scalar properties; a string is left as written")
      check(read?.mood == .busy, "a RealmEnum property became a PersistableEnum one")
      check(read?.scratch == 0, "an ignored property is not stored")
      check(read?.tags.contains("new") == true && read?.prices["eur"] == 9.5, "set and map values")
      check(read?.rating.value == 4, "a RealmProperty<Int?> reads through .value")
      check(read?.parts.first?.name == "bolt" && read?.parts.first?.weight == 0.25, "a list of embedded objects")
      check(read?.summary == "G-1: made by Realm", "a computed property")
      check(again.objects(SmallGadget.self).first?.size == 3, "a subclass of a model is a model")
      check(PortRules.GadgetStore.handleName == "Reef", "Realm renamed inside an interpolation")
      check(PortRules.GadgetStore.label(.string("x")) == "x", "AnyRealmValue became AnyReefValue")
    }

    exit(Checks.failures == 0 ? 0 : 1)
    """#
}
