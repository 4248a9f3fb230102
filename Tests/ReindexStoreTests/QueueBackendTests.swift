import Foundation
import ReindexHost
@testable import ReindexStore
import ReindexTestSupport
import ReindexProtocol
import XCTest

/// The request queue's coalescing against both stores — a SQLite file and the PostgreSQL server
/// the tests start — with the same assertions: both apply the one rule (`Coalescing`).
final class QueueBackendTests: XCTestCase {
    /// A fresh SQLite index and a fresh PostgreSQL schema, named for the failure messages.
    func backends() throws -> [(name: String, store: any IndexBackend)] {
        let scratch = try TestSupport.makeScratchDirectory(for: self)
        let server = try PostgresServer.shared()
        let postgres = try PostgresStore.open(try PostgresLocation(server.connectionString, environment: ["REINDEX_PG_SCHEMA": server.freshSchema()]))
        return [("SQLite", try IndexStore.open(path: "\(scratch)/index.sqlite")), ("PostgreSQL", postgres)]
    }

    func testAPendingReindexAllCarriesANewRequestAndReplacesPendingReindexItems() throws {
        for (name, store) in try backends() {
            let items = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexItems, identifiers: ["x"], reason: .forced, maxAttempts: 5, notBefore: nil, coalesce: true)
            let all = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexAll, identifiers: [], reason: .bundleChanged, maxAttempts: 5, notBefore: nil, coalesce: true)
            // (SQLite may give the new row the deleted one's id, so the kinds tell them apart.)
            XCTAssertEqual(items.kind, .reindexItems, name)
            XCTAssertEqual(try store.requests(bundle: "com.example.alpha", state: .pending).map(\.kind), [.reindexAll], name)
            XCTAssertEqual(try store.requests(bundle: "com.example.alpha", state: .pending).map(\.id), [all.id], name)
            let later = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexItems, identifiers: ["y"], reason: .forced, maxAttempts: 5, notBefore: nil, coalesce: true)
            XCTAssertEqual(later.id, all.id, name)
            XCTAssertEqual(later.kind, .reindexAll, name)
            XCTAssertEqual(try store.requests(bundle: "com.example.alpha", state: .pending).map(\.id), [all.id], name)
        }
    }

    func testPendingReindexItemsMergeIdentifiersInOrderWithoutDuplicates() throws {
        for (name, store) in try backends() {
            let first = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexItems, identifiers: ["a", "b"], reason: .forced, maxAttempts: 5, notBefore: nil, coalesce: true)
            let second = try store.enqueue(bundleIdentifier: "COM.Example.Alpha", kind: .reindexItems, identifiers: ["b", "c", "a", "d"], reason: .forced, maxAttempts: 5, notBefore: nil, coalesce: true)
            XCTAssertEqual(second.id, first.id, name)
            XCTAssertEqual(second.identifiers, ["a", "b", "c", "d"], name)
            XCTAssertEqual(try store.request(first.id)?.identifiers, ["a", "b", "c", "d"], name)
            let other = try store.enqueue(bundleIdentifier: "com.example.beta", kind: .reindexItems, identifiers: ["a"], reason: .forced, maxAttempts: 5, notBefore: nil, coalesce: true)
            XCTAssertNotEqual(other.id, first.id, name)
        }
    }

    func testWithoutCoalescingEveryRequestIsSeparate() throws {
        for (name, store) in try backends() {
            let a = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexItems, identifiers: ["a"], reason: .forced, maxAttempts: 5, notBefore: nil, coalesce: false)
            let b = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexItems, identifiers: ["a"], reason: .forced, maxAttempts: 5, notBefore: nil, coalesce: false)
            let c = try store.enqueue(bundleIdentifier: "com.example.alpha", kind: .reindexAll, identifiers: [], reason: .forced, maxAttempts: 5, notBefore: nil, coalesce: false)
            let pending = try store.requests(bundle: "com.example.alpha", state: .pending)
            XCTAssertEqual(Set(pending.map(\.id)), Set([a.id, b.id, c.id]), name)
            XCTAssertEqual(pending.count, 3, name)
        }
    }
}
