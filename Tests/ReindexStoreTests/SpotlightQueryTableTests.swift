import Foundation
@testable import ReindexStore
import ReindexProtocol
import XCTest

/// Query strings in Core Spotlight's syntax — from Apple's documentation and from public code
/// that builds them for `mdfind`, `MDQuery`, `NSMetadataQuery` and `CSSearchQuery` — each with
/// the items it must find on the fixture of `PostgresQueryAgreementTests` (films.py,
/// catalogue.py and the places), on SQLite and on PostgreSQL alike. A string written for
/// files (`kMDItemFSName`, …) is kept in its form with an attribute of this index, and the
/// source says so ("the form of"); strings naming what the index does not have must fail, on
/// both backends, with the same message.
///
/// Time is fixed: now is 2026-01-15T12:00:00Z, a Thursday, in UTC, weeks starting on Sunday.
extension PostgresQueryAgreementTests {
    enum Expected {
        case ids([String])
        /// A failure whose message contains this.
        case error(String)
    }

    static let appleSyntax = "Apple, File Metadata Query Expression Syntax (developer.apple.com/library/archive/documentation/Carbon/Conceptual/SpotlightQuery/Concepts/QueryFormat.html)"
    static let mdfindTimes = "simoncblyth/env md/md.bash (mdfind 'kMDItemFSContentChangeDate > $time.now(-6000)', $time.iso(\"2008-08-03 12:22:00 +0800\"))"
    static let mdfindName = "simoncblyth/env md/md.bash (mdfind \"kMDItemFSName == '*.tex'\")"
    static let zshkit = "anthonygelibert/zshkit 06_finding.zsh (mdfind \"kMDItemFSName == '$*'wc\")"
    static let cjlv = "missdeer/cjlv mdfindwrapper.mm (MDQueryCreate with * == \"%1\"wcd)"
    static let timeFunctions = "wkronmiller/mcp-server-file-search SEARCH_SYNTAX.md ($time.today(), $time.this_week(), $time.next_month(), …)"

