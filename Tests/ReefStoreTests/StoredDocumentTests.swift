import Foundation
import ReefBSON
import ReefTestSupport
import Testing

@testable import ReefStore

/// Stored documents carry a checksum that every read checks instead of validating them again.
@Suite struct StoredDocumentTests {
  static let sample = #"""
    {"_id": {"$oid": "650000000000000000000001"}, "name": "Ann Lee", "age": 41,
     "address": {"street": "1 Main St", "city": "Los Angeles", "zip": "90001"},
     "tags": ["a", "b", {"k": 1.5}]}
    """#

  @Test func theChecksumIsFixedByTheFileFormat() {
    // A store written on one machine is read on another, and by later versions: these values
    // were computed when the format was fixed, and a change to them is a change of file format.
    let bytes = (0..<100).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
    let sums = [0, 1, 7, 8, 31, 32, 33, 100].map { count in
      bytes.withUnsafeBytes { StoredDocument.checksum(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
    }
    #expect(Set(sums).count == sums.count, "different inputs gave equal checksums: \(sums.map(StoredDocument.hex))")
    #expect(
      sums.map(StoredDocument.hex) == [
        "0x58b38626cd777bb0", "0x4899ad02645ec711", "0x9362581e86047ee6", "0xb0be97b04cabbcb4",
        "0x6ad30614a12af381", "0x11efdfada3a17eed", "0xcbc5f5420db2ab71", "0xebaa0e0bdca42da3",
      ])
  }

  @Test func everyFlippedBitOfAStoredDocumentIsDetected() throws {
    let value = StoredDocument.encode(try Document(extendedJSON: Self.sample))
    let document = try value.withUnsafeBytes { raw in
      try Document(bytes: try #require(StoredDocument.verifiedBSON(raw)))
    }
    #expect(document == (try Document(extendedJSON: Self.sample)))
    var undetected: [Int] = []
    for bit in 0..<(value.count * 8) {
      var damaged = value
      damaged[bit / 8] ^= 1 << UInt8(bit % 8)
      if damaged.withUnsafeBytes({ StoredDocument.verifiedBSON($0) }) != nil { undetected.append(bit) }
    }
    #expect(undetected.isEmpty, "flipped bits not detected: \(undetected)")
  }

  @Test func theSameBitFlippedInTwoWordsOfOneLaneIsDetected() throws {
    // Words 32 bytes apart go through the same lane: a multiply alone would let a flip of the
    // top bit in one cancel the same flip in the other.
    let value = StoredDocument.encode(try Document(extendedJSON: Self.sample))
    var undetected: [String] = []
    for first in stride(from: StoredDocument.headerSize, to: value.count - 40, by: 8) {
      for bit in 0..<64 {
        var damaged = value
        damaged[first + bit / 8] ^= 1 << UInt8(bit % 8)
        damaged[first + 32 + bit / 8] ^= 1 << UInt8(bit % 8)
        if damaged.withUnsafeBytes({ StoredDocument.verifiedBSON($0) }) != nil {
          undetected.append("bit \(bit) of the words at \(first) and \(first + 32)")
        }
      }
    }
    #expect(undetected.isEmpty, "\(undetected)")
  }

  @Test func swappedAndZeroedRangesAndTruncationsAreDetected() throws {
    let value = StoredDocument.encode(try Document(extendedJSON: Self.sample))
    var undetected: [String] = []
    for start in StoredDocument.headerSize..<(value.count - 1) where value[start] != value[start + 1] {
      var swapped = value
      swapped.swapAt(start, start + 1)
      if swapped.withUnsafeBytes({ StoredDocument.verifiedBSON($0) }) != nil { undetected.append("swap at \(start)") }
    }
    for start in stride(from: StoredDocument.headerSize + 4, to: value.count - 16, by: 5) {
      var zeroed = value
      for offset in start..<(start + 16) { zeroed[offset] = 0 }
      if zeroed != value, zeroed.withUnsafeBytes({ StoredDocument.verifiedBSON($0) }) != nil {
        undetected.append("16 zero bytes at \(start)")
      }
    }
    for count in 0..<value.count where value.prefix(count).withUnsafeBytes({ StoredDocument.verifiedBSON($0) }) != nil {
      undetected.append("truncated to \(count) bytes")
    }
    #expect(undetected.isEmpty, "\(undetected)")
    let short = [UInt8](value.prefix(10))
    #expect(
      short.withUnsafeBytes { StoredDocument.damage($0) }
        == "expected at least 13 bytes (checksum and document), found 10")
  }

  /// Replaces the stored value of `id` in `collection` with `damage(value)`, below the API.
  func damage(_ store: Store, _ collection: String, id: BSON, _ damage: ([UInt8]) -> [UInt8]) throws {
    try store.write { transaction in
      let info = try #require(try transaction.info(collection, create: false))
      let database = try #require(try transaction.database(info.documentsName, create: false))
      let key = KeyEncoding.encode([id])
      let value = try #require(try transaction.lmdb.get(database, key))
      try transaction.lmdb.put(database, key, damage(Array(value)))
    }
  }

  func expectCorrupt(_ what: String, _ body: () throws -> Void) {
    do {
      try body()
      Issue.record("\(what): a damaged document was read without an error")
    } catch let error as StoreError {
      #expect(error.kind == .corrupt, "\(what): \(error)")
      #expect(error.message.contains("contacts") && error.message.contains("damaged"), "\(what): \(error)")
    } catch {
      Issue.record("\(what): \(error)")
    }
  }

  @Test func everyReadOfADamagedDocumentIsACorruptErrorAndOthersStayReadable() throws {
    let temporary = try TemporaryStore()
    let contacts = temporary.store.collection("contacts")
    for number in 0..<20 {
      try contacts.insert(
        try Document(
          extendedJSON: #"{"_id": \#(number), "name": "n\#(number)", "address": {"city": "c\#(number % 3)"}}"#))
    }
    try temporary.store.collection("other").insert(try Document(extendedJSON: #"{"_id": 1, "x": 1}"#))
    // A flipped bit inside the document's string "n7".
    try damage(temporary.store, "contacts", id: .int32(7)) { value in
      var damaged = value
      damaged[damaged.count - 20] ^= 0x04
      return damaged
    }
    expectCorrupt("scan") { _ = try contacts.find(["name": "n9"]).toArray() }
    expectCorrupt("count") { _ = try contacts.count(["name": "n9"]) }
    expectCorrupt("document(forID:)") { _ = try contacts.document(forID: .int32(7)) }
    expectCorrupt("forEach") {
      try temporary.store.read { transaction in
        try transaction.collection("contacts").forEach { _ in true }
      }
    }
    expectCorrupt("createIndex") { try contacts.createIndex(["name": 1]) }
    expectCorrupt("updateMany") { _ = try contacts.updateMany([:], ["$set": ["seen": true]]) }
    // Reads that never reach the damaged document, and other collections, still work; the
    // failed writes changed nothing.
    #expect(try contacts.document(forID: .int32(3))?["name"] == .string("n3"))
    #expect(try contacts.find(["_id": 8]).toArray().count == 1)
    #expect(try contacts.listIndexes().count == 1)
    #expect(try temporary.store.collection("other").find().toArray().count == 1)
    // A value cut short, and one whose length prefix disagrees with its size.
    try damage(temporary.store, "contacts", id: .int32(7)) { Array($0.prefix(6)) }
    expectCorrupt("truncated") { _ = try contacts.document(forID: .int32(7)) }
    try damage(temporary.store, "contacts", id: .int32(7)) { $0 + [0] }
    expectCorrupt("longer than its prefix") { _ = try contacts.find().toArray() }
    // Once the damaged document is gone (removed below the API), the rest reads as before.
    try temporary.store.write { transaction in
      let info = try #require(try transaction.info("contacts", create: false))
      let database = try #require(try transaction.database(info.documentsName, create: false))
      try transaction.lmdb.delete(database, KeyEncoding.encode([.int32(7)]))
    }
    #expect(try contacts.find().toArray().count == 19)
  }

  @Test func indexPlansCheckEveryDocumentTheyRead() throws {
    let temporary = try TemporaryStore()
    let contacts = temporary.store.collection("contacts")
    try contacts.createIndex(["city": 1])
    for number in 0..<20 {
      try contacts.insert(try Document(extendedJSON: #"{"_id": \#(number), "city": "c\#(number % 3)"}"#))
    }
    try damage(temporary.store, "contacts", id: .int32(7)) { value in
      var damaged = value
      damaged[damaged.count - 3] ^= 0x04
      return damaged
    }
    // Document 7 is in "c1": one equality range (results in `_id` order), several ranges (`$in`,
    // re-sorted), a range of values, and the `_id` read.
    expectCorrupt("equality") { _ = try contacts.find(["city": "c1"]).toArray() }
    expectCorrupt("$in") { _ = try contacts.find(["city": ["$in": ["c0", "c1"]]]).toArray() }
    expectCorrupt("range") { _ = try contacts.find(["city": ["$gte": "c1"]]).toArray() }
    expectCorrupt("_id") { _ = try contacts.find(["_id": 7]).toArray() }
    #expect(try contacts.explain(["city": "c0"]).index == "city_1")
    #expect(
      try contacts.find(["city": "c0"]).toArray().map { $0["_id"] } == stride(from: 0, to: 20, by: 3).map { .int32($0) }
    )
    #expect(try contacts.find(["city": ["$in": ["c2", "c0"]]]).toArray().count == 13)
  }

  @Test func aByteDamagedInTheStoreFileIsFoundOnReopening() throws {
    let directory = makeTemporaryDirectory("reef-stored-document")
    defer { removeTree(directory) }
    let path = directory + "/damaged.reef"
    do {
      let store = try Store(path: path)
      let contacts = store.collection("contacts")
      for number in 0..<50 {
        try contacts.insert(["_id": .int32(Int32(number)), "note": .string("marker-\(number)-unique-text")])
      }
    }
    // Every copy of the document's string in the file (LMDB may keep older pages) is damaged.
    var file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    let marker = Array("marker-31-unique-text".utf8)
    var hits = 0
    var offset = 0
    while offset + marker.count <= file.count {
      if file[offset] == marker[0] && file[offset..<(offset + marker.count)].elementsEqual(marker) {
        file[offset + 7] ^= 0x01  // "3" becomes "2"
        hits += 1
      }
      offset += 1
    }
    #expect(hits >= 1)
    try Data(file).write(to: URL(fileURLWithPath: path))
    let store = try Store(path: path)
    let contacts = store.collection("contacts")
    expectCorrupt("reopened scan") { _ = try contacts.find(["note": "marker-21-unique-text"]).toArray() }
    #expect(try contacts.document(forID: .int32(30))?["note"] == .string("marker-30-unique-text"))
  }

  /// The value of one document stored under another's key (each passes its checksum): a scan
  /// reports the collection and the position, where it would have given the document twice.
  @Test func aDocumentUnderAnotherKeyIsFoundByScans() throws {
    let directory = makeTemporaryDirectory("reef-stored-document")
    defer { removeTree(directory) }
    let store = try Store(path: directory + "/moved.reef")
    let contacts = store.collection("contacts")
    for number in 0..<10 { try contacts.insert(["_id": .int32(Int32(number)), "n": .int32(Int32(number))]) }
    var five: [UInt8] = []
    try damage(store, "contacts", id: .int32(5)) { value in
      five = value
      return value
    }
    try damage(store, "contacts", id: .int32(4)) { _ in five }
    for (what, read) in [
      ("scan", { _ = try contacts.find(["n": ["$gte": 0]]).toArray() }),
      ("forEach", { try store.read { try $0.collection("contacts").forEach { _ in true } } }),
    ] as [(String, () throws -> Void)] {
      expectCorrupt(what) { try read() }
      do {
        try read()
      } catch {
        #expect("\(error)".contains("position 4") && "\(error)".contains("_id 5"), "\(what): \(error)")
      }
    }
  }

  /// One changed flags byte on a leaf page of a collection's documents. As a leaf of fixed-size
  /// keys (`P_LEAF2`), LMDB returns garbage keys and not the values, so each entry repeated the
  /// value before: scans and exports report an error naming the collection and the position,
  /// never documents twice. As a branch and a leaf at once: every read is right, or an error.
  @Test(arguments: [UInt8(0x22), 0x03])
  func aDamagedDataPageIsAnErrorNamingThePosition(_ flags: UInt8) throws {
    let directory = makeTemporaryDirectory("reef-stored-document")
    defer { removeTree(directory) }
    let path = directory + "/pages.reef"
    do {
      let store = try Store(path: path)
      try store.write { transaction in
        let contacts = transaction.collection("contacts")
        for number in 0..<2000 {
          try contacts.insert(["_id": .int32(Int32(number)), "name": .string("contact \(number) of many")])
        }
      }
    }
    var image = try StoreFileImage(path: path)
    let leaves = try image.leaves(ofTable: "c:1")
    #expect(leaves.count > 10)
    image.bytes[image.flagsOffset(ofPage: leaves[leaves.count / 2])] = flags
    try PowerLoss.replaceContents(of: path, with: image.bytes)
    let store = try Store(path: path, options: StoreOptions(readOnly: true))
    let contacts = store.collection("contacts")
    func expectPosition(_ what: String, _ body: () throws -> Void) {
      expectCorrupt(what, body)
      do {
        try body()
      } catch {
        #expect("\(error)".contains("position"), "\(what): \(error)")
      }
    }
    if flags == 0x03 {
      // LMDB reads a leaf that also says "branch" as a leaf when a scan reaches it from its
      // neighbour: every document, in order. A lookup that descends into it reads it as a
      // branch and fails (MDB_PAGE_NOTFOUND): an error, never another document or none.
      let all = try contacts.find(["name": ["$exists": true]]).toArray()
      #expect(all.map { $0["_id"] } == (0..<2000).map { .int32(Int32($0)) })
      for number in 0..<2000 {
        do {
          let found = try contacts.document(forID: .int32(Int32(number)))
          #expect(found?["_id"] == .int32(Int32(number)), "document(forID: \(number))")
        } catch {}
      }
      return
    }
    expectPosition("find") { _ = try contacts.find(["name": ["$exists": true]]).toArray() }
    expectPosition("forEach") { try store.read { try $0.collection("contacts").forEach { _ in true } } }
    expectPosition("export") {
      _ = try store.exportDump(to: DumpWriter(path: directory + "/out.jsonl", format: .jsonl))
    }
  }

  @Test func storesOfAnotherFormatAreRefusedWhenOpened() throws {
    let directory = makeTemporaryDirectory("reef-store-format")
    defer { removeTree(directory) }
    /// A store with one document whose format entry is replaced by `value`, or removed.
    func store(_ name: String, format value: Int64?) throws -> String {
      let path = directory + "/" + name
      let store = try Store(path: path)
      try store.collection("contacts").insert(["_id": 1])
      try store.write { transaction in
        let meta = try #require(try transaction.database(Transaction.metaName, create: false))
        if let value {
          try transaction.lmdb.put(meta, Array("format".utf8), withUnsafeBytes(of: value.littleEndian) { Array($0) })
        } else {
          try transaction.lmdb.delete(meta, Array("format".utf8))
        }
      }
      return path
    }
    func expectRefused(_ path: String, _ expected: String) {
      for readOnly in [false, true] {
        do {
          _ = try Store(path: path, options: StoreOptions(readOnly: readOnly))
          Issue.record("a store of another format was opened (read-only: \(readOnly))")
        } catch {
          #expect(error.kind == .open && error.message.contains(expected), "\(error)")
        }
      }
    }
    // A store written before documents had checksums has collections but no format entry.
    expectRefused(
      try store("v1.reef", format: nil), "has store format 1 (from before stored documents carried checksums)")
    expectRefused(try store("v7.reef", format: 7), "has store format 7, this version of Reef reads format 2")
    let current = try store("v2.reef", format: 2)
    #expect(try Store(path: current, options: StoreOptions(readOnly: true)).collection("contacts").count() == 1)
    #expect(try Store(path: current).collection("contacts").count() == 1)
  }
}
