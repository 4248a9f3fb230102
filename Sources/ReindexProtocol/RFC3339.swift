/// RFC 3339 timestamps, read and written without Foundation's formatters.
public enum RFC3339 {
    /// Seconds since 1970-01-01T00:00:00Z for an RFC 3339 date-time
    /// (`2026-12-31T00:00:00Z`, `2026-12-31T01:00:00.5+01:00`), or nil if it is not one.
    public static func parse(_ text: String) -> Double? {
        let b = Array(text.utf8)
        guard b.count >= 20 else { return nil }
        func digits(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= b.count else { return nil }
            var value = 0
            for i in start..<(start + count) {
                let c = b[i]
                guard c >= 0x30 && c <= 0x39 else { return nil }
                value = value * 10 + Int(c - 0x30)
            }
            return value
        }
        guard let year = digits(0, 4), b[4] == UInt8(ascii: "-"),
              let month = digits(5, 2), b[7] == UInt8(ascii: "-"),
              let day = digits(8, 2), b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t") || b[10] == UInt8(ascii: " "),
              let hour = digits(11, 2), b[13] == UInt8(ascii: ":"),
              let minute = digits(14, 2), b[16] == UInt8(ascii: ":"),
              let second = digits(17, 2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month),
              hour < 24, minute < 60, second <= 60 else { return nil }
        var index = 19
        var fraction = 0.0
        if index < b.count, b[index] == UInt8(ascii: ".") {
            index += 1
            var scale = 0.1
            let start = index
            while index < b.count, b[index] >= 0x30, b[index] <= 0x39 {
                fraction += Double(b[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        guard index < b.count else { return nil }
        var offset = 0
        switch b[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign = b[index] == UInt8(ascii: "-") ? -1 : 1
            guard let oh = digits(index + 1, 2), index + 3 < b.count, b[index + 3] == UInt8(ascii: ":"),
                  let om = digits(index + 4, 2), oh < 24, om < 60 else { return nil }
            offset = sign * (oh * 3600 + om * 60)
            index += 6
        default:
            return nil
        }
        guard index == b.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset
        let instant = Double(seconds) + fraction
        // Only instants that `format` can write back (years 0000 to 9999 in UTC, to the
        // millisecond): with an offset, or a leap second, a date at either end of the range
        // falls outside it (9999-12-31T23:59:59-01:00 is in the year 10000 UTC).
        guard representableMilliseconds.contains((instant * 1000).rounded()) else { return nil }
        return instant
    }

    /// The instants, in milliseconds since 1970, that `format` writes as RFC 3339 text:
    /// 0000-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z.
    private static let representableMilliseconds: Range<Double> =
        Double(daysFromCivil(year: 0, month: 1, day: 1) * 86_400_000)..<Double(daysFromCivil(year: 10000, month: 1, day: 1) * 86_400_000)

    /// The RFC 3339 text (UTC, `Z`) for seconds since 1970; fractions to milliseconds when present.
    public static func format(_ seconds: Double) -> String {
        // Round to whole milliseconds first, so 59.9996 s carries into the next second — the
        // whole seconds and their fraction apart, both exact: `seconds * 1000` rounds itself,
        // and for a date centuries away that carried 59.99949 s into the next second.
        let whole = seconds.rounded(.down)
        let totalMillis = Int64(whole) * 1000 + Int64(((seconds - whole) * 1000).rounded())
        var millis = Int(totalMillis % 1000)
        var total = Int(totalMillis / 1000)
        if millis < 0 { millis += 1000; total -= 1 }
        var days = total / 86400
        total -= days * 86400
        if total < 0 { total += 86400; days -= 1 }
        let (y, m, d) = civilFromDays(days)
        func pad(_ v: Int, _ width: Int) -> String {
            let s = String(v)
            return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
        }
        var text = "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(total / 3600, 2)):\(pad(total / 60 % 60, 2)):\(pad(total % 60, 2))"
        if millis > 0 { text += "." + pad(millis, 3) }
        return text + "Z"
    }

    private static func isLeap(_ year: Int) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }

    private static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    // Howard Hinnant's days-from-civil and its inverse.
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    static func civilFromDays(_ days: Int) -> (Int, Int, Int) {
        let z = days + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }
}
