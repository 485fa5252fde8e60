// ReefFeedLatency [COMMITS]: the store's change feed, from a commit to its delivery to an
// observer (`Store.observeChanges`), as percentiles over COMMITS commits (default 500), each a
// one-document insert at the store's default durability (a flush per commit), a few
// milliseconds apart so that each is delivered on its own:
// - same process: from `store.write` returning to the observer's handler;
// - another process: this program run again as `ReefFeedLatency --writer PATH COMMITS` makes the
//   commits and prints, after each `write` returns, the monotonic clock (shared by the machine's
//   processes); the observer here takes the time of each delivery.
// A delivery before `write` returned counts as 0.

import Dispatch
import ReefBSON
import ReefStore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The monotonic clock in nanoseconds.
func now() -> Int64 {
  var time = timespec()
  clock_gettime(CLOCK_MONOTONIC, &time)
  return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}

func fail(_ message: String) -> Never {
  fputs("ReefFeedLatency: \(message)\n", stderr)
  exit(2)
}

/// read(2).
func readBytes(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
  #if canImport(Glibc)
    Glibc.read(descriptor, buffer, count)
  #else
    Darwin.read(descriptor, buffer, count)
  #endif
}

/// Sleeps `microseconds`.
func pause(_ microseconds: UInt32) { usleep(microseconds) }

/// Commits `count` one-document inserts, calling `acknowledged` with each commit's number (from 1)
/// and the time `write` returned.
func commit(_ store: Store, count: Int, _ acknowledged: (Int, Int64) -> Void) throws {
  for number in 1...count {
    try store.write { transaction in
      _ = try transaction.collection("events").insert(["_id": .int64(Int64(number)), "at": .int64(now())])
    }
    acknowledged(number, now())
    pause(3_000)
  }
}

/// Delivery times by sequence number, from the feed's thread.
final class Deliveries: @unchecked Sendable {
  private var lock = pthread_mutex_t()
  private var times: [UInt64: Int64] = [:]
  init() { pthread_mutex_init(&lock, nil) }
  func add(_ batch: ChangeBatch) {
    let time = now()
    pthread_mutex_lock(&lock)
    for commit in batch.commits { times[commit.sequence] = time }
    pthread_mutex_unlock(&lock)
  }
  var snapshot: [UInt64: Int64] {
    pthread_mutex_lock(&lock)
    defer { pthread_mutex_unlock(&lock) }
    return times
  }
  /// Waits up to 10 s for `count` deliveries.
  func wait(for count: Int) {
    let deadline = now() + 10_000_000_000
    while snapshot.count < count && now() < deadline { pause(1_000) }
  }
}

/// `p50 … p99 … max` of latencies in nanoseconds, in microseconds.
func summary(_ latencies: [Int64]) -> String {
  let sorted = latencies.sorted()
  func percentile(_ p: Double) -> Int64 { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
  let micro = { (value: Int64) in "\(value / 1000) µs" }
  return
    "p50 \(micro(percentile(0.5))), p99 \(micro(percentile(0.99))), max \(micro(sorted.last!)) (\(sorted.count) commits)"
}

let arguments = CommandLine.arguments
if arguments.count == 4, arguments[1] == "--writer" {
  guard let count = Int(arguments[3]), count > 0 else { fail("COMMITS must be a positive number") }
  do {
    let store = try Store(path: arguments[2])
    try commit(store, count: count) { number, time in print(number, time) }
  } catch {
    fail("\(error)")
  }
  exit(0)
}
let count = arguments.count > 1 ? Int(arguments[1]) ?? 0 : 500
guard count > 0 else { fail("usage: ReefFeedLatency [COMMITS]") }

var template = Array("/tmp/reef-feed-latency-XXXXXX".utf8CString)
guard let made = mkdtemp(&template) else { fail("cannot create a directory under /tmp") }
let directory = String(cString: made)
defer { _ = try? Store.deleteFiles(at: directory + "/local.reef") }

do {
  // Same process.
  let local = try Store(path: directory + "/local.reef")
  let localDeliveries = Deliveries()
  let localObservation = try local.observeChanges { localDeliveries.add($0) }
  var acknowledged: [Int: Int64] = [:]
  try commit(local, count: count) { number, time in acknowledged[number] = time }
  localDeliveries.wait(for: count)
  localObservation.cancel()
  let localTimes = localDeliveries.snapshot
  let localLatencies = (1...count).compactMap { number in
    localTimes[UInt64(number)].map { max(0, $0 - acknowledged[number]!) }
  }
  print("same process:    \(summary(localLatencies))")

  // Another process: this program as the writer, its acknowledgements read from a pipe.
  let path = directory + "/shared.reef"
  let remote = try Store(path: path)
  let remoteDeliveries = Deliveries()
  let remoteObservation = try remote.observeChanges { remoteDeliveries.add($0) }
  var pipeEnds: [Int32] = [0, 0]
  guard pipe(&pipeEnds) == 0 else { fail("pipe: errno \(errno)") }
  var actions = posix_spawn_file_actions_t()
  posix_spawn_file_actions_init(&actions)
  posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
  posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
  let writerArguments: [String] = [arguments[0], "--writer", path, String(count)]
  var argv: [UnsafeMutablePointer<CChar>?] = writerArguments.map { strdup($0) } + [nil]
  var pid = pid_t()
  let spawned = posix_spawn(&pid, arguments[0], &actions, nil, &argv, environ)
  posix_spawn_file_actions_destroy(&actions)
  for argument in argv { free(argument) }
  guard spawned == 0 else { fail("cannot start the writer (error \(spawned))") }
  close(pipeEnds[1])
  var output: [UInt8] = []
  var buffer = [UInt8](repeating: 0, count: 4096)
  while true {
    let read = buffer.withUnsafeMutableBytes { readBytes(pipeEnds[0], $0.baseAddress, $0.count) }
    if read < 0 && errno == EINTR { continue }
    if read <= 0 { break }
    output += buffer[0..<read]
  }
  var status: Int32 = 0
  waitpid(pid, &status, 0)
  guard status == 0 else { fail("the writer failed (status \(status))") }
  remoteDeliveries.wait(for: count)
  remoteObservation.cancel()
  let remoteTimes = remoteDeliveries.snapshot
  var remoteLatencies: [Int64] = []
  for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
    let fields = line.split(separator: " ")
    guard fields.count == 2, let number = UInt64(fields[0]), let time = Int64(fields[1]) else { continue }
    if let delivered = remoteTimes[number] { remoteLatencies.append(max(0, delivered - time)) }
  }
  print("another process: \(summary(remoteLatencies))")
  _ = try? Store.deleteFiles(at: path)
} catch {
  fail("\(error)")
}
