import Foundation
import ReindexExtension
import BenchSupport

/// The benchmark's extension: `reindexAll` puts `BENCH_ITEMS` generated items (`BENCH_SIZE`
/// small — like the Colleagues ones — or large, with a 40-word description), in batches of
/// `BENCH_BATCH` items per `put` call (each with the keyword `BENCH_TAG` when it is set). For the concurrency scenarios: with `BENCH_SLEEP_SECONDS`
/// it works that long without a word to the host after half its items; with `BENCH_READY_FILE`
/// and `BENCH_RELEASE_FILE`, after its items it creates the first and waits for the second.
/// With `BENCH_EXTRA=1` the items carry rankingHints and the declared attribute `level`.
struct BenchIndexer: IndexRequestHandler {
    var extensionName: String { "BenchIndexer" }
    var extensionVersion: String { "1" }

    func reindexAll(_ index: SearchableIndex) async throws {
        let environment = ProcessInfo.processInfo.environment
        let count = Int(environment["BENCH_ITEMS"] ?? "") ?? 1000
        let large = environment["BENCH_SIZE"] == "large"
        let batch = Int(environment["BENCH_BATCH"] ?? "") ?? 2000
        let tag = environment["BENCH_TAG"]
        let extra = environment["BENCH_EXTRA"] == "1"
        let sleep = Double(environment["BENCH_SLEEP_SECONDS"] ?? "") ?? 0
        var start = 0
        var slept = false
        while start < count {
            let end = min(count, start + batch)
            try await index.put((start..<end).map { n in
                var item = BenchItems.item(n, large: large, extra: extra)
                // A generation's mark, for telling two generations apart in one search.
                if let tag { item.attributes.keywords = (item.attributes.keywords ?? []) + [tag] }
                return item
            })
            start = end
            if sleep > 0 && !slept && start >= count / 2 {
                slept = true
                try await Task.sleep(nanoseconds: UInt64(sleep * 1e9))
            }
        }
        if let ready = environment["BENCH_READY_FILE"], let release = environment["BENCH_RELEASE_FILE"] {
            _ = FileManager.default.createFile(atPath: ready, contents: nil)
            while !FileManager.default.fileExists(atPath: release) { try await Task.sleep(nanoseconds: 10_000_000) }
        }
    }

    func reindexItems(identifiers: [String], index: SearchableIndex) async throws {
        let large = ProcessInfo.processInfo.environment["BENCH_SIZE"] == "large"
        let items = identifiers.compactMap { id -> SearchableItem? in
            guard id.hasPrefix("item."), let n = Int(id.dropFirst(5)) else { return nil }
            return BenchItems.item(n, large: large, extra: ProcessInfo.processInfo.environment["BENCH_EXTRA"] == "1")
        }
        try await index.put(items)
    }
}

@main
struct Main {
    static func main() async {
        await ExtensionMain.run(BenchIndexer())
    }
}
