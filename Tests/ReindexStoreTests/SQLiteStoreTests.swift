import Foundation
@testable import ReindexHost
import ReindexSystem
@testable import ReindexStore
import ReindexProtocol
import ReindexTestSupport
import XCTest

/// What only the SQLite index has: a file that can be damaged, truncated or left by a newer
/// version, SQLite's write lock, its undo of a batch in short steps, and the direct-indexing API
/// over a path. Every other behaviour of the store is in `StoreTests`, against both indexes.
final class SQLiteStoreTests: XCTestCase, @unchecked Sendable {
    private var scratch = ""
    private var databasePath: String { "\(scratch)/index.sqlite" }

    override func setUpWithError() throws {
        scratch = try TestSupport.makeScratchDirectory(for: self)
        signal(SIGPIPE, SIG_IGN)
    }

    private func open() throws -> IndexStore {
        try IndexStore.open(path: databasePath)
    }

    private typealias T = TestSupport

    // MARK: Staged writes

    // SQLite only: a SQLite batch writes its rows into the tables and undoes them itself, in steps;
    // a PostgreSQL batch is one transaction the server rolls back.
    func testALargeUncommittedBatchIsDiscardedInShortStepsAndFinishedByTheNextAttempt() throws {
        let store = try open()
        try T.seed(store, bundle: "com.example.zoo", [T.item("old", title: "Obsolete Okapi")])
        let first = try StagedWrites(store: store, bundleIdentifier: "com.example.zoo", scope: .replacement(generation: 9))
        try first.put(T.item("kept", title: "Committed Kudu"))
        try first.commitBatch()
        // The committed row is replaced by the batch that fails, then thousands more are written.
        try first.put(T.item("kept", title: "Replaced Kudu"))
        for n in 0..<12_000 { try first.put(T.item("u.\(n)", title: "Uncommitted Urial \(n)")) }
        try first.flush()
        // A discard with no time left stops after its first step; the rest stays invisible.
        XCTAssertFalse(try store.discardUncommitted(bundle: "com.example.zoo", request: 9, committedBatch: 1, budget: 0))
        XCTAssertEqual(try T.identifiers(store, bundle: "com.example.zoo"), ["old"])
        XCTAssertGreaterThan(try store.connection.scalar("SELECT count(*) FROM items WHERE gen = 9") ?? 0, 1000)

        let next = try StagedWrites(store: store, bundleIdentifier: "com.example.zoo", scope: .replacement(generation: 9))
        XCTAssertEqual(try store.connection.scalar("SELECT count(*) FROM items WHERE gen = 9"), 1, "only the committed row is left")
        try next.put(T.item("new", title: "Next Nilgai"))
        _ = try next.acknowledge()
        XCTAssertEqual(try T.identifiers(store, bundle: "com.example.zoo"), ["kept", "new"])
        XCTAssertEqual(try store.search("kudu").first?.title, "Committed Kudu", "the committed version is restored")
        XCTAssertEqual(try store.integrityCheck(), [])
    }

    // MARK: Crashes and damaged files

    // SQLite only: it takes the file's write lock (BEGIN IMMEDIATE) while the killed command waits for input.
    func testSIGKILLDuringALargePutLeavesTheIndexConsistent() throws {
        let bundle = "com.example.put"
        let environment = T.commandEnvironment(scratch: scratch)
        let seeded = try T.runReindex(["--index", databasePath, "put", bundle], scratch: scratch, environment: environment, stdin: """
            {"uniqueIdentifier":"seed.1","attributes":{"title":"Lighthouse keeper"}}
            {"uniqueIdentifier":"seed.2","attributes":{"title":"Harbour master"}}

            """)
        XCTAssertEqual(seeded.status, 0, "\(seeded)")

        let command = try T.RunningCommand(arguments: ["--index", databasePath, "put", bundle], environment: environment,
                                           scratch: scratch, feedsStdin: true)
        let padding = String(repeating: "lorem ipsum ", count: 20)
        var lines = ""
        for n in 1...2500 {
            lines += #"{"uniqueIdentifier":"bulk.\#(n)","attributes":{"title":"Bulk lighthouse \#(n)","textContent":"\#(padding)"}}"# + "\n"
        }
        // Far more than a pipe holds: when this write returns the command has read (and staged)
        // most of it, and it is waiting for more.
        XCTAssertGreaterThan(lines.utf8.count, 512 << 10)
        command.stdin!.fileHandleForWriting.write(Data(lines.utf8))

        // While it waits for input it holds no write transaction: another writer gets the lock
        // (waiting at most for one short group commit).
        let probe = try SQLiteConnection(path: databasePath)
        probe.setBusyTimeout(milliseconds: 10_000)
        try probe.execute("BEGIN IMMEDIATE")
        try probe.execute("ROLLBACK")

        kill(command.process.processIdentifier, SIGKILL)
        let result = command.finish(timeout: 30)
        try? command.stdin!.fileHandleForWriting.close()
        XCTAssertTrue(result.signaled, "\(result)")
        XCTAssertEqual(result.status, SIGKILL)

        let store = try open()
        XCTAssertNil(store.openReport.lostReason)
        XCTAssertEqual(try store.integrityCheck(), [])
        XCTAssertEqual(try T.identifiers(store, bundle: bundle), ["seed.1", "seed.2"])
        XCTAssertEqual(try store.search("lighthouse").map(\.uniqueIdentifier), ["seed.1"])
        XCTAssertEqual(try store.search("bulk").count, 0)
        // And the index takes writes again.
        try T.seed(store, bundle: bundle, [T.item("after", title: "After the crash")])
        XCTAssertEqual(try store.itemCount(bundle: bundle), 3)
    }

