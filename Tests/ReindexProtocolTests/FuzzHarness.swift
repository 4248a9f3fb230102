import Foundation
import ReindexProtocol

/// What each libFuzzer target in `Fuzz/` does with one input, and which invariants it checks.
///
/// This file is compiled twice: into the test target (FuzzRegressionTests replays the seed corpus
/// and every saved crash input through it) and, by `Scripts/fuzz.sh`, into each fuzz executable,
/// whose entry point traps on a `Violation`. It uses only the public API of ReindexProtocol and
/// calls the same entry points the host and the SDK call, in the same order.
///
/// Each function returns a short description of what the input turned out to be (one string per
/// line, item or manifest), so the tests can assert that the seeds decode as expected.
enum FuzzHarness {
    /// An invariant that does not hold: a bug, even though nothing trapped.
    struct Violation: Error, CustomStringConvertible {
        var description: String
    }

    /// The targets, as named in `Fuzz/corpus/<target>` and in the script's summary.
    static let targets = ["line-decoder", "manifest", "item-validator"]

    /// Runs one input through the named target.
    static func run(target: String, _ data: [UInt8]) throws(Violation) -> [String] {
        switch target {
        case "line-decoder": return try lineDecoder(data)
        case "manifest": return [try manifest(data)]
        case "item-validator": return try itemValidator(data)
        default: throw Violation(description: "no fuzz target named \(target)")
        }
    }

    // MARK: - Target 1: line framing and message decoding

    /// How the line-decoder target reads its input: the first byte chooses how the stream is cut
    /// into reads (and, with its top bit set, a small line limit: 1 + 5 × bits 2–6); the rest is
    /// the stream, as an extension writes it to stdout (or the host to an extension's stdin).
    struct LinePlan: Equatable {
        var chunkSizes: [Int]
        var maximumLineLength: Int

        init(header: UInt8, streamLength: Int) {
            maximumLineLength = header & 0x80 == 0
                ? LineReader.defaultMaximumLineLength
                : 1 + Int((header >> 2) & 0x1F) * 5
            // Low two bits: reads of 1 byte, of 1 to 16 bytes, of 1 to 509 bytes, or one read.
            let largest = [1, 16, 509, 0][Int(header & 0x03)]
            if largest == 0 {
                chunkSizes = streamLength > 0 ? [streamLength] : []
                return
            }
            var state = UInt32(header) &* 0x9E37_79B1 | 1
            var sizes: [Int] = []
            var total = 0
            while total < streamLength {
                state ^= state << 13
                state ^= state >> 17
                state ^= state << 5
                let size = Swift.min(1 + Int(state % UInt32(largest)), streamLength - total)
                sizes.append(size)
                total += size
            }
            chunkSizes = sizes
        }
    }

    /// What a correct line reader yields for a stream: the complete lines and where each starts,
    /// then either the line that was too long, or the unterminated tail.
    struct Framing: Equatable {
        var lines: [[UInt8]] = []
        var offsets: [Int] = []
        var tooLongAt: Int? = nil
        var tail: [UInt8]? = nil
        var tailOffset: Int? = nil
    }

    /// The reference model of `LineReader`, written independently of it.
    static func referenceFraming(_ stream: [UInt8], limit: Int, skipsEmptyLines: Bool) -> Framing {
        var framing = Framing()
        var start = 0
        for (index, byte) in stream.enumerated() where byte == 0x0A {
            let length = index - start
            if length > limit {
                framing.tooLongAt = start
                return framing
            }
            if length > 0 || !skipsEmptyLines {
                framing.lines.append(Array(stream[start..<index]))
                framing.offsets.append(start)
            }
            start = index + 1
        }
        if stream.count - start > limit {
            framing.tooLongAt = start
        } else if start < stream.count {
            framing.tail = Array(stream[start...])
            framing.tailOffset = start
        }
        return framing
    }

