import CLMDB
import ReefBSON

/// One document a commit inserted, deleted or modified.
public struct DocumentChange: Sendable, Hashable, CustomStringConvertible {
  /// What happened to the document.
  public struct Kind: Sendable, Hashable, CustomStringConvertible {
    let code: String
    /// The document is new in its collection.
    public static let inserted = Kind(code: "i")
    /// The document was removed from its collection.
    public static let deleted = Kind(code: "d")
    /// The document was replaced or updated; ``DocumentChange/fields`` names what changed.
    public static let modified = Kind(code: "m")
    /// `inserted`, `deleted` or `modified`.
    public var description: String {
      switch code {
      case "i": "inserted"
      case "d": "deleted"
      default: "modified"
      }
    }
  }

  /// The collection.
  public var collection: String
  /// The document's `_id`.
  public var id: BSON
  /// What happened to it.
  public var kind: Kind
  /// For a modified document, the dotted paths of the values that changed, in document order:
  /// `address.city` for a field of a subdocument, `addresses.1.city` for a field of an array's
  /// element when the array kept its length, `addresses` for an array that grew or shrank, and a
  /// field that appeared or went away. Empty for inserted and deleted documents, and for a
  /// document deleted and inserted again in one commit (what changed is not compared then).
  public var fields: [String]

  /// Describes a change.
  public init(collection: String, id: BSON, kind: Kind, fields: [String] = []) {
    self.collection = collection
    self.id = id
    self.kind = kind
    self.fields = fields
  }

  /// An `_id` as one value for every `_id` equal to it: the store's keys encode numbers by value,
  /// so `1`, `1.0`, `NumberLong(1)` and `Decimal128("1.00")` (and `0` and `-0.0`) name one
  /// document. A key for dictionaries of documents by `_id` (`BSON`'s `==` tells the types apart).
  public static func identity(of id: BSON) -> BSON {
    switch id {
    case .int32(let value): return .int64(Int64(value))
    case .double(let value) where value == value.rounded() && abs(value) < 9.2e18: return .int64(Int64(value))
    case .double(let value) where value.isNaN: return .double(.nan)
    case .decimal128:
      // Its simplest type: an integer, a double or a Decimal128 that no other type holds.
      guard let (value, _) = try? KeyEncoding.decode(KeyEncoding.encode([id]), at: 0) else { return id }
      if case .decimal128 = value { return value }
      return identity(of: value)
    default: return id
    }
  }

  /// `Contact 42 modified [address.city]`.
  public var description: String {
    let paths = fields.isEmpty ? "" : " [\(fields.joined(separator: ", "))]"
    return "\(collection) \(id.extendedJSON()) \(kind)\(paths)"
  }
}

/// What one commit changed, as the store's change feed records it (see ``Store/observeChanges(after:_:)``).
public struct CommitChanges: Sendable, Hashable {
  /// The commit's place in the feed: 1 for the store's first commit that changed documents, then
  /// one more for each such commit, in commit order, whichever process made it. Commits that
  /// changed no document (an index created, metadata set) have none.
  public var sequence: UInt64
  /// The documents changed, in the order the commit changed them; a document appears once (its
  /// net change: inserted then modified is inserted, inserted then deleted is not listed).
  public var changes: [DocumentChange]
  /// Collections changed too much for their documents to be listed (more than
  /// ``Store/changeFeedDocumentLimit`` documents in one commit, a commit whose list would pass
  /// 16 MiB, a dropped collection, an import, a rename): an observer reads them again. Their documents are not in ``changes``.
  public var resetCollections: [String]

  /// Describes a commit's changes.
  public init(sequence: UInt64, changes: [DocumentChange], resetCollections: [String] = []) {
    self.sequence = sequence
    self.changes = changes
    self.resetCollections = resetCollections
  }

  /// Whether `collection` changed in this commit (a document of it, or the whole collection).
  public func touches(_ collection: String) -> Bool {
    resetCollections.contains(collection) || changes.contains { $0.collection == collection }
  }
}

