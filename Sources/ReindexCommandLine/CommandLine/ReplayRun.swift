import ReindexHost
import ReindexStore
import ReindexProtocol
import ReindexSystem

/// `reindex debug BUNDLE_ID --replay REQUEST_ID`: the extension started as debug mode starts it
/// (attach commands, the gate, no timeouts, the trace), the host's side played back from the
/// recording (`ReplayPlayer`) against a scratch index, and the verdict: matched, or the first
/// divergence.
package enum ReplayRun {
    package static func execute(_ command: DebugCommand, requestID: Int64, bundle: DiscoveredBundle, context: CommandContext) throws -> Int32 {
        let directory = context.paths.recordingsDirectory(for: bundle.identifier)
        guard let path = Recording.find(requestID: requestID, directory: directory) else {
            throw ReindexError(.bundleNotFound, "\(bundle.identifier): no recorded session of request \(requestID) in \(directory); 'reindex runs \(bundle.identifier)' lists the recorded ones")
        }
        let recording = try Recording.load(path)
        guard recording.header.bundleIdentifier.lowercased() == bundle.identifier.lowercased() else {
            throw ReindexError(.invalidData, "\(path): the recording is of \(recording.header.bundleIdentifier), not \(bundle.identifier)")
        }
        let recordedBy = recording.header.hostVersion
        if recordedBy != ReindexVersion.string {
            Console.err("warning: \(bundle.identifier): request \(requestID) was recorded by reindex \(recordedBy), this is \(ReindexVersion.string); replaying it all the same (the recorded host lines are sent as they were)")
        }
        Console.err("debug: replaying request \(requestID) (\(recording.header.request.rawValue), \(recording.header.reason), \(recording.ending?.outcome ?? "unfinished")) recorded \(RFC3339.format(recording.header.started)) by '\(recording.header.mode)': \(path)")

        // A scratch index, removed afterwards: the replay never opens the real one.
        let scratch = FileSystem.join(context.environment["TMPDIR"] ?? "/tmp", "reindex-replay-\(getpid())")
        try FileSystem.makeDirectories(scratch)
        defer { _ = FileSystem.removeTree(scratch) }
        var scratchContext = context
        scratchContext.paths.index = FileSystem.join(scratch, "index.sqlite")
        scratchContext.paths.logs = FileSystem.join(scratch, "logs")
        let store = try scratchContext.openIndex()

        let player = ReplayPlayer(recording)
        var options = try command.sessionOptions(bundle: bundle, context: context, scratchContext: scratchContext)
        options.replay = player
        // After a divergence, or at the recording's end, the extension is not left waiting.
        options.exitGraceSeconds = 5
        let selection = RequestSelection(kind: recording.header.request, identifiers: recordedIdentifiers(recording),
                                         reason: ReindexReason(recording.header.reason))
        let (_, result) = try ForcedRun.execute(context: scratchContext, bundle: bundle, selection: selection, options: options,
                                                store: store, printSummary: false)
        if let failure = result?.failure, failure.kind == .cannotStart, player.matchedMessages == 0, player.divergence == nil {
            throw ReindexError(failure.code, failure.message, stderrTail: failure.stderrTail)
        }
        report(player, recording: recording, bundle: bundle, json: context.json)
        return 0
    }

    /// The identifiers of the recorded `reindexItems` (what the scratch queue's request holds).
    private static func recordedIdentifiers(_ recording: Recording.Loaded) -> [String] {
        for case let .message(.host, _, line) in recording.events {
            guard let message = try? JSONParser.parse(line), message["method"]?.stringValue == Method.reindexItems else { continue }
            return message["params"]?["identifiers"]?.arrayValue?.compactMap(\.stringValue) ?? []
        }
        return []
    }

    /// A recorded or received line as JSON when it is JSON, else as a string.
    private static func value(_ line: [UInt8]?) -> JSONValue {
        guard let line else { return .null }
        if let value = try? JSONParser.parse(line) { return value }
        return .string(String(decoding: line, as: UTF8.self))
    }

    private static func text(_ line: [UInt8]?) -> String {
        guard let line else { return "(the end of its output: stdout closed)" }
        return String(decoding: line, as: UTF8.self)
    }

    static func report(_ player: ReplayPlayer, recording: Recording.Loaded, bundle: DiscoveredBundle, json: Bool) {
        let requestID = recording.header.requestID
        if json {
            var members: [(String, JSONValue)] = [
                ("bundleIdentifier", .string(bundle.identifier)), ("requestId", .integer(requestID)),
                ("matched", .bool(player.divergence == nil)), ("messagesCompared", .integer(Int64(player.matchedMessages))),
                ("recordedBy", .string(recording.header.hostVersion)), ("recording", .string(recording.path)),
            ]
            if let divergence = player.divergence {
                members.append(("divergence", .object([
                    ("message", .integer(Int64(divergence.message))),
                    ("expected", value(divergence.expected)), ("got", value(divergence.got)),
                ])))
            }
            Console.json(.object(members))
        } else if let divergence = player.divergence {
            Console.out("\(bundle.identifier): the replay of request \(requestID) diverged at the extension's message \(divergence.message) (\(player.matchedMessages) matched before it)")
            Console.out("  expected: \(text(divergence.expected))")
            Console.out("  got:      \(text(divergence.got))")
        } else {
            Console.out("\(bundle.identifier): the replay of request \(requestID) matched: the extension sent its \(player.matchedMessages) recorded message(s) as recorded")
        }
    }
}
