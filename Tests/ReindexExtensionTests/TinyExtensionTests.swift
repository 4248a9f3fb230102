import ReindexProtocol
import Foundation
import ReindexExtension
import ReindexHost
import ReindexSystem
import ReindexStore
import ReindexTestSupport
import XCTest

/// A tiny SDK extension for what the examples do not exercise. `SearchableIndex` cannot be made
/// outside the SDK, so the probe runs as a real process: this test executable started again
/// (through `tiny-extension.sh`) with only `testTinyExtensionProcessEntryPoint` selected, which
/// hands the protocol pipe to `ExtensionMain.run`.
struct CommitBatchProbe: IndexRequestHandler {
    var extensionName: String { "CommitBatchProbe" }
    var extensionVersion: String { "2.0.0" }

    /// Tries a 251-byte client state, records what the SDK did, then commits a 250-byte one.
    func reindexAll(_ index: SearchableIndex) async throws {
        var outcome = "sent"
        do {
            try await index.commitBatch(clientState: [UInt8](repeating: UInt8(ascii: "a"), count: 251))
        } catch SearchableIndexError.clientStateTooLarge(let size) {
            outcome = "rejected \(size)"
        } catch {
            outcome = "failed: \(error)"
        }
        try await index.put(SearchableItem(uniqueIdentifier: "probe.oversized", attributes: .init(title: outcome)))
        let committed = try await index.commitBatch(clientState: [UInt8](repeating: UInt8(ascii: "b"), count: 250))
        try await index.put(SearchableItem(uniqueIdentifier: "probe.limit", attributes: .init(title: "committed \(committed)")))
    }

    func reindexItems(identifiers: [String], index: SearchableIndex) async throws {}
}

/// An extension whose `init()` prints: the SDK must protect stdout before it runs.
struct PrintsInInit: IndexExtension {
    init() { print("hello from init") }
    func reindexAll(_ index: SearchableIndex) async throws {
        try await index.put(SearchableItem(uniqueIdentifier: "init.1", attributes: .init(title: "Printed in init")))
    }
    func reindexItems(identifiers: [String], index: SearchableIndex) async throws {}
}

/// The early acknowledgement: reindexAll starts an unstructured task and returns; the task puts
/// an item while the next request (a slow reindexItems) is outstanding.
struct ReturnsEarly: IndexRequestHandler {
    func reindexAll(_ index: SearchableIndex) async throws {
        Task {
            try? await Task.sleep(nanoseconds: 100_000_000)
            try? await index.put(SearchableItem(uniqueIdentifier: "late.put", attributes: .init(title: "Too late")))
        }
    }
    func reindexItems(identifiers: [String], index: SearchableIndex) async throws {
        try await Task.sleep(nanoseconds: 600_000_000)
        try await index.put(identifiers.map { SearchableItem(uniqueIdentifier: $0, attributes: .init(title: "Refreshed")) })
    }
}

/// The early acknowledgement while the work is under way: an unstructured task runs the batch
/// loop, and is committing its first batch when reindexAll returns.
struct ReturnsDuringBatches: IndexRequestHandler {
    func reindexAll(_ index: SearchableIndex) async throws {
        Task {
            for n in 1...50 {
                try await index.put(SearchableItem(uniqueIdentifier: "batch.\(n)", attributes: .init(title: "Batch \(n)")))
                try await index.commitBatch(clientState: Array("\(n)".utf8))
            }
        }
    }
    func reindexItems(identifiers: [String], index: SearchableIndex) async throws {}
}

/// An extension whose data is empty on purpose.
struct EmptyOnPurpose: IndexRequestHandler {
    func reindexAll(_ index: SearchableIndex) async throws { index.allowEmpty() }
    func reindexItems(identifiers: [String], index: SearchableIndex) async throws {}
}

final class TinyExtensionTests: XCTestCase {
    private static let role = "REINDEX_SDK_TEST_TINY_EXTENSION"

