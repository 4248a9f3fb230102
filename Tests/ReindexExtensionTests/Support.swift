import Foundation
import ReindexHost
import ReindexSystem
import ReindexStore
import ReindexProtocol
import XCTest
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif

/// The few helpers the SDK's tests need (the host's `TestSupport` lives in another test target):
/// a scratch directory, bundles made from the example extensions as they were built beside this
/// test bundle, and the built `reindex` command run as a real process. No mocks.
enum Support {
    /// The package's root directory, found from this source file.
    static let packageRoot: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// This test process's executable (the `.xctest` binary on Linux).
    static let testExecutable: String = {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return path }
        return Bundle.main.executablePath ?? CommandLine.arguments[0]
    }()

    /// The directory the products (`reindex`, `ColleaguesIndexer`, `ShowTimesIndexer`) were built into.
    static let productsDirectory: String = {
        let bundleURL = Bundle(for: SupportAnchor.self).bundleURL
        let candidates = [
            bundleURL.deletingLastPathComponent().path,
            bundleURL.path,
            URL(fileURLWithPath: testExecutable).deletingLastPathComponent().path,
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: "\($0)/reindex") } ?? candidates[0]
    }()

    /// A built product's path, or a skip when it was not built (`swift build --build-tests` builds it).
    static func product(_ name: String) throws -> String {
        let path = "\(productsDirectory)/\(name)"
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw XCTSkip("\(name) is not built beside the tests (looked at \(path)); run swift build --build-tests first")
        }
        return path
    }

    /// A fresh directory under the system's temporary directory, removed when `test` ends.
    static func makeScratchDirectory(for test: XCTestCase) throws -> String {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(base)/reindex-sdk-test-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            return mkdtemp(base) != nil
        }
        guard made else { throw XCTSkip("cannot create a scratch directory under \(base): errno \(errno)") }
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(truncatingIfNeeded: $0) }, as: UTF8.self)
        test.addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    static func read(_ path: String) -> String {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    static func write(_ text: String, to path: String, mode: Int = 0o644) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    // MARK: Bundles of the examples

    /// Makes `root/<directoryName>` a bundle of an example: the built executable in `bin/`, the
    /// data files of `Examples/<example>/Sources/<product>/Bundle/`, and that folder's manifest
    /// template with `change` applied to it. Returns the bundle directory.
    @discardableResult
    static func makeExampleBundle(
        example: String, product: String, in root: String, directoryName: String? = nil,
        change: (inout [(String, JSONValue)]) -> Void = { _ in }
    ) throws -> String {
        let executable = try Support.product(product)
        let directory = "\(root)/\(directoryName ?? product)"
        let template = "\(packageRoot)/Examples/\(example)/Sources/\(product)/Bundle"
        let files = FileManager.default
        try files.createDirectory(atPath: "\(directory)/bin", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        for name in try files.contentsOfDirectory(atPath: template) where name != "manifest.json" {
            try? files.removeItem(atPath: "\(directory)/\(name)")
            try files.copyItem(atPath: "\(template)/\(name)", toPath: "\(directory)/\(name)")
        }
        try? files.removeItem(atPath: "\(directory)/bin/\(product)")
        try files.copyItem(atPath: executable, toPath: "\(directory)/bin/\(product)")
        try files.setAttributes([.posixPermissions: 0o755], ofItemAtPath: "\(directory)/bin/\(product)")
        try writeManifest(of: directory, from: "\(template)/manifest.json", change: change)
        return directory
    }

    /// Rewrites `directory/manifest.json` from a template file with `change` applied.
    static func writeManifest(of directory: String, from template: String, change: (inout [(String, JSONValue)]) -> Void) throws {
        guard case .object(var members)? = try? JSONParser.parse(text: read(template)) else {
            throw XCTSkip("the manifest template \(template) is not a JSON object")
        }
        change(&members)
        try write(JSONWriter.string(.object(members)) + "\n", to: "\(directory)/manifest.json")
    }

    /// Sets (or replaces) a top-level manifest key.
    static func set(_ key: String, _ value: JSONValue, in members: inout [(String, JSONValue)]) {
        members.removeAll { $0.0 == key }
        members.append((key, value))
    }

    /// A manifest `environment` object.
    static func environmentJSON(_ variables: [String: String]) -> JSONValue {
        .object(variables.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) })
    }

    // MARK: The reindex command

    /// How one run of a command ended.
    struct CommandResult: CustomStringConvertible {
        var status: Int32
        var stdout: String
        var stderr: String
        var timedOut: Bool
        var description: String { "status \(status)\(timedOut ? " (timed out)" : "")\nstdout: \(stdout)\nstderr: \(stderr)" }

        /// stdout parsed as one JSON value (`--json`).
        var json: JSONValue? { try? JSONParser.parse(text: stdout) }
    }

    /// Runs `executable ARGUMENTS` to completion (killing it after `timeout` seconds, a limit on
    /// a hung run, not an assertion); stdout and stderr go through real files in `scratch`.
    static func run(
        _ executable: String, _ arguments: [String], scratch: String, environment: [String: String],
        stdin: String? = nil, timeout: Double = 60
    ) throws -> CommandResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        process.currentDirectoryURL = URL(fileURLWithPath: scratch)
        let stamp = UUID().uuidString
        let outPath = "\(scratch)/command-\(stamp).out", errPath = "\(scratch)/command-\(stamp).err"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        defer { try? out.close(); try? err.close() }
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        process.standardInput = stdin == nil ? FileHandle.nullDevice : input
        try process.run()
        if let stdin {
            input.fileHandleForWriting.write(Data(stdin.utf8))
            try input.fileHandleForWriting.close()
        }
        let deadline = Date().addingTimeInterval(timeout)
        var timedOut = false
        while process.isRunning {
            if Date() >= deadline { timedOut = true; kill(process.processIdentifier, SIGKILL); break }
            usleep(10_000)
        }
        process.waitUntilExit()
        return CommandResult(status: process.terminationStatus, stdout: read(outPath), stderr: read(errPath), timedOut: timedOut)
    }
}

