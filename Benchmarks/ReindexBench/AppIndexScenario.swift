import BenchSupport
import Foundation
import ReindexHost
import ReindexStore
import ReindexProtocol

/// app: an application indexing its own content through `LocalIndex`, as Examples/Notes does —
/// one `put` call per item, in batches of 1,000 each ended with a client state — against the
/// same items in one `put` call (one transaction), on SQLite and on PostgreSQL. The smallest
/// `--items` count, at most 100,000.
extension Bench {
    func appIndexing() throws {
        let count = min(options.items.min() ?? 20_000, 100_000)
        let items = (0..<count).map { BenchItems.item($0, large: false) }
        let server = try startPostgres()
        defer { server.destroy() }
        for backend in ["SQLite", "PostgreSQL"] {
            var batched = Sample(), whole = Sample(), ratio = Sample()
            for round in 0..<options.rounds {
                for inBatches in (round % 2 == 0 ? [true, false] : [false, true]) {
                    let name = "app_\(inBatches ? "batches" : "whole")_\(round)"
                    let location = backend == "SQLite" ? work + "/\(name).sqlite" : server.connectionString
                    let index = try LocalIndex(path: location, bundleIdentifier: "com.example.bench.app", environment: ["REINDEX_PG_SCHEMA": name])
                    let start = Clock.monotonic()
                    if inBatches {
                        for first in stride(from: 0, to: count, by: 1_000) {
                            try index.beginBatch()
                            for item in items[first..<min(first + 1_000, count)] { try index.put([item]) }
                            try index.endBatch(clientState: Array(String(first + 1_000).utf8))
                        }
                        batched.add(Double(count) / (Clock.monotonic() - start))
                    } else {
                        try index.put(items)
                        whole.add(Double(count) / (Clock.monotonic() - start))
                    }
                    if backend == "SQLite" { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: location + suffix) } }
                }
                if let b = batched.values.last, let w = whole.values.last { ratio.add(b / w) }
                log("app \(backend) round \(round + 1): batches \(fmt(batched.values.last ?? 0, 0)) items/s, one call \(fmt(whole.values.last ?? 0, 0)) items/s")
            }
            rows.append(["app \(backend) \(count / 1000)k: one put per item, batches of 1,000 (items/s)",
                         "\(fmt(batched.median, 0)) (\(fmt(batched.min, 0))–\(fmt(batched.max, 0)))",
                         "\(fmt(whole.median, 0)) in one put call",
                         "\(fmt(ratio.median, 2))× one call (per-round \(fmt(ratio.min, 2))–\(fmt(ratio.max, 2)))"])
            results.append(("app_\(backend.lowercased())_\(count)", .object([
                ("batchedItemsPerSecond", .double(batched.median)), ("oneCallItemsPerSecond", .double(whole.median)),
                ("ratio", .double(ratio.median)),
            ])))
        }
    }
}
