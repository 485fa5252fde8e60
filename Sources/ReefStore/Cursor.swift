import ReefBSON
@_spi(ReefInternal) import ReefQuery

/// The results of a find on a store, read one at a time from one snapshot.
///
/// Nothing collects every match: without a sort, each document is read from the store, tested
/// and copied when ``next()`` asks for it, so counting and unsorted queries run in constant
/// memory and the store is read no further than the limit needs. A sort with a limit keeps only
/// skip + limit documents (a top-k); one without a limit holds up to
/// ``FindOptions/sortMemory`` and spills sorted runs to temporary files past that. Each result
/// is a copy, valid after the cursor ends.
///
/// ```swift
/// let cursor = try contacts.find(["address.city": "Paris"])
/// while let contact = try cursor.next() { print(contact["name"] ?? .null) }
/// let all = try contacts.find().toArray()   // when an array is wanted
/// ```
///
/// **A snapshot.** A cursor from ``DocumentCollection/find(_:options:)`` holds a read transaction of its
/// own (the store is opened with `MDB_NOTLS`, so a read transaction may outlive the call that
/// began it): it sees the store as it was when the find began, whatever is
/// written after. It ends that transaction when its last result has been read, when
/// ``next()`` throws, when ``close()`` is called, and when it is released. Until then it pins
/// its snapshot, like any long-lived reader: pages that later writes free cannot be reused, so
/// the file grows, and it holds one of the store's reader slots. Read cursors to the end or
/// close them. A cursor from ``TransactionCollection/find(_:options:)`` reads in that
/// transaction and only while it is open (after, ``next()`` throws); in a write transaction,
/// the results are read when the find is made (so that writes made while reading cannot move
/// the cursor).
///
/// **Errors.** ``next()`` throws; a `for … in` loop gets each result as a `Result`, whose
/// `get()` throws, because Swift's `Sequence` cannot throw and a damaged document must not end
/// a loop silently:
///
/// ```swift
/// for result in try contacts.find() { let contact = try result.get(); … }
/// ```
public final class Cursor: Sequence {
  /// The results being read (nil once closed), or those read at once in a write transaction.
  /// Optional properties rather than an enum, so that the stream is changed in place.
  private var stream: FindStream<MatchSource>?
  private var collected: IndexingIterator<[Document]>?
  private let transaction: Transaction
  private let ownsTransaction: Bool
  private var failure: StoreError?
  private var finalExplain: Explain?

  /// A cursor over the results of `query` in `transaction`: one that reads as it goes, in a read
  /// transaction; the results read at once, in a write transaction.
  init(_ collection: TransactionCollection, query: Query, options: FindOptions, ownsTransaction: Bool)
    throws(StoreError)
  {
    transaction = collection.transaction
    self.ownsTransaction = ownsTransaction
    let source = try MatchSource(collection, query: query)
    stream = FindStream(source, query: query, options: options, sourceMatches: true, lifetime: .shared)
    if !transaction.isReadOnly {
      // A write transaction's cursors and pointers do not survive its writes: read now.
      var results: [Document] = []
      while let document = try next() { results.append(document) }
      collected = results.makeIterator()
    }
  }

  deinit { close() }

  /// The next result, or nil after the last (and then the cursor's transaction has ended).
  /// - Throws: ``StoreError/Kind/corrupt`` for a damaged stored document;
  ///   ``StoreError/Kind/invalidQuery`` for a sort over its memory limit that may not use the
  ///   disk; ``StoreError/Kind/storage`` when a sort's temporary file cannot be written or read,
  ///   or when the cursor of a transaction is read after the transaction ended. After an error
  ///   the cursor is closed and throws the same error again.
  /// - Complexity: O(1) documents read per result without a sort (amortized; those that do not
  ///   match are read too); the whole result on the first call with one.
  public func next() throws(StoreError) -> Document? {
    if let failure { throw failure }
    if collected != nil {
      if let document = collected!.next() { return document }
      collected = nil
      return nil
    }
    guard stream != nil else { return nil }
    if !ownsTransaction && transaction.isFinished {
      throw fail(
        StoreError(
          .storage,
          "the cursor was read after its transaction ended: read it inside store.read { } or use "
            + "DocumentCollection.find, whose cursor has a transaction of its own"))
    }
    do {
      if let document = try stream!.next() { return document }
    } catch {
      throw fail(Cursor.storeError(error))
    }
    close()
    return nil
  }

