import CLMDB
import ReefBSON
import ReefTestSupport
import Testing

@testable import ReefStore

/// `reef_lookup_many`: the index plans' lookups of many primary keys at once, searching LMDB's
/// pages in the map. Checked against LMDB's own search on real stores, and on hand-made pages
/// for what LMDB never writes (damage): every such case must give status -1 (ask `mdb_get`),
/// never a read outside the pages.
@Suite struct BatchedLookupTests {
  /// A collection deep enough for branch pages at two levels, with keys in random order and
  /// some documents in overflow pages, queried through an index in read transactions (the
  /// batched lookups), in a write transaction (one `mdb_get` per key) and by a scan.
  @Test func indexQueriesFindWhatLMDBFinds() throws {
    let temporary = try TemporaryStore()
    var generator = SplitMix64(seed: 0x5EED)
    let big = String(repeating: "overflow ", count: 700)
    try temporary.store.write { transaction in
      let indexed = transaction.collection("indexed")
      let plain = transaction.collection("plain")
      try indexed.createIndex(["group": 1])
      try indexed.createIndex(["n": 1])
      for number in 0..<30_000 {
        var document: Document = [
          "_id": .int64(Int64(bitPattern: generator.next())), "group": .int32(Int32(number % 40)),
          "n": .int32(Int32(number)),
        ]
        if number % 101 == 0 { document.append(.string(big), forKey: "text") }
        try indexed.insert(document)
        try plain.insert(document)
      }
    }
    try temporary.store.read { transaction in
      let info = try #require(try transaction.info("indexed", create: false))
      let documents = try #require(try transaction.documentsDatabase(info, create: false))
      let tree = try #require(transaction.lmdb.lookupTree(documents, name: info.documentsName))
      #expect(tree.depth >= 3, "the tree should have branch pages below its root")
    }
    try temporary.store.write { transaction in
      let info = try #require(try transaction.info("indexed", create: false))
      let documents = try #require(try transaction.documentsDatabase(info, create: false))
      #expect(transaction.lmdb.lookupTree(documents, name: info.documentsName) == nil)
    }
    let indexed = temporary.store.collection("indexed")
    let plain = temporary.store.collection("plain")
    for filter: Document in [
      ["group": 7], ["group": 0], ["group": ["$in": [3, 38, 12]]], ["group": ["$gte": 36]], ["group": 99],
      // One, two and three matches: batching starts at the second.
      ["n": 17], ["n": ["$in": [29_999, 5]]], ["n": ["$gte": 29_998]], ["n": ["$in": [3, 1, 2]]],
    ] {
      #expect(try indexed.explain(filter).index == (filter["n"] == nil ? "group_1" : "n_1"))
      let batched = try indexed.find(filter).toArray()
      let oneByOne = try temporary.store.write { try $0.collection("indexed").find(filter).toArray() }
      let scanned = try plain.find(filter).toArray()
      #expect(batched == oneByOne, "\(filter)")
      #expect(batched == scanned, "\(filter)")
      #expect(batched.count == scanned.count)
    }
    #expect(try indexed.find(["group": 0]).toArray().filter { $0["text"] != nil }.count == 30_000 / 101 / 40 + 1)
  }

  /// An index entry whose document is gone (possible only through damage) is skipped.
  @Test func anIndexEntryWithoutItsDocumentIsSkipped() throws {
    let temporary = try TemporaryStore()
    let contacts = temporary.store.collection("contacts")
    try contacts.createIndex(["city": 1])
    for number in 0..<300 {
      try contacts.insert(["_id": .int32(Int32(number)), "city": .string("c\(number % 3)")])
    }
    try temporary.store.write { transaction in
      let info = try #require(try transaction.info("contacts", create: false))
      let database = try #require(try transaction.database(info.documentsName, create: false))
      try transaction.lmdb.delete(database, KeyEncoding.encode([.int32(7)]))
    }
    let found = try contacts.find(["city": "c1"]).toArray().map { $0["_id"] }
    #expect(found == stride(from: 1, to: 300, by: 3).filter { $0 != 7 }.map { .int32(Int32($0)) })
  }

  // MARK: Hand-made pages

  /// Pages of 4 KiB in LMDB 0.9's format, laid out by the tests.
  struct Pages {
    /// A node: its three header fields (a leaf's value size and flags, or a branch's child page
    /// number), its key and its data.
    typealias Node = (fields: (UInt16, UInt16, UInt16), key: [UInt8], data: [UInt8])
    static let size = 4096
    var bytes: [UInt8]

    init(count: Int) { bytes = [UInt8](repeating: 0, count: count * Pages.size) }

