/// The model rules: a model class's properties and its `primaryKey()`, `indexedProperties()`
/// and `ignoredProperties()` overrides.
extension Rewrite {
  /// What an override returns: the names, or why they cannot be read.
  enum OverrideValue {
    case names([String])
    case unreadable
  }

  /// One of the three overrides, found in a model's body.
  struct Override {
    var member: SwiftMember
    var name: String
    var value: OverrideValue
  }

  /// The Objective-C types Realm stores as their Swift types.
  static let foundationTypes = ["NSString": "String", "NSDate": "Date", "NSData": "Data"]

  /// The collection properties of Realm's older form, by their constructor's name.
  static let constructors: Set<String> = [
    "List", "MutableSet", "Map", "RealmOptional", "RealmProperty", "LinkingObjects",
  ]

  mutating func portModel(_ member: SwiftMember, _ type: SwiftMember.TypeDeclaration) {
    let className = file.text(type.name)
    for attribute in member.attributes {
      if attribute.name == "@objcMembers" {
        deleteAttribute(attribute)
      } else if attribute.name == "@objc" {
        if let close = attribute.argumentsEnd, close == attribute.index + 3,
          file.text(attribute.index + 2) != className
        {
          let objcName = file.text(attribute.index + 2)
          note(
            attribute.index,
            "@objc(\(objcName)) named this type \(objcName) in the Realm file; in Reef it is \(className) (override className() to return \"\(objcName)\" to read such a file's data)"
          )
        }
        deleteAttribute(attribute)
      }
    }

    // The overrides.
    var overrides: [String: Override] = [:]
    for inner in type.members {
      guard case .function(let function) = inner.kind, inner.has(modifier: "override"),
        inner.has(modifier: "static") || inner.has(modifier: "class")
      else { continue }
      let name = file.text(function.name)
      guard ["primaryKey", "indexedProperties", "ignoredProperties"].contains(name) else { continue }
      overrides[name] = Override(member: inner, name: name, value: returnedNames(function))
    }
    var properties: [String: SwiftMember] = [:]
    for inner in type.members {
      if case .variable(let variable) = inner.kind, let name = variable.name { properties[file.text(name)] = inner }
    }
    var primaryKey: String?
    var indexed = Set<String>()
    var ignored = Set<String>()
    for (name, found) in overrides.sorted(by: { $0.key < $1.key }) {
      let at = found.member.keyword ?? found.member.first
      guard case .names(let names) = found.value else {
        leave(found.member, "\(name)() does not return string literals, so it is left as is")
        continue
      }
      let missing = names.filter { properties[$0] == nil }
      guard missing.isEmpty else {
        let list = missing.map { "'\($0)'" }.joined(separator: ", ")
        note(
          at,
          "\(name)() names \(list), which \(className) does not declare (a superclass's?), so it is left as is")
        overrides[name] = nil
        continue
      }
      switch name {
      case "primaryKey": primaryKey = names.first
      case "indexedProperties": indexed = Set(names)
      default: ignored = Set(names)
      }
    }

    for inner in type.members {
      switch inner.kind {
      case .variable(let variable):
        guard let nameIndex = variable.name else { continue }
        let name = file.text(nameIndex)
        portProperty(
          inner, variable, name: name, isPrimaryKey: name == primaryKey,
          isIndexed: indexed.contains(name) && name != primaryKey, isIgnored: ignored.contains(name))
      case .function, .other:
        for attribute in inner.attributes where attribute.name == "@objc" { deleteAttribute(attribute) }
      case .type:
        continue
      }
    }
    // The overrides applied go; consecutive ones as one block, so that no blank line is left
    // between the members before and after them.
    var applied = overrides.values.filter { if case .names = $0.value { true } else { false } }.map(\.member)
    applied.sort { $0.first < $1.first }
    var k = 0
    while k < applied.count {
      var last = k
      while last + 1 < applied.count, file.line(applied[last + 1].first) <= file.line(applied[last].last) + 1 {
        last += 1
      }
      deleteMembers(from: applied[k], through: applied[last])
      k = last + 1
    }
  }

  /// The string literals a `primaryKey()`, `indexedProperties()` or `ignoredProperties()`
  /// body returns: `{ "x" }`, `{ return "x" }`, `{ nil }`, `{ return ["a", "b"] }`.
  func returnedNames(_ function: SwiftMember.Function) -> OverrideValue {
    guard let body = function.body else { return .unreadable }
    var k = body.lowerBound + 1
    if file.is(k, "return") { k += 1 }
    if file.is(k, "nil") && k + 1 == body.upperBound { return .names([]) }
    if let literal = stringLiteral(k), k + 1 == body.upperBound { return .names([literal]) }
    guard file.is(k, "["), let close = file.closing(k), close + 1 == body.upperBound else { return .unreadable }
    var names: [String] = []
    var j = k + 1
    while j < close {
      guard let literal = stringLiteral(j) else { return .unreadable }
      names.append(literal)
      j += 1
      if file.is(j, ",") {
        j += 1
      } else if j != close {
        return .unreadable
      }
    }
    return .names(names)
  }