    // SQLite only: a truncated index file, its WAL checkpointed at close.
    func testTruncatedDatabaseIsMovedAsideAndReported() throws {
        do {
            let store = try open()
            try T.seed(store, bundle: "com.example.alpha", (1...300).map {
                T.item("t.\($0)", title: "Truncation test \($0)", description: String(repeating: "filler text ", count: 30))
            })
        }
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: databasePath)[.size] as? Int)
        XCTAssertGreaterThan(size, 64 << 10)
        let walSize = (try? FileManager.default.attributesOfItem(atPath: databasePath + "-wal"))?[.size] as? Int ?? 0
        XCTAssertEqual(walSize, 0, "closing the store should have checkpointed the WAL into the database file")
        XCTAssertEqual(truncate(databasePath, off_t(size / 2)), 0)

        let store = try open()
        let report = store.openReport
        let reason = try XCTUnwrap(report.lostReason, "a truncated database was not detected")
        XCTAssertTrue(reason.contains("truncated"), reason)
        let aside = try XCTUnwrap(report.movedAsideTo)
        XCTAssertTrue(aside.contains(".corrupt-"), aside)
        XCTAssertTrue(FileManager.default.fileExists(atPath: aside))
        XCTAssertEqual((try FileManager.default.attributesOfItem(atPath: aside)[.size] as? Int), size / 2)
        XCTAssertTrue(report.created)
        // The fresh index is empty, healthy and usable.
        XCTAssertEqual(try store.itemCount(bundle: "com.example.alpha"), 0)
        XCTAssertEqual(try store.integrityCheck(), [])
        try T.seed(store, bundle: "com.example.alpha", [T.item("new", title: "Fresh start")])
        XCTAssertEqual(try store.search("fresh").count, 1)
    }

    /// Makes an index at `databasePath` and overwrites the start of its header with `prefix`:
    /// an index of ours, damaged beyond SQLite's reading.
    private func makeDamagedIndex(_ prefix: String) throws {
        do { try T.seed(try open(), bundle: "com.example.alpha", [T.item("a", title: "Alpha")]) }
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: databasePath))
        try handle.write(contentsOf: Data(prefix.utf8))
        try handle.close()
    }

    // SQLite only: an index of ours whose header was overwritten.
    func testAnIndexWithADestroyedHeaderIsMovedAsideAndReported() throws {
        try makeDamagedIndex(String(repeating: "garbage ", count: 13))
        let before = try XCTUnwrap(FileManager.default.contents(atPath: databasePath))
        let store = try open()
        let reason = try XCTUnwrap(store.openReport.lostReason, "a damaged index was not detected")
        XCTAssertTrue(reason.contains("not a SQLite database"), reason)
        let aside = try XCTUnwrap(store.openReport.movedAsideTo)
        XCTAssertTrue(aside.contains(".corrupt-"), aside)
        XCTAssertEqual(FileManager.default.contents(atPath: aside), before, "the damaged file must be kept as it was")
        XCTAssertEqual(try store.integrityCheck(), [])
        XCTAssertEqual(try store.requests(state: .pending), [])
    }

    // SQLite only: a file that is not an index of ours is never moved, replaced or written.
    func testAFileThatIsNotAnIndexIsRefusedAndLeftAlone() throws {
        var bytes = [UInt8]()
        var x: UInt32 = 12345
        for _ in 0..<8192 { x = x &* 1_103_515_245 &+ 12345; bytes.append(UInt8(truncatingIfNeeded: x >> 16)) }
        let foreign: [(String, Data, String)] = [
            ("README.md", Data("# A project\n\nIts readme.\n".utf8), "a text file beginning \"# A project\""),
            ("noise.bin", Data(bytes), "binary data of 8192 bytes"),
        ]
        for (name, contents, what) in foreign {
            let path = "\(scratch)/\(name)"
            try contents.write(to: URL(fileURLWithPath: path))
            XCTAssertThrowsError(try IndexStore.open(path: path)) { error in
                XCTAssertEqual((error as? ReindexError)?.code.exitCode, 74, "\(error)")
                XCTAssertTrue("\(error)".contains("\(path): not a reindex index (\(what)"), "\(error)")
            }
            XCTAssertThrowsError(try IndexStore.erase(path: path))
            XCTAssertEqual(FileManager.default.contents(atPath: path), contents, "\(name) must be left as it was")
        }
        // Another program's SQLite database.
        let other = "\(scratch)/other.db"
        do {
            let connection = try SQLiteConnection(path: other)
            try connection.execute("CREATE TABLE notes(body TEXT); INSERT INTO notes VALUES('keep me')")
        }
        let before = FileManager.default.contents(atPath: other)
        XCTAssertThrowsError(try IndexStore.open(path: other)) { error in
            XCTAssertTrue("\(error)".contains("a SQLite database of another program, with the tables notes"), "\(error)")
        }
        XCTAssertEqual(FileManager.default.contents(atPath: other), before)
        // A directory.
        XCTAssertThrowsError(try IndexStore.open(path: scratch)) { error in
            XCTAssertTrue("\(error)".contains("it is a directory"), "\(error)")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: scratch)
        XCTAssertFalse(names.contains { $0.contains(".corrupt-") || $0.hasSuffix("-wal") }, "\(names)")
    }

    // SQLite only: a missing index is not created by a reader.
    func testOpeningWithoutCreateNamesTheMissingPathAndCreatesNothing() throws {
        let path = "\(scratch)/not/there/index.sqlite"
        XCTAssertThrowsError(try IndexStore.open(path: path, create: false)) { error in
            XCTAssertEqual((error as? ReindexError)?.code.exitCode, 66, "\(error)")
            XCTAssertTrue("\(error)".contains(path), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(scratch)/not"))
    }

    // SQLite only: damaged index files moved aside.
    func testEveryDamagedFileIsKeptEvenWhenTwoAreMovedAsideInOneSecond() throws {
        try makeDamagedIndex("first damaged file\n")
        let first = try XCTUnwrap(try open().openReport.movedAsideTo)
        try makeDamagedIndex("second damaged file\n")
        let second = try XCTUnwrap(try open().openReport.movedAsideTo)
        let kept = try FileManager.default.contentsOfDirectory(atPath: scratch).filter { $0.contains(".corrupt-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }
        XCTAssertNotEqual(first, second)
        XCTAssertEqual(kept.count, 2, "\(kept)")
        XCTAssertEqual(T.read(first)?.hasPrefix("first damaged file\n"), true)
        XCTAssertEqual(T.read(second)?.hasPrefix("second damaged file\n"), true)
    }

    // (The file's user_version; PostgresStoreTests has the schema_version table's.)
    // SQLite only: the file's user_version (PostgreSQL's schema_version table: PostgresStoreTests).
    func testAnIndexFromANewerSchemaIsRefusedAndLeftAlone() throws {
        do { try T.seed(try open(), bundle: "com.example.alpha", [T.item("a", title: "Alpha")]) }
        do {
            let connection = try SQLiteConnection(path: databasePath)
            try connection.execute("PRAGMA user_version = 99")
        }
        XCTAssertThrowsError(try open()) { error in
            XCTAssertTrue("\(error)".contains("newer reindex"), "\(error)")
        }
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: scratch).allSatisfy { !$0.contains(".corrupt-") },
                      "an index from a newer version must not be moved aside as if it were damaged")
    }

    // SQLite only: damaged pages of the file and PRAGMA integrity_check.
    func testDamagedPagesAreDetectedByOpenOrByTheIntegrityCheck() throws {
        do {
            try T.seed(try open(), bundle: "com.example.alpha", (1...300).map {
                T.item("p.\($0)", title: "Page damage \($0)", description: String(repeating: "filler text ", count: 30))
            })
        }
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: databasePath))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size / 2)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: Int(size / 4)))
        try handle.close()

        let store = try open()
        if store.openReport.lostReason != nil {
            XCTAssertTrue(store.openReport.movedAsideTo?.contains(".corrupt-") ?? false)
            return
        }
        // Not noticed at open (only the header and two tables are touched there): the integrity
        // check must report it, as a list of problems ("an empty list means healthy").
        let problems: [String]
        do throws(StoreError) {
            problems = try store.integrityCheck()
        } catch {
            XCTAssertEqual(error.code, .damaged, "\(error)")
            XCTFail("""
                Regression (was a bug): Sources/ReindexStore/SQLite/IndexStore.swift integrityCheck(quick:): on an index whose pages are \
                damaged (a good index with its middle quarter overwritten), PRAGMA integrity_check fails with \
                SQLITE_CORRUPT and integrityCheck throws it instead of returning it as a problem; so 'reindex check' \
                exits 70 ("error: PRAGMA integrity_check: database disk image is malformed") instead of 65 with \
                "the index … is damaged; run 'reindex reset'". Expected: [the corruption message], actual: throws \(error).
                """)
            return
        }
        XCTAssertFalse(problems.isEmpty, "damaged pages were noticed neither at open nor by the integrity check")
    }

    // SQLite only: the open report of a file (lost, moved aside, created).
    func testHealthyDatabaseIsNotReportedLost() throws {
        do { try T.seed(try open(), bundle: "com.example.alpha", [T.item("a", title: "Alpha")]) }
        let store = try open()
        XCTAssertNil(store.openReport.lostReason)
        XCTAssertNil(store.openReport.movedAsideTo)
        XCTAssertFalse(store.openReport.created)
        XCTAssertEqual(try store.itemCount(bundle: "com.example.alpha"), 1)
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: scratch).allSatisfy { !$0.contains(".corrupt-") })
    }
}