    /// Writes a page: its header, then `nodes` (each node's header fields, key and data) packed
    /// at its end, their offsets after the header in order.
    mutating func page(
      _ number: Int, flags: UInt16, nodes: [Node]
    ) {
      let base = number * Pages.size
      put64(UInt64(number), at: base)
      put16(flags, at: base + 10)
      var upper = Pages.size
      for (index, node) in nodes.enumerated() {
        let size = 8 + node.key.count + node.data.count
        upper -= (size + 1) & ~1
        put16(UInt16(upper), at: base + 16 + 2 * index)
        put16(node.fields.0, at: base + upper)
        put16(node.fields.1, at: base + upper + 2)
        put16(node.fields.2, at: base + upper + 4)
        put16(UInt16(node.key.count), at: base + upper + 6)
        bytes.replaceSubrange((base + upper + 8)..<(base + upper + 8 + node.key.count), with: node.key)
        let data = base + upper + 8 + node.key.count
        bytes.replaceSubrange(data..<(data + node.data.count), with: node.data)
      }
      put16(UInt16(16 + 2 * nodes.count), at: base + 12)
      put16(UInt16(upper), at: base + 14)
    }

    mutating func put16(_ value: UInt16, at offset: Int) {
      bytes[offset] = UInt8(value & 0xFF)
      bytes[offset + 1] = UInt8(value >> 8)
    }

    mutating func put64(_ value: UInt64, at offset: Int) {
      for byte in 0..<8 { bytes[offset + byte] = UInt8(truncatingIfNeeded: value >> (8 * byte)) }
    }

    /// Where node `index` of page `page` starts, in `bytes`: the page's offset of it (`mp_ptrs`).
    func node(page: Int, index: Int) -> Int {
      let at = page * Pages.size + 16 + 2 * index
      return page * Pages.size + (Int(bytes[at]) | Int(bytes[at + 1]) << 8)
    }

    /// Sets the offsets of the first `count` nodes of page `page` all to `offset`.
    mutating func setNodeOffsets(page: Int, count: Int, to offset: UInt16) {
      for index in 0..<count { put16(offset, at: page * Pages.size + 16 + 2 * index) }
    }
  }

  static func leafNode(_ key: String, _ value: String) -> Pages.Node {
    ((UInt16(value.utf8.count), 0, 0), Array(key.utf8), Array(value.utf8))
  }

  static func branchNode(_ key: String, child: Int) -> Pages.Node {
    ((UInt16(child & 0xFFFF), UInt16(child >> 16), 0), Array(key.utf8), [])
  }

  /// A root branch page (page 1) over two leaves: keys below "m" in page 2, the others in page 3.
  static func twoLevels() -> Pages {
    var pages = Pages(count: 5)
    pages.page(1, flags: 0x01, nodes: [branchNode("", child: 2), branchNode("m", child: 3)])
    pages.page(2, flags: 0x02, nodes: [leafNode("apple", "red"), leafNode("kiwi", "green")])
    pages.page(
      3, flags: 0x02, nodes: [leafNode("mango", "yellow"), leafNode("plum", "purple"), leafNode("zucchini", "")])
    return pages
  }

  /// Looks up `keys` in `pages` (root page 1, `depth` levels): each key's status and value.
  static func lookUp(_ keys: [String], in pages: Pages, depth: UInt32 = 2, root: UInt64 = 1) -> [(Int32, String?)] {
    pages.bytes.withUnsafeBytes { map in
      var tree = reef_tree(
        map: map.baseAddress!.assumingMemoryBound(to: UInt8.self), page_size: UInt64(Pages.size),
        page_count: UInt64(map.count / Pages.size), root: root, depth: depth)
      let keyBytes = keys.map { Array($0.utf8) }
      return keyBytes.withUnsafeBufferPointers { pointers in
        var lookups = pointers.map {
          reef_lookup(key: UnsafeRawPointer($0.baseAddress), key_size: $0.count, data: nil, data_size: 0, status: 7)
        }
        reef_lookup_many(&tree, &lookups, UInt32(lookups.count))
        return lookups.map { lookup in
          let value =
            lookup.status == 1
            ? String(decoding: UnsafeRawBufferPointer(start: lookup.data, count: lookup.data_size), as: UTF8.self)
            : nil
          return (lookup.status, value)
        }
      }
    }
  }

  @Test func aTreeOfHandMadePagesIsSearchedAsLMDBWould() {
    let results = Self.lookUp(
      ["apple", "kiwi", "mango", "plum", "zucchini", "banana", "a", "m", "zz", ""], in: Self.twoLevels())
    #expect(results.map(\.0) == [1, 1, 1, 1, 1, 0, 0, 0, 0, 0])
    #expect(results.map(\.1) == ["red", "green", "yellow", "purple", "", nil, nil, nil, nil, nil])
  }

