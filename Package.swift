// swift-tools-version: 6.1
import PackageDescription

/// Linker flags of an executable that carries the Swift runtime and Foundation in itself.
///
/// `-no-pie`: the executable's own image is loaded where it was linked, so the dynamic linker
/// has none of its 75,000 relative relocations to apply (71,000 of them static Foundation's
/// metadata) and no page of them to copy: 0.8 ms of a 3.6 ms start (BENCHMARKS.md, "Start").
/// Shared libraries, stack and heap stay at random addresses; only the executable's code and
/// data are at fixed ones, as in Go's default Linux builds.
let staticSwiftRuntime = [
    "-static-stdlib", "-use-ld=lld", "-Xlinker", "-no-pie",
    "-lCoreFoundation", "-l_FoundationICU", "-l_FoundationCShims", "-l_FoundationCollections", "-lswiftSynchronization",
]

let package = Package(
    name: "ReindexHost",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "reindex", targets: ["reindex"]),
        .library(name: "ReindexProtocol", targets: ["ReindexProtocol"]),
        .library(name: "ReindexExtension", targets: ["ReindexExtension"]),
        // For an extension's unit tests: run its handlers on a RecordingIndex, without the host.
        .library(name: "ReindexExtensionTesting", targets: ["ReindexExtensionTesting"]),
        .library(name: "ReindexHost", targets: ["ReindexHost"]),
        // For applications that search an index: the query language over pages as an AsyncSequence.
        .library(name: "ReindexQuery", targets: ["ReindexQuery"]),
        .executable(name: "ColleaguesIndexer", targets: ["ColleaguesIndexer"]),
        .executable(name: "ShowTimesIndexer", targets: ["ShowTimesIndexer"]),
        .executable(name: "NotesApp", targets: ["NotesApp"]),
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
        // libpq's headers, and its functions loaded on first use (dlopen): a program that never
        // opens a PostgreSQL index never loads libpq (nor Kerberos, LDAP and GnuTLS with it).
        // Debian: libpq-dev (headers) and libpq5; Homebrew: libpq.
        .target(
            name: "CLibPQ",
            cSettings: [.unsafeFlags(["-I/opt/homebrew/opt/libpq/include", "-I/usr/local/opt/libpq/include"], .when(platforms: [.macOS]))],
            linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]
        ),
        // sd-bus's headers (libsystemd-dev), and its functions loaded on first use (dlopen), for
        // the desktop's search providers only: no other command loads libsystemd.
        .target(name: "CSDBus", linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        .target(name: "CReindexSystem"),

        // System primitives, each written once (package access only): the C library import, the
        // EINTR retry, the wake pipe, the lock, the clocks, the file-system calls.
        .target(name: "ReindexSystem", dependencies: ["CReindexSystem"]),

        // Wire types and framing, shared by the host and the SDK. Foundation only, and no other
        // module of the package: the fuzzers compile its sources alone.
        .target(name: "ReindexProtocol"),

        // The SDK extension authors import.
        .target(name: "ReindexExtension", dependencies: ["ReindexProtocol", "ReindexSystem", "CReindexSystem"]),

        // The SDK's test entry point: `handler.reindexAll(on: RecordingIndex())` in an author's tests.
        .target(name: "ReindexExtensionTesting", dependencies: ["ReindexExtension", "ReindexProtocol", "ReindexSystem"]),

        // The index: SQLite and PostgreSQL stores, staged writes, the request queue, the query language.
        .target(name: "ReindexStore", dependencies: ["ReindexProtocol", "ReindexSystem", "CSQLite", "CLibPQ"]),

        // The engine: discovery, supervisor, scheduler (and the store, re-exported).
        .target(name: "ReindexHost", dependencies: ["ReindexStore", "ReindexProtocol", "ReindexSystem", "CReindexSystem"]),

        // The application search API: the store and the query language, nothing of the
        // supervisor or the command line.
        .target(name: "ReindexQuery", dependencies: ["ReindexStore", "ReindexProtocol"]),

        // Desktop search over D-Bus (GNOME Shell's SearchProvider2, KRunner's krunner1) and opening
        // a picked item. The only module that links libsystemd, so ReindexQuery's users never do.
        .target(name: "ReindexDesktop", dependencies: ["ReindexHost", "ReindexStore", "ReindexProtocol", "ReindexSystem", "CSDBus"]),

        // The command line: the argument parser, the terminal, one file per command, `reindex new`.
        .target(name: "ReindexCommandLine", dependencies: ["ReindexHost", "ReindexStore", "ReindexProtocol", "ReindexSystem", "CReindexSystem", "ReindexDesktop"]),

        // The executable: `main.swift` only.
        // Release builds on Linux link the Swift runtime, Foundation and Dispatch statically: the
        // dynamic linker's symbol lookups over a dozen Swift libraries were most of a start (about
        // twice a start's time; see BENCHMARKS.md, "Start"). The modules are compiled against the
        // shared libraries, whose link lines lack Foundation's own static dependencies, named here.
        // lld, the toolchain's linker, because gold warns about a mktemp inside static Foundation.
        .executableTarget(
            name: "reindex",
            dependencies: ["ReindexCommandLine"],
            linkerSettings: [.unsafeFlags(staticSwiftRuntime, .when(platforms: [.linux], configuration: .release))]
        ),

        // Examples (also used by the README, the tests and the benchmark).
        .executableTarget(
            name: "ColleaguesIndexer",
            dependencies: ["ReindexExtension"],
            path: "Examples/Colleagues/Sources/ColleaguesIndexer",
            exclude: ["Bundle"],
            linkerSettings: [.unsafeFlags(staticSwiftRuntime, .when(platforms: [.linux], configuration: .release))]
        ),
        .executableTarget(
            name: "ShowTimesIndexer",
            dependencies: ["ReindexExtension"],
            path: "Examples/ShowTimes/Sources/ShowTimesIndexer",
            exclude: ["Bundle"],
            linkerSettings: [.unsafeFlags(staticSwiftRuntime, .when(platforms: [.linux], configuration: .release))]
        ),
        // An application that indexes its own content (LocalIndex, batches with client state).
        .executableTarget(name: "NotesApp", dependencies: ["ReindexHost"], path: "Examples/Notes/Sources/NotesApp"),

        // The benchmark (`swift run -c release reindex-bench`) and its extension.
        .target(name: "BenchSupport", dependencies: ["ReindexProtocol"], path: "Benchmarks/BenchSupport"),
        .executableTarget(name: "BenchIndexer", dependencies: ["ReindexExtension", "BenchSupport"], path: "Benchmarks/BenchIndexer",
                          linkerSettings: [.unsafeFlags(staticSwiftRuntime, .when(platforms: [.linux], configuration: .release))]),
        .executableTarget(name: "ReindexBench", dependencies: ["ReindexHost", "ReindexStore", "ReindexSystem", "CSQLite", "CLibPQ", "CSDBus", "BenchSupport", "PostgresHarness"], path: "Benchmarks/ReindexBench"),

        .plugin(
            name: "BundleExtension",
            capability: .command(
                intent: .custom(verb: "bundle-extension", description: "Builds an extension product and writes a reindex bundle")
            )
        ),

        // A private PostgreSQL server (initdb, pg_ctl) for the tests and the benchmark.
        .target(name: "PostgresHarness", path: "Tests/PostgresHarness"),

        // What the test targets share: scratch directories, fixture and example bundles, the built
        // products run as real processes (XCTest is imported there), the PostgreSQL server.
        .target(
            name: "ReindexTestSupport",
            dependencies: ["ReindexHost", "ReindexStore", "ReindexProtocol", "ReindexSystem", "PostgresHarness"],
            path: "Tests/ReindexTestSupport"
        ),

        .testTarget(name: "ReindexProtocolTests", dependencies: ["ReindexProtocol"]),
        .testTarget(name: "ReindexExtensionTestingTests", dependencies: ["ReindexExtensionTesting", "ReindexExtension"]),
        .testTarget(name: "ReindexExtensionTests", dependencies: ["ReindexExtension", "ReindexHost", "ReindexSystem", "ReindexTestSupport"]),
        // A test target per module, named after it: a file belongs where what it exercises lives
        // (a file that drives the `reindex` command belongs to ReindexCommandLineTests).
        .testTarget(name: "ReindexQueryTests", dependencies: ["ReindexQuery", "ReindexTestSupport"]),
        .testTarget(name: "ReindexStoreTests", dependencies: ["ReindexStore", "ReindexHost", "ReindexQuery", "ReindexProtocol", "ReindexSystem", "ReindexTestSupport"]),
        .testTarget(name: "ReindexHostTests", dependencies: ["ReindexHost", "ReindexStore", "ReindexCommandLine", "ReindexProtocol", "ReindexSystem", "ReindexTestSupport"]),
        .testTarget(name: "ReindexCommandLineTests", dependencies: ["ReindexCommandLine", "ReindexHost", "ReindexStore", "ReindexProtocol", "ReindexSystem", "ReindexTestSupport"]),
        .testTarget(name: "ReindexDesktopTests", dependencies: ["ReindexDesktop", "ReindexStore", "ReindexProtocol", "CSDBus", "ReindexTestSupport"]),
    ]
)
