/// What one PostgreSQL store knows and wants of the rank lists (PostgresStore+RankLists.swift):
/// their sizes (smaller in tests), the lists its searches wanted and did not find, and the words
/// it found not to be common.
final class PostgresRankLists {
    /// Words a query may have and still be read through lists.
    static let maximumWords = 4
    /// Entries a list is made with (`RankLists.size`, as on SQLite).
    var size = RankLists.size
    /// A word that more items than this hold is read through a list.
    var commonWords = RankLists.commonWords
    /// Lists kept at most (two per word that can be a prefix): making one more drops the one
    /// used least lately (`recordListUse`).
    var maximumLists = 64
    /// Seconds between two records of one list's use by this process (`recordListUse`).
    var useResolution = 60.0
    /// Lists read since their use was last recorded.
    var used = Set<String>()
    /// When this process last recorded each list's use (`Clock.monotonic`).
    var useRecorded: [String: Double] = [:]
    /// More items changed since a list was made than this, and the list is made again.
    var changedRows = 2_000
    /// Off: every page is a full read (the tests' reference).
    var enabled = true
    /// Pages answered from lists (and not by a full read), for tests.
    var answered = 0
    /// Of those, pages read from the lists of a shorter prefix of their word (`rankedFromParentLists`).
    var fromParentLists = 0
    /// Lists the searches wanted, made after their snapshot ends: key → how to make it.
    var wanted: [String: PostgresRankListSpec] = [:]
    /// The last ranked read found a list of its query missing.
    var missing = false
    /// Keys of words counted and found not common, so they are not counted at every search.
    var uncommon = Set<String>()
    /// Keys of words counted and found common (a pair's search may ask twice).
    var common = Set<String>()
    /// The server's estimate of how many items hold each of the documents' most common words
    /// (`commonByStatistics`), and when it was read (`Clock.monotonic`); nil until then.
    var documentStatistics: [String: Double]?
    var documentStatisticsRead = 0.0
    /// Counts of a word's matches run (`matchCount`), for tests.
    var exactCounts = 0
    /// A search of common words whose lists are missing makes them before it reads its page
    /// (`PostgresStore.query`), unless the server refused to write a list in this process (a
    /// role that may only read, a standby): then it reads every match, and the lists are tried
    /// after it. A list not made for contention (`busy`) is tried again by the next search.
    var makeFirst = true
    /// As `makeFirst`, for the list of several words together (made when the words' own lists
    /// could not prove a page, so possibly in the round after those were made first).
    var makeTogetherFirst = true
    var makingFailed = false
    /// The last ranked read of several words found their own lists but could not prove its
    /// page from them, and their list together is missing: that list.
    var togetherMissing: PostgresRankListSpec?
    /// The page just read is empty because its lists are to be made first.
    var pageWaitsForLists = false
    /// The index's average length has moved too far from the pinned one (`repinIfWanted`).
    var repin = false
    /// Units' document frequencies by phrase, counted while the items' write count was
    /// `frequenciesAt` (`PostgresStore.scoring`).
    var frequencies: [String: Int] = [:]
    var frequenciesAt: Int64 = -1
    /// Whether some bundle declares an attribute searchable but not by default, read while
    /// `frequenciesAt` holds; nil until then.
    var hiddenText: Bool?
    /// Document frequencies counted (neither kept in the process nor in `unit_frequencies`), for tests.
    var counted = 0
    /// Reads made again because they reached the prefix pass of a deferred count, for tests.
    var prefixRereads = 0
    /// Those counted since the last write of them to `unit_frequencies` (`keepFrequencies`), for
    /// the write count `frequenciesAt`.
    var unkept: [String: Int] = [:]
    /// The snapshot the counts of `frequenciesAt` are of, and the items' `resets` in it: what a
    /// kept count records, to be brought up to date after writes (`PostgresStore.documentFrequency`).
    var countSnapshot: (snapshot: String, resets: Int64)?
    /// The most items gone the log keeps for the counts before the purge duty lets go of it
    /// (`PostgresStore.letGoOfALongCountLog`).
    var longestCountLog = 100_000
    /// Counts brought up to date from the writes since they were kept, for tests.
    var deltas = 0
    /// Document frequencies counted in the read that made a word's list (`countsToo`), for tests.
    var countedWithLists = 0
}

