import Benchmark

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The CPU time of the benchmark thread over each inner loop. On a machine shared with other
/// builds, wall-clock samples include the time the thread spent descheduled; thread CPU time
/// does not, so ratios are judged on its median (wall-clock figures are reported too).
public let threadCPU = BenchmarkMetric.custom("Thread CPU (ns)", polarity: .prefersSmaller, useScalingFactor: true)

@inline(__always)
public func threadCPUNanoseconds() -> Int {
  var ts = timespec()
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
  return Int(ts.tv_sec) &* 1_000_000_000 &+ Int(ts.tv_nsec)
}

/// The monotonic wall clock (`CLOCK_MONOTONIC`), in nanoseconds.
public func wallClockNanoseconds() -> Int {
  var ts = timespec()
  clock_gettime(CLOCK_MONOTONIC, &ts)
  return Int(ts.tv_sec) &* 1_000_000_000 &+ Int(ts.tv_nsec)
}

/// Runs `body` `benchmark.scaledIterations` times and records the thread's CPU time for the loop.
@inline(__always)
public func measureLoop(_ benchmark: Benchmark, _ body: () -> Void) {
  let start = threadCPUNanoseconds()
  for _ in benchmark.scaledIterations { body() }
  benchmark.measurement(threadCPU, threadCPUNanoseconds() &- start)
}

/// The configuration every Reef benchmark uses: an inner loop of 1,000 operations, ~1.5 s each.
public var reefBenchmarkConfiguration: Benchmark.Configuration {
  Benchmark.Configuration(
    metrics: [.wallClock, .throughput, .mallocCountTotal, threadCPU],
    timeUnits: .nanoseconds,
    warmupIterations: 3,
    scalingFactor: .kilo,
    maxDuration: .milliseconds(1500),
    maxIterations: 1_000
  )
}

/// The per-iteration ratio anchor CPU time / Reef CPU time, times 1,000, of a paired benchmark.
public let pairedRatio = BenchmarkMetric.custom("Paired ratio x1000", polarity: .prefersLarger, useScalingFactor: false)

/// Registers `name` as a single-implementation benchmark of `operation` (one operation per inner
/// iteration), with `configuration` or the default one.
public func register(
  _ name: String, configuration: Benchmark.Configuration? = nil, _ operation: @escaping () -> Void
) {
  Benchmark(name, configuration: configuration ?? Benchmark.defaultConfiguration) { benchmark in
    measureLoop(benchmark, operation)
  }
}

/// Registers "ratio/<name>": each iteration runs a batch of `reef`, then a batch of `anchor` (the
/// order alternating), timing each with the thread's CPU clock, and records anchor / Reef. Both
/// batches run within a millisecond or so of each other, so load from other processes on a
/// shared machine hits both alike: the median of these ratios is the steadiest figure this
/// package produces.
public func registerPair(_ name: String, reef: @escaping () -> Void, anchor: @escaping () -> Void) {
  var configuration = reefBenchmarkConfiguration
  configuration.metrics = [.throughput, pairedRatio]  // JMH export needs throughput
  configuration.scalingFactor = .one
  Benchmark("ratio/" + name, configuration: configuration) { benchmark in
    // A batch size that makes the slower side take about 0.3 ms.
    func cost(_ op: () -> Void) -> Int {
      let start = threadCPUNanoseconds()
      for _ in 0..<10 { op() }
      return max(1, (threadCPUNanoseconds() &- start) / 10)
    }
    let batch = max(1, min(10_000, 300_000 / max(cost(reef), cost(anchor))))
    var reefFirst = true
    for _ in benchmark.scaledIterations {
      var reefTime = 0
      var anchorTime = 0
      for side in reefFirst ? [true, false] : [false, true] {
        let op = side ? reef : anchor
        let start = threadCPUNanoseconds()
        for _ in 0..<batch { op() }
        let elapsed = threadCPUNanoseconds() &- start
        if side { reefTime = elapsed } else { anchorTime = elapsed }
      }
      reefFirst.toggle()
      benchmark.measurement(pairedRatio, anchorTime &* 1000 / max(1, reefTime))
    }
  }
}

/// Registers each implementation as "<group>/<dataset>/<name>" and each (Reef, anchor) pair of
/// names as "ratio/<group>/<dataset>/<reef>~<anchor>" (see ``registerPair(_:reef:anchor:)``).
public func registerGroup(
  _ group: String, _ dataset: String, _ implementations: KeyValuePairs<String, () -> Void>,
  pairs: [(reef: String, anchor: String)]
) {
  var byName = [String: () -> Void]()
  for (name, operation) in implementations {
    byName[name] = operation
    register("\(group)/\(dataset)/\(name)", operation)
  }
  for pair in pairs {
    guard let reef = byName[pair.reef], let anchor = byName[pair.anchor] else { continue }
    registerPair("\(group)/\(dataset)/\(pair.reef)~\(pair.anchor)", reef: reef, anchor: anchor)
  }
}
