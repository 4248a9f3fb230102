import Foundation
import ReindexHost

/// An application that indexes its own notes, as a Core Spotlight app does with
/// `CSSearchableIndex`: no extension, no host process — it writes the index directly through
/// `LocalIndex`, in batches, each ended with a client state (how many lines of its change log
/// are indexed), so a run that stops anywhere resumes where the last batch ended.
///
///     NotesApp --index PATH|postgresql://… --log CHANGES.jsonl [--bundle ID] [--batch N] [--delay SECONDS]
///
/// The change log is the app's own data: one JSON object a line —
/// `{"op": "put", "id": 7, "folder": "work", "title": "…", "body": "…"}`,
/// `{"op": "delete", "id": 7}` or `{"op": "deleteFolder", "folder": "work"}`.
/// `--delay` waits between changes, to watch a batch in progress (or interrupt it).
@main
struct NotesApp {
    /// The app's model type: indexed by naming its identifier, domain and attributes.
    struct Note: Identifiable, Searchable {
        var id: Int
        var folder: String
        var title: String
        var body: String

        var searchableDomain: String? { "notes.\(folder)" }
        var searchableAttributes: SearchableItemAttributes {
            SearchableItemAttributes(title: title, textContent: body, contentType: "public.plain-text", keywords: [folder])
        }
    }

    struct Change: Decodable {
        var op: String
        var id: Int?
        var folder: String?
        var title: String?
        var body: String?
    }

    static func main() {
        do {
            try run(Array(CommandLine.arguments.dropFirst()))
        } catch let error as ReindexError {
            FileHandle.standardError.write(Data("NotesApp: error: \(error.message)\n".utf8))
            exit(error.code.exitCode)
        } catch {
            FileHandle.standardError.write(Data("NotesApp: error: \(error)\n".utf8))
            exit(1)
        }
    }

    static func run(_ arguments: [String]) throws {
        var options: [String: String] = [:]
        var rest = arguments[...]
        while let name = rest.popFirst() {
            guard name.hasPrefix("--"), let value = rest.popFirst() else {
                throw ReindexError(.usage, "usage: NotesApp --index PATH --log CHANGES.jsonl [--bundle ID] [--batch N] [--delay SECONDS]")
            }
            options[String(name.dropFirst(2))] = value
        }
        guard let path = options["index"], let log = options["log"] else {
            throw ReindexError(.usage, "usage: NotesApp --index PATH --log CHANGES.jsonl [--bundle ID] [--batch N] [--delay SECONDS]")
        }
        let batchSize = max(1, Int(options["batch"] ?? "") ?? 100)
        let delay = Double(options["delay"] ?? "") ?? 0

        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: true)
        let index = try LocalIndex(path: path, bundleIdentifier: options["bundle"] ?? "com.example.notes")

        // Where the last batch ended, by this process or one before it.
        var next = try index.fetchLastClientState().flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0
        say(next == 0 ? "starting from the first line" : "resuming after line \(next)")
        var number = 0
        while next < lines.count {
            number += 1
            let end = min(next + batchSize, lines.count)
            // All or nothing: if anything in here throws, or the process dies, none of these
            // changes is applied and the client state stays `next`.
            let counts = try index.batch { index in
                for line in next..<end {
                    try apply(try JSONDecoder().decode(Change.self, from: Data(lines[line].utf8)), line: line + 1, to: index)
                    say("batch \(number): line \(line + 1) staged")
                    if delay > 0 { usleep(useconds_t(delay * 1_000_000)) }
                }
                return Array(String(end).utf8)
            }
            say("batch \(number): lines \(next + 1)-\(end) indexed (\(counts.put) put, \(counts.deleted) deleted)")
            next = end
        }
        say("indexed through line \(next)")
    }

    /// A line on stdout, written at once (a watcher sees each batch as it goes).
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func apply(_ change: Change, line: Int, to index: LocalIndex) throws {
        switch change.op {
        case "put":
            guard let id = change.id, let folder = change.folder else { throw ReindexError(.invalidData, "line \(line): a put needs id and folder") }
            try Note(id: id, folder: folder, title: change.title ?? "", body: change.body ?? "").index(in: index)
        case "delete":
            guard let id = change.id else { throw ReindexError(.invalidData, "line \(line): a delete needs id") }
            try index.delete(identifiers: [String(id)])
        case "deleteFolder":
            guard let folder = change.folder else { throw ReindexError(.invalidData, "line \(line): deleteFolder needs folder") }
            try index.delete(domainIdentifiers: ["notes.\(folder)"])
        default:
            throw ReindexError(.invalidData, "line \(line): unknown op \(change.op)")
        }
    }
}