/// The changes a write transaction made, recorded as it makes them and written with its commit.
final class ChangeRecorder {
  /// The net change of each document, by collection and `_id`'s key encoding, in first-change
  /// order.
  private var entries: [DocumentChange?] = []
  /// Per collection: where each document's change is in ``entries``, by its `_id` (numbers
  /// made one type, so that 1 and 1.0 name one document, as in the store's keys).
  private final class Positions {
    var byID: [BSON: Int] = [:]
  }
  private var positions: [String: Positions] = [:]
  /// The collection recorded last, so that a loop of writes into one collection looks it up
  /// once.
  private var last: (name: String, positions: Positions)?
  /// The entries of documents deleted and inserted again: modified, with fields not known.
  private var unknownFields: Set<Int> = []
  /// The document each modified entry started from, by position in ``entries``: a second
  /// change of it is compared with this one.
  private var originals: [Int: Document] = [:]
  private(set) var resets: [String] = []

  /// Whether the transaction changed nothing, its changes cancelling out included (a document
  /// inserted then deleted).
  var isEmpty: Bool { resets.isEmpty && !entries.contains { $0 != nil } }

  func reset(_ collection: String) {
    guard !collection.hasPrefix("__") else { return }
    if !resets.contains(collection) { resets.append(collection) }
    if let known = positions.removeValue(forKey: collection) {
      for position in known.byID.values { entries[position] = nil }
    }
    if last?.name == collection { last = nil }
  }

  /// The key of an `_id` in ``Positions``: numbers that are equal are one key.
  private static func key(_ id: BSON) -> BSON { DocumentChange.identity(of: id) }

  /// Records that `old` (nil for a new document) became `new` (nil for a deleted one).
  func record(_ collection: String, id: BSON, old: Document?, new: Document?) {
    let table: Positions
    if let last, last.name == collection {
      table = last.positions
    } else {
      guard !collection.hasPrefix("__"), !resets.contains(collection) else { return }
      if let known = positions[collection] {
        table = known
      } else {
        table = Positions()
        positions[collection] = table
      }
      last = (collection, table)
    }
    let key = ChangeRecorder.key(id)
    if let position = table.byID[key], let previous = entries[position] {
      // A document changed twice in one commit: its net change.
      switch (previous.kind, new) {
      case (.inserted, nil): entries[position] = nil
      case (.inserted, _): break
      case (.deleted, .some):
        // Deleted then inserted again: a modification of what the commit started from, whose
        // fields are not known here (none are named).
        entries[position] = DocumentChange(collection: collection, id: id, kind: .modified, fields: [])
        unknownFields.insert(position)
      case (_, nil): entries[position] = DocumentChange(collection: collection, id: id, kind: .deleted)
      default:
        // After a deletion and an insertion, a later change names no fields either: others
        // may have changed since the commit began.
        guard !unknownFields.contains(position), let new else { break }
        guard let original = originals[position] else { break }
        // The net change from the document the commit started from: none when a value went
        // back to what it was.
        let fields = ChangeRecorder.changedPaths(original, new)
        if fields.isEmpty {
          entries[position] = nil
          originals[position] = nil
          table.byID[key] = nil
        } else {
          entries[position]?.fields = fields
        }
      }
      return
    }
    if table.byID.count >= Store.changeFeedDocumentLimit {
      reset(collection)
      return
    }
    let change: DocumentChange
    switch (old, new) {
    case (nil, _): change = DocumentChange(collection: collection, id: id, kind: .inserted)
    case (_, nil): change = DocumentChange(collection: collection, id: id, kind: .deleted)
    case (let old?, let new?):
      change = DocumentChange(
        collection: collection, id: id, kind: .modified, fields: ChangeRecorder.changedPaths(old, new))
    }
    if change.kind == .modified, let old { originals[entries.count] = old }
    table.byID[key] = entries.count
    entries.append(change)
  }

