import ReefBSON

/// The crash test's workload: what write transaction number `n` does. The writer process
/// (`reef-crash-writer`) runs these transactions against a store; the test replays them on a
/// ``CrashModel`` to know what the store must hold after each kill.
///
/// Transaction `n` (numbered from 1), all in one write transaction:
/// - inserts 1 to 6 documents into `a` (`_id` = 16n + j), with payloads of random size (some of
///   them tens of KiB, so that LMDB splits pages and writes overflow pages) and 0 to 4 tags;
/// - from `n` = 4 on, updates every document of transaction `n - 3` (`$set`, `$inc`, `$push`);
/// - from `n` = 8 on, deletes documents of transaction `t = n - 7`: all of them, or none when
///   `t % 16 == 0`, or those with `j >= 1` when `t % 16 == 8`;
/// - inserts the ledger document `{_id: n, txn: n, inserted: k, next: 0}` into `b`, and sets
///   `next: n` in the ledger document of `n - 1`.
///
/// Everything is a function of `n` alone, so a store that holds transactions 1 to `n` holds
/// exactly ``CrashModel`` after `n` transactions.
public struct CrashTransaction: Sendable {
  /// The transaction's number, from 1.
  public var number: Int64
  /// Documents inserted into `a`.
  public var inserts: [Document]
  /// The transaction whose documents in `a` this one updates.
  public var updatedTransaction: Int64?
  /// The transaction whose documents in `a` with `j >= deletedFromJ` this one deletes.
  public var deletedTransaction: Int64?
  /// See ``deletedTransaction``.
  public var deletedFromJ: Int32
  /// The ledger document inserted into `b`.
  public var ledger: Document

  /// The collection of documents.
  public static let documents = "a"
  /// The collection with one ledger document per transaction.
  public static let ledgers = "b"
  /// The most documents a transaction inserts (so `_id` = 16n + j never collides).
  public static let maximumInserts = 6

  /// The transaction numbered `number` (from 1).
  public init(number: Int64) {
    precondition(number >= 1, "transactions are numbered from 1")
    self.number = number
    var random = SplitMix64(seed: 0x5EED_C8A5 ^ UInt64(number) &* 0x9E37_79B9_7F4A_7C15)
    let count = Int(random.next() % UInt64(CrashTransaction.maximumInserts)) + 1
    inserts = (0..<count).map { j in CrashTransaction.document(number: number, j: Int32(j), random: &random) }
    updatedTransaction = number > 3 ? number - 3 : nil
    // Most transactions' documents are deleted later, so that the store (and checking it after
    // each kill) does not grow too fast; one in 16 keeps all, one in 16 keeps its j = 0.
    let old = number - 7
    deletedTransaction = old >= 1 && old % 16 != 0 ? old : nil
    deletedFromJ = old % 16 == 8 ? 1 : 0
    ledger = [
      "_id": .int64(number), "txn": .int64(number), "inserted": .int32(Int32(count)), "next": .int64(0),
    ]
  }

  /// A document of `a` as inserted.
  static func document(number: Int64, j: Int32, random: inout SplitMix64) -> Document {
    let roll = random.next() % 100
    let size: Int
    switch roll {
    case 0..<6: size = 4096 + Int(random.next() % 45_000)  // overflow pages
    case 6..<25: size = 500 + Int(random.next() % 3000)
    default: size = Int(random.next() % 200)
    }
    var payload = [UInt8](repeating: 0, count: size)
    for index in payload.indices { payload[index] = UInt8(truncatingIfNeeded: random.next() >> 17) }
    let vocabulary = ["red", "green", "blue", "n\(number % 7)"]
    let tags = (0..<Int(random.next() % 5)).map { _ in BSON.string(vocabulary[Int(random.next() % 4)]) }
    var builder = DocumentBuilder(capacity: size + 160)
    builder.append("_id", .int64(number * 16 + Int64(j)))
    builder.append("txn", .int64(number))
    builder.append("j", .int32(j))
    builder.append("state", "new")
    builder.append("by", .int64(0))
    builder.append("version", .int64(0))
    builder.append("tags", .array(BSONArray(tags)))
    builder.append("meta", .document(["size": .int32(Int32(size)), "large": .bool(size > 4000)]))
    builder.append("payload", .binary(Binary(data: payload)))
    return builder.document
  }

