#if os(Linux)
/// What `/proc/<pid>/stat` says of a process: its state, parent and process group.
package struct ProcessStat {
    package var isZombie: Bool
    package var parent: Int32
    package var group: Int32
    /// When the process started, in clock ticks since boot (with the pid, it names one process).
    package var startTime: UInt64

    package init?(_ pid: String) {
        guard let bytes = FileSystem.readPrefix("/proc/\(pid)/stat", count: 512),
              // pid (comm) state ppid pgrp …; comm may hold spaces, so read after the last ')'.
              let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "))
        guard fields.count >= 20, let parent = Int32(String(decoding: fields[1], as: UTF8.self)),
              let group = Int32(String(decoding: fields[2], as: UTF8.self)) else { return nil }
        self.isZombie = fields[0].first == UInt8(ascii: "Z")
        self.parent = parent
        self.group = group
        self.startTime = UInt64(String(decoding: fields[19], as: UTF8.self)) ?? 0
    }

    /// The pids of this process's children, from each of its threads' `children` list in /proc
    /// (a few short reads, however many processes the system runs); nil where the kernel does not
    /// keep those lists (built without `CONFIG_PROC_CHILDREN`), so the caller scans /proc.
    package static func childrenOfThisProcess() -> [String]? {
        guard let threads = FileSystem.list("/proc/self/task") else { return nil }
        var children: [String] = []
        for thread in threads {
            guard let bytes = FileSystem.readPrefix("/proc/self/task/\(thread)/children", count: 1 << 16) else {
                // A thread that ended since the listing has no list; a kernel without them has none at all.
                if FileSystem.exists("/proc/self/task/\(thread)") && !FileSystem.exists("/proc/self/task/\(thread)/children") { return nil }
                continue
            }
            children += bytes.split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\n") }).map { String(decoding: $0, as: UTF8.self) }
        }
        return children
    }
}
#endif