    /// Not a check of its own: the entry point of the tiny extension process. In a normal test
    /// run the variable is absent and it returns at once.
    func testTinyExtensionProcessEntryPoint() async {
        guard ProcessInfo.processInfo.environment[Self.role] != nil else { return }
        // The launcher pointed descriptor 1 at stderr (for XCTest's banners) and kept the
        // protocol pipe as descriptor 3; give it back to descriptor 1 as an extension has it.
        fflush(nil)
        guard dup2(3, 1) == 1 else { exit(71) }
        close(3)
        switch ProcessInfo.processInfo.environment[Self.role] {
        case "prints-in-init": await PrintsInInit.main()
        case "returns-early": await ExtensionMain.run(ReturnsEarly())
        case "returns-during-batches": await ExtensionMain.run(ReturnsDuringBatches())
        case "empty-on-purpose": await ExtensionMain.run(EmptyOnPurpose())
        default: await ExtensionMain.run(CommitBatchProbe())
        }
    }

    /// A bundle whose executable starts this test process as the tiny extension.
    private func makeTinyBundle(in host: TestHost, mode: String = "1") throws -> String {
        let directory = "\(host.extensions)/tiny"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try TestSupport.write("""
            #!/bin/sh
            exec "$REINDEX_SDK_TEST_EXECUTABLE" "ReindexExtensionTests.TinyExtensionTests/testTinyExtensionProcessEntryPoint" 3>&1 1>&2
            """, to: "\(directory)/tiny-extension.sh", mode: 0o755)
        let manifest: JSONValue = [
            "manifestVersion": 1, "bundleIdentifier": "com.example.sdk-test.tiny", "executable": "tiny-extension.sh",
            "environment": TestSupport.environmentJSON([Self.role: mode, "REINDEX_SDK_TEST_EXECUTABLE": TestSupport.testExecutable]),
            // It runs the test executable, outside its bundle: the sandbox lets it only when declared.
            "sandbox": ["read": [.string(URL(fileURLWithPath: TestSupport.testExecutable).deletingLastPathComponent().path)]],
        ]
        try TestSupport.write(JSONWriter.string(manifest), to: "\(directory)/manifest.json")
        return directory
    }

