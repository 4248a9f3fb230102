import Foundation
import ReindexProtocol
import ReindexStore
import XCTest

/// Bundles made from the example extensions (`Examples/`) as they were built beside the test
/// bundle, and their manifests.
extension TestSupport {
    /// Makes `root/<directoryName>` a bundle of an example: the built executable in `bin/`, the
    /// data files of `Examples/<example>/Sources/<product>/Bundle/`, and that folder's manifest
    /// template with `change` applied to it. Returns the bundle directory.
    @discardableResult
    public static func makeExampleBundle(
        example: String, product: String, in root: String, directoryName: String? = nil,
        change: (inout [(String, JSONValue)]) -> Void = { _ in }
    ) throws -> String {
        let executable = try TestSupport.product(product)
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
    public static func writeManifest(of directory: String, from template: String, change: (inout [(String, JSONValue)]) -> Void) throws {
        guard case .object(var members)? = try? JSONParser.parse(text: read(template) ?? "") else {
            throw XCTSkip("the manifest template \(template) is not a JSON object")
        }
        change(&members)
        try write(JSONWriter.string(.object(members)) + "\n", to: "\(directory)/manifest.json")
    }

    /// Sets (or replaces) a top-level manifest key.
    public static func set(_ key: String, _ value: JSONValue, in members: inout [(String, JSONValue)]) {
        members.removeAll { $0.0 == key }
        members.append((key, value))
    }

    /// A manifest `environment` object.
    public static func environmentJSON(_ variables: [String: String]) -> JSONValue {
        .object(variables.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) })
    }
}

/// One test's private host: an extensions directory and an index in a scratch directory, and the
/// built `reindex` run against them with an environment that reaches nothing outside it.
public struct TestHost {
    public let scratch: String
    public var extensions: String { "\(scratch)/extensions" }
    public var indexPath: String { "\(scratch)/index/index.sqlite" }
    /// Where the host writes a bundle's log when `--index` is given: beside the index.
    public func logPath(_ bundleIdentifier: String) -> String { "\(scratch)/index/logs/\(bundleIdentifier).log" }

    public init(test: XCTestCase) throws {
        scratch = try TestSupport.makeScratchDirectory(for: test)
        try FileManager.default.createDirectory(atPath: "\(scratch)/extensions", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(scratch)/index", withIntermediateDirectories: true)
    }

    public var environment: [String: String] { TestSupport.commandEnvironment(scratch: scratch) }

    /// `reindex --index … --extensions-path … ARGUMENTS`.
    public func reindex(_ arguments: [String], stdin: String? = nil, timeout: Double = 60) throws -> TestSupport.CommandResult {
        try TestSupport.run(try TestSupport.product("reindex"), ["--index", indexPath, "--extensions-path", extensions] + arguments,
                            scratch: scratch, environment: environment, stdin: stdin, timeout: timeout)
    }

    /// `reindex --json ARGUMENTS`, its stdout parsed.
    public func reindexJSON(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> (TestSupport.CommandResult, JSONValue) {
        let result = try reindex(["--json"] + arguments)
        let json = try XCTUnwrap(result.json, "not JSON: \(result)", file: file, line: line)
        return (result, json)
    }

    /// The uniqueIdentifiers `reindex search QUERY` returns.
    public func search(_ query: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let (result, json) = try reindexJSON(["search", query, "--limit", "100"], file: file, line: line)
        XCTAssertEqual(result.status, 0, "\(result)", file: file, line: line)
        return (json["results"]?.arrayValue ?? []).compactMap { $0["uniqueIdentifier"]?.stringValue }
    }

    /// The bundle's live items, read from the SQLite file.
    public func items(_ bundle: String, domain: String? = nil) throws -> [SearchResult] {
        let store = try IndexStore.open(path: indexPath)
        return try store.items(bundle: bundle, domain: domain, limit: 100_000)
    }
}
