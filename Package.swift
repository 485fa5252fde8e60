// swift-tools-version:6.1
import PackageDescription

let package = Package(
  name: "Reef",
  platforms: [.macOS(.v15)],
  products: [
    .library(name: "ReefBSON", targets: ["ReefBSON"]),
    .library(name: "ReefQuery", targets: ["ReefQuery"]),
    .library(name: "ReefStore", targets: ["ReefStore"]),
    .library(name: "ReefSwift", targets: ["ReefSwift"]),
    .library(name: "ReefLibBSON", targets: ["ReefLibBSON"]),
    .library(name: "ReefCLI", targets: ["ReefCLI"]),
    .executable(name: "reef", targets: ["reef"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
    .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.0"),
  ],
  targets: [
    .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
    .systemLibrary(name: "CLibBSON", pkgConfig: "libbson-1.0", providers: [.apt(["libbson-dev"])]),
    .target(name: "ReefBSON", dependencies: ["CZlib"]),
    .systemLibrary(name: "CLMDB", pkgConfig: "lmdb", providers: [.apt(["liblmdb-dev"])]),
    .systemLibrary(name: "CPCRE2", pkgConfig: "libpcre2-8", providers: [.apt(["libpcre2-dev"])]),
    .target(name: "ReefQuery", dependencies: ["ReefBSON", "CPCRE2"]),
    .target(name: "ReefStore", dependencies: ["ReefBSON", "ReefQuery", "CLMDB"]),
    .target(name: "ReefSwift", dependencies: ["ReefBSON", "ReefQuery", "ReefStore"]),
    .target(name: "ReefLibBSON", dependencies: ["ReefBSON", "CLibBSON"]),
    .target(
      name: "ReefCLI",
      dependencies: ["ReefBSON", "ReefQuery", "ReefStore", .product(name: "ArgumentParser", package: "swift-argument-parser")]
    ),
    .executableTarget(name: "reef", dependencies: ["ReefCLI"]),
    .executableTarget(name: "ReefTour", dependencies: ["ReefBSON", "ReefQuery", "ReefStore"], path: "Examples/Tour"),
    .executableTarget(name: "ObjectTour", dependencies: ["ReefSwift", "ReefStore"], path: "Examples/ObjectTour"),
    // The models and snippets of Realm's pages (../shared/seeds/), with Realm replaced by Reef.
    .executableTarget(name: "EmbeddedObjects", dependencies: ["ReefSwift", "ReefStore"], path: "Examples/EmbeddedObjects"),
    .executableTarget(name: "Relationships", dependencies: ["ReefSwift", "ReefStore"], path: "Examples/Relationships"),
    .executableTarget(name: "UserTasks", dependencies: ["ReefSwift", "ReefStore"], path: "Examples/UserTasks"),
    .target(name: "ReefTestSupport", dependencies: ["ReefBSON"], path: "Tests/ReefTestSupport"),
    .executableTarget(
      name: "reef-crash-writer", dependencies: ["ReefStore", "ReefBSON", "ReefTestSupport"], path: "Tests/CrashWriter"),
    .testTarget(
      name: "ReefBSONTests",
      dependencies: [
        "ReefBSON", "ReefTestSupport",
        .product(name: "PropertyBased", package: "swift-property-based"),
      ]
    ),
    .testTarget(
      name: "InteropTests",
      dependencies: [
        "ReefBSON", "ReefLibBSON", "ReefTestSupport",
        .product(name: "PropertyBased", package: "swift-property-based"),
      ]
    ),
    .testTarget(name: "ReefQueryTests", dependencies: ["ReefQuery", "ReefBSON", "ReefTestSupport"]),
    .testTarget(name: "ReefStoreTests", dependencies: ["ReefStore", "ReefQuery", "ReefBSON", "ReefTestSupport"]),
    .testTarget(name: "ReefSwiftTests", dependencies: ["ReefSwift", "ReefStore", "ReefBSON", "ReefTestSupport"]),
    .testTarget(name: "ReefCLITests", dependencies: ["ReefCLI", "ReefBSON", "ReefStore", "ReefTestSupport"]),
  ]
)
