import Foundation
import ReindexTestSupport
import XCTest
@testable import ReindexStore

/// The index path is never a weapon: a mistyped `--index` neither destroys a file nor creates
/// an empty index that answers "No items match". Through the real command.
final class IndexPathTests: XCTestCase {
    private typealias T = TestSupport
    private var scratch = ""

    override func setUpWithError() throws {
        scratch = try T.makeScratchDirectory(for: self)
        try FileManager.default.createDirectory(atPath: "\(scratch)/extensions", withIntermediateDirectories: true)
    }

    private func reindex(_ arguments: [String], stdin: String? = nil) throws -> T.CommandResult {
        try T.runReindex(["--extensions-path", "\(scratch)/extensions"] + arguments, scratch: scratch, stdin: stdin)
    }

    func testNoCommandChangesAFileThatIsNotAnIndex() throws {
        _ = try T.makeBundle(T.BundleSpec("com.example.a", executable: "well_behaved.py"), in: "\(scratch)/extensions")
        let readme = "\(scratch)/README.md"
        let text = "# My project\n\nNotes I would hate to lose.\n"
        try T.write(text, to: readme)
        let commands: [[String]] = [
            ["search", "dune"], ["items", "com.example.a"], ["show", "com.example.a", "x"], ["status"], ["check"],
            ["reset"], ["delete", "com.example.a", "--all"], ["run", "com.example.a"],
        ]
        for command in commands {
            let result = try reindex(["--index", readme] + command)
            XCTAssertEqual(result.status, 74, "\(command): \(result)")
            XCTAssertTrue(result.stderr.contains("error: \(readme): not a reindex index (a text file beginning \"# My project\")"), "\(command): \(result)")
        }
        let put = try reindex(["--index", readme, "put", "com.example.a"], stdin: #"{"uniqueIdentifier":"a","attributes":{"title":"A"}}"# + "\n")
        XCTAssertEqual(put.status, 74, "\(put)")
        XCTAssertEqual(T.read(readme), text, "the file is left as it was")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch).filter { $0.hasPrefix("README.md") }, ["README.md"])
    }

    func testReadingCommandsNeverCreateAnIndex() throws {
        let missing = "\(scratch)/typo/index.sqlite"
        for command in [["search", "dune"], ["items", "com.example.a"], ["show", "com.example.a", "x"], ["status"], ["check"]] {
            let result = try reindex(["--index", missing] + command)
            XCTAssertEqual(result.status, 66, "\(command): \(result)")
            XCTAssertTrue(result.stderr.contains("error: \(missing): there is no index here"), "\(command): \(result)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(scratch)/typo"), "not even its directory")
        // A command that writes creates it.
        let put = try reindex(["--index", missing, "put", "com.example.a"], stdin: #"{"uniqueIdentifier":"a","attributes":{"title":"Dune"}}"# + "\n")
        XCTAssertEqual(put.status, 0, "\(put)")
        XCTAssertEqual(try reindex(["--index", missing, "search", "dune"]).status, 0)
    }

    func testCheckFailsWhenItFoundDamageEvenAfterReplacingTheIndex() throws {
        let path = "\(scratch)/index.sqlite"
        let put = try reindex(["--index", path, "put", "com.example.a"], stdin: #"{"uniqueIdentifier":"a","attributes":{"title":"Dune"}}"# + "\n")
        XCTAssertEqual(put.status, 0, "\(put)")
        XCTAssertEqual(try reindex(["--index", path, "check"]).status, 0)
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        try handle.write(contentsOf: Data(String(repeating: "damage ", count: 15).utf8))
        try handle.close()
        let check = try reindex(["--index", path, "check"])
        XCTAssertEqual(check.status, 65, "\(check)")
        XCTAssertTrue(check.stderr.contains("was damaged"), "\(check)")
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: scratch).contains { $0.hasPrefix("index.sqlite.corrupt-") })
        // The fresh index is healthy now.
        XCTAssertEqual(try reindex(["--index", path, "check"]).status, 0)
    }

    /// An index in a directory its reader may not write (one another user keeps, in a shared
    /// read-only place) is searched and checked: SQLite cannot make the shared-memory file its
    /// write-ahead log needs beside it, so the file is read as it is. When the log beside it holds
    /// changes the file lacks, the refusal says why and what to do.
    func testAnIndexInADirectoryTheReaderMayNotWriteIsSearched() throws {
        // Somewhere an unprivileged user can reach (the scratch directory is the test's own).
        let place = "/tmp/reindex-read-only-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let directory = "\(place)/shared"
        let path = "\(directory)/index.sqlite"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        try BundleFixture.chmod(place, 0o755)
        defer {
            try? BundleFixture.chmod(directory, 0o755)
            try? FileManager.default.removeItem(atPath: place)
        }
        let put = try reindex(["--index", path, "put", "com.example.a"], stdin: #"{"uniqueIdentifier":"a","attributes":{"title":"Dune"}}"# + "\n")
        XCTAssertEqual(put.status, 0, "\(put)")
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: directory)), ["index.sqlite"], "a closed index leaves no log")
        try BundleFixture.chmod(path, 0o444)
        try BundleFixture.chmod(directory, 0o555)

        // As root, the one user every directory lets write, read as an unprivileged one.
        func reader(_ arguments: [String]) throws -> T.CommandResult {
            let environment = ["PATH": "/usr/bin:/bin", "HOME": place, "TMPDIR": "/tmp"]
            if getuid() == 0 {
                return try T.run("/sbin/runuser", ["-u", "nobody", "--", T.reindexBinary, "--index", path] + arguments,
                                 scratch: scratch, environment: environment)
            }
            return try T.run(T.reindexBinary, ["--index", path] + arguments, scratch: scratch, environment: environment)
        }
        let search = try reader(["search", "dune"])
        XCTAssertEqual(search.status, 0, "\(search)")
        XCTAssertTrue(search.stdout.contains("Dune"), "\(search)")
        let check = try reader(["check"])
        XCTAssertEqual(check.status, 0, "\(check)")
        XCTAssertTrue(check.stdout.contains("\(path): healthy"), "\(check)")
        XCTAssertTrue(check.stdout.contains("not checked: the full-text index's own integrity check"), "\(check)")
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: directory)), ["index.sqlite"], "nothing was written beside it")

        // A log with changes the file does not hold yet cannot be read without its shared memory.
        try BundleFixture.chmod(directory, 0o755)
        try T.write("changes", to: path + "-wal")
        try BundleFixture.chmod(directory, 0o555)
        let refused = try reader(["search", "dune"])
        XCTAssertEqual(refused.status, 74, "\(refused)")
        XCTAssertTrue(refused.stderr.contains("its write-ahead log \(path)-wal holds changes that are not in the index yet"), "\(refused)")
    }
}
