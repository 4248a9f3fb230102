/// Names one process across pid reuse: its pid and, where the system tells, its start time.
public struct ProcessIdentity: Sendable, Equatable {
    public var pid: Int32
    public var startTime: Int64

    /// This process.
    public static var current: ProcessIdentity { ProcessIdentity(pid: getpid()) ?? ProcessIdentity(pid: getpid(), startTime: 0) }

    public init(pid: Int32, startTime: Int64) {
        self.pid = pid
        self.startTime = startTime
    }

    /// The process with this pid now, or nil when there is none.
    public init?(pid: Int32) {
        guard pid > 0, kill(pid, 0) == 0 || errno == EPERM else { return nil }
        #if os(Linux)
        guard let stat = ProcessStat(String(pid)), !stat.isZombie else { return nil }
        self.init(pid: pid, startTime: Int64(stat.startTime))
        #else
        self.init(pid: pid, startTime: 0)
        #endif
    }

    /// Whether this process still runs (the pid is alive and was not reused since).
    public var isAlive: Bool {
        guard let now = ProcessIdentity(pid: pid) else { return false }
        return startTime == 0 || now.startTime == 0 || now.startTime == startTime
    }
}
