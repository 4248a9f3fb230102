import ReindexStore
import CReindexSystem
import ReindexProtocol
import ReindexSystem

/// Notices changes on the search path: inotify on Linux (the search-path directories, each
/// bundle directory and the directory of its executable), with periodic rescans as the fallback
/// everywhere, so a platform or file system without inotify still sees every change.
final class SearchPathWatcher {
    private(set) var fd: Int32 = -1
    private(set) var watching = 0

    /// Re-arms the watches for the current search path and bundles.
    func rearm(paths: HostPaths, bundles: [DiscoveredBundle]) {
        if fd >= 0 { close(fd) }
        fd = reindex_watch_init()
        watching = 0
        guard fd >= 0 else { return }
        var directories = Set(paths.searchPath.map(\.directory).filter(FileSystem.isDirectory))
        for bundle in bundles {
            directories.insert(bundle.directory)
            directories.insert(FileSystem.directoryName(bundle.executablePath))
        }
        for directory in directories where reindex_watch_add(fd, directory) >= 0 { watching += 1 }
    }

    /// Reads and discards pending events; returns whether there were any.
    func drain() -> Bool {
        guard fd >= 0 else { return false }
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        var any = false
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return any }
            any = true
        }
    }

    deinit { if fd >= 0 { close(fd) } }
}
