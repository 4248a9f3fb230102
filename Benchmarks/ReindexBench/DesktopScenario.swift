#if os(Linux)
import CSDBus
import Foundation
import ReindexStore
import ReindexSystem

/// desktop: what GNOME Shell and KRunner ask while someone types, over a private session bus
/// (`dbus-daemon --session` on a socket in the work directory) to `reindex desktop serve` on the
/// search index. Each word is typed a letter at a time from its second letter: GNOME Shell's
/// `GetInitialResultSet` for the first, `GetSubsearchResultSet` with the previous results for
/// each letter after it, then `GetResultMetas` for the first five results; KRunner's `Match`
/// for every prefix. Each figure is a whole call's round trip through the bus daemon, as the
/// desktop sees it, one call at a time. The baseline is the same query through the store in
/// process (`search` scenario's engine), so the difference is the bus and the service.
extension Bench {
    func desktopLatency() throws {
        let index = try searchIndex()
        let busPath = work + "/desktop-bus"
        let address = "unix:path=\(busPath)"
        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        daemon.arguments = ["--session", "--nofork", "--address=\(address)"]
        daemon.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        try daemon.run()
        defer { daemon.terminate(); daemon.waitUntilExit() }
        for _ in 0..<500 where !FileManager.default.fileExists(atPath: busPath) { usleep(10_000) }

        let service = Process()
        service.executableURL = URL(fileURLWithPath: reindexBinary)
        service.arguments = ["--index", index, "desktop", "serve"]
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = address
        service.environment = environment
        service.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try service.run()
        defer { service.terminate(); service.waitUntilExit() }

        let client = try DesktopClient(address: address)
        for _ in 0..<500 where !client.nameHasOwner("org.reindexhost.SearchProvider") { usleep(10_000) }
        let items = try IndexStore.open(path: index).itemCount(bundle: "com.example.bench.indexer")

        let words = ["engineering", "swift", "park", "hopper", "design", "kubernetes", "finance", "zoë", "legal", "rust",
                     "grace hopper", "staff engineer", "ada park", "support lead", "sales analyst", "linux rust"]
        var initial = Sample(), subsearch = Sample(), metas = Sample(), match = Sample()
        // The first round apart: each phrase typed for the first time. GNOME Shell's later keys
        // refine the results it has (no search of the index); KRunner's `Match` searches at every
        // key, each key a first search of its prefix.
        var firstInitial = Sample(), firstSubsearch = Sample(), firstMatch = Sample()
        var firstSlowest = (ms: -1.0, typed: "")
        // The slowest call of each method and what was typed, so a p99 names its query.
        var slowest: [String: (ms: Double, typed: String)] = [:]
        func note(_ sample: inout Sample, _ method: String, since start: Double, _ typed: String) {
            let ms = (Clock.monotonic() - start) * 1000
            sample.add(ms)
            if ms > (slowest[method]?.ms ?? -1) { slowest[method] = (ms, typed) }
        }
        for round in 0..<max(options.rounds, 3) {
            for phrase in words {
                let letters = Array(phrase)
                var previous: [String] = []
                for end in 2...letters.count {
                    let typed = String(letters[0..<end])
                    let terms = typed.split(separator: " ").map(String.init)
                    let start = Clock.monotonic()
                    if end == 2 {
                        previous = try client.strings("GetInitialResultSet", terms: terms)
                        if round > 0 { note(&initial, "GetInitialResultSet", since: start, typed) } else { firstInitial.add((Clock.monotonic() - start) * 1000) }
                    } else {
                        previous = try client.strings("GetSubsearchResultSet", previous: previous, terms: terms)
                        if round > 0 { note(&subsearch, "GetSubsearchResultSet", since: start, typed) } else { firstSubsearch.add((Clock.monotonic() - start) * 1000) }
                    }
                    let m = Clock.monotonic()
                    try client.metas(Array(previous.prefix(5)))
                    if round > 0 { note(&metas, "GetResultMetas (5 ids)", since: m, typed) }
                    let k = Clock.monotonic()
                    try client.match(typed)
                    if round > 0 {
                        note(&match, "KRunner Match", since: k, typed)
                    } else {
                        let ms = (Clock.monotonic() - k) * 1000
                        firstMatch.add(ms)
                        if ms > firstSlowest.ms { firstSlowest = (ms, typed) }
                    }
                }
            }
        }
        let label = "\(items / 1000)k items"
        rows.append(["desktop KRunner Match over D-Bus, each phrase typed the first time, \(label) (ms)",
                     "p50 \(fmt(firstMatch.percentile(0.5), 2)), p90 \(fmt(firstMatch.percentile(0.9), 2)), max \(fmt(firstMatch.max, 2))", "-",
                     "\(firstMatch.values.count) calls, every one a first search of what was typed; slowest \(fmt(firstSlowest.ms, 2)) for '\(firstSlowest.typed)'"])
        rows.append(["desktop GNOME Shell's calls, each phrase typed the first time, \(label) (ms)",
                     "GetInitialResultSet (two letters) p50 \(fmt(firstInitial.percentile(0.5), 2)), max \(fmt(firstInitial.max, 2))", "-",
                     "then GetSubsearchResultSet, which refines the results shown: p50 \(fmt(firstSubsearch.percentile(0.5), 2)), max \(fmt(firstSubsearch.max, 2)) over \(firstSubsearch.values.count) calls"])
        results.append(("desktop_first_match", .object([("p50Ms", .double(firstMatch.percentile(0.5))), ("p90Ms", .double(firstMatch.percentile(0.9))),
                                                       ("maxMs", .double(firstMatch.max)), ("items", .integer(Int64(items)))])))
        for (name, key, sample) in [("GetInitialResultSet", "desktop_initial", initial), ("GetSubsearchResultSet", "desktop_subsearch", subsearch),
                                    ("GetResultMetas (5 ids)", "desktop_metas", metas), ("KRunner Match", "desktop_match", match)] {
            rows.append(["desktop \(name) over D-Bus, \(label) (ms)", "p50 \(fmt(sample.percentile(0.5), 2)), p99 \(fmt(sample.percentile(0.99), 2))",
                         "-", "\(sample.values.count) calls, typed a letter at a time" + (slowest[name].map { "; slowest \(fmt($0.ms, 2)) for '\($0.typed)'" } ?? "")])
            results.append((key, .object([("p50Ms", .double(sample.percentile(0.5))), ("p99Ms", .double(sample.percentile(0.99))), ("items", .integer(Int64(items)))])))
        }
    }
}