  /// The record written with the commit: `{changes: [{c, _id, k, f}], resets: [names]}`.
  func document() -> Document {
    var builder = DocumentBuilder()
    builder.appendArray("changes") { array in
      for case let change? in entries {
        array.appendDocument { item in
          item.append("c", .string(change.collection))
          item.append("_id", change.id)
          item.append("k", .string(change.kind.code))
          if !change.fields.isEmpty {
            item.append("f", .array(BSONArray(change.fields.map { .string($0) })))
          }
        }
      }
    }
    builder.append("resets", .array(BSONArray(resets.map { .string($0) })))
    return builder.document
  }

  /// The record, or, when it would be larger than `limit` bytes (too large to read back as a
  /// document), one that resets every collection it lists instead.
  func document(limit: Int) -> Document {
    let full = document()
    guard full.byteCount > limit else { return full }
    for case let change? in entries { reset(change.collection) }
    return document()
  }

  /// The record read back.
  static func commitChanges(_ document: Document, sequence: UInt64) -> CommitChanges {
    var changes: [DocumentChange] = []
    if case .array(let array)? = document["changes"] {
      for case .document(let item) in array {
        guard case .string(let collection)? = item["c"], let id = item["_id"], case .string(let code)? = item["k"]
        else { continue }
        var fields: [String] = []
        if case .array(let paths)? = item["f"] {
          for case .string(let path) in paths { fields.append(path) }
        }
        changes.append(
          DocumentChange(collection: collection, id: id, kind: DocumentChange.Kind(code: code), fields: fields))
      }
    }
    var resets: [String] = []
    if case .array(let names)? = document["resets"] {
      for case .string(let name) in names { resets.append(name) }
    }
    return CommitChanges(sequence: sequence, changes: changes, resetCollections: resets)
  }

  /// The dotted paths where `new` differs from `old`, in document order (`old`'s, then the
  /// fields only `new` has).
  static func changedPaths(_ old: Document, _ new: Document) -> [String] {
    var paths: [String] = []
    compare(old, new, prefix: "", into: &paths)
    return paths
  }

  private static func compare(_ old: Document, _ new: Document, prefix: String, into paths: inout [String]) {
    var seen: Set<String> = []
    for element in old {
      seen.insert(element.key)
      let path = prefix + element.key
      guard let other = new.element(forKey: element.key) else {
        paths.append(path)
        continue
      }
      if element.type == other.type, element.valueBytesEqual(other) { continue }
      if element.type == other.type, element.type == .document || element.type == .array,
        let inner = element.document, let otherInner = other.document,
        element.type == .document || inner.count == otherInner.count
      {
        compare(inner, otherInner, prefix: path + ".", into: &paths)
      } else {
        paths.append(path)
      }
    }
    for element in new where !seen.contains(element.key) { paths.append(prefix + element.key) }
  }
}

extension Document.Element {
  /// Whether the two elements' value bytes are the same.
  fileprivate func valueBytesEqual(_ other: Document.Element) -> Bool {
    value == other.value
  }
}

extension Store {
  /// The most documents of one collection a commit lists in the change feed; past it the
  /// collection is reset (``CommitChanges/resetCollections``), so that a bulk write records a
  /// name instead of every `_id`.
  public static let changeFeedDocumentLimit = 10_000

  /// The largest record of a commit in the feed, in bytes: a larger one (many documents with
  /// many changed fields, in collections under ``changeFeedDocumentLimit``) resets its
  /// collections instead, as documents larger than 16 MiB cannot be read back.
  static let changeFeedRecordLimit = 16 << 20

  /// How many commits the change feed keeps: an observer further behind is told to read
  /// everything again (``ChangeBatch/isComplete`` is false).
  public static let changeFeedRetention: UInt64 = 1_024
}

/// The feed's commits after a sequence number.
public struct ChangeBatch: Sendable {
  /// The commits, in order.
  public var commits: [CommitChanges]
  /// False when commits after the sequence asked for are no longer in the feed (more than
  /// ``Store/changeFeedRetention`` commits behind), or the sequence is past the feed's last:
  /// what changed is unknown, so an observer reads everything again.
  public var isComplete: Bool
  /// The feed's last sequence number in the snapshot read.
  public var latest: UInt64

