// Stores filled once and kept between benchmark processes (the benchmark tool runs each
// benchmark in a process of its own): a Reef file and a GRDB database holding the same objects,
// in $REEF_OBJECT_FIXTURES (default /tmp/reef-object-fixtures). A fixture is complete when its
// `.done` marker exists; `rm -rf` the directory to make them again.

import Foundation
import GRDB
import ReefStore
import ReefSwift

/// The directory of kept fixtures.
public var fixtureDirectory: String {
  let path = ProcessInfo.processInfo.environment["REEF_OBJECT_FIXTURES"] ?? "/tmp/reef-object-fixtures"
  try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  return path
}

/// A Reef file and a GRDB database named `name` in the fixture directory, holding `contacts`
/// contacts and `businesses` businesses (the first `businesses` of ``ObjectData``), filled in
/// chunks of 100,000 objects (without flushes: a fixture is not what is measured) when not yet
/// complete.
/// - Returns: the two paths.
public func fixture(_ name: String, contacts: Int, businesses: Int) -> (reef: String, grdb: String) {
  let base = fixtureDirectory + "/" + name
  let paths = (reef: base + ".reef", grdb: base + ".sqlite")
  let marker = base + ".done"
  if FileManager.default.fileExists(atPath: marker) { return paths }
  removeDatabase(paths.reef)
  removeDatabase(paths.grdb)
  let start = Date()
  do {
    let reef = openReef(paths.reef, durability: .none)
    let grdb = openGRDB(paths.grdb, durable: false)
    let chunk = 100_000
    var first = 0
    var businessesLeft = businesses
    repeat {
      let count = min(chunk, contacts - first)
      let data = ObjectData(contacts: count, businesses: businessesLeft, first: first)
      businessesLeft = 0
      addObjects(data, to: reef)
      insertRecords(data, into: grdb)
      first += count
    } while first < contacts
    try? reef.store.sync()
  }
  _ = FileManager.default.createFile(atPath: marker, contents: Data())
  FileHandle.standardError.write(
    "reef benchmarks: fixture \(name): \(contacts) contacts, \(businesses) businesses, made in \(Int(-start.timeIntervalSinceNow)) s\n"
      .data(using: .utf8)!)
  return paths
}

// MARK: Iteration over every contact (the 1M benchmark and Scripts/object-memory.sh)

/// Iterates every contact of `reef`'s `Results`, reading one property (its name).
/// - Returns: how many, and the total length of the names.
public func iterateContacts(_ reef: Reef) -> (count: Int, nameBytes: Int) {
  var count = 0
  var bytes = 0
  for contact in reef.objects(Contact.self) {
    count += 1
    bytes += contact.name.utf8.count
  }
  return (count, bytes)
}

/// Iterates every contact row of `queue` as records through a cursor (GRDB's streaming fetch),
/// reading one property (its name).
public func iterateContactRecords(_ queue: DatabaseQueue) -> (count: Int, nameBytes: Int) {
  do {
    return try queue.read { db in
      var count = 0
      var bytes = 0
      let cursor = try ContactRecord.fetchCursor(db)
      while let contact = try cursor.next() {
        count += 1
        bytes += contact.name.utf8.count
      }
      return (count, bytes)
    }
  } catch {
    fatalError("GRDB's iteration failed: \(error)")
  }
}
