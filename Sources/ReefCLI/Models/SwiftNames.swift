/// Swift names for stored names: class names for collections and subdocument paths, property
/// names for fields, each a valid identifier that no other name of its scope and nothing of
/// ReefSwift's `Object` takes.
enum SwiftNames {
  /// Swift's keywords: a property of that name is written in backquotes (`` `default` ``).
  static let keywords: Set<String> = [
    "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init", "inout",
    "internal", "let", "open", "operator", "private", "precedencegroup", "protocol", "public", "rethrows", "static",
    "struct", "subscript", "typealias", "var", "break", "case", "catch", "continue", "default", "defer", "do",
    "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return", "throw", "switch", "where", "while",
    "Any", "as", "await", "false", "is", "nil", "super", "throws", "true", "try", "package", "consume", "copy",
    "discard", "each", "borrowing", "consuming", "some", "any",
  ]

  /// Names a property cannot have even in backquotes, or that `Object` and `EmbeddedObject`
  /// already use (a property `x` also takes `_x`, its wrapper's storage): they get a `_` after.
  static let reservedProperties: Set<String> = [
    "self", "Self", "Type", "Protocol", "init", "deinit", "subscript", "super", "_",
    // ObjectBase's members, and the storage of a property wrapper named after them.
    "description", "debugDescription", "hash", "hashValue", "isInvalidated", "reef", "realm", "objectSchema",
    "isFrozen", "isEqual", "isSameObject", "parent", "className", "propertiesMapping", "primaryKey",
    "indexedProperties", "ignoredProperties", "valuePointer", "freeze", "thaw", "observe", "value", "setValue",
    "isManaged", "schema", "changes", "slotBase", "_slotBase", "byteBase", "_byteBase", "storage", "_storage",
    "managed", "_managed", "tracer", "_tracer",
  ]

  /// Names a generated class cannot have: the types generated code and its readers use.
  static let reservedTypes: Set<String> = [
    "Object", "EmbeddedObject", "Persisted", "List", "MutableSet", "Map", "LinkingObjects", "Results",
    "AnyReefValue", "ReefProperty", "Reef", "ReefSwift", "ReefError", "ObjectId", "Decimal128", "Document", "BSON",
    "Date", "Data", "UUID", "URL", "String", "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "Double", "Float",
    "Bool", "Character", "Array", "Dictionary", "Set", "Optional", "Result", "Error", "Never", "Task", "Any",
    "AnyObject", "Self", "Type", "Protocol", "Foundation", "Swift", "Sequence", "Collection", "Equatable",
    "Hashable", "Codable", "Sendable", "Void", "ObjectBase", "ObjectSchema", "Property", "Migration", "Schema",
    "SortDescriptor", "ThreadSafeReference", "NotificationToken", "PersistableEnum", "Configuration",
  ]

  /// The words of a stored name: runs of letters and digits (`first name` is `first`, `name`).
  static func words(_ name: String) -> [String] {
    var words: [String] = []
    var current = ""
    for character in name {
      if isIdentifierCharacter(character) {
        current.append(character)
      } else if !current.isEmpty {
        words.append(current)
        current = ""
      }
    }
    if !current.isEmpty { words.append(current) }
    return words
  }

  /// Whether `name` is an identifier as written: letters, digits and `_`, not starting with a
  /// digit.
  static func isIdentifier(_ name: String) -> Bool {
    guard let first = name.first, !first.isNumber, isIdentifierCharacter(first) else { return false }
    return name.allSatisfy(isIdentifierCharacter)
  }

  /// `_`, an ASCII letter or digit, or a letter of another script (`é`, `ß`).
  static func isIdentifierCharacter(_ character: Character) -> Bool {
    character == "_" || (character.isASCII ? character.isLetter || character.isNumber : character.isLetter)
  }

  static func capitalized(_ word: String) -> String { word.prefix(1).uppercased() + word.dropFirst() }

  /// The UpperCamelCase form of a stored name (`user_profiles` is `UserProfiles`).
  static func typeName(_ stored: String) -> String {
    let joined = words(stored).flatMap { $0.split(separator: "_").map(String.init) }.map(capitalized).joined()
    guard let first = joined.first else { return "Model" }
    return first.isNumber ? "Model" + joined : joined
  }

  /// A property name for a stored field name, taken as it is when it is an identifier.
  static func propertyName(_ stored: String) -> String {
    if isIdentifier(stored) {
      if reservedProperties.contains(stored) { return stored + "_" }
      return keywords.contains(stored) ? "`\(stored)`" : stored
    }
    let parts = words(stored)
    guard let head = parts.first else { return "field" }
    var name = head + parts.dropFirst().map(capitalized).joined()
    if name.first!.isNumber { name = "_" + name }
    if reservedProperties.contains(name) { return name + "_" }
    return keywords.contains(name) ? "`\(name)`" : name
  }

  /// `name` without backquotes.
  static func bare(_ name: String) -> String { name.filter { $0 != "`" } }
}
