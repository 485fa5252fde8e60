import Foundation
import ReefBSON
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `reef convert` streams JSON: its peak resident memory stays flat whatever the input's size.
@Suite("reef binary: convert memory")
struct ConvertMemoryTests {
  /// One mongoexport-style line whose BSON is the same size for every `i` (the `_id` has a fixed
  /// width), so that the output's size says how many documents were converted. Its long string
  /// makes each document larger than a read chunk, and keeps a debug build fast.
  static func line(_ i: Int) -> String {
    let id = String(i)
    let padded = String(repeating: "0", count: 9 - id.count) + id
    return
      #"{"_id":"d\#(padded)","name":"person \#(padded)","address":{"city":"Los Angeles","zip":{"$numberLong":"90001"}},"#
      + #""tags":["a","b\"c","{[}]"],"score":{"$numberDouble":"1.5"},"when":{"$date":{"$numberLong":"1600000000000"}},"#
      + #""note":"\#(String(repeating: "x", count: 100_000))"}"#
  }

  /// Runs `reef` with `arguments` under a limit on its private writable memory (heap, anonymous
  /// mappings, thread stacks: `ulimit -d`, which the kernel enforces, so an allocation past it
  /// fails), and returns its exit status and peak resident memory in bytes (`VmHWM`, read from
  /// `/proc` while it runs; the high-water mark only grows, so the last reading is the peak
  /// unless a new one is reached in the last millisecond).
  ///
  /// `wait4`'s `ru_maxrss` cannot be used: a child spawned with `vfork` semantics (as
  /// `posix_spawn` and `Process` do) inherits the high-water mark of this test process at `exec`.
  func peakMemory(_ arguments: [String], dataLimitKB: Int) throws -> (status: Int32, peakRSS: Int) {
    var pid: pid_t = 0
    let script = "ulimit -d \(dataLimitKB) && exec \"$0\" \"$@\""
    let argv = (["/bin/sh", "-c", script, reefBinary] + arguments).map { strdup($0) } + [nil]
    defer { for p in argv { free(p) } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    let spawned = posix_spawn(&pid, "/bin/sh", &actions, nil, argv, environ)
    guard spawned == 0 else {
      Issue.record("posix_spawn failed: \(spawned)")
      return (-1, 0)
    }
    var status: Int32 = 0
    var peak = 0
    var sawReef = false
    while true {
      // Before the shell has exec'd reef, the figures are the shell's: keep only reef's.
      if let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        text.contains("Name:\treef"),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
        let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
      {
        sawReef = true
        peak = max(peak, kilobytes * 1024)
      }
      let done = waitpid(pid, &status, WNOHANG)
      if done == pid { break }
      if done == -1 && errno != EINTR {
        Issue.record("waitpid failed: \(errno)")
        return (-1, 0)
      }
      usleep(1000)
    }
    #expect(sawReef, "reef's memory was never read")
    let exit = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : -1
    return (exit, peak)
  }

  @Test("converting 100 MB of JSON lines to BSON fits in 32 MiB of private memory and peaks under 64 MB resident")
  func largeJSONLines() throws {
    let dir = try TemporaryDirectory()
    let input = dir.path("big.json")
    let count = 1_050
    guard let file = fopen(input, "w") else { throw BSONError(.io, "cannot create \(input)") }
    var chunk = ""
    for i in 0..<count {
      chunk += Self.line(i)
      chunk += "\n"
      if i % 10 == 9 {
        fputs(chunk, file)
        chunk = ""
      }
    }
    fputs(chunk, file)
    fclose(file)
    let size = try FileManager.default.attributesOfItem(atPath: input)[.size] as? Int ?? 0
    #expect(size > 100_000_000)
    let documentSize = try Document(extendedJSON: Self.line(0)).byteCount
    #expect(try Document(extendedJSON: Self.line(count - 1)).byteCount == documentSize)

    let output = dir.path("big.bson")
    // 32 MiB of private memory, less than a third of the input: reading it whole would fail.
    let run = try peakMemory(["convert", input, "--to", "bson", "-o", output], dataLimitKB: 32 << 10)
    #expect(run.status == 0)
    #expect(run.peakRSS > 1 << 20)
    #expect(run.peakRSS < 64 << 20, "peak RSS \(run.peakRSS >> 20) MB")
    let written = try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int ?? 0
    #expect(written == count * documentSize)
    // The first and the last documents of the output, in place.
    let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: output))
    defer { try? handle.close() }
    #expect(try handle.read(upToCount: documentSize).map(Array.init) == Document(extendedJSON: Self.line(0)).bytes)
    try handle.seek(toOffset: UInt64((count - 1) * documentSize))
    #expect(
      try handle.read(upToCount: documentSize + 1).map(Array.init)
        == Document(extendedJSON: Self.line(count - 1)).bytes)
  }
}
