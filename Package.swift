// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "ReindexHost",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "reindex", targets: ["reindex"]),
        .library(name: "ReindexProtocol", targets: ["ReindexProtocol"]),
        .library(name: "ReindexExtension", targets: ["ReindexExtension"]),
        .library(name: "ReindexHost", targets: ["ReindexHost"]),
        // For applications that search an index: the query language over pages as an AsyncSequence.
        .library(name: "ReindexQuery", targets: ["ReindexQuery"]),
        .executable(name: "ColleaguesIndexer", targets: ["ColleaguesIndexer"]),
        .executable(name: "ShowTimesIndexer", targets: ["ShowTimesIndexer"]),
        .plugin(name: "BundleExtension", targets: ["BundleExtension"]),
        .executable(name: "reindex-bench", targets: ["ReindexBench"]),
        .executable(name: "BenchIndexer", targets: ["BenchIndexer"]),
    ],
    targets: [
        // System libraries and the one small C shim (fork/exec and process facts Swift cannot reach).
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        .target(name: "CReindexSystem"),

        // Wire types and framing, shared by the host and the SDK. Foundation only.
        .target(name: "ReindexProtocol"),

        // The SDK extension authors import.
        .target(name: "ReindexExtension", dependencies: ["ReindexProtocol", "CReindexSystem"]),

        // The engine: discovery, store, supervisor, scheduler.
        .target(name: "ReindexHost", dependencies: ["ReindexProtocol", "CSQLite", "CLibPQ", "CReindexSystem"]),

        // The application search API. The store still lives in ReindexHost, so this links it;
        // its API names only ReindexQuery's and ReindexProtocol's types (see README).
        .target(name: "ReindexQuery", dependencies: ["ReindexHost", "ReindexProtocol"]),

        // The command: thin, one file per command.
        .executableTarget(name: "reindex", dependencies: ["ReindexHost"]),

        // Examples (also used by the README, the tests and the benchmark).
        .executableTarget(
            name: "ColleaguesIndexer",
            dependencies: ["ReindexExtension"],
            path: "Examples/Colleagues/Sources/ColleaguesIndexer",
            exclude: ["Bundle"]
        ),
        .executableTarget(
            name: "ShowTimesIndexer",
            dependencies: ["ReindexExtension"],
            path: "Examples/ShowTimes/Sources/ShowTimesIndexer",
            exclude: ["Bundle"]
        ),

        // The benchmark (`swift run -c release reindex-bench`) and its extension.
        .target(name: "BenchSupport", dependencies: ["ReindexProtocol"], path: "Benchmarks/BenchSupport"),
        .executableTarget(name: "BenchIndexer", dependencies: ["ReindexExtension", "BenchSupport"], path: "Benchmarks/BenchIndexer"),
        .executableTarget(name: "ReindexBench", dependencies: ["ReindexHost", "CSQLite", "BenchSupport"], path: "Benchmarks/ReindexBench"),

        .plugin(
            name: "BundleExtension",
            capability: .command(
                intent: .custom(verb: "bundle-extension", description: "Builds an extension product and writes a reindex bundle")
            )
        ),

        .testTarget(name: "ReindexProtocolTests", dependencies: ["ReindexProtocol"]),
        .testTarget(name: "ReindexExtensionTests", dependencies: ["ReindexExtension", "ReindexHost"]),
        .testTarget(name: "ReindexHostTests", dependencies: ["ReindexHost", "ReindexQuery", "CSQLite", "CLibPQ"]),
    ]
)
