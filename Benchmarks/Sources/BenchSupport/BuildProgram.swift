import ReefBSON

/// The elements of a document as a flat list of append operations, so that Reef's
/// `DocumentBuilder` and libbson's `bson_append_*` rebuild exactly the same content from the
/// same input (the C side compiles its own program from the same bytes in `cb_program_new`).
public struct BuildProgram {
  public enum Op {
    case document(String)
    case array(String)
    case end
    case string(String, String)
    case int32(String, Int32)
    case int64(String, Int64)
    case double(String, Double)
    case bool(String, Bool)
    case objectId(String, ObjectId)
    case null(String)
    case datetime(String, BSONDateTime)
  }

  public private(set) var ops: [Op] = []

  /// Compiles `document`; `nil` when it holds a type the program cannot express.
  public init?(_ document: Document) {
    guard compile(document) else { return nil }
  }

  private mutating func compile(_ document: Document) -> Bool {
    for element in document {
      let key = element.key
      switch element.value {
      case .document(let d):
        ops.append(.document(key))
        guard compile(d) else { return false }
        ops.append(.end)
      case .array(let a):
        ops.append(.array(key))
        guard compile(a.document) else { return false }
        ops.append(.end)
      case .string(let s): ops.append(.string(key, s))
      case .int32(let v): ops.append(.int32(key, v))
      case .int64(let v): ops.append(.int64(key, v))
      case .double(let v): ops.append(.double(key, v))
      case .bool(let v): ops.append(.bool(key, v))
      case .objectId(let v): ops.append(.objectId(key, v))
      case .null: ops.append(.null(key))
      case .datetime(let v): ops.append(.datetime(key, v))
      default: return false
      }
    }
    return true
  }

  /// Rebuilds the document with `DocumentBuilder`, nested documents written in place.
  @inline(never)
  public func build() -> Document {
    var builder = DocumentBuilder()
    var i = 0
    run(&builder, &i)
    return builder.document
  }

  private func run(_ b: inout DocumentBuilder, _ i: inout Int) {
    while i < ops.count {
      let op = ops[i]
      i += 1
      switch op {
      case .end: return
      case .document(let key): b.appendDocument(key) { nested in run(&nested, &i) }
      case .array(let key): b.appendArray(key) { nested in runArray(&nested, &i) }
      case .string(let key, let v): b.append(key, v)
      case .int32(let key, let v): b.append(key, v)
      case .int64(let key, let v): b.append(key, v)
      case .double(let key, let v): b.append(key, v)
      case .bool(let key, let v): b.append(key, v)
      case .objectId(let key, let v): b.append(key, v)
      case .null(let key): b.appendNull(key)
      case .datetime(let key, let v): b.append(key, .datetime(v))
      }
    }
  }

  private func runArray(_ b: inout ArrayBuilder, _ i: inout Int) {
    while i < ops.count {
      let op = ops[i]
      i += 1
      switch op {
      case .end: return
      case .document: b.appendDocument { nested in run(&nested, &i) }
      case .array: b.appendArray { nested in runArray(&nested, &i) }
      case .string(_, let v): b.append(.string(v))
      case .int32(_, let v): b.append(.int32(v))
      case .int64(_, let v): b.append(.int64(v))
      case .double(_, let v): b.append(.double(v))
      case .bool(_, let v): b.append(.bool(v))
      case .objectId(_, let v): b.append(.objectId(v))
      case .null: b.append(.null)
      case .datetime(_, let v): b.append(.datetime(v))
      }
    }
  }
}