    func testCommitBatchRejectsAClientStateOver250BytesBeforeSendingIt() throws {
        let host = try TestHost(test: self)
        let directory = try makeTinyBundle(in: host)
        guard case .success(let bundle) = Discovery.load(directory: directory) else { return XCTFail("the tiny bundle is invalid") }
        let store = try IndexStore.open(path: host.indexPath)
        let request = try store.enqueue(bundleIdentifier: bundle.identifier, kind: .reindexAll, identifiers: [], reason: .forced,
                                        maxAttempts: 1, coalesce: false)
        final class Trace { var lines: [(TraceDirection, String)] = [] }
        let trace = Trace()
        var options = SessionOptions()
        options.environment = host.environment
        options.onTrace = { direction, line in trace.lines.append((direction, String(decoding: line, as: UTF8.self))) }
        let runner = RequestRunner(paths: HostPaths(extensionsPath: host.extensions, index: host.indexPath, environment: host.environment))
        let results = runner.run(bundle: bundle, requests: [request], store: store, options: options, logPath: "\(host.scratch)/tiny.log")

        let result = try XCTUnwrap(results.first)
        XCTAssertNil(result.failure, "\(result.failure.map { "\($0.message)" } ?? "")\n\(TestSupport.read("\(host.scratch)/tiny.log") ?? "")")
        XCTAssertEqual(result.counts.put, 2)
        let items = try store.items(bundle: bundle.identifier)
        XCTAssertEqual(items.first { $0.uniqueIdentifier == "probe.oversized" }?.title, "rejected 251")
        XCTAssertEqual(items.first { $0.uniqueIdentifier == "probe.limit" }?.title?.hasPrefix("committed "), true)

        // Only the 250-byte state ever reached the host.
        let commits = trace.lines.filter { $0.0 == .fromExtension && $0.1.contains(#""method":"batch/commit""#) }
        XCTAssertEqual(commits.count, 1, "\(commits)")
        let params = try XCTUnwrap(commits.first.flatMap { try? JSONParser.parse(text: $0.1) }?["params"])
        XCTAssertEqual(params["clientState"]?.stringValue.flatMap(Base64.decode), [UInt8](repeating: UInt8(ascii: "b"), count: 250))
        // The name and version the handler declares are what initialize reported.
        let reply = trace.lines.first { $0.0 == .fromExtension }?.1 ?? ""
        XCTAssertTrue(reply.contains(#""extension":{"name":"CommitBatchProbe","version":"2.0.0"}"#), reply)
    }

    /// Runs `kinds` of requests in one session of the tiny extension in `mode`.
    private func runTiny(_ mode: String, _ kinds: [(RequestKind, [String])], seed: [String] = []) throws -> (results: [RequestResult], store: IndexStore, log: String) {
        let host = try TestHost(test: self)
        let directory = try makeTinyBundle(in: host, mode: mode)
        guard case .success(let bundle) = Discovery.load(directory: directory) else { throw XCTSkip("the tiny bundle is invalid") }
        let store = try IndexStore.open(path: host.indexPath)
        if !seed.isEmpty { try TestSupport.seed(store, bundle: bundle.identifier, seed.map { TestSupport.item($0, title: "Seeded") }) }
        let requests = try kinds.map { kind, ids in
            try store.enqueue(bundleIdentifier: bundle.identifier, kind: kind, identifiers: ids, reason: .forced, maxAttempts: 1, coalesce: false)
        }
        var options = SessionOptions()
        options.environment = host.environment
        let runner = RequestRunner(paths: HostPaths(extensionsPath: host.extensions, index: host.indexPath, environment: host.environment))
        let results = runner.run(bundle: bundle, requests: requests, store: store, options: options, logPath: "\(host.scratch)/tiny.log")
        return (results, store, TestSupport.read("\(host.scratch)/tiny.log") ?? "")
    }

    func testAPrintInTheHandlersInitLandsInTheLog() throws {
        let run = try runTiny("prints-in-init", [(.reindexAll, [])])
        XCTAssertNil(run.results.first?.failure, "\(run.results.first?.failure?.message ?? "")\n\(run.log)")
        XCTAssertTrue(run.log.contains("hello from init"), run.log)
        XCTAssertEqual(try run.store.items(bundle: "com.example.sdk-test.tiny").map(\.uniqueIdentifier), ["init.1"])
    }

    func testWritesAfterTheAcknowledgementAreRefusedBySDK() throws {
        let run = try runTiny("returns-early", [(.reindexAll, []), (.reindexItems, ["kept.1"])])
        XCTAssertEqual(run.results.count, 2, run.log)
        XCTAssertTrue(run.results.allSatisfy { $0.failure == nil }, "\(run.results.map { $0.failure?.message ?? "ok" })\n\(run.log)")
        let ids = try run.store.items(bundle: "com.example.sdk-test.tiny").map(\.uniqueIdentifier)
        XCTAssertFalse(ids.contains("late.put"), "a put made after its request's acknowledgement reached the next request: \(ids)")
        XCTAssertTrue(run.log.contains("put after request 1 was acknowledged"), run.log)
    }

    func testAHandlerThatReturnsWhileItsTaskIsCommittingIsRefusedNotPublishedHalfDone() throws {
        let run = try runTiny("returns-during-batches", [(.reindexAll, [])], seed: ["old.1", "old.2"])
        let failure = try XCTUnwrap(run.results.first?.failure, run.log)
        XCTAssertEqual(failure.kind, .refused)
        XCTAssertTrue(failure.message.contains("reindexAll returned while work it started was still using the index"), failure.message)
        XCTAssertEqual(try run.store.items(bundle: "com.example.sdk-test.tiny").map(\.uniqueIdentifier), ["old.1", "old.2"])
    }

    func testAllowEmptyEmptiesABundleOnPurposeAndItsAbsenceKeepsTheItems() throws {
        let emptied = try runTiny("empty-on-purpose", [(.reindexAll, [])], seed: ["old.1", "old.2"])
        XCTAssertNil(emptied.results.first?.failure, "\(emptied.results.first?.failure?.message ?? "")")
        XCTAssertEqual(try emptied.store.items(bundle: "com.example.sdk-test.tiny").count, 0)
        // The same empty reindexAll without allowEmpty (the probe of early acknowledgements) keeps them.
        let kept = try runTiny("returns-early", [(.reindexAll, [])], seed: ["old.1", "old.2"])
        XCTAssertEqual(kept.results.first?.failure?.kind, .emptyReplacement)
        XCTAssertEqual(try kept.store.items(bundle: "com.example.sdk-test.tiny").count, 2)
    }

    /// Speaks to the tiny extension directly over its pipes, as a host offering other versions would.
    private func initializeReply(offering versions: [Int], scratch: String) throws -> JSONValue {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", #"exec "$0" "ReindexExtensionTests.TinyExtensionTests/testTinyExtensionProcessEntryPoint" 3>&1 1>&2"#,
                             TestSupport.testExecutable]
        process.environment = [Self.role: "1", "PATH": "/usr/bin:/bin"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        let errors = try FileHandle(forWritingTo: URL(fileURLWithPath: "\(scratch)/stderr-\(versions)").creatingFile())
        process.standardError = errors
        try process.run()
        defer {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
            try? errors.close()
        }
        let params: JSONValue = [
            "protocolVersions": .array(versions.map { .integer(Int64($0)) }),
            "host": ["name": "sdk-test", "version": "0"], "bundleIdentifier": "com.example.sdk-test.tiny", "debug": false,
        ]
        let request: JSONValue = ["jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params]
        input.fileHandleForWriting.write(Data((JSONWriter.string(request) + "\n").utf8))
        let line = try Self.readLine(output.fileHandleForReading.fileDescriptor, limitSeconds: 30)
        let reply = try JSONParser.parse(text: line)
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "the extension does not exit cleanly when stdin closes")
        return reply
    }

    func testInitializeNegotiatesTheHighestCommonVersionOrNamesBothLists() throws {
        let scratch = try TestSupport.makeScratchDirectory(for: self)
        let agreed = try initializeReply(offering: [1, 7], scratch: scratch)
        XCTAssertEqual(agreed["id"]?.integerValue, 0)
        XCTAssertEqual(agreed["result"]?["protocolVersion"]?.integerValue, 1, "\(agreed)")

        let refused = try initializeReply(offering: [2, 3], scratch: scratch)
        XCTAssertNil(refused["result"])
        XCTAssertEqual(refused["error"]?["code"]?.integerValue, -32602, "\(refused)")
        XCTAssertEqual(refused["error"]?["data"]?["supported"], [1])
        XCTAssertEqual(refused["error"]?["data"]?["requested"], [2, 3])
    }

    /// One line from `fd`, waiting at most `limitSeconds` (a guard against a hung child).
    private static func readLine(_ fd: Int32, limitSeconds: Double) throws -> String {
        var bytes: [UInt8] = []
        let deadline = Date().addingTimeInterval(limitSeconds)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !bytes.contains(0x0A) {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let remaining = Int32(max(0, deadline.timeIntervalSinceNow) * 1000)
            guard remaining > 0, poll(&poller, 1, remaining) > 0 else { throw NoReply(got: bytes) }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { throw NoReply(got: bytes) }
            bytes += buffer[0..<n]
        }
        return String(decoding: bytes.prefix { $0 != 0x0A }, as: UTF8.self)
    }

    private struct NoReply: Error, CustomStringConvertible {
        var got: [UInt8]
        var description: String { "the extension sent no line; got \(String(decoding: got, as: UTF8.self).debugDescription)" }
    }
}

private extension URL {
    /// This file URL, after creating an empty file there.
    func creatingFile() -> URL {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        return self
    }
}
