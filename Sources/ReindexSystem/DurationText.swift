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
