import CSQLite
import ReindexProtocol
import ReindexSystem

extension IndexStore {
    /// The other processes that have the index (or its write-ahead log) open, as
    /// "pid 123 (reindex run com.example.a)"; empty where the system does not tell.
    public static func processesUsing(index path: String) -> [String] {
        #if os(Linux)
        let targets = Set([path, path + "-wal", path + "-shm"].map(FileSystem.absolute))
        let me = getpid()
        var found: [String] = []
        for name in FileSystem.list("/proc") ?? [] {
            guard let pid = Int32(name), pid != me, found.count < 4, let fds = FileSystem.list("/proc/\(name)/fd") else { continue }
            let holds = fds.contains { fd in
                var buffer = [CChar](repeating: 0, count: 4096)
                let n = readlink("/proc/\(name)/fd/\(fd)", &buffer, buffer.count - 1)
                guard n > 0 else { return false }
                return targets.contains(String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
            guard holds else { continue }
            let words = (FileSystem.readPrefix("/proc/\(name)/cmdline", count: 1024) ?? [])
                .split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            // The program and its plain arguments ("reindex run com.example.a"), not its options.
            let plain = words.dropFirst().filter { !$0.hasPrefix("-") && !$0.contains("/") }.prefix(3)
            var command = ([words.first.map { $0.split(separator: "/").last.map(String.init) ?? $0 } ?? ""] + plain).joined(separator: " ")
            if command.isEmpty { command = "unknown" }
            found.append("pid \(pid) (\(command))")
        }
        return found
        #else
        return []
        #endif
    }
}
