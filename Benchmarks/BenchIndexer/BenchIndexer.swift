import Foundation
import ReindexExtension
import BenchSupport

/// The benchmark's extension: `reindexAll` puts `BENCH_ITEMS` generated items (`BENCH_SIZE`
/// small — like the Colleagues ones — or large, with a 40-word description), in batches of
/// `BENCH_BATCH` items per `put` call.
struct BenchIndexer: IndexRequestHandler {
    var extensionName: String { "BenchIndexer" }
    var extensionVersion: String { "1" }

    func reindexAll(_ index: SearchableIndex) async throws {
        let environment = ProcessInfo.processInfo.environment
        let count = Int(environment["BENCH_ITEMS"] ?? "") ?? 1000
        let large = environment["BENCH_SIZE"] == "large"
        let batch = Int(environment["BENCH_BATCH"] ?? "") ?? 2000
        var start = 0
        while start < count {
            let end = min(count, start + batch)
            try await index.put((start..<end).map { BenchItems.item($0, large: large) })
            start = end
        }
    }

    func reindexItems(identifiers: [String], index: SearchableIndex) async throws {
        let large = ProcessInfo.processInfo.environment["BENCH_SIZE"] == "large"
        let items = identifiers.compactMap { id -> SearchableItem? in
            guard id.hasPrefix("item."), let n = Int(id.dropFirst(5)) else { return nil }
            return BenchItems.item(n, large: large)
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
