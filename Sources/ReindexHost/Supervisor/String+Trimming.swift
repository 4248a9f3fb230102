extension String {
    /// The string without `set`'s characters at either end.
    func trimming(_ set: String) -> String {
        var s = Substring(self)
        while let first = s.first, set.contains(first) { s.removeFirst() }
        while let last = s.last, set.contains(last) { s.removeLast() }
        return String(s)
    }

    package var trimmingWhitespace: String {
        var s = Substring(self)
        while let first = s.first, first.isWhitespace { s.removeFirst() }
        while let last = s.last, last.isWhitespace { s.removeLast() }
        return String(s)
    }
}