/// A session-bus client (sd-bus) making one blocking call at a time.
final class DesktopClient {
    private var bus: OpaquePointer?
    let name = "org.reindexhost.SearchProvider"

    init(address: String) throws {
        guard sd_bus_new(&bus) >= 0, sd_bus_set_address(bus, address) >= 0, sd_bus_set_bus_client(bus, 1) >= 0, sd_bus_start(bus) >= 0 else {
            throw ReindexError(.cannotStart, "cannot connect to the benchmark's bus at \(address)")
        }
    }

    deinit { sd_bus_flush_close_unref(bus) }

    func nameHasOwner(_ name: String) -> Bool {
        guard let reply = try? call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner", { m in
            _ = name.withCString { sd_bus_message_append_basic(m, CChar(UInt8(ascii: "s")), $0) }
        }) else { return false }
        defer { sd_bus_message_unref(reply) }
        var value: Int32 = 0
        return sd_bus_message_read_basic(reply, CChar(UInt8(ascii: "b")), &value) > 0 && value != 0
    }

    func strings(_ method: String, previous: [String]? = nil, terms: [String]) throws -> [String] {
        let reply = try call(name, "/org/reindexhost/SearchProvider", "org.gnome.Shell.SearchProvider2", method) { m in
            if let previous { Self.append(previous, to: m) }
            Self.append(terms, to: m)
        }
        defer { sd_bus_message_unref(reply) }
        var values: [String] = []
        guard sd_bus_message_enter_container(reply, CChar(UInt8(ascii: "a")), "s") > 0 else { return [] }
        while true {
            var p: UnsafePointer<CChar>? = nil
            guard withUnsafeMutablePointer(to: &p, { sd_bus_message_read_basic(reply, CChar(UInt8(ascii: "s")), $0) }) > 0, let p else { break }
            values.append(String(cString: p))
        }
        return values
    }

    func metas(_ ids: [String]) throws {
        let reply = try call(name, "/org/reindexhost/SearchProvider", "org.gnome.Shell.SearchProvider2", "GetResultMetas") { Self.append(ids, to: $0) }
        sd_bus_message_unref(reply)
    }

    func match(_ query: String) throws {
        let reply = try call(name, "/org/reindexhost/KRunner", "org.kde.krunner1", "Match") { m in
            _ = query.withCString { sd_bus_message_append_basic(m, CChar(UInt8(ascii: "s")), $0) }
        }
        sd_bus_message_unref(reply)
    }

    static func append(_ strings: [String], to m: OpaquePointer?) {
        _ = sd_bus_message_open_container(m, CChar(UInt8(ascii: "a")), "s")
        for s in strings { _ = s.withCString { sd_bus_message_append_basic(m, CChar(UInt8(ascii: "s")), $0) } }
        _ = sd_bus_message_close_container(m)
    }

    private func call(_ destination: String, _ path: String, _ interface: String, _ member: String,
                      _ arguments: (OpaquePointer?) -> Void) throws -> OpaquePointer? {
        var m: OpaquePointer? = nil
        guard sd_bus_message_new_method_call(bus, &m, destination, path, interface, member) >= 0 else {
            throw ReindexError(.ioError, "cannot make a \(member) call")
        }
        defer { sd_bus_message_unref(m) }
        arguments(m)
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer? = nil
        let r = sd_bus_call(bus, m, 10_000_000, &error, &reply)
        guard r >= 0 else {
            throw ReindexError(.ioError, "\(member): \(error.message.map { String(cString: $0) } ?? String(cString: strerror(-r)))")
        }
        return reply
    }
}
#endif