  /// Reads the remaining results into an array.
  /// - Throws: as ``next()``.
  /// - Complexity: O(*n*) in the documents read; the array holds every result.
  public func toArray() throws(StoreError) -> [Document] {
    var results: [Document] = []
    while let document = try next() { results.append(document) }
    return results
  }

  /// Counts the remaining results without copying them out of the cursor (in constant memory
  /// without a sort), and closes the cursor.
  /// - Throws: as ``next()``.
  /// - Complexity: O(*n*) in the documents read.
  public func count() throws(StoreError) -> Int {
    if let failure { throw failure }
    if collected != nil {
      var count = 0
      while collected!.next() != nil { count += 1 }
      collected = nil
      return count
    }
    guard stream != nil else { return 0 }
    if stream!.passesThrough {
      // Counted at the source when nothing comes between: no copies, no layers.
      var source = stream!.source
      stream = nil
      do {
        let count = try source.countRemaining()
        finalExplain = source.explain
        finalExplain!.returned = count
        close()
        return count
      } catch {
        source.close()
        throw fail(error)
      }
    }
    do {
      let count = try stream!.count()
      close()
      return count
    } catch {
      throw fail(Cursor.storeError(error))
    }
  }

  /// Ends the cursor: removes a sort's temporary files and ends its transaction (if it has one
  /// of its own). ``next()`` then returns nil. Closing twice does nothing.
  public func close() {
    if stream != nil {
      finalExplain = explain
      stream!.close()
      var source = stream!.source
      source.close()
      stream = nil
    }
    if ownsTransaction { transaction.finish(commit: true) }
  }

  /// Whether the cursor is closed: read to the end, failed, or closed.
  public var isClosed: Bool { stream == nil && collected == nil }

  /// How the query ran so far: the plan, the keys and documents it read, the results returned.
  public var explain: Explain {
    guard let stream else {
      return finalExplain ?? Explain(index: nil, keysExamined: 0, documentsExamined: 0, returned: 0)
    }
    var explain = stream.source.explain
    explain.returned = stream.returned
    return explain
  }

  /// The sorters of the find, for tests (the most documents they held, the runs they wrote).
  @_spi(ReefInternal)
  public var sorters: [DocumentSorter] {
    stream?.sorters ?? []
  }

  /// Records the error that ends the cursor, closes it, and returns the error to throw.
  private func fail(_ error: StoreError) -> StoreError {
    failure = error
    close()
    return error
  }

  /// An error of a find's stream as a store error: its own, a sort's memory limit, a sort's
  /// temporary files.
  static func storeError(_ error: any Error) -> StoreError {
    switch error {
    case let error as StoreError: error
    case let error as QueryError: StoreError(.invalidQuery, error.description, queryError: error)
    case let error as BSONError: StoreError(.storage, "sorting with temporary files: \(error)", bsonError: error)
    default: StoreError(.storage, "\(error)")
    }
  }

  /// Iterates the results, each a `Result`: an error is the last element.
  public func makeIterator() -> Iterator { Iterator(cursor: self) }

  /// The iterator of a cursor's results: each result, or the error that ended them.
  public struct Iterator: IteratorProtocol {
    let cursor: Cursor
    private var failed = false

    init(cursor: Cursor) { self.cursor = cursor }

    /// The next result (`.success`), the error that ends the results (`.failure`), or nil.
    public mutating func next() -> Result<Document, StoreError>? {
      guard !failed else { return nil }
      do throws(StoreError) {
        return try cursor.next().map { .success($0) }
      } catch {
        failed = true
        return .failure(error)
      }
    }
  }
}
