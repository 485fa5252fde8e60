// swift-tools-version: 6.1
// Reef's benchmarks: `swift package --allow-writing-to-package-directory benchmark` (or `make bench`
// from the repository root); Scripts/ratios.sh prints Reef's ratios against its anchors.
import PackageDescription

let benchmarkTarget: (String, [Target.Dependency], [SwiftSetting]) -> Target = { name, dependencies, settings in
  .executableTarget(
    name: name,
    dependencies: [
      .product(name: "Benchmark", package: "benchmark"),
      .product(name: "ReefBSON", package: "Reef"),
      "BenchSupport",
    ] + dependencies,
    path: "Benchmarks/\(name)",
    swiftSettings: [.swiftLanguageMode(.v5)] + settings,
    plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
  )
}

let package = Package(
  name: "ReefBenchmarks",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(name: "Reef", path: ".."),
    .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.0", traits: ["MallocInterposer"]),
    // GRDB 7 (SQLite through Codable records), the anchor of ObjectBenchmarks.
    .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
  ],
  targets: [
    // libbson, for the C anchors.
    .systemLibrary(name: "CLibBSONBench", pkgConfig: "libbson-1.0", providers: [.apt(["libbson-dev"])]),
    // The libbson side of every comparison, in C so that no Swift call overhead is counted against it.
    .target(name: "CBench", dependencies: ["CLibBSONBench"], cSettings: [.unsafeFlags(["-O2"])]),
    // SQLite 3, for the store anchors; its side of every comparison is in C (CSQLiteBench).
    .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
    .target(name: "CSQLiteBench", dependencies: ["CSQLite"], cSettings: [.unsafeFlags(["-O2"])]),
    .target(
      name: "BenchSupport",
      dependencies: [.product(name: "ReefBSON", package: "Reef"), .product(name: "Benchmark", package: "benchmark")]),
    // Not a benchmark: a loop around one operation, for perf and callgrind.
    .executableTarget(
      name: "ReefProfile",
      dependencies: [
        "BenchSupport", "CBench", .product(name: "ReefBSON", package: "Reef"),
        .product(name: "ReefStore", package: "Reef"),
      ],
      swiftSettings: [.swiftLanguageMode(.v5)]),
    benchmarkTarget("CoreBenchmarks", ["CBench"], []),
    benchmarkTarget("ExtendedJSONBenchmarks", ["CBench"], []),
    benchmarkTarget("CodableBenchmarks", [], []),
    benchmarkTarget("QueryBenchmarks", ["CBench", .product(name: "ReefQuery", package: "Reef")], []),
    benchmarkTarget("StoreBenchmarks", ["CSQLiteBench", .product(name: "ReefStore", package: "Reef")], []),
    // ReefSwift's object layer against GRDB 7 and against ReefStore's raw documents (issue 13):
    // the models and data both sides store (ObjectModels), the benchmarks, and a loop over a
    // million objects for peak memory (ReefObjectIterate, Scripts/object-memory.sh).
    .target(
      name: "ObjectModels",
      dependencies: [
        "BenchSupport", .product(name: "ReefSwift", package: "Reef"), .product(name: "ReefStore", package: "Reef"),
        .product(name: "GRDB", package: "GRDB.swift"),
      ],
      swiftSettings: [.swiftLanguageMode(.v5)]),
    benchmarkTarget(
      "ObjectBenchmarks",
      [
        "ObjectModels", .product(name: "ReefSwift", package: "Reef"), .product(name: "ReefStore", package: "Reef"),
        .product(name: "ReefQuery", package: "Reef"), .product(name: "GRDB", package: "GRDB.swift"),
      ], []),
    .executableTarget(
      name: "ReefObjectIterate",
      dependencies: [
        "BenchSupport", "ObjectModels", .product(name: "ReefSwift", package: "Reef"), .product(name: "GRDB", package: "GRDB.swift"),
      ],
      swiftSettings: [.swiftLanguageMode(.v5)]),
    // Not a benchmark: streaming import into a store and export from it, for peak memory
    // (Scripts/store-memory.sh).
    .executableTarget(
      name: "ReefStoreStream",
      dependencies: [
        "BenchSupport", .product(name: "ReefBSON", package: "Reef"), .product(name: "ReefStore", package: "Reef"),
      ],
      swiftSettings: [.swiftLanguageMode(.v5)]),
    // Not a benchmark of the harness: the change feed's latency from a commit to its delivery,
    // in the same process and from another (issue 15), as percentiles.
    .executableTarget(
      name: "ReefFeedLatency",
      dependencies: [.product(name: "ReefBSON", package: "Reef"), .product(name: "ReefStore", package: "Reef")],
      swiftSettings: [.swiftLanguageMode(.v5)]),
  ]
)
