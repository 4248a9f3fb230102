import ReindexStore
import ReindexSystem
import ReindexProtocol

/// Recorded sessions: every protocol line of one session in both directions with its time, kept
/// per bundle beside the logs (`HostPaths.recordingsDirectory`) for `reindex runs` and
/// `reindex debug --replay`.
///
/// A recording is one file, `<started ms>-r<request id>.jsonl`, mode 0600 in a 0700 directory.
/// Its first line is a header object; then each message is a line of metadata
/// (`{"t":SECONDS,"d":"host"|"ext"}`) followed by the message's own line, byte for byte (a
/// protocol line never holds a newline, so nothing needs escaping and the bytes come back
/// exact); events are lines of their own (`{"t":…,"event":"stdoutEnded"|"lineTooLong"|
/// "requestEnded"}`), and the last line says how the session ended (`"event":"end"`). Times
/// are seconds on a monotonic clock since the session started.
public enum Recording {
    /// The newest sessions kept per bundle.
    public static let maximumCount = 20
    /// The bytes kept per bundle; `REINDEX_RECORDINGS_MAX_BYTES` overrides it (for tests).
    public static let defaultMaximumBytes: Int64 = 64 << 20
    public static let formatVersion: Int64 = 1

    public static func maximumBytes(_ environment: [String: String]) -> Int64 {
        environment["REINDEX_RECORDINGS_MAX_BYTES"].flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil } ?? defaultMaximumBytes
    }

    /// What a recording is of (its first line).
    public struct Header: Sendable, Equatable {
        public var hostVersion: String
        public var bundleIdentifier: String
        public var requestID: Int64
        public var request: RequestKind
        public var reason: String
        /// Wall-clock time the session started, seconds since the epoch.
        public var started: Double
        /// Which command ran the session: run, serve or debug.
        public var mode: String

        public init(hostVersion: String = ReindexVersion.string, bundleIdentifier: String, requestID: Int64, request: RequestKind,
                    reason: String, started: Double, mode: String) {
            self.hostVersion = hostVersion
            self.bundleIdentifier = bundleIdentifier
            self.requestID = requestID
            self.request = request
            self.reason = reason
            self.started = started
            self.mode = mode
        }

        var json: JSONValue {
            .object([
                ("recording", .integer(Recording.formatVersion)), ("hostVersion", .string(hostVersion)),
                ("bundleIdentifier", .string(bundleIdentifier)), ("requestId", .integer(requestID)),
                ("request", .string(request.rawValue)), ("reason", .string(reason)),
                ("started", .string(RFC3339.format(started))), ("mode", .string(mode)),
            ])
        }
    }

    /// One thing a recording holds after its header.
    public enum Event: Sendable, Equatable {
        case message(from: Side, time: Double, line: [UInt8])
        /// The extension's stdout ended.
        case stdoutEnded(time: Double)
        /// The extension sent a line over the limit (its bytes are not kept).
        case lineTooLong(time: Double)
        /// The request was over (acknowledged, refused or failed): what follows came after.
        case requestEnded(time: Double)
    }

    public enum Side: String, Sendable { case host, ext }

    /// How the session ended (the last line), absent when the host stopped before writing it.
    public struct Ending: Sendable, Equatable {
        public var outcome: String
        public var messages: Int
        public var error: String?
        /// The recording reached the bundle's byte bound and stopped keeping messages.
        public var truncated: Bool
    }

    /// A recording read back.
    public struct Loaded: Sendable {
        public var path: String
        public var header: Header
        public var events: [Event]
        public var ending: Ending?
        public var messages: Int { events.reduce(0) { if case .message = $1 { $0 + 1 } else { $0 } } }
    }

    /// One line of `reindex runs`.
    public struct Summary: Sendable {
        public var path: String
        public var header: Header
        /// "acknowledged", a failure kind, or "unfinished" (no ending: the host stopped first).
        public var outcome: String
        public var messages: Int
        public var error: String?
        public var truncated: Bool
    }

    /// The recordings of one bundle, newest first. Files that cannot be read are in `problems`.
    public static func list(directory: String) -> (summaries: [Summary], problems: [ReindexError]) {
        var summaries: [Summary] = []
        var problems: [ReindexError] = []
        for name in (FileSystem.list(directory) ?? []).reversed() where name.hasSuffix(".jsonl") {
            let path = FileSystem.join(directory, name)
            do {
                let loaded = try load(path)
                summaries.append(Summary(path: path, header: loaded.header, outcome: loaded.ending?.outcome ?? "unfinished",
                                         messages: loaded.ending?.messages ?? loaded.messages, error: loaded.ending?.error,
                                         truncated: loaded.ending?.truncated ?? false))
            } catch {
                problems.append(error)
            }
        }
        return (summaries, problems)
    }

    /// The newest recording of request `requestID` (a retried request has one per attempt), or nil.
    public static func find(requestID: Int64, directory: String) -> String? {
        let suffix = "-r\(requestID).jsonl"
        return (FileSystem.list(directory) ?? []).filter { $0.hasSuffix(suffix) }.last.map { FileSystem.join(directory, $0) }
    }

    /// Reads a recording; a file that is not one, or is cut short, is an `invalidData` error
    /// naming the file and the line.
    public static func load(_ path: String) throws(ReindexError) -> Loaded {
        let bytes = try FileSystem.read(path, limit: Int(max(defaultMaximumBytes, 1 << 20)) * 2)
        func bad(_ line: Int, _ what: String) -> ReindexError {
            ReindexError(.invalidData, "\(path): line \(line): \(what); the recording is damaged (delete it, or replay another one: 'reindex runs BUNDLE_ID' lists them)")
        }
        var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
        // A complete file ends with a newline, so the last piece is empty.
        guard lines.last?.isEmpty == true else {
            throw bad(lines.count, "the file is truncated (its last line has no end)")
        }
        lines.removeLast()
        func object(_ n: Int) throws(ReindexError) -> JSONValue {
            let value: JSONValue
            do { value = try JSONParser.parse(Array(lines[n])) } catch { throw bad(n + 1, "not JSON (\(error))") }
            guard case .object = value else { throw bad(n + 1, "not a JSON object") }
            return value
        }
        guard !lines.isEmpty else { throw bad(1, "the file is empty") }
        let first = try object(0)
        guard first["recording"]?.integerValue == formatVersion,
              let hostVersion = first["hostVersion"]?.stringValue, let bundle = first["bundleIdentifier"]?.stringValue,
              let requestID = first["requestId"]?.integerValue, let kind = first["request"]?.stringValue.flatMap(RequestKind.init(rawValue:)),
              let reason = first["reason"]?.stringValue, let started = first["started"]?.stringValue.flatMap(RFC3339.parse),
              let mode = first["mode"]?.stringValue else {
            throw bad(1, "not a recording header of format \(formatVersion)")
        }
        let header = Header(hostVersion: hostVersion, bundleIdentifier: bundle, requestID: requestID, request: kind, reason: reason,
                            started: started, mode: mode)
        var events: [Event] = []
        var ending: Ending?
        var n = 1
        while n < lines.count {
            let meta = try object(n)
            guard let time = meta["t"]?.doubleValue else { throw bad(n + 1, "no time (\"t\")") }
            if ending != nil { throw bad(n + 1, "a line after the session's end") }
            if let side = meta["d"]?.stringValue {
                guard let from = Side(rawValue: side) else { throw bad(n + 1, "\"d\" is neither \"host\" nor \"ext\"") }
                guard n + 1 < lines.count else { throw bad(n + 2, "the file is truncated (a message's line is missing)") }
                events.append(.message(from: from, time: time, line: Array(lines[n + 1])))
                n += 2
                continue
            }
            switch meta["event"]?.stringValue {
            case "stdoutEnded": events.append(.stdoutEnded(time: time))
            case "lineTooLong": events.append(.lineTooLong(time: time))
            case "requestEnded": events.append(.requestEnded(time: time))
            case "end":
                ending = Ending(outcome: meta["outcome"]?.stringValue ?? "unknown", messages: Int(meta["messages"]?.integerValue ?? 0),
                                error: meta["error"]?.stringValue, truncated: meta["truncated"]?.boolValue ?? false)
            default: throw bad(n + 1, "neither a message nor a known event")
            }
            n += 1
        }
        return Loaded(path: path, header: header, events: events, ending: ending)
    }

    /// Keeps the newest `maximumCount` recordings in `directory` that fit in `maximumBytes`
    /// together; removes the rest, oldest first.
    static func prune(directory: String, maximumBytes: Int64) {
        let names = (FileSystem.list(directory) ?? []).filter { $0.hasSuffix(".jsonl") }
        var kept = 0
        var bytes: Int64 = 0
        for name in names.reversed() {
            let path = FileSystem.join(directory, name)
            let size = FileSystem.status(path)?.size ?? 0
            if kept < maximumCount && (kept == 0 || bytes + size <= maximumBytes) {
                kept += 1
                bytes += size
            } else {
                unlink(path)
            }
        }
    }
}