  /// The tag that updates of this transaction push.
  public var updateTag: String { "u\(number)" }

  /// The filter of the update: `{txn: n - 3}`.
  public var updateFilter: Document? { updatedTransaction.map { ["txn": .int64($0)] } }

  /// The update: `{$set: {state: "updated", by: n}, $inc: {version: 1}, $push: {tags: "u<n>"}}`.
  public var update: Document {
    [
      "$set": ["state": "updated", "by": .int64(number)], "$inc": ["version": .int64(1)],
      "$push": ["tags": .string(updateTag)],
    ]
  }

  /// The filter of the deletion: `{txn: n - 7, j: {$gte: from}}`.
  public var deleteFilter: Document? {
    deletedTransaction.map { ["txn": .int64($0), "j": ["$gte": .int32(deletedFromJ)]] }
  }

  /// The filter and update of the previous ledger document: `{_id: n - 1}`, `{$set: {next: n}}`.
  public var ledgerUpdate: (filter: Document, update: Document)? {
    number > 1 ? (["_id": .int64(number - 1)], ["$set": ["next": .int64(number)]]) : nil
  }
}

/// What a store holds after transactions 1 to ``last`` of ``CrashTransaction``.
public struct CrashModel: Sendable {
  /// The last transaction applied (0 for none).
  public private(set) var last: Int64 = 0
  /// The documents of `a`, by `_id`.
  public private(set) var documents: [Int64: Document] = [:]
  /// The documents of `b`, by `_id`.
  public private(set) var ledgers: [Int64: Document] = [:]
  /// The `_id`s of `a` of each transaction still holding documents.
  private var idsByTransaction: [Int64: [Int64]] = [:]

  public init() {}

  /// Applies transactions up to `number`.
  public mutating func advance(to number: Int64) {
    while last < number { apply(CrashTransaction(number: last + 1)) }
  }

  /// Applies the next transaction.
  public mutating func apply(_ transaction: CrashTransaction) {
    precondition(transaction.number == last + 1, "transactions apply in order")
    for document in transaction.inserts {
      guard case .int64(let id)? = document["_id"] else { preconditionFailure("a workload _id is an int64") }
      documents[id] = document
      idsByTransaction[transaction.number, default: []].append(id)
    }
    if let updated = transaction.updatedTransaction {
      for id in idsByTransaction[updated] ?? [] {
        var document = documents[id]!
        document.set("updated", forKey: "state")
        document.set(.int64(transaction.number), forKey: "by")
        guard case .int64(let version)? = document["version"], case .array(let tags)? = document["tags"] else {
          preconditionFailure("a workload document has version and tags")
        }
        document.set(.int64(version + 1), forKey: "version")
        document.set(.array(BSONArray(Array(tags) + [.string(transaction.updateTag)])), forKey: "tags")
        documents[id] = document
      }
    }
    if let deleted = transaction.deletedTransaction {
      let ids = idsByTransaction[deleted] ?? []
      var kept: [Int64] = []
      for id in ids {
        guard case .int32(let j)? = documents[id]?["j"] else { continue }
        if j >= transaction.deletedFromJ { documents[id] = nil } else { kept.append(id) }
      }
      idsByTransaction[deleted] = kept.isEmpty ? nil : kept
    }
    if transaction.number > 1 { ledgers[transaction.number - 1]!.set(.int64(transaction.number), forKey: "next") }
    ledgers[transaction.number] = transaction.ledger
    last = transaction.number
  }

  /// The documents of `a` of transaction `number`, in `_id` order.
  public func documents(ofTransaction number: Int64) -> [Document] {
    (idsByTransaction[number] ?? []).sorted().map { documents[$0]! }
  }
}
