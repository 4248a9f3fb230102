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
}