  @Test func aValueInOverflowPagesIsFoundThere() {
    var pages = Self.twoLevels()
    let text = String(repeating: "x", count: 5000)
    // "kiwi"'s value: 5,000 bytes from page 4 on (its header, then the value), out of a 6-page map.
    pages.bytes += [UInt8](repeating: 0, count: Pages.size)
    pages.page(
      2, flags: 0x02,
      nodes: [Self.leafNode("apple", "red"), ((UInt16(5000), 0, 0x01), Array("kiwi".utf8), [4, 0, 0, 0, 0, 0, 0, 0])])
    pages.put64(4, at: 4 * Pages.size)
    pages.put16(0x04, at: 4 * Pages.size + 10)
    pages.bytes.replaceSubrange((4 * Pages.size + 16)..<(4 * Pages.size + 16 + 5000), with: Array(text.utf8))
    let results = Self.lookUp(["kiwi", "apple"], in: pages)
    #expect(results.map(\.0) == [1, 1])
    #expect(results[0].1 == text)
    // The same value said to start on page 5: its second page would lie past the map.
    pages.page(
      2, flags: 0x02,
      nodes: [Self.leafNode("apple", "red"), ((UInt16(5000), 0, 0x01), Array("kiwi".utf8), [5, 0, 0, 0, 0, 0, 0, 0])])
    #expect(Self.lookUp(["kiwi", "apple"], in: pages).map(\.0) == [-1, 1])
  }

  /// Each damage gives status -1 for the keys whose search meets it, and the others are found.
  @Test func damagedPagesGiveStatusUnknownNeverAReadOutsideThem() {
    var cases: [(String, Pages, [Int32])] = []
    var pages = Self.twoLevels()
    pages.page(1, flags: 0x01, nodes: [Self.branchNode("", child: 2), Self.branchNode("m", child: 9)])
    cases.append(("child page past the map", pages, [1, -1]))
    pages = Self.twoLevels()
    pages.put64(2, at: 3 * Pages.size)
    cases.append(("page number in the header", pages, [1, -1]))
    pages = Self.twoLevels()
    pages.put16(0x01, at: 3 * Pages.size + 10)
    cases.append(("a branch page where a leaf belongs", pages, [1, -1]))
    pages = Self.twoLevels()
    pages.put16(0x22, at: 3 * Pages.size + 10)
    cases.append(("a leaf of fixed-size keys", pages, [1, -1]))
    pages = Self.twoLevels()
    pages.setNodeOffsets(page: 3, count: 3, to: 4094)
    cases.append(("node offsets at the page's end", pages, [1, -1]))
    pages = Self.twoLevels()
    pages.setNodeOffsets(page: 3, count: 3, to: 8)
    cases.append(("node offsets inside the header", pages, [1, -1]))
    pages = Self.twoLevels()
    for index in 0..<3 { pages.put16(4000, at: pages.node(page: 3, index: index) + 6) }
    cases.append(("key sizes past the page", pages, [1, -1]))
    pages = Self.twoLevels()
    let mango = pages.node(page: 3, index: 0)
    pages.put16(0xFFFF, at: mango)
    cases.append(("a value's size past the page", pages, [1, -1]))
    pages = Self.twoLevels()
    pages.put16(0xFFFF, at: 3 * Pages.size + 12)
    cases.append(("mp_lower past the page", pages, [1, -1]))
    pages = Self.twoLevels()
    pages.put16(20, at: 3 * Pages.size + 14)
    cases.append(("mp_upper below mp_lower", pages, [1, -1]))
    pages = Self.twoLevels()
    pages.put16(16, at: 1 * Pages.size + 12)
    cases.append(("a branch page without nodes", pages, [-1, -1]))
    pages = Self.twoLevels()
    pages.put16(0x02, at: mango + 4)
    cases.append(("a sub-database where a value belongs", pages, [1, -1]))
    for (name, pages, expected) in cases {
      #expect(Self.lookUp(["kiwi", "mango"], in: pages).map(\.0) == expected, "\(name)")
    }
    #expect(Self.lookUp(["kiwi"], in: Self.twoLevels(), root: 9).map(\.0) == [-1], "root past the map")
    #expect(Self.lookUp(["kiwi"], in: Self.twoLevels(), depth: 3).map(\.0) == [-1], "a leaf where a branch belongs")
  }
}

extension Array where Element == [UInt8] {
  /// Calls `body` with a pointer to each element's bytes, all valid at once.
  fileprivate func withUnsafeBufferPointers<R>(_ body: ([UnsafeBufferPointer<UInt8>]) -> R) -> R {
    func nest(_ index: Int, _ pointers: [UnsafeBufferPointer<UInt8>]) -> R {
      if index == count { return body(pointers) }
      return self[index].withUnsafeBufferPointer { nest(index + 1, pointers + [$0]) }
    }
    return nest(0, [])
  }
}