    /// Input: header byte + stream (see `LinePlan`). Feeds the stream through a `LineReader` in
    /// the planned reads, checks the lines against the reference model, and decodes each line
    /// while it is being delivered, as `StdoutDecoder` and the SDK's read loop do.
    static func lineDecoder(_ data: [UInt8]) throws(Violation) -> [String] {
        guard let header = data.first else { return [] }
        let stream = Array(data.dropFirst())
        let plan = LinePlan(header: header, streamLength: stream.count)
        var outcomes: [String] = []
        var framing = Framing()
        var reader = LineReader(maximumLineLength: plan.maximumLineLength)
        var fed = 0
        do {
            try stream.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws -> Void in
                for size in plan.chunkSizes {
                    let chunk = UnsafeRawBufferPointer(rebasing: raw[fed..<(fed + size)])
                    fed += size
                    try reader.feed(chunk) { line, offset in
                        framing.lines.append(Array(line))
                        framing.offsets.append(offset)
                        outcomes.append(try decodeLine(line))
                    }
                }
            }
        } catch let error as LineFramingError {
            guard case let .lineTooLong(offset, limit) = error, limit == plan.maximumLineLength else {
                throw Violation(description: "unexpected framing error \(error)")
            }
            framing.tooLongAt = offset
            outcomes.append("line too long at byte \(offset)")
        } catch let violation as Violation {
            throw violation
        } catch {
            throw Violation(description: "unexpected error \(error)")
        }
        if framing.tooLongAt == nil {
            try check(reader.streamOffset == stream.count, "the reader counted \(reader.streamOffset) bytes of \(stream.count)")
            if let tail = reader.unterminatedTail {
                framing.tail = tail.bytes
                framing.tailOffset = tail.offset
                outcomes.append("no newline after byte \(tail.offset)")
            }
            try check(reader.bufferedByteCount == (framing.tail?.count ?? 0), "buffered byte count \(reader.bufferedByteCount) is not the tail's")
        }
        let expected = referenceFraming(stream, limit: plan.maximumLineLength, skipsEmptyLines: true)
        try check(framing == expected, "the reader's lines differ from the model's: \(framing) vs \(expected)")