  /// A batch of commits.
  public init(commits: [CommitChanges], isComplete: Bool, latest: UInt64) {
    self.commits = commits
    self.isComplete = isComplete
    self.latest = latest
  }
}

extension Transaction {
  static let changesName = "__changes"
  private static let sequenceKey = Array("changeSequence".utf8)

  /// Records a document change of this write transaction.
  func recordChange(_ collection: String, id: BSON, old: Document?, new: Document?) {
    let recorder = changeRecorder ?? ChangeRecorder()
    changeRecorder = recorder
    recorder.record(collection, id: id, old: old, new: new)
  }

  /// Records that a whole collection changed (dropped, imported, renamed).
  func recordReset(_ collection: String) {
    let recorder = changeRecorder ?? ChangeRecorder()
    changeRecorder = recorder
    recorder.reset(collection)
  }

  /// Writes this transaction's changes into the feed, just before the commit: under the next
  /// sequence number, and the entry that falls out of the retention window removed.
  func writeChangeRecord() throws(StoreError) {
    guard let recorder = changeRecorder, !recorder.isEmpty else { return }
    let metaDB = try database(Transaction.metaName, create: true)!
    var sequence: UInt64 = 0
    if let bytes = try lmdb.get(metaDB, Transaction.sequenceKey), bytes.count == 8 {
      sequence = UInt64(littleEndian: bytes.loadUnaligned(as: UInt64.self))
    }
    sequence &+= 1
    try lmdb.put(metaDB, Transaction.sequenceKey, withUnsafeBytes(of: sequence.littleEndian) { Array($0) })
    let changesDB = try database(Transaction.changesName, create: true)!
    try lmdb.put(
      changesDB, Transaction.feedKey(sequence), recorder.document(limit: Store.changeFeedRecordLimit).bytes)
    if sequence > Store.changeFeedRetention {
      _ = try lmdb.delete(changesDB, Transaction.feedKey(sequence - Store.changeFeedRetention))
    }
    changeRecorder = nil
  }

  /// Big-endian, so that LMDB's key order is sequence order.
  static func feedKey(_ sequence: UInt64) -> [UInt8] { withUnsafeBytes(of: sequence.bigEndian) { Array($0) } }

  /// The feed's last sequence number in this transaction's snapshot (0 before any).
  public func changeSequence() throws(StoreError) -> UInt64 {
    guard let metaDB = try database(Transaction.metaName, create: false),
      let bytes = try lmdb.get(metaDB, Transaction.sequenceKey), bytes.count == 8
    else { return 0 }
    return UInt64(littleEndian: bytes.loadUnaligned(as: UInt64.self))
  }

  /// The commits recorded after `sequence`, in order.
  /// - Throws: ``StoreError/Kind/corrupt`` for a feed entry that is not a document.
  public func changes(after sequence: UInt64) throws(StoreError) -> ChangeBatch {
    let latest = try changeSequence()
    // A sequence past the feed's last (one remembered from before a power loss took commits
    // back, or from another store): the commits that will take those numbers would be missed.
    guard latest > sequence else { return ChangeBatch(commits: [], isComplete: latest == sequence, latest: latest) }
    guard let changesDB = try database(Transaction.changesName, create: false) else {
      return ChangeBatch(commits: [], isComplete: false, latest: latest)
    }
    var commits: [CommitChanges] = []
    var failure: StoreError?
    try lmdb.scan(changesDB, from: Transaction.feedKey(sequence &+ 1)) { key, value throws(StoreError) in
      guard key.count == 8 else { return true }
      let number = UInt64(bigEndian: key.loadUnaligned(as: UInt64.self))
      do throws(BSONError) {
        let document = try Document(bytes: value)
        commits.append(ChangeRecorder.commitChanges(document, sequence: number))
      } catch {
        failure = StoreError(.corrupt, "the change feed's entry \(number) is damaged: \(error)", bsonError: error)
        return false
      }
      return true
    }
    if let failure { throw failure }
    let complete = commits.first?.sequence == sequence &+ 1 && commits.last?.sequence == latest
    return ChangeBatch(commits: commits, isComplete: complete, latest: latest)
  }
}