    static let spotlightTable: [(query: String, source: String, expected: Expected)] = [
        // Comparisons and the modifiers, in Apple's bracket form and after the string.
        (#"kMDItemAuthors ==[c] "Steve""#, appleSyntax + ", its example", .ids(["p.7", "p.8"])),
        (#"kMDItemAuthors == "Steve""#, appleSyntax + ": without c, case counts", .ids(["p.7"])),
        (#"kMDItemTitle == "Dune""#, appleSyntax + ", attribute == value", .ids(["film.dune"])),
        (#"kMDItemTitle == "dune""#, appleSyntax + ": without c, case counts", .ids([])),
        (#"kMDItemTitle ==[c] "dune""#, appleSyntax + ", modifier c", .ids(["film.dune"])),
        (#"kMDItemTitle ==[cd] "resume""#, appleSyntax + ", modifiers cd", .ids(["p.8"])),
        (#"kMDItemTitle ==[c] "resume""#, appleSyntax + ": without d, accents count", .ids([])),
        (#"kMDItemTitle ==[d] "Resume""#, appleSyntax + ", modifier d", .ids(["p.8"])),
        (#"kMDItemTitle == "Résumé""#, appleSyntax, .ids(["p.8"])),
        (#"title ==[c] "dunes of ürgüp""#, appleSyntax + ", modifier c", .ids(["film.dunes"])),
        (#"title == "Ürgüp*""#, appleSyntax + ", wildcard *", .ids(["p.3"])),
        (#"title ==[d] "Urgup*""#, appleSyntax + ", modifier d with *", .ids(["p.3"])),
        (#"kMDItemTitle == "*Controller""#, appleSyntax + ", wildcard *", .ids(["p.7"])),
        (#"kMDItemTitle == '*controller'"#, appleSyntax + ": single quotes; without c, case counts", .ids([])),
        (#"kMDItemTitle == '*controller'c"#, appleSyntax + ", modifier after the string", .ids(["p.7"])),
        (#"kMDItemTitle ==[c] "*CONTROLLER""#, appleSyntax, .ids(["p.7"])),
        (#"kMDItemTitle == "R?sum?""#, appleSyntax + ", wildcard ?", .ids(["p.8"])),
        (#"kMDItemTitle == "Picture ?""#, appleSyntax + ", wildcard ?", .ids((0...9).map { "film.00\($0)" })),
        (#"kMDItemTitle == "Picture 1?""#, appleSyntax + ", wildcard ?", .ids((10...19).map { "film.0\($0)" })),
        (#"kMDItemTitle == "Star\*Bucks*""#, appleSyntax + ", \\* is a star", .ids(["p.6"])),
        (#"title == 'Star\*Bucks 100% _under_'"#, appleSyntax + ", escapes in single quotes", .ids(["p.6"])),
        (#"title == 'A "quoted" \\ word'"#, appleSyntax + ": \" in single quotes, \\\\ a backslash", .ids(["p.4"])),
        (#"title == 'Harbour*'"#, appleSyntax, .ids(["b.2", "p.2"])),
        (#"kMDItemContentType == "com.adobe.pdf""#, appleSyntax + ", kMDItemContentType", .ids(["p.8"])),
        (#"kMDItemContentType == "public.s*""#, appleSyntax, .ids(["p.7"])),
        (#"kMDItemContentType == "public.plain-text" || kMDItemContentType == "com.microsoft.word.doc""#, appleSyntax + ", ||", .ids(["p.10", "p.9"])),
        (#"kMDItemContentType != "public.movie" && bundle:com.example.places"#, appleSyntax + ", !=", .ids((1...10).map { "p.\($0)" })),
        (#"kMDItemKeywords ==[c] "swift""#, appleSyntax + ", a list matches when any element does", .ids(["p.7"])),
        (#"kMDItemKeywords == "swift""#, appleSyntax, .ids([])),
        (#"kMDItemKeywords ==[cd] "APPKIT" || kMDItemKeywords == "ml""#, appleSyntax, .ids(["p.7", "p.9"])),
        (#"kMDItemDisplayName == "*.pdf""#, the(mdfindName), .ids(["p.8"])),
        (#"kMDItemAlternateNames == "Le Port""#, appleSyntax, .ids(["p.2"])),
        (#"kMDItemTextContent == "*foo-bar""#, appleSyntax, .ids(["p.1"])),
        (#"(kMDItemContentType == "com.adobe.pdf" || kMDItemContentType == "public.swift-source") && kMDItemStarRating >= 4"#, appleSyntax + ", && and ( )", .ids(["p.7"])),
        (#"kMDItemLatitude < 40"#, appleSyntax + ", < on numbers", .ids(["p.3"])),
        // Word-based: the words in order, through the full-text index.
        (#"kMDItemTitle == 'report'wc"#, the(zshkit), .ids(["p.10"])),
        (#"* == "naive"wcd"#, cjlv, .ids(["p.9"])),
        (#"* == "desert"cdw"#, appleSyntax + ", * and modifier w", .ids(["film.dune"])),
        (#"kMDItemTitle ==[cdw] "quarterly report""#, appleSyntax + ", modifiers cdw in brackets", .ids(["p.10"])),
        // Word-based without both c and d: Core Spotlight's words, case and accents counting.
        (#"kMDItemTitle == "Window"w"#, appleSyntax + ", modifier w: words split at lower-to-upper changes", .ids(["p.7"])),
        (#"kMDItemTitle == "window"w"#, appleSyntax + ": without c, case counts", .ids([])),
        (#"kMDItemTitle == "window"cw"#, appleSyntax + ", modifiers cw", .ids(["p.7"])),
        (#"kMDItemTitle == "Wind*"w"#, appleSyntax + ", w with *", .ids(["p.7"])),
        (#"kMDItemTitle ==[w] "Window Controller""#, appleSyntax + ", [w]: the words in order", .ids(["p.7"])),
        (#"kMDItemTitle ==[w] "Controller Window""#, appleSyntax, .ids([])),
        (#"kMDItemTitle == "Resume"dw"#, appleSyntax + ", modifiers dw", .ids(["p.8"])),
        (#"kMDItemAuthors == "STEVE"w"#, appleSyntax + ", w on a list", .ids(["p.8"])),
        (#"kMDItemContentType == "swift"w"#, appleSyntax + ", w on any string attribute", .ids(["p.7"])),
        (#"domainIdentifier == "brooklyn"w"#, appleSyntax + ", w on any string attribute", .ids(["p.2"])),
        (#"* == "Bucks"w"#, appleSyntax + ", * with w", .ids(["p.6"])),
        (#"title == "Zoë"w"#, appleSyntax + ", w with accents", .ids(["p.1"])),
        (#"title == "Zoe"w"#, appleSyntax + ": without d, accents count", .ids([])),
        (#"title == "zoe"cdw"#, appleSyntax + ", cdw through the full-text index", .ids(["p.1"])),
        (#"kMDItemTitle == "window"cdw"#, appleSyntax + ", cdw splits at lower-to-upper changes too", .ids(["p.7"])),
        (#"kMDItemTitle ==[cdw] "WINDOW controller""#, appleSyntax + ", [cdw]: the parts in order", .ids(["p.7"])),
        (#"* == "controller"cdw"#, appleSyntax + ", * with cdw finds a part", .ids(["p.7"])),
        (#"kMDItemKeywords == "kit"cdw"#, appleSyntax + ", cdw on a list: AppKit holds Kit", .ids(["p.7"])),
        (#"kMDItemTitle == "mywindowcontroller"cdw"#, appleSyntax + ", cdw: the whole word still matches", .ids(["p.7"])),
        ("windowcontr", "plain words find the parts too (as Spotlight's search field)", .ids([])),
        ("window controller", "plain words find the parts too (as Spotlight's search field)", .ids(["p.7"])),
        (#"kMDItemTitle == "Ürgüp"w"#, appleSyntax, .ids(["film.dunes", "p.3"])),
        (#"kMDItemTextContent == "foo"w"#, appleSyntax + ", w splits at punctuation", .ids(["p.1"])),
        (#"kMDItemTitle != "Window"w && bundle:com.example.places && kMDItemContentType == "public.s*""#, appleSyntax + ", != with w", .ids([])),
        // Presence.
        ("kMDItemStarRating == * && bundle:com.example.places", appleSyntax + ", == * (the attribute is there)", .ids(["p.4", "p.5", "p.7", "p.8"])),
        ("kMDItemStarRating != * && bundle:com.example.places", appleSyntax + ", != *", .ids(["p.1", "p.10", "p.2", "p.3", "p.6", "p.9"])),
        ("kMDItemContentCreationDate == *", appleSyntax + ", == *", .ids(["p.10", "p.7", "p.8", "p.9"])),
        ("kMDItemAuthors == * && bundle:com.example.places", appleSyntax + ", == * on a list", .ids(["p.2", "p.7", "p.8"])),
        ("kMDItemDisplayName == *", appleSyntax, .ids(["p.1", "p.5", "p.8"])),
        ("endDate == *", appleSyntax, .ids(["p.3"])),
        ("pages == *", appleSyntax + ", == * on a declared attribute", .ids(["b.1", "b.2", "b.3", "b.4"])),
        ("published != * && bundle:com.example.catalogue", appleSyntax, .ids(["b.3", "b.4"])),
        ("!(kMDItemStarRating == *) && kMDItemContentCreationDate == *", appleSyntax, .ids(["p.10", "p.9"])),
        // Time.
        ("kMDItemContentCreationDate >= $time.today", appleSyntax + ", $time.today", .ids(["p.9"])),
        ("kMDItemContentCreationDate >= $time.today()", timeFunctions, .ids(["p.9"])),
        ("kMDItemContentCreationDate >= $time.yesterday", timeFunctions + ", $time.yesterday", .ids(["p.10", "p.9"])),
        ("kMDItemContentCreationDate >= $time.today(-1) && kMDItemContentCreationDate < $time.today", appleSyntax + ", $time.today(NUMBER)", .ids(["p.10"])),
        ("kMDItemContentCreationDate > $time.now(-21600)", the(mdfindTimes) + ", $time.now(NUMBER)", .ids(["p.9"])),
        ("kMDItemContentModificationDate > $time.now", appleSyntax + ", $time.now", .ids(["p.10"])),
        ("kMDItemContentCreationDate >= $time.this_week", appleSyntax + ", $time.this_week", .ids(["p.10", "p.9"])),
        ("kMDItemContentCreationDate >= $time.this_week()", timeFunctions, .ids(["p.10", "p.9"])),
        ("kMDItemContentCreationDate >= $time.this_week(-1)", appleSyntax + ", $time.this_week(NUMBER)", .ids(["p.10", "p.7", "p.9"])),
        ("kMDItemContentCreationDate >= $time.last_week && kMDItemContentCreationDate < $time.this_week", timeFunctions + ", $time.last_week", .ids(["p.7"])),
        ("kMDItemContentCreationDate >= $time.this_month", appleSyntax + ", $time.this_month", .ids(["p.10", "p.7", "p.9"])),
        ("kMDItemContentModificationDate >= $time.last_month && kMDItemContentModificationDate < $time.this_month", timeFunctions + ", $time.last_month", .ids(["p.8"])),
        ("kMDItemContentModificationDate >= $time.next_month", timeFunctions + ", $time.next_month", .ids(["p.10"])),
        ("kMDItemContentCreationDate < $time.this_year", appleSyntax + ", $time.this_year", .ids(["p.8"])),
        ("kMDItemContentCreationDate >= $time.this_year(-1) && kMDItemContentCreationDate < $time.this_year", appleSyntax + ", $time.this_year(NUMBER)", .ids(["p.8"])),
        ("startDate >= $time.tomorrow && startDate < $time.next_week", timeFunctions + ", $time.tomorrow and $time.next_week",
         .ids(["film.015", "film.016", "film.043", "film.044", "film.071", "film.072", "film.099", "film.100"])),
        ("startDate >= $time.iso(2026-02-01)", appleSyntax + ", $time.iso", .ids(["film.dune", "film.dunes"])),
        (#"kMDItemContentCreationDate > $time.iso("2026-01-14 12:00:00 +0000")"#, the(mdfindTimes) + ", $time.iso(\"…\")", .ids(["p.10", "p.9"])),
        (#"kMDItemContentCreationDate > $time.iso("2026-01-15 08:30:00 +0900")"#, the(mdfindTimes), .ids(["p.9"])),
        // InRange.
        ("InRange(kMDItemContentCreationDate, $time.this_month, $time.today)", appleSyntax + ", InRange with $time values", .ids(["p.10", "p.7"])),
        ("InRange(kMDItemStarRating, 4, 5) && bundle:com.example.places", appleSyntax + ", InRange", .ids(["p.5", "p.7"])),
        (#"InRange(startDate, "2026-02-01T00:00:00Z", "2026-02-28T00:00:00Z")"#, appleSyntax + ", InRange on dates", .ids(["film.dune", "film.dunes"])),
        ("InRange(pages, 100, 400)", appleSyntax + ", InRange on a declared attribute", .ids(["b.1", "b.2"])),
        ("InRange(kMDItemLatitude, 40, 42)", appleSyntax, .ids(["p.1", "p.2"])),
        // What the index does not have, or a malformed query: an error, never an empty answer.
        ("kMDItemFSName == '*.tex'", mdfindName, .error("at 1: expected a known attribute")),
        ("kMDItemFSContentChangeDate > $time.now(-6000)", mdfindTimes, .error("got 'kMDItemFSContentChangeDate'")),
        ("InRange(kMDItemFSSize, 1, 2)", appleSyntax, .error("at 1: expected a known attribute")),
        ("kMDItemStarRating > *", appleSyntax, .error("at 1: expected == or != before *")),
        (#"title ==[z] "x""#, appleSyntax, .error("at 10: expected a modifier (c, d or w)")),
        ("startDate > $time.fortnight", appleSyntax, .error("at 13: expected a $time value")),
        ("InRange(title, 1, 2)", appleSyntax, .error("at 1: expected a number or date attribute in InRange")),
    ]

    /// A source whose string is kept in its form with an attribute of this index.
    static func the(_ source: String) -> String { "the form of " + source }

    func testCoreSpotlightQueryStringsFindTheSameItemsOnBothBackends() throws {
        XCTAssertGreaterThanOrEqual(Self.spotlightTable.count, 60)
        var options = QueryOptions(limit: 1000)
        options.now = 1_768_478_400  // 2026-01-15T12:00:00Z
        options.timeZoneOffset = 0
        options.firstWeekday = 1
        for (query, source, expected) in Self.spotlightTable {
            let label = "\(query) — \(source)"
            for (name, run) in [("SQLite", { try self.sqlite.query(query, options: options) }),
                                ("PostgreSQL", { try self.postgres.query(query, options: options) })] as [(String, () throws -> QueryPage)] {
                switch expected {
                case .ids(let ids):
                    do {
                        let found = try run().results.map(\.uniqueIdentifier).sorted()
                        XCTAssertEqual(found, ids.sorted(), "\(name): \(label)")
                    } catch {
                        XCTFail("\(name): \(label): \(error)")
                    }
                case .error(let message):
                    XCTAssertThrowsError(try run(), "\(name): \(label)") { error in
                        let text = (error as? ReindexError)?.message ?? "\(error)"
                        XCTAssertTrue(text.contains(message), "\(name): \(label): \(text)")
                        XCTAssertEqual((error as? ReindexError)?.code.exitCode, 65, "\(name): \(label)")
                    }
                }
            }
        }
    }
}
