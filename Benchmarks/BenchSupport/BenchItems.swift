import Foundation
import ReindexProtocol

/// Deterministic benchmark items, shared by the benchmark extension and the raw loader.
public enum BenchItems {
    static let first = ["Ada", "Grace", "Linus", "Margaret", "Zoë", "Håkon", "Amara", "Kenji", "Priya", "Mateo", "Sofia", "Olu", "Wen", "Ines", "Tariq", "Freya"]
    static let last = ["Park", "Hopper", "Torvalds", "Hamilton", "Müller", "Lindqvist", "Okafor", "Tanaka", "Raman", "García", "Rossi", "Adeyemi", "Zhang", "Moreau"]
    static let departments = ["Engineering", "Design", "Sales", "Finance", "People", "Support", "Research", "Legal"]
    static let titles = ["Staff Engineer", "Designer", "Account Executive", "Analyst", "Recruiter", "Support Lead", "Scientist", "Counsel"]
    static let skills = ["swift", "compilers", "kubernetes", "sqlite", "linux", "rust", "typography", "negotiation", "budgeting", "hiring", "networking", "databases"]
    static let words = ["index", "search", "engine", "quiet", "river", "signal", "harbour", "lantern", "orchard", "summit", "archive", "comet",
                        "garden", "frontier", "paper", "golden", "glass", "northern", "electric", "hidden", "crimson", "silent", "distant", "wild",
                        "report", "meeting", "project", "budget", "design", "review", "release", "customer", "contract", "schedule", "travel", "office"]

    /// Item `n`: small (name, department line, three keywords, email, phone) or large (plus a
    /// 40-word description). With `extra`, one item in 100 has a rankingHint (1–5) and every
    /// item the declared attribute `level` (n mod 1000; `level >= 998` selects 0.2%).
    public static func item(_ n: Int, large: Bool, extra: Bool = false) -> SearchableItem {
        let name = "\(first[n % first.count]) \(last[(n / first.count) % last.count]) \(n)"
        let department = departments[n % departments.count]
        var attributes = SearchableItemAttributes(
            title: name,
            contentDescription: "\(department) · \(titles[(n / 3) % titles.count]) · +1 555 \(n % 10000)",
            keywords: [skills[n % skills.count], skills[(n / 7) % skills.count], department],
            emailAddresses: ["person\(n)@example.com"],
            phoneNumbers: ["+1 555 \(n % 10000)"],
            // 0.0…4.8, and 5 for one item in 500: a filter `rating >= 4.9` selects 0.2%.
            rating: n % 500 == 0 ? 5 : Double(n % 49) / 10)
        if large {
            var text: [String] = []
            text.reserveCapacity(40)
            var x = UInt64(truncatingIfNeeded: n) &* 6364136223846793005 &+ 1442695040888963407
            for _ in 0..<40 {
                x = x &* 6364136223846793005 &+ 1442695040888963407
                text.append(words[Int((x >> 33) % UInt64(words.count))])
            }
            attributes.textContent = text.joined(separator: " ")
        }
        if extra {
            if n % 100 == 0 { attributes.rankingHint = Double(1 + (n / 100) % 5) }
            // Modified within the 1,000 days before the run, a day apart per item mod 1000: a
            // `$time.today(-30)` range selects 3%.
            attributes.contentModificationDate = Date(timeIntervalSinceNow: -Double(n % 1000) * 86_400 - 3_600)
            attributes.custom["level"] = .integer(Int64(n % 1000))
        }
        return SearchableItem(uniqueIdentifier: "item.\(n)", domainIdentifier: "com.example.bench.\(department.lowercased())", attributes: attributes)
    }
}
