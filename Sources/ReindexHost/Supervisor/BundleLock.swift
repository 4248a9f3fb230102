import ReindexStore
import ReindexProtocol
import ReindexSystem

/// An exclusive, process-wide lock on one bundle (or on `serve` itself), held with `flock` on a
/// file beside the index, so two hosts never run requests of the same bundle at once. The kernel
/// drops it when the holder dies, so a crash never leaves a stale lock.
public final class BundleLock {
    public let path: String
    private var fd: Int32

    private init(path: String, fd: Int32) {
        self.path = path
        self.fd = fd
    }

    deinit { release() }

    /// The lock directory for an index.
    public static func directory(forIndex index: String) -> String {
        FileSystem.join(FileSystem.directoryName(index), "locks")
    }

    /// Takes the lock named `name` (a validated bundle key or `serve`) without waiting.
    /// Returns nil and the holder's pid when somebody else holds it.
    public static func acquire(name: String, index: String) throws(ReindexError) -> (lock: BundleLock?, holder: Int32?) {
        let directory = directory(forIndex: index)
        try FileSystem.makeDirectories(directory)
        let safe = Manifest.isValidBundleIdentifier(name) || name == "serve" ? name.lowercased() : "invalid"
        let path = FileSystem.join(directory, safe + ".lock")
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ReindexError(.ioError, "\(path): cannot open the lock file: \(FileSystem.errnoText())", errno: errno) }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let holder = (try? FileSystem.read(path, limit: 64)).flatMap { Int32(String(decoding: $0, as: UTF8.self).trimmingWhitespace) }
            close(fd)
            return (nil, holder)
        }
        ftruncate(fd, 0)
        let pid = Array("\(getpid())\n".utf8)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        return (BundleLock(path: path, fd: fd), nil)
    }

    public func release() {
        if fd >= 0 {
            flock(fd, LOCK_UN)
            close(fd)
            fd = -1
        }
    }
}
