// reef-crash-writer STORE [LAST] [--durability=full|normal|none]: commits the crash test's
// workload (`CrashTransaction`) to the store at STORE, one write transaction per number,
// continuing after the last transaction the store holds, until transaction LAST (default:
// forever). After each commit returns it writes the transaction's number and a newline to
// standard output with write(2): the acknowledgement the crash test holds the store to after
// killing this process. The store is opened with the durability given (default full: one flush
// of the commit log per commit) and a 1 MiB map to start with.
//
// reef-crash-writer --apply STORE TRANSACTION...: commits each TRANSACTION (Extended JSON, see
// Apply.swift) to the store at STORE, and exits.

import ReefBSON
import ReefStore
import ReefTestSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Writes all of `text` to the file descriptor `fd` with write(2), unbuffered; false if it cannot.
@discardableResult
func writeAll(_ fd: Int32, _ text: String) -> Bool {
  let bytes = Array(text.utf8)
  var written = 0
  while written < bytes.count {
    let result = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    if result < 0 && errno == EINTR { continue }
    if result <= 0 { return false }
    written += result
  }
  return true
}

/// Writes `text` to standard error and exits with status 2.
func fail(_ text: String) -> Never {
  writeAll(2, "reef-crash-writer: \(text)\n")
  exit(2)
}

/// Acknowledges a committed transaction: its number and a newline on standard output.
func acknowledge(_ number: Int64) {
  if !writeAll(1, "\(number)\n") { fail("cannot write the acknowledgement of \(number) (errno \(errno))") }
}

var arguments = CommandLine.arguments
if arguments.count >= 3, arguments[1] == "--apply" {
  applyTransactions(store: arguments[2], Array(arguments.dropFirst(3)))
  exit(0)
}
var durability = Durability.full
if let option = arguments.last, option.hasPrefix("--durability=") {
  guard let level = Durability(rawValue: String(option.dropFirst("--durability=".count))) else {
    fail("the durability is full, normal or none, not \(option)")
  }
  durability = level
  arguments.removeLast()
}
guard arguments.count == 2 || arguments.count == 3 else {
  fail("usage: reef-crash-writer STORE [LAST] [--durability=full|normal|none]")
}
let last: Int64
if arguments.count == 3 {
  guard let value = Int64(arguments[2]), value >= 0 else { fail("LAST must be a number, not \(arguments[2])") }
  last = value
} else {
  last = .max
}

do {
  // A small map to start with, so that it grows (doubling) while transactions commit and die.
  let store = try Store(path: arguments[1], options: StoreOptions(initialMapSize: 1 << 20, durability: durability))
  try store.write { transaction in
    let documents = transaction.collection(CrashTransaction.documents)
    try documents.createIndex(["txn": 1])
    try documents.createIndex(["tags": 1, "j": -1])
    try transaction.collection(CrashTransaction.ledgers).createIndex(["txn": 1], unique: true)
  }
  // The ledger holds one document per transaction, numbered from 1.
  var number = Int64(try store.collection(CrashTransaction.ledgers).count())
  while number < last {
    number += 1
    let next = CrashTransaction(number: number)
    try store.write { transaction in
      let documents = transaction.collection(CrashTransaction.documents)
      let ledgers = transaction.collection(CrashTransaction.ledgers)
      try documents.insertMany(next.inserts)
      if let filter = next.updateFilter { try documents.updateMany(filter, next.update) }
      if let filter = next.deleteFilter { try documents.deleteMany(filter) }
      if let (filter, update) = next.ledgerUpdate {
        let result = try ledgers.updateOne(filter, update)
        if result.modified != 1 { fail("transaction \(number): the ledger of \(number - 1) is missing") }
      }
      try ledgers.insert(next.ledger)
    }
    acknowledge(number)
  }
} catch {
  fail("\(error)")
}
