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

/// How the package writes a duration in seconds for people.
package enum DurationText {
    /// Milliseconds shown: `1.250`.
    package static func milliseconds(_ seconds: Double) -> String {
        let millis = Int((seconds * 1000).rounded())
        let fraction = String(millis % 1000)
        return "\(millis / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }

    /// As few digits as the value needs: `30`, `0.5`.
    package static func short(_ seconds: Double) -> String {
        seconds.rounded() == seconds && abs(seconds) < 1e15 ? String(Int(seconds)) : String(seconds)
    }
}
