// ReefSwift's object layer against GRDB 7 (Codable records over SQLite) and against ReefStore's
// raw documents, on the models of Realm's Embedded Objects page (ObjectModels/Models.swift):
// Contact {_id, name, address: Address?} and Business {_id, name, addresses: List<Address>},
// Address {street, city (indexed), country, postalCode}. GRDB stores a contact's address in four
// columns (`address_street`, `address_city`, …, indexed on `address_city`) and a business's
// addresses as a JSON text column (its Codable encoding); both tables are WITHOUT ROWID with the
// 12-byte ObjectId as a blob primary key. Both sides are durable: Reef at its default
// `durability: .full`, GRDB a `DatabaseQueue` in WAL mode with `synchronous = FULL`
// (ObjectModels/ObjectData.swift).
//
// Each benchmark is one whole operation per iteration; "ratio/…" runs the two sides one after the
// other in each iteration (order alternating) and records anchor / Reef of their wall-clock times
// and of their process CPU times (writes are judged on wall clock: the commit's flush counts;
// reads on CPU). Sizes (environment, defaults = issue 13's):
// - object-insert/<C+B>: open a new file, add C contacts (REEF_OBJECT_CONTACTS, 100,000) and B
//   businesses with 3 addresses (REEF_OBJECT_BUSINESSES, 25,000) in one write transaction, commit.
//   Against GRDB (`record.insert(db)` in one `write`) and against ReefStore (`insert` of the same
//   documents, built from the same data, with the same indexes).
// - object-read/<C+B>: every object by primary key in one snapshot, reading `name` and
//   `address.city` (a business: `addresses[0].city`): `reef.object(ofType:forPrimaryKey:)` against
//   `Record.fetchOne(db, key:)` in one `read`, and against ReefStore's `document(forID:)` with
//   `document["name"]` and `document["address.city"]`.
// - object-query/<C>: `objects(Contact.self).filter("address.city == %@", city)
//   .sorted(byKeyPath: "address.street")`, iterated reading `name`, against
//   `ContactRecord.filter(address_city == city).order(address_street).fetchCursor(db)`.
// - object-update/<U>: `object(ofType:forPrimaryKey:)!.address!.city = …` on U contacts
//   (REEF_OBJECT_UPDATES, 10,000) in one write transaction, against `fetchOne(db, key:)` then
//   `updateChanges(db) { $0.addressCity = … }` in one `write`.
// - object-iterate/<N>: every contact of `objects(Contact.self)` reading `name`, N contacts
//   (REEF_OBJECT_ITERATE, 1,000,000), against `ContactRecord.fetchCursor(db)`. Peak memory:
//   Scripts/object-memory.sh.
// - object-changeset-<K>/<C> (issue 15): a `Results` of every contact sorted by name (C
//   contacts, no business) is observed; another thread commits new names for K contacts (1 and
//   1,000; untimed), then the Reef's `refresh()` delivers the change set (timed), against running
//   the same query again (ReefStore's `find` sorted by name, collecting the `_id`s: what the
//   observer did before it followed changed objects).

import BenchSupport
import Benchmark
import Foundation
import GRDB
import ObjectModels
import ReefBSON
import ReefQuery
import ReefStore
import ReefSwift

#if canImport(Glibc)
  import Glibc
#endif

func environment(_ name: String, _ fallback: Int) -> Int {
  guard let text = getenv(name), let value = Int(String(cString: text)), value > 0 else { return fallback }
  return value
}

func label(_ count: Int) -> String {
  if count % 1_000_000 == 0 { return "\(count / 1_000_000)M" }
  if count % 1_000 == 0 { return "\(count / 1_000)k" }
  return "\(count)"
}

// MARK: Timing

/// The process's CPU time (every thread: GRDB runs its database accesses through a dispatch queue).
func processCPUNanoseconds() -> Int {
  var ts = timespec()
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
  return Int(ts.tv_sec) &* 1_000_000_000 &+ Int(ts.tv_nsec)
}

struct Timing {
  var wall: Int
  var cpu: Int
}

func timed(_ body: () -> Void) -> Timing {
  let wall = wallClockNanoseconds()
  let cpu = processCPUNanoseconds()
  body()
  return Timing(wall: wallClockNanoseconds() &- wall, cpu: processCPUNanoseconds() &- cpu)
}