/// One word of a query as a rank list (a pass of it, for a one-word query), or a query's words
/// together: its key, which items it holds and their score.
struct PostgresRankListSpec {
    var key: String
    var pass: Int
    var query: PostgresStore.PreparedPostgresQuery
    var unit: RankingUnit
    /// `whole`: the word as typed; `prefixOnly`: as a prefix and not as typed (the second
    /// pass); `starred`: a `*` word, as a prefix; `together`: the items holding every word of
    /// `together` as the first pass has them (as typed, a `*` word as a prefix), by the sum of
    /// their scores.
    enum Kind: String { case whole = "=", prefixOnly = "+", starred = "*", together = "&" }
    var kind: Kind
    /// The words of a `together` list.
    var together: [RankingUnit] = []
    /// Their tokens in its key, each as the list holds it (a shorter prefix of the query's
    /// word, for a list read in place of the query's own).
    var tokens: [String] = []
    /// The read that makes a word's list also counts the items its pass matches, every
    /// generation and expired ones too: the word's document frequency, not counted before
    /// (`PostgresStore.countsWithLists`).
    var countsToo = false

    /// The items the list holds, as a condition over `items i` and its attributes `x.j`.
    func match(_ compiler: inout PostgresQueryCompiler) -> String {
        switch kind {
        case .whole: return compiler.unitMatch(unit, prefix: false)
        case .starred: return compiler.unitMatch(unit, prefix: true)
        case .prefixOnly: return "(\(compiler.unitMatch(unit, prefix: true)) AND NOT \(compiler.unitMatch(unit, prefix: false)))"
        case .together: return "(" + together.map { compiler.unitMatch($0, prefix: $0.starred) }.joined(separator: " AND ") + ")"
        }
    }

    /// What the list orders its items by: for one word, its impact in the pass (the page's score
    /// is that times the word's rarity, the same for every item); for words together, the
    /// page's score, the sum of each one's rarity times its impact (`rarities`).
    func score(_ compiler: inout PostgresQueryCompiler) -> String {
        guard kind == .together else { return compiler.unitImpact(unit, prefix: kind != .whole) }
        return together.map { "(" + compiler.unitScore($0, prefix: $0.starred) + ")" }.joined(separator: " + ")
    }

    /// The rarity, in `scoring`, of this list's word in its pass (nil for words together).
    /// Throws `PrefixRarityDeferred` for the prefix pass's while its count waits
    /// (`PostgresStore.ranked`).
    func rarity(_ scoring: PostgresQueryCompiler.Scoring?) throws -> Double? {
        guard kind != .together else { return nil }
        if kind != .whole, scoring?.prefixDeferred == true { throw PrefixRarityDeferred() }
        return scoring?.rarities[FullText.phrase(unit, prefix: kind != .whole)]
    }

    /// The rarities, in `scoring`, of the words of a list together, in the order of its key's
    /// words (a `*` word marked): what the list keeps of the rarities it was ordered by.
    func keyedRarities(_ scoring: PostgresQueryCompiler.Scoring?) -> [Double] {
        zip(together, tokens).map { unit, token in
            (token + (unit.starred ? "*" : ""), scoring?.rarities[FullText.phrase(unit, prefix: unit.starred)] ?? .nan)
        }.sorted { $0.0 < $1.0 }.map(\.1)
    }
}

/// A read needs the prefix pass's rarity, whose count `PostgresStore.scoring` put off: the read
/// is made again with it.
struct PrefixRarityDeferred: Error {}
