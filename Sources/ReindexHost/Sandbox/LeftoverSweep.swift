import ReindexStore
import CReindexSystem
import ReindexProtocol
import ReindexSystem

/// Removes the private temporary directories that hosts which died left behind: a host killed
/// during a run cannot remove its extension's `TMPDIR`. A directory's name carries its host's
/// pid; one whose host no longer exists, that is a real directory and this user's, goes (never
/// following a link). Once per process and per temporary root.
enum LeftoverSweep {
    /// The roots swept so far, behind a lock (serve starts extensions from several threads).
    private final class Swept: @unchecked Sendable {
        let lock = Lock()
        var roots = Set<String>()
    }
    private static let swept = Swept()

    static func once(in root: String) {
        let first = swept.lock.withLock { swept.roots.insert(root).inserted }
        guard first else { return }
        for name in FileSystem.list(root, prefix: SandboxLaunch.temporaryPrefix) ?? [] {
            guard let pid = hostPID(name), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            let path = FileSystem.join(root, name)
            var st = stat()
            guard lstat(path, &st) == 0, FileSystem.fileType(st) == UInt32(S_IFDIR), st.st_uid == getuid() else { continue }
            FileSystem.removeTree(path)
        }
    }

    /// The pid in `…-p<pid>-XXXXXX`.
    static func hostPID(_ name: String) -> pid_t? {
        let utf8 = Array(name.utf8)
        guard utf8.count > 7 else { return nil }
        let head = utf8[..<(utf8.count - 7)]
        guard let marker = head.lastIndex(of: UInt8(ascii: "p")), marker > head.startIndex,
              head[marker - 1] == UInt8(ascii: "-") else { return nil }
        return pid_t(String(decoding: head[(marker + 1)...], as: UTF8.self))
    }
}
