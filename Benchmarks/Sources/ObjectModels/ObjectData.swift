// The data both sides store, and the operations the benchmarks and Scripts/object-memory.sh share:
// opening each side durably, inserting every object, and the raw-document form of each object.

import BenchSupport
import Foundation
import GRDB
import ReefBSON
import ReefStore
import ReefSwift

/// `contacts` contacts (one address each) and `businesses` businesses (three addresses each),
/// generated deterministically; ids are ObjectIds that grow with the index, as new ObjectIds do.
public final class ObjectData: @unchecked Sendable {
  public let contactIDs: [ObjectId]
  public let contactKeys: [Data]  // the same ids as GRDB's blob keys
  public let contactNames: [String]
  public let contactAddresses: [AddressValue]
  public let businessIDs: [ObjectId]
  public let businessKeys: [Data]
  public let businessNames: [String]
  public let businessAddresses: [[AddressValue]]

  /// Contacts `first..<first + contacts` and businesses `0..<businesses`.
  public init(contacts: Int, businesses: Int, first: Int = 0) {
    var random = SplitMix(state: 13 &+ UInt64(first))
    func address() -> AddressValue {
      AddressValue(
        street: "\(1 + random.below(9_999)) \(streets[random.below(streets.count)])",
        city: cities[random.below(cities.count)], country: "USA", postalCode: String(10_000 + random.below(89_999)))
    }
    contactIDs = (first..<(first + contacts)).map { objectID(kind: 1, index: $0) }
    contactKeys = contactIDs.map { Data($0.byteArray) }
    contactNames = (first..<(first + contacts)).map { "\(names[$0 % names.count]) \($0)" }
    contactAddresses = (0..<contacts).map { _ in address() }
    businessIDs = (0..<businesses).map { objectID(kind: 2, index: $0) }
    businessKeys = businessIDs.map { Data($0.byteArray) }
    businessNames = (0..<businesses).map { "Business \($0) Inc." }
    businessAddresses = (0..<businesses).map { _ in [address(), address(), address()] }
  }
}

/// An ObjectId: a fixed timestamp, the kind, then the index big-endian (ids grow with the index).
func objectID(kind: UInt8, index: Int) -> ObjectId {
  var bytes: [UInt8] = [0x65, 0x00, 0x00, 0x00, kind, 0, 0, 0]
  for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: index >> shift)) }
  return ObjectId(bytes: bytes)!
}

// MARK: Reef

/// The object types of every benchmark Reef.
public let objectTypes: [ObjectBase.Type] = [Contact.self, Business.self, Address.self]

/// Opens (creating) a Reef at `path`, with `durability` (the default `.full`: a commit returns
/// once it survives a power loss).
public func openReef(_ path: String, durability: Durability = .full) -> Reef {
  var configuration = Reef.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: objectTypes)
  configuration.durability = durability
  do {
    return try Reef(configuration: configuration)
  } catch {
    fatalError("cannot open a Reef at \(path): \(error)")
  }
}

/// Adds every contact and business to `reef` in one write transaction.
public func addObjects(_ data: ObjectData, to reef: Reef) {
  do {
    try reef.write {
      for index in data.contactIDs.indices {
        let contact = Contact()
        contact._id = data.contactIDs[index]
        contact.name = data.contactNames[index]
        contact.address = Address(data.contactAddresses[index])
        reef.add(contact)
      }
      for index in data.businessIDs.indices {
        let business = Business()
        business._id = data.businessIDs[index]
        business.name = data.businessNames[index]
        for address in data.businessAddresses[index] { business.addresses.append(Address(address)) }
        reef.add(business)
      }
    }
  } catch {
    fatalError("Reef's insert failed: \(error)")
  }
}

// MARK: ReefStore, raw documents

/// A contact as the object layer stores it: `{_id, name, address: {street, city, country, postalCode}}`.
@inline(__always)
func appendAddress(_ builder: inout DocumentBuilder, _ address: AddressValue) {
  builder.append("street", address.street!)
  builder.append("city", address.city!)
  builder.append("country", address.country!)
  builder.append("postalCode", address.postalCode!)
}

