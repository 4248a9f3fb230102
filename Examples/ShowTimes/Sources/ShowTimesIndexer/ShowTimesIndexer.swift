import Foundation
import ReindexExtension

/// A cinema's listings: films, and screenings of them that expire when they start.
///
/// The catalogue is generated deterministically from today's date (the example needs no data
/// file): `SHOWTIMES_FILMS` films (default 60), each shown 4 times a day for 14 days. That is
/// several thousand items, so `reindexAll` sends them in batches of 250 and commits each with its
/// position as client state; an interrupted run resumes where it stopped.
struct Catalogue {
    struct Film { var number: Int; var title: String; var genre: String; var director: String; var minutes: Int; var synopsis: String; var rating: Double }
    struct Screening { var film: Film; var start: Date; var hall: Int }

    static let adjectives = ["Silent", "Crimson", "Last", "Hidden", "Electric", "Northern", "Paper", "Golden", "Midnight", "Glass", "Wild", "Distant"]
    static let nouns = ["Harbour", "Orchard", "Signal", "Frontier", "Lantern", "Tide", "Engine", "Garden", "Summit", "Archive", "River", "Comet"]
    static let genres = ["Drama", "Comedy", "Thriller", "Documentary", "Animation", "Science Fiction"]
    static let directors = ["Mira Okonkwo", "Jules Ferreira", "Anneli Virtanen", "Kwame Mensah", "Lucía Ortega", "Tomasz Wróbel"]

    let films: [Film]
    let screenings: [Screening]

    init(filmCount: Int, now: Date) {
        var films: [Film] = []
        for n in 0..<filmCount {
            let title = "The \(Self.adjectives[n % Self.adjectives.count]) \(Self.nouns[(n * 5 + n / Self.nouns.count) % Self.nouns.count])" + (n >= 144 ? " \(n / 144 + 1)" : "")
            let genre = Self.genres[n % Self.genres.count]
            films.append(Film(number: n, title: title, genre: genre, director: Self.directors[(n * 7) % Self.directors.count], minutes: 85 + (n * 13) % 70,
                              synopsis: "A \(genre.lowercased()) about a \(Self.nouns[(n * 3) % Self.nouns.count].lowercased()) and the people who keep it going.",
                              rating: Double((n * 7) % 9 + 2) / 2))  // 1 to 5 stars in halves, a third of them 4 or more
        }
        // Midnight (UTC) today, then four screenings a day for two weeks.
        let today = Double(Int(now.timeIntervalSince1970) / 86400 * 86400)
        var screenings: [Screening] = []
        for day in 0..<14 {
            for (slot, hour) in [13.0, 16.5, 19.0, 21.5].enumerated() {
                for film in films where (film.number + day + slot) % 4 == 0 || filmCount <= 8 {
                    let start = Date(timeIntervalSince1970: today + Double(day) * 86400 + hour * 3600)
                    if start > now { screenings.append(Screening(film: film, start: start, hall: 1 + (film.number + slot) % 6)) }
                }
            }
        }
        self.films = films
        self.screenings = screenings
    }

    /// Every item in a fixed order: films first, then screenings by time.
    var items: [SearchableItem] {
        films.map { film in
            SearchableItem(
                uniqueIdentifier: "film.\(film.number)", domainIdentifier: "com.example.showtimes.film",
                attributes: .init(title: film.title, contentDescription: "\(film.genre) · \(film.minutes) min · directed by \(film.director). \(film.synopsis)",
                                  contentType: "public.movie", keywords: [film.genre, "film"], authors: [film.director], rating: film.rating))
        } + screenings.map { screening in
            let stamp = Int(screening.start.timeIntervalSince1970)
            return SearchableItem(
                uniqueIdentifier: "screening.\(screening.film.number).\(stamp)", domainIdentifier: "com.example.showtimes.screening",
                expirationDate: screening.start,
                attributes: .init(title: "\(screening.film.title) — \(ISO8601DateFormatter().string(from: screening.start))",
                                  contentDescription: "Hall \(screening.hall) · \(screening.film.genre) · \(screening.film.minutes) min",
                                  contentType: "public.calendar-event", keywords: ["screening", screening.film.genre], startDate: screening.start,
                                  endDate: screening.start.addingTimeInterval(Double(screening.film.minutes) * 60)))
        }
    }
}

struct ShowTimesIndexer: IndexRequestHandler {
    var extensionName: String { "ShowTimes" }
    var extensionVersion: String { "1.0.0" }
    static let batchSize = 250

    var environment: [String: String] { ProcessInfo.processInfo.environment }
    var catalogue: Catalogue { Catalogue(filmCount: Int(environment["SHOWTIMES_FILMS"] ?? "") ?? 60, now: Date()) }

    func log(_ text: String) { FileHandle.standardError.write(Data("showtimes: \(text)\n".utf8)) }

    func reindexAll(_ index: SearchableIndex) async throws {
        let items = catalogue.items
        // Resume after the last committed batch of an interrupted attempt.
        var position = 0
        if let state = index.clientState, let text = String(bytes: state, encoding: .utf8), let saved = Int(text), saved <= items.count {
            position = saved
            log("resuming reindexAll at item \(position) of \(items.count) (reason: \(index.reason))")
        } else {
            log("indexing \(items.count) items from the start (reason: \(index.reason))")
        }
        var batches = 0
        while position < items.count {
            let end = min(items.count, position + Self.batchSize)
            try await index.put(Array(items[position..<end]))
            position = end
            try await index.commitBatch(clientState: Array(String(position).utf8))
            index.progress(completed: position, total: items.count, message: "batch \(batches + 1)")
            batches += 1
            // For demonstrations and tests: stop abruptly (no acknowledgement) after some batches, once.
            if let limit = Int(environment["SHOWTIMES_CRASH_AFTER_BATCHES"] ?? ""), batches == limit,
               let marker = environment["SHOWTIMES_CRASH_ONCE_FILE"], !FileManager.default.fileExists(atPath: marker) {
                _ = FileManager.default.createFile(atPath: marker, contents: Data())
                log("stopping abruptly on purpose after \(batches) batches (position \(position))")
                exit(70)
            }
        }
        log("done: \(items.count) items in \(batches) batches")
    }

    func reindexItems(identifiers: [String], index: SearchableIndex) async throws {
        let byID = Dictionary(catalogue.items.map { ($0.uniqueIdentifier, $0) }, uniquingKeysWith: { a, _ in a })
        let present = identifiers.compactMap { byID[$0] }
        let gone = identifiers.filter { byID[$0] == nil }
        if !present.isEmpty { try await index.put(present) }
        if !gone.isEmpty { try await index.delete(identifiers: gone) }
        log("re-indexed \(present.count), removed \(gone.count) (reason: \(index.reason))")
    }
}

@main
struct Main {
    static func main() async {
        await ExtensionMain.run(ShowTimesIndexer())
    }
}