  /// The value of a plain string literal (`"name"`: no escapes, interpolation or `#`).
  func stringLiteral(_ k: Int) -> String? {
    guard k < file.count, file.token(k).kind == .string else { return nil }
    let text = file.text(k)
    guard text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\""), !text.hasPrefix("\"\"\""),
      !text.contains("\\")
    else { return nil }
    return String(text.dropFirst().dropLast())
  }

  /// Notes why `member` is left as it was, and keeps the name pass off it too.
  mutating func leave(_ member: SwiftMember, _ message: String) {
    note(member.keyword ?? member.first, message)
    for k in member.first...member.last { handled.insert(k) }
  }

  /// Removes members' lines (from `first` through `last`), and a blank line before them when a blank line or the end of
  /// the body follows (so that no double blank line is left).
  mutating func deleteMembers(from first: SwiftMember, through last: SwiftMember) {
    file.deleteLines(from: first.first, through: last.last, joiningBlankLines: true)
    for k in first.first...last.last { handled.insert(k) }
  }

  /// The `@Persisted` attribute with its arguments.
  static func persisted(primaryKey: Bool, indexed: Bool, origin: String? = nil) -> String {
    if let origin { return "@Persisted(originProperty: \(origin))" }
    if primaryKey { return "@Persisted(primaryKey: true)" }
    if indexed { return "@Persisted(indexed: true)" }
    return "@Persisted"
  }

  mutating func portProperty(
    _ member: SwiftMember, _ variable: SwiftMember.Variable, name: String, isPrimaryKey: Bool,
    isIndexed: Bool, isIgnored: Bool
  ) {
    let objc = member.attributes.filter { $0.name == "@objc" }
    let dynamic = member.modifiers.first { $0.name == "dynamic" }
    // A type's own property (`static let shared = List<Int>()`) is no stored property of its objects.
    if member.has(modifier: "static") || member.has(modifier: "class") {
      for attribute in objc { deleteAttribute(attribute) }
      if let dynamic { file.delete(from: dynamic.index, through: dynamic.last) }
      return
    }
    if variable.hasMoreBindings {
      if !objc.isEmpty || dynamic != nil || initializerConstructor(variable) != nil {
        leave(member, "several properties in one declaration: declare each on its own to port it; left as is")
      }
      return
    }
    if let constructor = initializerConstructor(variable) {
      portCollection(
        member, variable, constructor, name: name, isPrimaryKey: isPrimaryKey, isIndexed: isIndexed,
        isIgnored: isIgnored, objc: objc)
      return
    }
    if let persisted = member.attribute("@Persisted") {
      guard isPrimaryKey || isIndexed else { return }
      if persisted.argumentsEnd == nil {
        file.replace(
          from: persisted.index, through: persisted.index,
          with: Self.persisted(primaryKey: isPrimaryKey, indexed: isIndexed))
      } else if !file.text(from: persisted.index, through: persisted.last).contains(
        isPrimaryKey ? "primaryKey" : "indexed")
      {
        leave(
          member,
          "\(name) is \(file.text(from: persisted.index, through: persisted.last)) already; add \(isPrimaryKey ? "primaryKey" : "indexed") yourself"
        )
      }
      return
    }
    guard !objc.isEmpty || dynamic != nil, !variable.isLet else {
      if isPrimaryKey || isIndexed {
        leave(
          member,
          "\(name) is named by \(isPrimaryKey ? "primaryKey()" : "indexedProperties()") but is not a persisted property (@objc dynamic)"
        )
      }
      return
    }
    // The older scalar form: `@objc dynamic var`, `dynamic var`.
    var removed = objc.map { ($0.index, $0.last) }
    if let dynamic { removed.append((dynamic.index, dynamic.last)) }
    removed.sort { $0.0 < $1.0 }
    let stored = !(variable.isComputed || member.has(modifier: "lazy") || isIgnored)
    var replacement = stored ? Self.persisted(primaryKey: isPrimaryKey, indexed: isIndexed) : nil
    if replacement != nil, let firstRemoved = removed.first, firstRemoved.0 == member.first {
      file.replace(from: firstRemoved.0, through: firstRemoved.1, with: replacement!)
      replacement = nil
      removed.removeFirst()
    }
    for (from, through) in removed { file.delete(from: from, through: through) }
    if let replacement { file.replace(file.start(member.first)..<file.start(member.first), with: replacement + " ") }
    for k in member.first...(member.keyword ?? member.first) { handled.insert(k) }
    // Objective-C's types have their Swift ones: `NSString?` is `String?`.
    if stored, let type = variable.type {
      for k in type where file.token(k).kind == .identifier {
        if let swift = Self.foundationTypes[file.text(k)] { file.replace(from: k, through: k, with: swift) }
      }
    }
    guard stored, let nameIndex = variable.name, let initializer = variable.initializer else { return }
    let value = ModelPort.compact(file.text(from: initializer.lowerBound, through: initializer.upperBound))
    if value == "nil", let type = variable.type, file.is(type.upperBound, "?") || file.is(type.upperBound, "!") {
      file.replace(file.end(type.upperBound)..<file.end(initializer.upperBound), with: "")
    } else if value == "ObjectId.generate()" {
      let from = variable.type.map { file.end($0.upperBound) } ?? file.end(nameIndex)
      file.replace(from..<file.end(initializer.upperBound), with: variable.type == nil ? ": ObjectId" : "")
    }
  }

  /// The older collection constructor a property's initial value calls (`List<T>()`,
  /// `RealmOptional<Int>()`, `LinkingObjects(fromType: T.self, property: "p")`): its name, the
  /// indices of its generic arguments and of its call's parentheses.
  struct Constructor {
    var name: String
    var generics: ClosedRange<Int>?
    var call: ClosedRange<Int>
  }

  func initializerConstructor(_ variable: SwiftMember.Variable) -> Constructor? {
    guard let initializer = variable.initializer else { return nil }
    var k = initializer.lowerBound
    if (file.is(k, "RealmSwift") || file.is(k, "ReefSwift")) && file.is(k + 1, ".") { k += 2 }
    let name = file.text(k)
    guard Self.constructors.contains(name) else { return nil }
    var generics: ClosedRange<Int>?
    var j = k + 1
    if file.is(j, "<"), let close = file.closing(j) {
      generics = j...close
      j = close + 1
    }
    guard file.is(j, "("), let close = file.closing(j), close == initializer.upperBound else { return nil }
    return Constructor(name: name, generics: generics, call: j...close)
  }

  mutating func portCollection(
    _ member: SwiftMember, _ variable: SwiftMember.Variable, _ constructor: Constructor, name: String,
    isPrimaryKey: Bool, isIndexed: Bool, isIgnored: Bool, objc: [SwiftMember.Attribute]
  ) {
    guard let keyword = member.keyword, let nameIndex = variable.name, let initializer = variable.initializer else {
      return
    }
    if isIgnored {
      leave(member, "\(name) is listed in ignoredProperties(), but a \(constructor.name) is always stored; left as is")
      return
    }
    // The generic arguments: from the constructor, or from the declared type.
    var arguments: String?
    if let generics = constructor.generics {
      arguments = renamedText(from: generics.lowerBound + 1, through: generics.upperBound - 1)
    } else if let type = variable.type {
      var k = type.lowerBound
      if file.is(k + 1, ".") { k += 2 }
      if file.is(k + 1, "<"), let close = file.closing(k + 1), close == type.upperBound {
        arguments = renamedText(from: k + 2, through: close - 1)
      }
    }
    var origin: String?
    let call = constructor.call
    let typeText: String
    switch constructor.name {
    case "LinkingObjects":
      // (fromType: T.self, property: "p")
      let k = call.lowerBound
      guard file.is(k + 1, "fromType"), file.is(k + 2, ":"),
        let comma = (k + 3..<call.upperBound).first(where: { file.is($0, ",") }),
        file.is(comma - 1, "self"), file.is(comma - 2, "."), file.is(comma + 1, "property"),
        file.is(comma + 2, ":"), stringLiteral(comma + 3) != nil, comma + 4 == call.upperBound
      else {
        leave(
          member,
          "LinkingObjects(\(file.text(from: call.lowerBound + 1, through: call.upperBound - 1))) is not (fromType: T.self, property: \"name\"); left as is"
        )
        return
      }
      let originType = renamedText(from: k + 3, through: comma - 3)
      typeText = "LinkingObjects<\(arguments ?? originType)>"
      origin = file.text(comma + 3)
    case "RealmOptional", "RealmProperty":
      guard call.upperBound == call.lowerBound + 1 else {
        leave(
          member,
          "\(constructor.name) with an initial value: declare @Persisted var \(name): \(arguments ?? "T")\(constructor.name == "RealmOptional" ? "?" : "") = value instead, and read it without .value; left as is"
        )
        return
      }
      guard let arguments else {
        leave(member, "\(constructor.name) without its type argument; left as is")
        return
      }
      typeText = "ReefProperty<\(arguments)\(constructor.name == "RealmOptional" ? "?" : "")>"
    default:
      guard call.upperBound == call.lowerBound + 1, let arguments else {
        leave(member, "\(constructor.name) made with arguments or without its element type; left as is")
        return
      }
      typeText = "\(constructor.name)<\(arguments)>"
    }
    for attribute in objc { deleteAttribute(attribute) }
    file.replace(
      file.start(member.first)..<file.start(member.first),
      with: Self.persisted(primaryKey: isPrimaryKey, indexed: isIndexed, origin: origin) + " ")
    if variable.isLet { file.replace(from: keyword, through: keyword, with: "var") }
    file.replace(file.end(nameIndex)..<file.end(initializer.upperBound), with: ": " + typeText)
    for k in member.first...initializer.upperBound { handled.insert(k) }
  }
}
