/// "Did you mean …?" for a mistyped name: the known name nearest to what was typed, when it is
/// near enough to be a typo rather than another name.
public enum Suggestion {
    /// The candidate nearest to `typed` by edit distance (insertions, deletions, substitutions and
    /// swaps of neighbours each count one; case is ignored), or nil when none is close: at most
    /// one edit for names of up to four characters, two up to eight, three beyond. Of equally
    /// near candidates the first wins; `typed` itself is never suggested.
    public static func nearest(to typed: String, among candidates: some Sequence<String>) -> String? {
        let word = Array(typed.lowercased())
        let allowed = word.count <= 4 ? 1 : word.count <= 8 ? 2 : 3
        var best: (name: String, distance: Int)? = nil
        for candidate in candidates {
            let other = Array(candidate.lowercased())
            guard other != word, abs(other.count - word.count) <= allowed else { continue }
            let d = distance(word, other)
            if d <= allowed, d < (best?.distance ?? Int.max) { best = (candidate, d) }
        }
        return best?.name
    }

    /// ` (did you mean 'NAME'?)` for the nearest candidate, or "" when none is close.
    public static func clause(for typed: String, among candidates: some Sequence<String>, quotedAs quote: (String) -> String = { "'\($0)'" }) -> String {
        nearest(to: typed, among: candidates).map { " (did you mean \(quote($0))?)" } ?? ""
    }

    /// The optimal-string-alignment distance of `a` and `b`.
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var before = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], before[j - 2] + 1)
                }
            }
            before = previous
            previous = current
        }
        return previous[b.count]
    }
}
