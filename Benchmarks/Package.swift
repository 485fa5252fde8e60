// swift-tools-version: 6.1
// Reef's benchmarks: `swift package --allow-writing-to-package-directory benchmark` (or `make bench`
// from the repository root); Scripts/ratios.sh prints Reef's ratios against its anchors.
import Foundation
import PackageDescription

/// Whether Reef's sources declare `needle` yet (the Codable API lands separately; until it does,
/// the Codable benchmarks build without their Reef half). Set REEF_BENCH_CODABLE=0/1 to override.
func reefDeclares(_ needle: String) -> Bool {
  let sources = Context.packageDirectory + "/../Sources/ReefBSON"
  guard let files = try? FileManager.default.contentsOfDirectory(atPath: sources) else { return false }
  return files.contains { file in
    file.hasSuffix(".swift")
      && ((try? String(contentsOfFile: sources + "/" + file, encoding: .utf8))?.contains(needle) ?? false)
  }
}

let hasCodable: Bool = {
  switch Context.environment["REEF_BENCH_CODABLE"] {
  case "1": return true
  case "0": return false
  default: return reefDeclares("struct BSONEncoder") || reefDeclares("class BSONEncoder")
  }
}()

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
  ],
  targets: [
    // libbson, for the C anchors.
    .systemLibrary(name: "CLibBSONBench", pkgConfig: "libbson-1.0", providers: [.apt(["libbson-dev"])]),
    // The libbson side of every comparison, in C so that no Swift call overhead is counted against it.
    .target(name: "CBench", dependencies: ["CLibBSONBench"], cSettings: [.unsafeFlags(["-O2"])]),
    .target(
      name: "BenchSupport",
      dependencies: [.product(name: "ReefBSON", package: "Reef"), .product(name: "Benchmark", package: "benchmark")]),
    // Not a benchmark: a loop around one operation, for perf and callgrind.
    .executableTarget(
      name: "ReefProfile", dependencies: ["BenchSupport", "CBench", .product(name: "ReefBSON", package: "Reef")],
      swiftSettings: [.swiftLanguageMode(.v5)]),
    benchmarkTarget("CoreBenchmarks", ["CBench"], []),
    benchmarkTarget("ExtendedJSONBenchmarks", ["CBench"], []),
    benchmarkTarget("CodableBenchmarks", [], hasCodable ? [.define("REEF_HAS_CODABLE")] : []),
  ]
)
