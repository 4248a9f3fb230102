import CSQLite
import ReindexProtocol

/// The lists' words (`=word`) and prefixes (`*prefix`) by a hash of their bytes, and what one
/// row's tokens add up to: its length and each word's weighted frequency. The tokenizer's
/// callback (`token`) hashes each token once, byte by byte, looking up a prefix at each length a
/// prefix has and the whole word at its end.
final class RankKeyTable {
    let names: [String]
    private let bytes: [[UInt8]]
    private var whole: [UInt64: [Int]] = [:]
    private var prefixes: [UInt64: [Int]] = [:]
    /// `hasPrefix[n]`: some prefix is `n` bytes long.
    private var hasPrefix: [Bool] = []
    // One row.
    var weight = 0.0
    var length = 0
    var frequencies: [Double]
    var touched: [Int] = []

    init(keys: [String]) {
        names = keys
        bytes = keys.map { Array($0.utf8.dropFirst()) }
        frequencies = Array(repeating: 0, count: keys.count)
        for (index, key) in keys.enumerated() {
            let hash = Self.hash(bytes[index])
            if key.hasPrefix("*") {
                prefixes[hash, default: []].append(index)
                let n = bytes[index].count
                if hasPrefix.count <= n { hasPrefix += Array(repeating: false, count: n + 1 - hasPrefix.count) }
                hasPrefix[n] = true
            } else {
                whole[hash, default: []].append(index)
            }
        }
    }

    static func hash(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }

    func startRow() {
        for index in touched { frequencies[index] = 0 }
        touched.removeAll(keepingCapacity: true)
        length = 0
    }

    private func add(_ candidates: [Int], _ token: UnsafePointer<UInt8>, _ count: Int) {
        for index in candidates where bytes[index].count == count {
            let same = count == 0 || bytes[index].withUnsafeBufferPointer { memcmp(UnsafeRawPointer($0.baseAddress!), UnsafeRawPointer(token), count) == 0 }
            guard same else { continue }
            if frequencies[index] == 0 { touched.append(index) }
            frequencies[index] += weight
        }
    }

    /// FTS5's `xToken` for `FullTextTokenizer.scan`, its context a `RankKeyTable`.
    static let token: @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?, Int32, Int32, Int32) -> Int32 = { context, _, token, count, _, _ in
        guard let context, let token else { return SQLITE_OK }
        let table = Unmanaged<RankKeyTable>.fromOpaque(context).takeUnretainedValue()
        table.length += 1
        let n = Int(count)
        token.withMemoryRebound(to: UInt8.self, capacity: n) { bytes in
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for i in 0..<n {
                hash = (hash ^ UInt64(bytes[i])) &* 0x100_0000_01b3
                if i + 1 < table.hasPrefix.count, table.hasPrefix[i + 1], let candidates = table.prefixes[hash] { table.add(candidates, bytes, i + 1) }
            }
            if let candidates = table.whole[hash] { table.add(candidates, bytes, n) }
        }
        return SQLITE_OK
    }
}