/// Inserts the same documents as ``addObjects(_:to:)`` straight into a store's `Contact` and
/// `Business` collections, with the same `address.city` / `addresses.city` indexes, in one
/// write transaction; each document is built from the source data inside the transaction, as
/// the object layer builds it from an object.
public func insertDocuments(_ data: ObjectData, into store: Store) {
  do {
    try store.write { transaction in
      let contacts = transaction.collection("Contact")
      let businesses = transaction.collection("Business")
      try contacts.createIndex(["address.city": 1])
      try businesses.createIndex(["addresses.city": 1])
      for index in data.contactIDs.indices {
        var builder = DocumentBuilder()
        builder.append("_id", data.contactIDs[index])
        builder.append("name", data.contactNames[index])
        builder.appendDocument("address") { appendAddress(&$0, data.contactAddresses[index]) }
        _ = try contacts.insert(builder.document)
      }
      for index in data.businessIDs.indices {
        var builder = DocumentBuilder()
        builder.append("_id", data.businessIDs[index])
        builder.append("name", data.businessNames[index])
        builder.appendArray("addresses") { list in
          for address in data.businessAddresses[index] { list.appendDocument { appendAddress(&$0, address) } }
        }
        _ = try businesses.insert(builder.document)
      }
    }
  } catch {
    fatalError("ReefStore's insert failed: \(error)")
  }
}

// MARK: GRDB

/// Opens (creating) a GRDB database at `path`: a `DatabaseQueue` in WAL mode
/// (`configuration.journalMode = .wal`), then `PRAGMA synchronous = FULL` on its connection
/// (GRDB's WAL set-up chooses NORMAL, which does not flush the WAL at each commit: a power loss
/// may undo the last commits); checked with `PRAGMA journal_mode` and `PRAGMA synchronous`. `durable: false` (fixtures
/// only) sets `synchronous = OFF`.
public func openGRDB(_ path: String, durable: Bool = true) -> DatabaseQueue {
  var configuration = Configuration()
  configuration.journalMode = .wal
  let synchronous = durable ? "FULL" : "OFF"
  do {
    let queue = try DatabaseQueue(path: path, configuration: configuration)
    // After GRDB's WAL set-up (which `prepareDatabase` precedes); a queue has one connection.
    try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = \(synchronous)") }
    let (mode, level) = try queue.read { db in
      (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA synchronous"))
    }
    precondition(mode == "wal" && level == (durable ? 2 : 0), "GRDB opened with journal_mode \(mode ?? "?"), synchronous \(level ?? -1)")
    return queue
  } catch {
    fatalError("cannot open GRDB at \(path): \(error)")
  }
}

/// Creates the tables (when missing) and inserts every contact and business in one transaction.
public func insertRecords(_ data: ObjectData, into queue: DatabaseQueue) {
  do {
    try queue.write { db in
      if try !db.tableExists(ContactRecord.databaseTableName) { try createGRDBSchema(db) }
      for index in data.contactKeys.indices {
        try ContactRecord(id: data.contactKeys[index], name: data.contactNames[index], address: data.contactAddresses[index])
          .insert(db)
      }
      for index in data.businessKeys.indices {
        try BusinessRecord(id: data.businessKeys[index], name: data.businessNames[index], addresses: data.businessAddresses[index])
          .insert(db)
      }
    }
  } catch {
    fatalError("GRDB's insert failed: \(error)")
  }
}

// MARK: Files

/// The files of a Reef store or a SQLite database at `path`.
public func databaseFiles(_ path: String) -> [String] {
  Store.files(at: path) + [path + "-wal", path + "-shm", path + "-journal"]
}

/// Removes the files of a store or database at `path`.
public func removeDatabase(_ path: String) {
  for file in databaseFiles(path) { unlink(file) }
}
