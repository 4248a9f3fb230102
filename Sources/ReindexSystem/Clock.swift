/// The package's clocks: wall time for what is recorded, monotonic time for what is measured.
public enum Clock {
    /// Wall-clock time as seconds since 1970.
    public static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// A monotonic clock in seconds, for timeouts and durations.
    public static func monotonic() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
