import Foundation
import PostgresHarness
import ReindexHost
import ReindexStore
import ReindexProtocol
import XCTest

/// One index a shared test runs against: a SQLite file in the test's scratch directory, or a
/// fresh schema of the PostgreSQL server the tests start. `open()` makes another connection to
/// the same index (a second session, or the index as a host that starts again sees it).
package struct TestIndex {
    package let name: String
    package let open: () throws -> any IndexBackend
    /// The index as the `reindex` command takes it: `--index ARGUMENT` with `environment`.
    package let argument: String
    package let environment: [String: String]

    package var isPostgreSQL: Bool { name == "PostgreSQL" }

    /// The log of a bundle run by the command on this index.
    package func logFile(for bundle: String, commandEnvironment: [String: String]) -> String {
        HostPaths(extensionsPath: nil, index: argument, environment: commandEnvironment).logFile(for: bundle)
    }

    /// Both indexes, each new and empty: the same assertions run on each (their failure messages
    /// name the index). The PostgreSQL server is started on first use; if it cannot be, the test
    /// fails with the reason — it is never skipped.
    package static func both(for test: XCTestCase) throws -> [TestIndex] {
        let scratch = try TestSupport.makeScratchDirectory(for: test)
        let server = try PostgresServer.shared()
        let location = try PostgresLocation(server.connectionString, environment: ["REINDEX_PG_SCHEMA": server.freshSchema("store")])
        let path = "\(scratch)/index/index.sqlite"
        try FileManager.default.createDirectory(atPath: "\(scratch)/index", withIntermediateDirectories: true)
        return [
            TestIndex(name: "SQLite", open: { try IndexStore.open(path: path) }, argument: path, environment: [:]),
            TestIndex(name: "PostgreSQL", open: { try PostgresStore.open(location) }, argument: server.connectionURI,
                      environment: ["REINDEX_PG_SCHEMA": location.schema]),
        ]
    }
}

/// The calls the shared tests make most, with the defaults the concrete stores give them.
package extension IndexBackend {
    func search(_ text: String, bundle: String? = nil, domain: String? = nil, limit: Int = 20) throws -> [SearchResult] {
        try search(text, bundle: bundle, domain: domain, limit: limit, now: Clock.now())
    }

    func search(_ text: String, now: Double) throws -> [SearchResult] {
        try search(text, bundle: nil, domain: nil, limit: 20, now: now)
    }

    func items(bundle: String, domain: String? = nil) throws -> [SearchResult] {
        try items(bundle: bundle, domain: domain, limit: 100, now: Clock.now())
    }

    func itemCount(bundle: String) throws -> Int {
        try itemCount(bundle: bundle, now: Clock.now())
    }

    func writer(_ bundle: String, _ scope: WriteScope, declarations: [String: AttributeDeclaration] = [:]) throws -> any IndexWriting {
        try makeWriter(bundleIdentifier: bundle, scope: scope, requestID: nil, declarations: declarations)
    }

    func nextDueTime() throws -> Double? {
        try nextDueTime(excludingBundles: [])
    }

    func markAttemptFailed(_ id: Int64, error: String, backoff: Backoff) throws -> QueuedRequest? {
        try markAttemptFailed(id, error: error, backoff: backoff, now: Clock.now())
    }

    /// A count the test asks of the index's tables directly (the two schemas name the columns
    /// the tests read alike).
    func rowCount(_ sql: String) throws -> Int {
        switch self {
        case let sqlite as IndexStore: return Int(try sqlite.connection.scalar(sql) ?? 0)
        case let postgres as PostgresStore: return try postgres.query(sql).int(0, 0)
        default: throw TestIndexError(description: "unknown index type \(type(of: self))")
        }
    }

    /// Whether the connection is inside a transaction.
    var inTransaction: Bool {
        switch self {
        case let sqlite as IndexStore: return sqlite.connection.isInTransaction
        case let postgres as PostgresStore: return postgres.connection.inTransaction
        default: return false
        }
    }

    /// The SQLite file passes its integrity check (PostgreSQL keeps its own pages whole).
    func assertHealthy(_ message: String, file: StaticString = #filePath, line: UInt = #line) {
        guard let sqlite = self as? IndexStore else { return }
        XCTAssertEqual(try sqlite.integrityCheck(), [], message, file: file, line: line)
    }
}

package extension IndexWriting {
    @discardableResult
    func commitBatch() throws -> Int { try commitBatch(with: { _ in }) }

    @discardableResult
    func acknowledge() throws -> WriteCounts { try acknowledge(with: { _ in }) }
}

package struct TestIndexError: Error, CustomStringConvertible {
    package var description: String

    package init(description: String) { self.description = description }
}
