// Not a benchmark: one object-layer operation over a fixture (ObjectModels/ObjectFixtures.swift),
// for Scripts/object-memory.sh (peak memory) and for perf / callgrind.
//
//   ReefObjectIterate make COUNT     # makes the fixture of COUNT contacts when missing
//   ReefObjectIterate reef COUNT     # Reef: `for contact in reef.objects(Contact.self)`, reading `name`
//   ReefObjectIterate grdb COUNT     # GRDB: `ContactRecord.fetchCursor(db)`, reading `name`
//   ReefObjectIterate read COUNT     # Reef: every contact (and COUNT/4 businesses) by primary key, as object-read
//   ReefObjectIterate insert COUNT   # Reef: COUNT new contacts into a new file, one transaction
//   ReefObjectIterate query COUNT    # Reef: the object-query benchmark (filter on `address.city`,
//                                    # sorted by `address.street`, reading `name`) over every city,
//                                    # REEF_QUERY_ROUNDS rounds (20); REEF_QUERY_SIDE=grdb runs GRDB's side

import BenchSupport
import Foundation
import GRDB
import ObjectModels
import ReefSwift

let arguments = CommandLine.arguments
let modes = ["make", "reef", "grdb", "read", "insert", "query"]
guard arguments.count == 3, let count = Int(arguments[2]), modes.contains(arguments[1]) else {
  FileHandle.standardError.write("usage: ReefObjectIterate \(modes.joined(separator: "|")) COUNT\n".data(using: .utf8)!)
  exit(2)
}
let start = Date()
func elapsed() -> Int { Int(-start.timeIntervalSinceNow * 1000) }
switch arguments[1] {
case "insert":
  let data = ObjectData(contacts: count, businesses: count / 4)
  let path = NSTemporaryDirectory() + "reef-object-insert-\(getpid()).reef"
  let begin = Date()
  do {
    let reef = openReef(path)
    addObjects(data, to: reef)
  }
  print("insert: \(count) contacts, \(count / 4) businesses, \(Int(-begin.timeIntervalSinceNow * 1000)) ms")
  removeDatabase(path)
case "read":
  // As object-read: the contacts, then the businesses (count / 4) with their first address.
  let paths = fixture("read-\(count)", contacts: count, businesses: count / 4)
  let data = ObjectData(contacts: count, businesses: count / 4)
  let reef = openReef(paths.reef)
  let begin = Date()
  var bytes = 0
  for id in data.contactIDs {
    let contact = reef.object(ofType: Contact.self, forPrimaryKey: id)!
    bytes &+= contact.name.utf8.count &+ (contact.address?.city?.utf8.count ?? 0)
  }
  let contactsDone = Date()
  for id in data.businessIDs {
    let business = reef.object(ofType: Business.self, forPrimaryKey: id)!
    bytes &+= business.name.utf8.count &+ (business.addresses.first?.city?.utf8.count ?? 0)
  }
  print(
    "read: \(count) contacts in \(Int(contactsDone.timeIntervalSince(begin) * 1000)) ms, \(count / 4) businesses in \(Int(-contactsDone.timeIntervalSinceNow * 1000)) ms, \(bytes) bytes"
  )
case "query":
  let paths = fixture("iterate-\(count)", contacts: count, businesses: 0)
  let grdbSide = ProcessInfo.processInfo.environment["REEF_QUERY_SIDE"] == "grdb"
  let reef = grdbSide ? nil : openReef(paths.reef)
  let grdb = grdbSide ? openGRDB(paths.grdb) : nil
  var found = 0
  var bytes = 0
  let rounds = Int(ProcessInfo.processInfo.environment["REEF_QUERY_ROUNDS"] ?? "") ?? 20
  func cpu() -> Int {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return time.tv_sec * 1_000_000 + time.tv_nsec / 1000
  }
  let begin = Date()
  let cpuBegin = cpu()
  for _ in 0..<rounds {
    for city in cities {
      if let reef {
        for contact in reef.objects(Contact.self).filter("address.city == %@", city).sorted(byKeyPath: "address.street") {
          found &+= 1
          bytes &+= contact.name.utf8.count
        }
      } else if let grdb {
        try! grdb.read { db in
          let cursor = try ContactRecord.filter(ContactRecord.Columns.addressCity == city)
            .order(ContactRecord.Columns.addressStreet).fetchCursor(db)
          while let contact = try cursor.next() {
            found &+= 1
            bytes &+= contact.name.utf8.count
          }
        }
      }
    }
  }
  let queries = rounds * cities.count
  let micros = Int(-begin.timeIntervalSinceNow * 1_000_000)
  let cpuMicros = cpu() - cpuBegin
  func milliseconds(_ micros: Int) -> String { "\(micros / queries / 1000).\(micros / queries % 1000 / 100) ms" }
  print(
    "query (\(grdbSide ? "grdb" : "reef")): \(queries) queries, \(found / queries) results each, \(bytes) bytes, "
      + "\(milliseconds(cpuMicros)) CPU, \(milliseconds(micros)) wall per query")
default:
  let paths = fixture("iterate-\(count)", contacts: count, businesses: 0)
  switch arguments[1] {
  case "reef":
    let (seen, bytes) = iterateContacts(openReef(paths.reef))
    print("reef: \(seen) contacts, \(bytes) bytes of names, \(elapsed()) ms")
  case "grdb":
    let (seen, bytes) = iterateContactRecords(openGRDB(paths.grdb))
    print("grdb: \(seen) contacts, \(bytes) bytes of names, \(elapsed()) ms")
  default:
    print("fixture: \(paths.reef), \(paths.grdb)")
  }
}
