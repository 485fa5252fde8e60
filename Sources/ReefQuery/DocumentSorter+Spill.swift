import ReefBSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The temporary files of one spilled sort: a directory of its own (`reef-sort-XXXXXX` under
/// `$TMPDIR` or `/tmp`) holding sorted runs of concatenated BSON, `run-0.bson`, `run-1.bson`…
/// ``remove()`` deletes them and the directory; the sorter calls it when the merge ends, when it
/// is closed and when it is released.
final class SpillFiles {
  /// The directory.
  let directory: String
  /// The runs written, in input order.
  private(set) var runs: [String] = []
  private var removed = false

  /// Makes the directory.
  /// - Throws: ``BSONError/Kind/io`` naming the directory when it cannot be made.
  init(parent: String?) throws(BSONError) {
    let base = parent ?? getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    var template =
      Array((base.hasSuffix("/") ? base : base + "/").utf8CString.dropLast()) + Array("reef-sort-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else {
      let reason = String(cString: strerror(errno))
      throw BSONError(.io, "cannot make a directory for the sort's temporary files in \(base): \(reason)")
    }
    directory = String(cString: made)
  }

  deinit { remove() }

  /// Writes a sorted run to a new file.
  /// - Throws: ``BSONError/Kind/io`` when the file cannot be written (the disk is full).
  func write(run documents: [Document]) throws(BSONError) {
    let path = "\(directory)/run-\(runs.count).bson"
    runs.append(path)
    let writer = try BSONStreamWriter(path: path, compression: .none)
    do throws(BSONError) {
      for document in documents { try writer.write(document) }
      try writer.close()
    } catch {
      try? writer.close()
      throw error
    }
  }

  /// Gives the name of a new run file, counted with the others, for a merge to write.
  func newRunPath() -> String {
    let path = "\(directory)/run-\(runs.count).bson"
    runs.append(path)
    return path
  }

  /// Deletes the run files written so far, keeping their names in the list.
  func delete(_ paths: ArraySlice<String>) {
    for path in paths { unlink(path) }
  }

  /// Deletes every file and the directory.
  func remove() {
    guard !removed else { return }
    removed = true
    for path in runs { unlink(path) }
    rmdir(directory)
  }
}

/// A k-way merge of sorted runs: the files of a ``SpillFiles`` in order, then a last run held in
/// memory. A heap holds each run's next document; of equal documents, the one from the earlier
/// run comes first, so the merge keeps the input order of equal keys.
///
/// At most ``fanIn`` files are open at once: more runs are first merged, the first ``fanIn`` of
/// them at a time, into longer runs.
final class RunMerge {
  static let fanIn = 64

  private let sort: SortSpecification
  private var readers: [BSONStreamReader] = []
  private var last: ArraySlice<Document>
  /// Each run's next document and the run's number (the last run's is `readers.count`).
  private var heads: [(document: Document, run: Int)] = []

  init(sort: SortSpecification, files: SpillFiles, last: [Document]) throws(BSONError) {
    self.sort = sort
    self.last = last[...]
    var runs = files.runs[...]
    while runs.count > RunMerge.fanIn {
      // Consecutive runs merged into one keep the input order of equal keys.
      let group = runs.prefix(RunMerge.fanIn)
      let merged = files.newRunPath()
      let merge = try RunMerge(sort: sort, paths: group)
      let writer = try BSONStreamWriter(path: merged, compression: .none)
      do throws(BSONError) {
        while let document = try merge.next() { try writer.write(document) }
        try writer.close()
      } catch {
        try? writer.close()
        throw error
      }
      files.delete(group)
      // The merged run holds the earliest input: it stays first.
      runs = [merged] + runs.dropFirst(RunMerge.fanIn)
    }
    try open(runs)
  }

  /// A merge of files only.
  private init(sort: SortSpecification, paths: ArraySlice<String>) throws(BSONError) {
    self.sort = sort
    last = []
    try open(paths)
  }

  private func open(_ paths: ArraySlice<String>) throws(BSONError) {
    for path in paths {
      readers.append(try BSONStreamReader(path: path, compression: .none))
    }
    for run in 0...readers.count { try refill(run) }
  }

  /// Reads run `run`'s next document into the heap.
  private func refill(_ run: Int) throws(BSONError) {
    let document: Document?
    if run == readers.count {
      document = last.popFirst()
    } else {
      document = try readers[run].next()
    }
    guard let document else { return }
    heads.append((document, run))
    var child = heads.count - 1
    while child > 0 {
      let parent = (child - 1) / 2
      guard before(child, parent) else { return }
      heads.swapAt(child, parent)
      child = parent
    }
  }

  private func before(_ a: Int, _ b: Int) -> Bool {
    // Every document of a run had its keys read when the run was sorted.
    let comparison = sort.compareComputed(heads[a].document, heads[b].document)
    return comparison != 0 ? comparison < 0 : heads[a].run < heads[b].run
  }

  /// The next document in order, or nil after the last.
  func next() throws(BSONError) -> Document? {
    guard !heads.isEmpty else { return nil }
    let (document, run) = heads[0]
    let lastHead = heads.removeLast()
    if !heads.isEmpty {
      heads[0] = lastHead
      var parent = 0
      while true {
        var first = parent
        for child in (2 * parent + 1)...(2 * parent + 2) where child < heads.count && before(child, first) {
          first = child
        }
        guard first != parent else { break }
        heads.swapAt(parent, first)
        parent = first
      }
    }
    try refill(run)
    return document
  }
}
