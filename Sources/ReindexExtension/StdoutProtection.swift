import ReindexSystem

/// Moves the protocol off descriptor 1.
public enum StdoutProtection {
    /// Duplicates stdout to a private close-on-exec descriptor for the protocol and points
    /// descriptor 1 at stderr. Returns the protocol descriptor.
    /// Once per process: later calls return the same descriptor.
    public static func engage() -> Int32 {
        protocolFD
    }

    private static let protocolFD: Int32 = {
        fflush(nil)
        let protocolFD = fcntl(1, F_DUPFD_CLOEXEC, 3)
        guard protocolFD >= 0 else { return 1 }
        dup2(2, 1)
        return protocolFD
    }()
}