let operationWall = BenchmarkMetric.custom(
  "Operation wall clock (ns)", polarity: .prefersSmaller, useScalingFactor: false)
let processCPU = BenchmarkMetric.custom("Process CPU (ns)", polarity: .prefersSmaller, useScalingFactor: false)
let pairedWall = BenchmarkMetric.custom(
  "Paired ratio (wall clock) x1000", polarity: .prefersLarger, useScalingFactor: false)
let pairedCPU = BenchmarkMetric.custom("Paired ratio x1000", polarity: .prefersLarger, useScalingFactor: false)

func configuration(maxIterations: Int, seconds: Int, warmup: Int = 1) -> Benchmark.Configuration {
  var configuration = reefBenchmarkConfiguration
  configuration.scalingFactor = .one
  configuration.warmupIterations = warmup
  configuration.maxIterations = maxIterations
  configuration.maxDuration = .seconds(seconds)
  return configuration
}

/// An explicit, nearly empty timed section: each operation times itself (the tool drops a
/// benchmark from its JMH export when its own throughput rounds to 0 operations per second).
func untimedSection(_ benchmark: Benchmark) {
  benchmark.startMeasurement()
  consume(processCPUNanoseconds())
  benchmark.stopMeasurement()
}

/// Registers "<name>" for each side, and "ratio/<group>/<dataset>/<reef>~<anchor>".
func registerSides(
  group: String, dataset: String, configuration base: Benchmark.Configuration, reef: (String, () -> Timing),
  anchors: [(String, () -> Timing)]
) {
  var single = base
  single.metrics = [.throughput, operationWall, processCPU]
  for (name, operation) in [reef] + anchors {
    Benchmark("\(group)/\(dataset)/\(name)", configuration: single) { benchmark in
      let timing = operation()
      benchmark.measurement(operationWall, timing.wall)
      benchmark.measurement(processCPU, timing.cpu)
      untimedSection(benchmark)
    }
  }
  var paired = base
  paired.metrics = [.throughput, pairedWall, pairedCPU]
  for (anchorName, anchor) in anchors {
    final class Order: @unchecked Sendable { var reefFirst = true }
    let order = Order()
    Benchmark("ratio/\(group)/\(dataset)/\(reef.0)~\(anchorName)", configuration: paired) { benchmark in
      var reefTiming = Timing(wall: 0, cpu: 0)
      var anchorTiming = Timing(wall: 0, cpu: 0)
      if order.reefFirst {
        reefTiming = reef.1()
        anchorTiming = anchor()
      } else {
        anchorTiming = anchor()
        reefTiming = reef.1()
      }
      order.reefFirst.toggle()
      benchmark.measurement(pairedWall, anchorTiming.wall &* 1000 / max(1, reefTiming.wall))
      benchmark.measurement(pairedCPU, anchorTiming.cpu &* 1000 / max(1, reefTiming.cpu))
      untimedSection(benchmark)
    }
  }
}

final class ResultSlot<R>: @unchecked Sendable { var value: R? }

/// Runs `body` on a thread of its own and waits for it. ReefStore calls on `reef.store` fail
/// ("read: Invalid argument") on a thread where the `Reef` holds its read snapshot (LMDB's one
/// read transaction per thread), so the raw-document side runs on another thread; it is timed
/// there (process CPU counts every thread).
func onOtherThread<R>(_ body: @escaping () -> R) -> R {
  let slot = ResultSlot<R>()
  let done = DispatchSemaphore(value: 0)
  let thread = Thread {
    slot.value = body()
    done.signal()
  }
  thread.stackSize = 8 << 20
  thread.start()
  done.wait()
  return slot.value!
}

// MARK: Temporary files

nonisolated(unsafe) var scratchDirectory = ""