/// A class to find the test bundle by (`Bundle(for:)`).
final class SupportAnchor {}

/// One test's private host: an extensions directory and an index in a scratch directory, and the
/// built `reindex` run against them with an environment that reaches nothing outside it.
struct Host {
    let scratch: String
    var extensions: String { "\(scratch)/extensions" }
    var indexPath: String { "\(scratch)/index/index.sqlite" }
    /// Where the host writes a bundle's log when `--index` is given: beside the index.
    func logPath(_ bundleIdentifier: String) -> String { "\(scratch)/index/logs/\(bundleIdentifier).log" }

    init(test: XCTestCase) throws {
        scratch = try Support.makeScratchDirectory(for: test)
        try FileManager.default.createDirectory(atPath: "\(scratch)/extensions", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(scratch)/index", withIntermediateDirectories: true)
    }

    var environment: [String: String] {
        [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin",
            "HOME": "\(scratch)/home",
            "XDG_DATA_HOME": "\(scratch)/xdg-data",
            "XDG_STATE_HOME": "\(scratch)/xdg-state",
            "XDG_DATA_DIRS": "\(scratch)/xdg-system",
            "LANG": "C.UTF-8",
        ]
    }

    /// `reindex --index … --extensions-path … ARGUMENTS`.
    func reindex(_ arguments: [String], stdin: String? = nil, timeout: Double = 60) throws -> Support.CommandResult {
        try Support.run(try Support.product("reindex"), ["--index", indexPath, "--extensions-path", extensions] + arguments,
                        scratch: scratch, environment: environment, stdin: stdin, timeout: timeout)
    }

    /// `reindex --json ARGUMENTS`, its stdout parsed.
    func reindexJSON(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> (Support.CommandResult, JSONValue) {
        let result = try reindex(["--json"] + arguments)
        let json = try XCTUnwrap(result.json, "not JSON: \(result)", file: file, line: line)
        return (result, json)
    }

    /// The uniqueIdentifiers `reindex search QUERY` returns.
    func search(_ query: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let (result, json) = try reindexJSON(["search", query, "--limit", "100"], file: file, line: line)
        XCTAssertEqual(result.status, 0, "\(result)", file: file, line: line)
        return (json["results"]?.arrayValue ?? []).compactMap { $0["uniqueIdentifier"]?.stringValue }
    }

    /// The bundle's live items, read from the SQLite file.
    func items(_ bundle: String, domain: String? = nil) throws -> [SearchResult] {
        let store = try IndexStore.open(path: indexPath)
        return try store.items(bundle: bundle, domain: domain, limit: 100_000)
    }
}