        // The same reads with empty lines passed on (as `reindex put` reads its input).
        var counting = LineReader(maximumLineLength: plan.maximumLineLength, skipsEmptyLines: false)
        var countingFraming = Framing()
        fed = 0
        do {
            try stream.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws -> Void in
                for size in plan.chunkSizes {
                    try counting.feed(UnsafeRawBufferPointer(rebasing: raw[fed..<(fed + size)])) { line, offset in
                        countingFraming.lines.append(Array(line))
                        countingFraming.offsets.append(offset)
                    }
                    fed += size
                }
            }
            if let tail = counting.unterminatedTail {
                countingFraming.tail = tail.bytes
                countingFraming.tailOffset = tail.offset
            }
        } catch let error as LineFramingError {
            guard case let .lineTooLong(offset, _) = error else { throw Violation(description: "unexpected framing error \(error)") }
            countingFraming.tooLongAt = offset
        } catch {
            throw Violation(description: "unexpected error \(error)")
        }
        let expectedCounting = referenceFraming(stream, limit: plan.maximumLineLength, skipsEmptyLines: false)
        try check(countingFraming == expectedCounting, "the reader's lines (empty lines kept) differ from the model's")
        return outcomes
    }

    /// Decodes one protocol line as the host does (and the SDK, for host → extension messages),
    /// checks the round trips, and says what the line was.
    static func decodeLine(_ line: UnsafeRawBufferPointer) throws(Violation) -> String {
        let blank = line.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
        let badUTF8 = firstInvalidUTF8Offset(line)
        var json: JSONValue? = nil
        do {
            json = try JSONParser.parse(line)
        } catch {
            try check(error.offset >= 0 && error.offset <= line.count, "parse error offset \(error.offset) outside the line")
        }
        if let json {
            try check(badUTF8 == nil, "the parser accepted invalid UTF-8 (bad byte at \(badUTF8 ?? -1))")
            try checkJSONRoundTrip(json)
        }
        if let badUTF8 { try check(badUTF8 >= 0 && badUTF8 < line.count, "invalid UTF-8 offset outside the line") }

        let message: Message
        do {
            message = try Message.decode(line: line)
        } catch {
            try check((error.code == RPCError.parseError) == (json == nil),
                      "decoding error \(error.code) does not match whether the line is JSON")
            try check(error.code == RPCError.parseError || error.code == RPCError.invalidRequest, "unexpected error code \(error.code)")
            _ = error.description
            if blank { return "blank" }
            if let badUTF8 { return "invalid UTF-8 at byte \(badUTF8)" }
            return "undecodable \(error.code)"
        }
        try check(!blank, "a blank line decoded as a message")
        try check(json != nil, "a message decoded from a line that is not JSON")
        if let json {
            let again: Message
            do { again = try Message.decode(json) } catch { throw Violation(description: "decode(value) failed where decode(line:) did not: \(error)") }
            try check(again == message, "decode(value) and decode(line:) differ")
        }
        try checkMessageRoundTrip(message)
        return try interpret(message)
    }

    /// What the host (or the SDK) does with a decoded message's params.
    static func interpret(_ message: Message) throws(Violation) -> String {
        switch message {
        case let .request(id, method, params):
            let what = "request \(method) (id \(id))"
            switch method {
            case Method.initialize:
                return "\(what): " + (try roundTrip(params, InitializeParams.init(json:), { $0.json }) { _ in "ok" })
            case Method.reindexAll:
                // The SDK resumes from a client state it can decode, and ignores any other.
                return "\(what): " + (try roundTrip(params, ReindexAllParams.init(json:), { $0.json }) { (p) throws(Violation) in
                    guard let state = p.clientState else { return "ok, \(p.reason)" }
                    guard let bytes = try decodeClientState(state) else { return "ok, \(p.reason), client state not base64 (ignored)" }
                    return "ok, \(p.reason), resumes from \(bytes.count) bytes of client state"
                })
            case Method.reindexItems:
                return "\(what): " + (try roundTrip(params, ReindexItemsParams.init(json:), { $0.json }) { p in
                    "ok, \(p.identifiers.count) identifiers, \(p.reason)"
                })
            case Method.batchCommit:
                // As the host checks it before committing anything.
                return "\(what): " + (try roundTrip(params, BatchCommitParams.init(json:), { $0.json }) { (p) throws(Violation) in
                    guard let state = p.clientState else { return "commits request \(p.requestID)" }
                    guard let bytes = try decodeClientState(state) else { return "refused, client state not base64" }
                    if bytes.count > BatchCommitParams.maximumClientStateBytes { return "refused, client state of \(bytes.count) bytes" }
                    return "commits request \(p.requestID) with \(bytes.count) bytes of client state"
                })
            default:
                return "\(what): unknown method"
            }
        case let .notification(method, params):
            let what = "notification \(method)"
            switch method {
            case Method.put:
                guard let items = params?["items"]?.arrayValue else { return "\(what): no items array" }
                var valid = 0
                var invalid: [String] = []
                for (n, item) in items.enumerated() {
                    if let error = try checkItem(item, path: "items[\(n)]") {
                        invalid.append(error.path)
                    } else {
                        valid += 1
                    }
                }
                return "\(what): \(valid) valid" + (invalid.isEmpty ? "" : ", invalid \(invalid.joined(separator: " "))")
            case Method.delete:
                return "\(what): " + (try roundTrip(params, DeleteParams.init(json:), { $0.json }) { p in "\(p.identifiers.count) identifiers" })
            case Method.deleteDomains:
                return "\(what): " + (try roundTrip(params, DeleteDomainsParams.init(json:), { $0.json }) { p in "\(p.domainIdentifiers.count) domains" })
            case Method.deleteAll:
                return what
            case Method.progress:
                return "\(what): " + (try roundTrip(params, ProgressParams.init(json:), { $0.json }) { p in
                    "\(p.completed) of \(p.total.map(String.init) ?? "?") for request \(p.requestID)"
                })
            case Method.cancel:
                return "\(what): " + (try roundTrip(params, CancelParams.init(json:), { $0.json }) { p in "request \(p.id)" })
            default:
                return "\(what): unknown method"
            }
        case let .response(id, .success(result)):
            if id == .number(0) {
                return "reply \(id): " + (try roundTrip(result, InitializeResult.init(json:), { $0.json }) { r in
                    "initialized, protocol \(r.protocolVersion)"
                })
            }
            // The SDK reads a reply to its batch/commit as a commit result; the host ignores
            // the result of an acknowledgement.
            _ = try roundTrip(result, BatchCommitResult.init(json:), { $0.json }) { _ in "" }
            return "reply \(id): result"
        case let .response(id, .failure(error)):
            // As the host reports a version mismatch.
            _ = error.data?["supported"].map { JSONWriter.string($0) }
            _ = error.data?["requested"].map { JSONWriter.string($0) }
            return "reply \(id): error \(error.code)"
        case let .orphanError(error):
            return "error reply with a null id: \(error.code)"
        }
    }

    /// Decodes params (or a result) with `decode`; when that works, writes them back with
    /// `encode` and checks that they decode again, as JSON values and as text, to the same thing.
    static func roundTrip<P: Equatable>(
        _ value: JSONValue?,
        _ decode: (JSONValue?) throws(FieldError) -> P,
        _ encode: (P) -> JSONValue,
        describe: (P) throws(Violation) -> String
    ) throws(Violation) -> String {
        let decoded: P
        do { decoded = try decode(value) } catch { return "invalid \(error.path)" }
        let encoded = encode(decoded)
        try readingBack(invalid: "written params are invalid") {
            let again = try decode(encoded)
            try check(again == decoded, "params changed when written and read again: \(JSONWriter.string(encoded))")
            let text = JSONWriter.bytes(encoded)
            let reparsed: JSONValue
            do { reparsed = try JSONParser.parse(text) } catch { throw Violation(description: "written params do not parse: \(error)") }
            try check(try decode(reparsed) == decoded, "params changed when written as text and read again")
        }
        return try describe(decoded)
    }

    /// Overload for decoders of non-optional values (results).
    static func roundTrip<P: Equatable>(
        _ value: JSONValue,
        _ decode: (JSONValue) throws(FieldError) -> P,
        _ encode: (P) -> JSONValue,
        describe: (P) throws(Violation) -> String
    ) throws(Violation) -> String {
        try roundTrip(Optional(value), { (v: JSONValue?) throws(FieldError) -> P in try decode(v ?? .null) }, encode, describe: describe)
    }

    /// The bytes of a base64 client state, or nil if it is not base64; they must encode and
    /// decode back to the same bytes.
    /// Runs a check that reads back what was written: a FieldError there means the writer wrote
    /// something its own reader refuses (`invalid` names it).
    static func readingBack(invalid: String, _ body: () throws -> Void) throws(Violation) {
        do {
            try body()
        } catch let error as FieldError {
            throw Violation(description: "\(invalid): \(error)")
        } catch let violation as Violation {
            throw violation
        } catch {
            throw Violation(description: "unexpected error \(error)")
        }
    }

    static func decodeClientState(_ state: String) throws(Violation) -> [UInt8]? {
        guard let bytes = Base64.decode(state) else { return nil }
        try check(Base64.decode(Base64.encode(bytes)) == bytes, "base64 does not round-trip")
        return bytes
    }

    /// Compact JSON text parses back to the same value, has no control bytes (so it is one
    /// line), and writing it again gives the same text.
    static func checkJSONRoundTrip(_ value: JSONValue, maximumDepth: Int = JSONParser.defaultMaximumDepth) throws(Violation) {
        let text = JSONWriter.bytes(value)
        try check(!text.contains { $0 < 0x20 }, "the writer emitted a control byte")
        let again: JSONValue
        do { again = try JSONParser.parse(text, maximumDepth: maximumDepth) } catch {
            throw Violation(description: "written JSON does not parse: \(error): \(String(decoding: text.prefix(200), as: UTF8.self))")
        }
        try check(again == value, "JSON changed when written and read again: \(String(decoding: text.prefix(200), as: UTF8.self))")
        try check(JSONWriter.bytes(again) == text, "writing JSON twice gives different text")
    }

    /// A message written as a line is one line, and reads back as the same message.
    static func checkMessageRoundTrip(_ message: Message) throws(Violation) {
        let line = message.line
        try check(line.last == 0x0A, "a written message does not end with a newline")
        let body = line.dropLast()
        try check(!body.contains(0x0A), "a written message contains a raw newline")
        let again: Message
        do {
            again = try body.withUnsafeBytes { (raw) throws(MessageDecodingError) -> Message in try Message.decode(line: raw) }
        } catch {
            throw Violation(description: "a written message does not decode: \(error): \(String(decoding: body.prefix(200), as: UTF8.self))")
        }
        try check(again == message, "a message changed when written and read again")
        try check(again.line == line, "writing a message twice gives different lines")
        try check(again.method == message.method, "method differs")
    }

    // MARK: - Target 2: manifests

    /// Input: the bytes of a `manifest.json`, parsed as discovery parses it.
    static func manifest(_ data: [UInt8]) throws(Violation) -> String {
        let manifest: Manifest
        do {
            manifest = try Manifest.parse(data)
        } catch {
            _ = error.description
            return "invalid \(error.path.isEmpty ? "(top level)" : error.path)"
        }
        try check(manifest.manifestVersion == 1, "manifestVersion \(manifest.manifestVersion)")
        try check(Manifest.isValidBundleIdentifier(manifest.bundleIdentifier), "accepted bundle identifier \(manifest.bundleIdentifier.debugDescription)")
        try check(!manifest.executable.isEmpty && !manifest.executable.utf8.contains(0), "accepted executable \(manifest.executable.debugDescription)")
        try check(!manifest.protocolVersions.isEmpty && manifest.protocolVersions.allSatisfy { $0 > 0 }, "accepted protocolVersions \(manifest.protocolVersions)")
        let t = manifest.timeouts
        try check(t.startupSeconds > 0 && t.idleSeconds > 0 && t.requestSeconds > 0, "accepted timeouts \(t)")
        try check(manifest.retry.maxAttempts > 0, "accepted maxAttempts \(manifest.retry.maxAttempts)")
        try check(manifest.refreshBeforeExpirySeconds >= 0 && manifest.refreshBeforeExpirySeconds.isFinite, "accepted refreshBeforeExpirySeconds \(manifest.refreshBeforeExpirySeconds)")
        try check(manifest.environment.keys.allSatisfy { !$0.isEmpty && !$0.contains("=") && !$0.utf8.contains(0) }, "accepted an environment name with '=' or NUL")
        for limit in [manifest.limits.addressSpaceMiB, manifest.limits.cpuSeconds] {
            if let limit { try check(limit > 0, "accepted limit \(limit)") }
        }
        // Written out in full, it reads back the same, as a value and as text.
        let json = manifest.json
        try readingBack(invalid: "a written manifest is invalid") {
            try check(try Manifest.parse(json) == manifest, "the manifest changed when written and read again")
            try check(try Manifest.parse(JSONWriter.bytes(json)) == manifest, "the manifest changed when written as text and read again")
        }
        try checkJSONRoundTrip(json, maximumDepth: 64)
        return "ok \(manifest.bundleIdentifier)"
    }

    // MARK: - Target 3: items

    /// Input: JSON text of one item, or of an array of items (as in `index/put`'s `items`).
    static func itemValidator(_ data: [UInt8]) throws(Violation) -> [String] {
        let value: JSONValue
        do { value = try JSONParser.parse(data) } catch { return ["not JSON"] }
        if case .array(let items) = value {
            var outcomes: [String] = []
            for (n, item) in items.enumerated() {
                outcomes.append(try checkItem(item, path: "items[\(n)]").map { "invalid \($0)" } ?? "valid")
            }
            return outcomes
        }
        return [try checkItem(value, path: "item").map { "invalid \($0)" } ?? "valid"]
    }

    /// Validates one item as the host does (`ItemValidator`) and as the SDK does
    /// (`SearchableItem(json:)`); they must agree, and an accepted item must survive being
    /// written and read again. Returns the validation error, or nil for a valid item.
    static func checkItem(_ json: JSONValue, path: String) throws(Violation) -> FieldError? {
        let validated: ValidatedItem
        do {
            validated = try ItemValidator.validate(json, path: path)
        } catch {
            try check(error.path.hasPrefix(path), "error path \(error.path) is not under \(path)")
            let sdk: SearchableItem?
            do { sdk = try SearchableItem(json: json, path: path) } catch { sdk = nil }
            try check(sdk == nil, "the SDK accepted an item the validator rejected (\(error))")
            return error
        }
        let item: SearchableItem
        do { item = try SearchableItem(json: json, path: path) } catch {
            throw Violation(description: "the validator accepted an item the SDK rejects: \(error)")
        }
        let uid = validated.uniqueIdentifier
        try check(uid == item.uniqueIdentifier, "uniqueIdentifier differs")
        try check(!uid.isEmpty && uid.utf8.count <= ItemValidator.maximumIdentifierBytes, "accepted a uniqueIdentifier of \(uid.utf8.count) bytes")
        try check(validated.domainIdentifier == item.domainIdentifier, "domainIdentifier differs")
        try check(sameInstant(validated.expiration, item.expirationDate?.timeIntervalSince1970), "expiration differs")

        // The searched text is the attributes' text (lists one entry a line), each followed by
        // its camel-case parts when it has some (`WordParts`).
        let a = item.attributes
        let expectedText: [String?] = [
            a.title, a.displayName, a.alternateNames?.joined(separator: "\n"), a.contentDescription,
            a.textContent, a.keywords?.joined(separator: "\n"), a.authors?.joined(separator: "\n"),
        ].map { $0.map(WordParts.expanded) }
        try check(validated.searchText == expectedText, "searched text differs from the SDK's attributes")

        // The stored attributes are the given attributes object, as compact JSON.
        let attributesJSON = validated.attributesJSON
        let storedAttributes: JSONValue
        do { storedAttributes = try JSONParser.parse(attributesJSON) } catch {
            throw Violation(description: "stored attributes are not JSON: \(error)")
        }
        let given = json["attributes"].flatMap { $0.isNull ? nil : $0 } ?? .object([])
        try check(storedAttributes == given, "stored attributes differ from the given ones")

        // Every date accepted formats as a date that reads back as the same instant (the host
        // writes stored expirations back out with RFC3339.format in search results).
        if let expiration = validated.expiration { try checkDate(expiration) }
        for key in ["startDate", "endDate", "contentCreationDate", "contentModificationDate"] {
            if let text = given[key]?.stringValue, let seconds = RFC3339.parse(text) { try checkDate(seconds) }
        }
        if let text = given["thumbnailData"]?.stringValue, let bytes = Base64.decode(text) {
            try check(Base64.decode(Base64.encode(bytes)) == bytes, "base64 does not round-trip")
            try check(a.thumbnailData == bytes, "thumbnailData differs")
        }

        // The SDK's item, written (both ways), is valid and reads back the same.
        let written = item.json
        var direct: [UInt8] = []
        item.writeJSON(into: &direct)
        let text = JSONWriter.bytes(written)
        try check(direct == text, "SearchableItem.writeJSON differs from its json")
        try checkJSONRoundTrip(written)
        let revalidated: ValidatedItem
        let reread: SearchableItem
        do {
            revalidated = try ItemValidator.validate(written, path: path)
            reread = try SearchableItem(json: try JSONParser.parse(text), path: path)
        } catch let error as FieldError {
            throw Violation(description: "a written item is invalid: \(error): \(String(decoding: text.prefix(300), as: UTF8.self))")
        } catch let error as JSONParseError {
            throw Violation(description: "a written item does not parse: \(error)")
        } catch {
            throw Violation(description: "unexpected error \(error)")
        }
        try check(revalidated.uniqueIdentifier == uid && revalidated.domainIdentifier == validated.domainIdentifier,
                  "identity changed when written and read again")
        try check(revalidated.searchText == validated.searchText, "searched text changed when written and read again")
        try check(sameInstant(revalidated.expiration, validated.expiration), "expiration changed when written and read again")
        try check(JSONWriter.bytes(reread.json) == text, "an item written twice gives different text")
        return nil
    }

    /// Two expirations are the same instant to the millisecond the wire carries.
    static func sameInstant(_ a: Double?, _ b: Double?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case let (x?, y?): return abs(x - y) <= 0.001
        default: return false
        }
    }

    /// A date read from the wire formats as RFC 3339 text that reads back as the same instant.
    static func checkDate(_ seconds: Double) throws(Violation) {
        let text = RFC3339.format(seconds)
        guard let again = RFC3339.parse(text) else {
            throw Violation(description: "RFC3339.format(\(seconds)) gives \(text.debugDescription), which RFC3339.parse rejects")
        }
        try check(abs(again - seconds) <= 0.0005 + 1e-6, "RFC3339 round trip moved \(seconds) to \(again)")
        try check(RFC3339.format(again) == text, "RFC3339 formats \(seconds) and \(again) differently")
    }

    // MARK: - Helpers

    static func check(_ condition: Bool, _ message: @autoclosure () -> String) throws(Violation) {
        if !condition { throw Violation(description: message()) }
    }
}