func scratchPath(_ name: String) -> String {
  if scratchDirectory.isEmpty {
    var template = Array("/tmp/reef-object-bench-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { fatalError("cannot create a directory under /tmp") }
    scratchDirectory = String(cString: made)
    atexit { _ = try? FileManager.default.removeItem(atPath: scratchDirectory) }
  }
  return scratchDirectory + "/" + name
}

// MARK: Benchmarks

let benchmarks: @Sendable () -> Void = {
  Benchmark.defaultConfiguration = reefBenchmarkConfiguration
  let contactCount = environment("REEF_OBJECT_CONTACTS", 100_000)
  let businessCount = environment("REEF_OBJECT_BUSINESSES", 25_000)
  let updateCount = min(contactCount, environment("REEF_OBJECT_UPDATES", 10_000))
  let iterateCount = environment("REEF_OBJECT_ITERATE", 1_000_000)
  let objectsLabel = "\(label(contactCount))+\(label(businessCount))"
  let fixtureName = "objects-\(contactCount)-\(businessCount)"

  // Made on first use, in the process of the benchmark that needs it.
  nonisolated(unsafe) var dataMade: ObjectData?
  func data() -> ObjectData {
    if let dataMade { return dataMade }
    let made = ObjectData(contacts: contactCount, businesses: businessCount)
    dataMade = made
    return made
  }

  // 1 and 6: inserts into a new file.
  nonisolated(unsafe) var runs = 0
  func insert(_ suffix: String, _ operation: (ObjectData, String) -> Void, count: (String) -> (Int, Int)) -> Timing {
    let data = data()
    runs += 1
    let path = scratchPath("insert-\(runs).\(suffix)")
    let timing = timed { operation(data, path) }
    if runs <= 2 {
      let (contacts, businesses) = count(path)
      check(
        contacts == data.contactIDs.count && businesses == data.businessIDs.count,
        "\(suffix): \(contacts) contacts and \(businesses) businesses stored")
    }
    removeDatabase(path)
    return timing
  }
  // The open is timed with the transaction; closing is not (GRDB checkpoints its WAL when the
  // last connection closes).
  nonisolated(unsafe) var keep: [AnyObject] = []
  let reefInsert = {
    insert(
      "reef",
      { data, path in
        let reef = openReef(path)
        addObjects(data, to: reef)
        keep.append(reef)
      }
    ) { path in
      keep.removeAll()
      let reef = openReef(path)
      return (reef.objects(Contact.self).count, reef.objects(Business.self).count)
    }
  }
  let grdbInsert = {
    insert(
      "sqlite",
      { data, path in
        let queue = openGRDB(path)
        insertRecords(data, into: queue)
        keep.append(queue)
      }
    ) { path in
      keep.removeAll()
      return try! openGRDB(path).read { db in (try ContactRecord.fetchCount(db), try BusinessRecord.fetchCount(db)) }
    }
  }
  let storeInsert = {
    insert(
      "store",
      { data, path in
        let store = try! Store(path: path)
        insertDocuments(data, into: store)
        keep.append(store)
      }
    ) { path in
      keep.removeAll()
      let store = try! Store(path: path)
      return (try! store.collection("Contact").count(), try! store.collection("Business").count())
    }
  }
  let afterInsert = { (timing: Timing) -> Timing in
    keep.removeAll()
    return timing
  }
  registerSides(
    group: "object-insert", dataset: objectsLabel,
    configuration: configuration(maxIterations: 3, seconds: 60, warmup: 0),
    reef: ("reef-add", { afterInsert(reefInsert()) }),
    anchors: [("grdb-insert", { afterInsert(grdbInsert()) }), ("store-insert", { afterInsert(storeInsert()) })])

  // 2 and 6: reads by primary key.
  nonisolated(unsafe) var readMade: (reef: Reef, grdb: DatabaseQueue)?
  func readStores() -> (reef: Reef, grdb: DatabaseQueue) {
    if let readMade { return readMade }
    let paths = fixture(fixtureName, contacts: contactCount, businesses: businessCount)
    let reef = openReef(paths.reef)
    // ReefStore caches a collection's LMDB handle when a transaction first opens it; opened in
    // the Reef's long-lived read snapshot, the handle stays private to that snapshot and other
    // transactions get "read: Invalid argument" (EINVAL from mdb_get). So a short raw read
    // opens both collections first, and the index on `address.city` that the object query
    // reads (through the Reef's snapshot; `checkQuery` then explains it in a raw read).
    try! reef.store.read { transaction in
      _ = try transaction.collection("Contact").document(forID: .objectId(data().contactIDs[0]))
      _ = try transaction.collection("Business").document(forID: .objectId(data().businessIDs[0]))
      _ = try transaction.collection("Contact").findOne(["address.city": .string(cities[0])])
    }
    _ = reef.refresh()  // a snapshot begun before the handles were opened does not see them either
    readMade = (reef, openGRDB(paths.grdb))
    return readMade!
  }
  let reefRead = { () -> Timing in
    let (reef, _) = readStores()
    let data = data()
    var found = 0
    let timing = timed {
      for id in data.contactIDs {
        let contact = reef.object(ofType: Contact.self, forPrimaryKey: id)!
        found &+= contact.name.utf8.count &+ (contact.address?.city?.utf8.count ?? 0)
      }
      for id in data.businessIDs {
        let business = reef.object(ofType: Business.self, forPrimaryKey: id)!
        found &+= business.name.utf8.count &+ (business.addresses.first?.city?.utf8.count ?? 0)
      }
    }
    consume(found)
    return timing
  }
  let grdbRead = { () -> Timing in
    let (_, grdb) = readStores()
    let data = data()
    var found = 0
    let timing = timed {
      try! grdb.read { db in
        for key in data.contactKeys {
          let contact = try ContactRecord.fetchOne(db, key: key)!
          found &+= contact.name.utf8.count &+ (contact.addressCity?.utf8.count ?? 0)
        }
        for key in data.businessKeys {
          let business = try BusinessRecord.fetchOne(db, key: key)!
          found &+= business.name.utf8.count &+ (business.addresses.first?.city?.utf8.count ?? 0)
        }
      }
    }
    consume(found)
    return timing
  }
  let storeRead = { () -> Timing in
    let (reef, _) = readStores()
    let data = data()
    let store = reef.store
    let (timing, found) = onOtherThread { () -> (Timing, Int) in
      var found = 0
      let timing = timed {
        try! store.read { transaction in
          let contacts = transaction.collection("Contact")
          let businesses = transaction.collection("Business")
          for id in data.contactIDs {
            let document = try contacts.document(forID: .objectId(id))!
            if case .string(let name)? = document["name"] { found &+= name.utf8.count }
            if case .string(let city)? = document["address.city"] { found &+= city.utf8.count }
          }
          for id in data.businessIDs {
            let document = try businesses.document(forID: .objectId(id))!
            if case .string(let name)? = document["name"] { found &+= name.utf8.count }
            if case .string(let city)? = document["addresses.0.city"] { found &+= city.utf8.count }
          }
        }
      }
      return (timing, found)
    }
    consume(found)
    return timing
  }
  registerSides(
    group: "object-read", dataset: objectsLabel, configuration: configuration(maxIterations: 10, seconds: 15),
    reef: ("reef-object-forPrimaryKey", reefRead),
    anchors: [("grdb-fetchOne-key", grdbRead), ("store-documentForID", storeRead)])

  // 3: indexed query, sorted.
  nonisolated(unsafe) var queryRun = 0
  nonisolated(unsafe) var queryChecked = false
  func checkQuery() {
    guard !queryChecked else { return }
    queryChecked = true
    let (reef, grdb) = readStores()
    let city = cities[0]
    let reefNames = reef.objects(Contact.self).filter("address.city == %@", city).sorted(byKeyPath: "address.street")
      .map(\.address!.street!)
    let grdbNames = try! grdb.read { db in
      try ContactRecord.filter(ContactRecord.Columns.addressCity == city).order(ContactRecord.Columns.addressStreet)
        .fetchAll(db).map(\.addressStreet!)
    }
    check(
      reefNames == grdbNames && !reefNames.isEmpty, "Reef found \(reefNames.count) contacts, GRDB \(grdbNames.count)")
    let store = reef.store
    let explain = onOtherThread { "\(try! store.collection("Contact").explain(["address.city": .string(city)]))" }
    let plan = try! grdb.read { db in
      try Row.fetchAll(
        db,
        sql: "EXPLAIN QUERY PLAN SELECT * FROM contact WHERE address_city = ? ORDER BY address_street",
        arguments: [city]
      ).map { $0["detail"] as String? ?? "" }.joined(separator: "; ")
    }
    printError("reef benchmarks: query: \(reefNames.count) of \(contactCount) contacts; Reef \(explain); GRDB \(plan)")
  }
  let reefQuery = { () -> Timing in
    let (reef, _) = readStores()
    checkQuery()
    queryRun += 1
    let city = cities[queryRun % cities.count]
    var found = 0
    let timing = timed {
      for contact in reef.objects(Contact.self).filter("address.city == %@", city).sorted(byKeyPath: "address.street") {
        found &+= contact.name.utf8.count
      }
    }
    consume(found)
    return timing
  }
  let grdbQuery = { () -> Timing in
    let (_, grdb) = readStores()
    checkQuery()
    let city = cities[queryRun % cities.count]
    var found = 0
    let timing = timed {
      try! grdb.read { db in
        let cursor = try ContactRecord.filter(ContactRecord.Columns.addressCity == city)
          .order(ContactRecord.Columns.addressStreet).fetchCursor(db)
        while let contact = try cursor.next() { found &+= contact.name.utf8.count }
      }
    }
    consume(found)
    return timing
  }
  registerSides(
    group: "object-query", dataset: label(contactCount), configuration: configuration(maxIterations: 100, seconds: 10),
    reef: ("reef-filter-sorted", reefQuery), anchors: [("grdb-filter-order", grdbQuery)])

  // 4: one embedded field in U objects, one durable transaction.
  nonisolated(unsafe) var updateMade: (reef: Reef, grdb: DatabaseQueue)?
  nonisolated(unsafe) var updateRun = 0
  func updateStores() -> (reef: Reef, grdb: DatabaseQueue) {
    if let updateMade { return updateMade }
    let paths = fixture("update-\(contactCount)-\(businessCount)", contacts: contactCount, businesses: businessCount)
    // 10,000 updates in one transaction on the 100k + 25k file fail with MDB_MAP_FULL: a Reef
    // opens its file with ReefStore's default 64 MiB map, which grows (doubling) only when a
    // write transaction starts, and the transaction copies more pages than are left; inside it
    // `object(ofType:forPrimaryKey:)` then returns nil, and `write` throws the map-full error.
    // (Setting a larger map with a `Store` opened first does not carry over.)
    let reef = openReef(paths.reef)
    // As for the reads: the collection's handle is opened by a short raw read first, and the
    // Reef takes a new snapshot after it.
    try! reef.store.read { transaction in
      _ = try transaction.collection("Contact").document(forID: .objectId(data().contactIDs[0]))
    }
    _ = reef.refresh()
    updateMade = (reef, openGRDB(paths.grdb))
    return updateMade!
  }
  /// Every (contacts / U)-th contact.
  func updateIDs() -> [Int] {
    stride(from: 0, to: contactCount, by: max(1, contactCount / updateCount)).prefix(updateCount).map { $0 }
  }
  nonisolated(unsafe) var updateIndexes: [Int] = []
  let reefUpdate = { () -> Timing in
    let (reef, _) = updateStores()
    let data = data()
    if updateIndexes.isEmpty { updateIndexes = updateIDs() }
    updateRun += 1
    let city = "Updated \(updateRun) \(getpid())"
    let timing = timed {
      do {
        try reef.write {
          for index in updateIndexes {
            // Found, or the transaction has failed: `write` throws the first error it recorded.
            guard let contact = reef.object(ofType: Contact.self, forPrimaryKey: data.contactIDs[index]) else { break }
            contact.address!.city = city
          }
        }
      } catch {
        fatalError("Reef's update of \(updateIndexes.count) contacts failed: \(error)")
      }
    }
    if updateRun == 1 {
      check(
        reef.objects(Contact.self).filter("address.city == %@", city).count == updateIndexes.count,
        "Reef's update missed objects")
    }
    return timing
  }
  let grdbUpdate = { () -> Timing in
    let (_, grdb) = updateStores()
    let data = data()
    if updateIndexes.isEmpty { updateIndexes = updateIDs() }
    updateRun += 1
    let city = "Updated \(updateRun) \(getpid())"
    let timing = timed {
      try! grdb.write { db in
        for index in updateIndexes {
          var contact = try ContactRecord.fetchOne(db, key: data.contactKeys[index])!
          try contact.updateChanges(db) { $0.addressCity = city }
        }
      }
    }
    if updateRun <= 2 {
      let changed = try! grdb.read { db in
        try ContactRecord.filter(ContactRecord.Columns.addressCity == city).fetchCount(db)
      }
      check(changed == updateIndexes.count, "GRDB's update missed rows")
    }
    return timing
  }
  registerSides(
    group: "object-update", dataset: label(updateCount), configuration: configuration(maxIterations: 10, seconds: 15),
    reef: ("reef-set-address.city", reefUpdate), anchors: [("grdb-updateChanges", grdbUpdate)])

  // 5: iterate N objects of a Results.
  nonisolated(unsafe) var iterateMade: (reef: Reef, grdb: DatabaseQueue)?
  func iterateStores() -> (reef: Reef, grdb: DatabaseQueue) {
    if let iterateMade { return iterateMade }
    let paths = fixture("iterate-\(iterateCount)", contacts: iterateCount, businesses: 0)
    iterateMade = (openReef(paths.reef), openGRDB(paths.grdb))
    return iterateMade!
  }
  let reefIterate = { () -> Timing in
    let (reef, _) = iterateStores()
    var seen = (count: 0, nameBytes: 0)
    let timing = timed { seen = iterateContacts(reef) }
    check(seen.count == iterateCount, "Reef iterated \(seen.count) contacts")
    return timing
  }
  let grdbIterate = { () -> Timing in
    let (_, grdb) = iterateStores()
    var seen = (count: 0, nameBytes: 0)
    let timing = timed { seen = iterateContactRecords(grdb) }
    check(seen.count == iterateCount, "GRDB iterated \(seen.count) contacts")
    return timing
  }
  registerSides(
    group: "object-iterate", dataset: label(iterateCount),
    configuration: configuration(maxIterations: 3, seconds: 40, warmup: 0),
    reef: ("reef-Results", reefIterate), anchors: [("grdb-fetchCursor", grdbIterate)])

  // Issue 15: the cost of a change set against running the query again.
  nonisolated(unsafe) var changeMade: (reef: Reef, results: Results<Contact>, token: NotificationToken)?
  nonisolated(unsafe) var delivered = 0
  nonisolated(unsafe) var changeRun = 0
  let processToken = UInt32.random(in: 0...UInt32.max)
  func changeState() -> (reef: Reef, results: Results<Contact>, token: NotificationToken) {
    if let changeMade { return changeMade }
    let paths = fixture("changeset-\(contactCount)", contacts: contactCount, businesses: 0)
    let reef = openReef(paths.reef)
    let results = reef.objects(Contact.self).sorted(byKeyPath: "name")
    let token = results.observe { change in
      switch change {
      case .initial(let results):
        check(results.count == contactCount, "the observed results hold \(results.count) contacts")
      case .update(_, let deletions, let insertions, let modifications):
        delivered += deletions.count + insertions.count + modifications.count
      case .error(let error): fatalError("the observed results failed: \(error)")
      }
    }
    changeMade = (reef, results, token)
    return changeMade!
  }
  /// Renames `count` contacts from another thread (a commit the observer did not make).
  func renameContacts(_ count: Int, store: Store) {
    changeRun += 1
    let ids = data().contactIDs
    let step = max(1, ids.count / count)
    let run = changeRun
    onOtherThread {
      try! store.write { transaction in
        let contacts = transaction.collection("Contact")
        for index in 0..<count {
          let id = ids[(index * step + run) % ids.count]
          // New in every process too: the fixture keeps the names of earlier runs.
          let name = "n\(run % 7)-\(index)-\(processToken)"
          _ = try contacts.updateOne(["_id": .objectId(id)], ["$set": ["name": .string(name)]])
        }
      }
    }
  }
  for changed in [1, 1_000] {
    func notify() -> Timing {
      let state = changeState()
      renameContacts(changed, store: state.reef.store)
      let before = delivered
      let timing = timed { _ = state.reef.refresh() }
      check(delivered > before, "refresh delivered no change set after \(changed) renames")
      return timing
    }
    func requery() -> Timing {
      let state = changeState()
      let store = state.reef.store
      return onOtherThread {
        var ids: [BSON] = []
        let timing = timed {
          try! store.read { transaction in
            let sort = try SortSpecification(["name": 1] as Document)
            let cursor = try transaction.collection("Contact").find(Document(), options: FindOptions(sort: sort))
            while let document = try cursor.next() { ids.append(document["_id"] ?? .null) }
          }
        }
        check(ids.count == contactCount, "the query found \(ids.count) contacts")
        return timing
      }
    }
    registerSides(
      group: "object-changeset-\(label(changed))", dataset: label(contactCount),
      configuration: configuration(maxIterations: 40, seconds: 15),
      reef: ("reef-notify", notify), anchors: [("requery", requery)])
  }
}
