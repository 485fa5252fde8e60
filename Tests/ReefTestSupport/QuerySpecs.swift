import ReefBSON

/// One file of `Specs/query`: documents and the cases that query them.
public struct QuerySpecFile: Sendable {
  public var name: String
  public var description: String
  public var documents: [Document]
  public var cases: [QuerySpecCase]
}

/// One case of a query spec file (see `Specs/query/README.md`).
public struct QuerySpecCase: Sendable, CustomStringConvertible {
  public var file: String
  public var description: String
  public var filter: Document?
  public var predicate: String?
  public var arguments: [BSON]
  public var sort: Document?
  public var skip: Int
  public var limit: Int?
  public var projection: Document?
  public var expected: [BSON]?
  public var expectedDocuments: [Document]?
  public var error: String?

  /// `file: description`, the name failures print.
  public var name: String { "\(file): \(self.description)" }
}

/// The repository's `Specs/query` directory.
public let querySpecDirectory = specDirectory("query")

/// Every `Specs/query/*.json` file, parsed. Fails loudly (a fatal error naming the file) when a
/// file is malformed, so that a broken spec can never pass as zero cases.
public func loadQuerySpecs() -> [QuerySpecFile] {
  jsonFileNames(in: querySpecDirectory).map { name in
    let path = querySpecDirectory + "/" + name
    guard let bytes = readFile(path) else { fatalError("cannot read \(path)") }
    do {
      return try parseQuerySpec(name: name, text: String(decoding: bytes, as: UTF8.self))
    } catch {
      fatalError("\(path): \(error)")
    }
  }
}

struct SpecFormatError: Error, CustomStringConvertible {
  var description: String
}

func parseQuerySpec(name: String, text: String) throws -> QuerySpecFile {
  let root = try Document(extendedJSON: text)
  guard case .array(let documents)? = root["documents"], case .array(let tests)? = root["tests"] else {
    throw SpecFormatError(description: "needs \"documents\" and \"tests\" arrays")
  }
  var cases: [QuerySpecCase] = []
  for (index, test) in tests.enumerated() {
    guard case .document(let test) = test else { throw SpecFormatError(description: "test \(index) is not a document") }
    func string(_ key: String) -> String? { if case .string(let value)? = test[key] { value } else { nil } }
    func document(_ key: String) -> Document? { if case .document(let value)? = test[key] { value } else { nil } }
    func integer(_ key: String) -> Int? {
      switch test[key] {
      case .int32(let value)?: Int(value)
      case .int64(let value)?: Int(value)
      default: nil
      }
    }
    var arguments: [BSON] = []
    if case .array(let values)? = test["args"] { arguments = Array(values) }
    var expected: [BSON]?
    if case .array(let values)? = test["expected"] { expected = Array(values) }
    var expectedDocuments: [Document]?
    if case .array(let values)? = test["expectedDocuments"] {
      expectedDocuments = values.compactMap { if case .document(let value) = $0 { value } else { nil } }
    }
    let testCase = QuerySpecCase(
      file: name, description: string("description") ?? "test \(index)", filter: document("filter"),
      predicate: string("predicate"), arguments: arguments, sort: document("sort"), skip: integer("skip") ?? 0,
      limit: integer("limit"), projection: document("projection"), expected: expected,
      expectedDocuments: expectedDocuments, error: string("error"))
    guard testCase.filter != nil || testCase.predicate != nil else {
      throw SpecFormatError(description: "\(testCase.name) has neither a filter nor a predicate")
    }
    guard testCase.expected != nil || testCase.expectedDocuments != nil || testCase.error != nil else {
      throw SpecFormatError(description: "\(testCase.name) has no expected result or error")
    }
    cases.append(testCase)
  }
  let docs = documents.compactMap { if case .document(let value) = $0 { value } else { nil } }
  guard docs.count == documents.count else { throw SpecFormatError(description: "a document is not an object") }
  let description = if case .string(let text)? = root["description"] { text } else { name }
  return QuerySpecFile(name: name, description: description, documents: docs, cases: cases)
}
