extension InferredModels {
  /// The models as a Swift file: `import ReefSwift`, then each class.
  /// - Parameter header: the first comment line(s), without `//` (where the models come from).
  /// - Complexity: O(n) in the number of properties.
  public func swiftSource(header: String) -> String {
    var out = ""
    for line in header.split(separator: "\n", omittingEmptySubsequences: false) { out += "// \(line)\n" }
    out += "// Each collection is an Object, each subdocument path an EmbeddedObject. A property is optional\n"
    out += "// where its field is missing or null in some documents, AnyReefValue where its types mix;\n"
    out += "// className() and propertiesMapping() keep the stored names that are not Swift names.\n"
    out += "import ReefSwift\n"
    for model in classes {
      out += "\n"
      out += source(of: model)
    }
    return out
  }

  private func source(of model: ModelClass) -> String {
    var out = ""
    let count = "\(model.documentCount) \(model.documentCount == 1 ? "document" : "documents")"
    if let collection = model.collection {
      out += "/// The collection \(Self.quoted(collection)): \(count).\n"
      out += "class \(model.name): Object {\n"
      if collection != model.name {
        out += "  override class func className() -> String { \(Self.literal(collection)) }\n"
      }
    } else {
      let noun = model.documentCount == 1 ? "subdocument" : "subdocuments"
      out += "/// The subdocuments at \(Self.quoted(model.path)): \(model.documentCount) \(noun).\n"
      out += "class \(model.name): EmbeddedObject {\n"
    }
    let mapped = model.properties.filter { SwiftNames.bare($0.name) != $0.storedName }
    if !mapped.isEmpty {
      let pairs = mapped.map { "\(Self.literal(SwiftNames.bare($0.name))): \(Self.literal($0.storedName))" }
      let single =
        "  override class func propertiesMapping() -> [String: String] { [\(pairs.joined(separator: ", "))] }"
      if single.count <= 120 {
        out += single + "\n"
      } else {
        out += "  override class func propertiesMapping() -> [String: String] {\n    [\n"
        for pair in pairs { out += "      \(pair),\n" }
        out += "    ]\n  }\n"
      }
    }
    for property in model.properties {
      let attribute = property.isPrimaryKey ? "@Persisted(primaryKey: true)" : "@Persisted"
      var line = "  \(attribute) var \(property.name): \(property.type)"
      if let comment = property.comment { line += "  // \(comment)" }
      out += line + "\n"
    }
    for leftOut in model.leftOut {
      out += "  // \(Self.quoted(leftOut.storedName)) is left out: it \(leftOut.reason).\n"
    }
    out += "}\n"
    return out
  }

  /// A Swift string literal of `text`.
  static func literal(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case _ where scalar.value < 0x20 || scalar.value == 0x7F:
        out += "\\u{\(String(scalar.value, radix: 16))}"
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out + "\""
  }

  /// A name for a comment: in backquotes, with line breaks escaped.
  static func quoted(_ text: String) -> String {
    var out = "`"
    for character in text {
      switch character {
      case "\n": out += "\\n"
      case "\r", "\r\n": out += "\\r"
      default: out.append(character)
      }
    }
    return out + "`"
  }
}
