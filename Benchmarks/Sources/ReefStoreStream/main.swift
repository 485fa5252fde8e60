// Streaming import into a store and export from it at the Store level (Scripts/store-memory.sh
// measures the CLI's `reef import` / `reef export`; this is the same without the dump layer, and
// makes the script's input):
//
//   ReefStoreStream generate OUT.bson SIZE_MB   Examples-model documents until SIZE_MB * 10^6 bytes
//   ReefStoreStream import IN.bson STORE        BSONStreamReader, 1,000 documents per write transaction
//   ReefStoreStream export STORE OUT.bson       one read transaction, TransactionCollection.forEach
//                                               into a BSONStreamWriter
//
// The import opens the store with `durability: .none` (the bulk-load level) and syncs once at
// the end. Both release the store's mapped pages whenever they pass 64 MB (checked every 128
// documents imported, 256 exported), as `reef import` / `reef export` do. Each command prints
// its peak anonymous and file-backed resident memory, sampled from /proc/self/status every
// 1,000 documents (the store's memory map counts as file-backed).

import BenchSupport
import ReefBSON
import ReefStore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

let collectionName = "contacts"

/// Peak resident memory seen so far, in kB: anonymous (heap, stacks) and file-backed (maps).
struct MemorySampler {
  var peakAnonymous = 0
  var peakFile = 0

  mutating func sample() {
    guard let file = fopen("/proc/self/status", "r") else { return }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, Int32(line.count), file) != nil {
      let text = String(cString: line)
      func value() -> Int {
        Int(text.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
      }
      if text.hasPrefix("RssAnon:") { peakAnonymous = max(peakAnonymous, value()) }
      if text.hasPrefix("RssFile:") { peakFile = max(peakFile, value()) }
    }
  }

  var summary: String {
    "peak RssAnon \(peakAnonymous / 1024) MB, peak RssFile \(peakFile / 1024) MB (sampled every 1,000 documents)"
  }
}

func seconds() -> Double { Double(wallClockNanoseconds()) / 1e9 }

func fail(_ message: String) -> Never {
  fputs("ReefStoreStream: \(message)\n", stderr)
  exit(1)
}

let arguments = CommandLine.arguments
guard arguments.count == 4 else {
  fail("usage: ReefStoreStream generate OUT SIZE_MB | import IN STORE | export STORE OUT")
}
var memory = MemorySampler()
let start = seconds()

do {
  switch arguments[1] {
  case "generate":
    guard let megabytes = Int(arguments[3]) else { fail("SIZE_MB must be a number") }
    let writer = try BSONStreamWriter(path: arguments[2])
    var first = 0
    while writer.bytesWritten < megabytes * 1_000_000 {
      let (bytes, offsets) = generateStream(count: 100_000, first: first)
      first += 100_000
      for (index, offset) in offsets.enumerated() {
        let end = index + 1 < offsets.count ? offsets[index + 1] : bytes.count
        try writer.write(bytes: Array(bytes[offset..<end]))
        if writer.bytesWritten >= megabytes * 1_000_000 { break }
      }
    }
    try writer.close()
    print("generated \(writer.documentsWritten) documents, \(writer.bytesWritten) bytes")

  case "import":
    var reader = try BSONStreamReader(path: arguments[2])
    let store = try Store(path: arguments[3], options: StoreOptions(durability: .none))
    var batch: [Document] = []
    batch.reserveCapacity(1_000)
    var imported = 0
    func flush() throws {
      try store.write { transaction in
        let collection = transaction.collection(collectionName)
        for (index, document) in batch.enumerated() {
          if index % 128 == 127 { store.releaseMappedPages(ifMappedMemoryExceeds: 64 << 20) }
          try collection.insert(document)
        }
      }
      imported += batch.count
      batch.removeAll(keepingCapacity: true)
      memory.sample()
    }
    while let document = try reader.next() {
      batch.append(document)
      if batch.count == 1_000 { try flush() }
    }
    if !batch.isEmpty { try flush() }
    try store.sync()
    print("imported \(imported) documents, \(reader.bytesRead) bytes, in \(seconds() - start) s; \(memory.summary)")

  case "export":
    let store = try Store(path: arguments[2], options: StoreOptions(readOnly: true))
    let writer = try BSONStreamWriter(path: arguments[3])
    try store.read { transaction in
      try transaction.collection(collectionName).forEach { document in
        try writer.write(document)
        if writer.documentsWritten % 1_000 == 0 { memory.sample() }
        if writer.documentsWritten % 256 == 0 { store.releaseMappedPages(ifMappedMemoryExceeds: 64 << 20) }
        return true
      }
    }
    try writer.close()
    print(
      "exported \(writer.documentsWritten) documents, \(writer.bytesWritten) bytes, in \(seconds() - start) s; \(memory.summary)"
    )

  default:
    fail("unknown command \(arguments[1])")
  }
} catch {
  fail("\(error)")
}
