import CSQLite
import ReindexProtocol
import ReindexSystem

extension IndexStore {
    /// What a failed index operation means to the person who ran the command: a damaged file
    /// (exit 74, with what to do), an index busy past the busy timeout (exit 75, try again later,
    /// naming who holds it where known), a full disk or an I/O error (74). Anything else is an
    /// internal error with the statement that failed.
    public static func explain(_ error: SQLiteError, index path: String, doing what: String? = nil) -> ReindexError {
        let primary = error.code & 0xFF
        let doing = what.map { "\($0): " } ?? ""
        if error.isCorruption {
            return ReindexError(.ioError, "\(doing)the index at \(path) is damaged (\(error.message)); run 'reindex reset' to rebuild it from the extensions (it keeps the damaged file aside)")
        }
        if error.isBusy {
            let writing = !(error.context.uppercased().hasPrefix("SELECT") || error.context.uppercased().hasPrefix("PRAGMA"))
            let lock = writing ? "its write lock" : "a lock"
            let holders = processesUsing(index: path)
            let who = holders.isEmpty ? "another program" : holders.joined(separator: ", ")
            return ReindexError(.requestFailed, "\(doing)the index at \(path) is busy: \(who) held \(lock) past the busy timeout; try again later")
        }
        if error.isDiskFull {
            return ReindexError(.ioError, "\(doing)cannot write the index at \(path): the disk is full (\(error.message))")
        }
        switch primary {
        case SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_PERM, SQLITE_NOLFS, SQLITE_AUTH:
            return ReindexError(.ioError, "\(doing)cannot use the index at \(path): \(error.message)")
        default:
            return ReindexError(.internal, "\(doing)\(error)")
        }
    }

    /// What a failure while running a query means: as `explain` for a damaged, busy, full or
    /// unreadable index (74, 75); else the statement the query compiled to was one SQLite
    /// would not run — too large or too deep, out of memory — which the query's shape caused
    /// (65, "query: …"). SQLite's own message never reaches the user: it names SQL the user
    /// did not write. Anything else is an internal error, named by its result code alone.
    public static func explainQuery(_ error: SQLiteError, index path: String, doing what: String) -> ReindexError {
        let primary = error.code & 0xFF
        if error.isCorruption || error.isBusy || error.isDiskFull { return explain(error, index: path, doing: what) }
        switch primary {
        case SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_PERM, SQLITE_NOLFS, SQLITE_AUTH:
            return explain(error, index: path, doing: what)
        case SQLITE_ERROR, SQLITE_TOOBIG, SQLITE_NOMEM, SQLITE_RANGE:
            return ReindexError(.invalidData, "query: the index cannot run a query of this shape (SQLite result code \(error.code)); use fewer words and comparisons or less nesting")
        default:
            return ReindexError(.internal, "\(what): the index failed with SQLite result code \(error.code) (an internal error; please report it with the query)")
        }
    }

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
