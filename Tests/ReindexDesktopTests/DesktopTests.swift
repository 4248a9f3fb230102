#if os(Linux)
import CSDBus
import Foundation
import ReindexDesktop
import ReindexProtocol
import ReindexStore
import ReindexTestSupport
import XCTest

/// Desktop search end to end: a private `dbus-daemon`, an index filled by `reindex put`, the real
/// `reindex desktop serve` on that bus, and every method called as GNOME Shell and KRunner call
/// them (`busctl`, whose arguments are argv entries, so hostile strings pass unchanged; `gdbus`,
/// which reads the introspection data as GNOME's GDBus does). Opening goes through a program that
/// records its argument vector.
final class DesktopTests: XCTestCase {
    var scratch = ""
    var bus = ""
    var daemon: TestSupport.RunningCommand?
    var serve: TestSupport.RunningCommand?

    let busName = "org.reindexhost.SearchProvider"
    let gnomePath = "/org/reindexhost/SearchProvider"
    let gnome = "org.gnome.Shell.SearchProvider2"
    let krunnerPath = "/org/reindexhost/KRunner"
    let krunner = "org.kde.krunner1"

    /// A uniqueIdentifier with everything a shell or an argument parser would trip on.
    let hostile = "-rf; rm \"x\" 'y' $(id)\nsecond line/%2F"
    let hostileTitle = "Gamma {uniqueIdentifier} note `id`"

    override func setUpWithError() throws {
        for tool in ["dbus-daemon", "busctl", "gdbus"] where Self.which(tool) == nil {
            XCTFail("\(tool) is missing: install dbus-daemon, systemd (busctl) and libglib2.0-bin (gdbus), e.g. Scripts/ensure-system-packages.sh")
            throw MissingTool(name: tool)
        }
        scratch = try TestSupport.makeScratchDirectory(for: self)
        bus = "unix:path=\(scratch)/bus"
        daemon = try TestSupport.RunningCommand(
            executable: Self.which("dbus-daemon")!, arguments: ["--session", "--nofork", "--print-address", "--address=\(bus)"],
            environment: TestSupport.commandEnvironment(scratch: scratch), scratch: scratch, feedsStdin: false)
        XCTAssertTrue(TestSupport.wait(upTo: 20) { FileManager.default.fileExists(atPath: "\(scratch)/bus") }, "dbus-daemon did not start")

        // The programs that open things: both record their argument vector, NUL-terminated, in a file of their own.
        let bin = "\(scratch)/bin"
        try FileManager.default.createDirectory(atPath: "\(scratch)/opened", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        for program in ["record-open", "xdg-open", "x-terminal-emulator"] {
            try TestSupport.write("""
                #!/bin/sh
                f=$(mktemp "\(scratch)/opened/.\(program).XXXXXX")
                printf '%s\\0' "$0" "$@" > "$f"
                mv "$f" "\(scratch)/opened/\(program).$$"

                """, to: "\(bin)/\(program)")
            chmod("\(bin)/\(program)", 0o755)
        }

        let extensions = "\(scratch)/extensions"
        var notes = TestSupport.BundleSpec("com.example.notes", executable: "hang.py")
        let command: [String] = ["record-open", "--item", "{uniqueIdentifier}", "in {domainIdentifier}: {title}", "{bundleIdentifier}"]
        notes.extraManifest = [("open", JSONValue.object([("command", JSONValue.array(command.map(JSONValue.string)))]))]
        try TestSupport.makeBundle(notes, in: extensions)
        try TestSupport.makeBundle(TestSupport.BundleSpec("com.example.links", executable: "hang.py"), in: extensions)

        try put("com.example.notes", [
            #"{"uniqueIdentifier":"n1","attributes":{"title":"Alpha note","contentDescription":"the first"}}"#,
            #"{"uniqueIdentifier":"n2","attributes":{"title":"Beta note"}}"#,
            JSONWriter.string(.object([("uniqueIdentifier", .string(hostile)), ("domainIdentifier", "dom ain;"),
                                       ("attributes", .object([("title", .string(hostileTitle))]))])),
            #"{"uniqueIdentifier":"old","expirationDate":"2001-01-01T00:00:00Z","attributes":{"title":"Old note"}}"#,
        ])
        try put("com.example.links", [
            #"{"uniqueIdentifier":"l1","attributes":{"title":"Linked page","contentURL":"https://example.com/page?q=1&r=2"}}"#,
            #"{"uniqueIdentifier":"l2","attributes":{"title":"Dashed link","contentURL":"--help"}}"#,
        ])
        try put("com.example.plain", [#"{"uniqueIdentifier":"p1","attributes":{"title":"Plain thing"}}"#])

        serve = try TestSupport.RunningCommand(arguments: ["--index", "\(scratch)/index.sqlite", "--extensions-path", extensions, "desktop", "serve"],
                                               environment: environment, scratch: scratch, feedsStdin: false)
        XCTAssertTrue(TestSupport.wait(upTo: 30) { (try? nameHasOwner()) == true }, "reindex desktop serve did not take \(busName): \(TestSupport.read(serve!.stderrPath) ?? "")")
    }

    override func tearDownWithError() throws {
        for command in [serve, daemon].compactMap({ $0 }) where command.process.isRunning {
            kill(command.process.processIdentifier, SIGKILL)
            command.process.waitUntilExit()
        }
    }

    struct MissingTool: Error { var name: String }

    var environment: [String: String] {
        TestSupport.commandEnvironment(scratch: scratch, extra: [
            "DBUS_SESSION_BUS_ADDRESS": bus,
            "PATH": "\(scratch)/bin:" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
        ])
    }

    func put(_ bundle: String, _ lines: [String]) throws {
        let result = try TestSupport.runReindex(["--index", "\(scratch)/index.sqlite", "put", bundle], scratch: scratch,
                                                stdin: lines.joined(separator: "\n") + "\n")
        XCTAssertEqual(result.status, 0, result.description)
    }

    static func which(_ tool: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") + ["/usr/bin", "/bin", "/usr/sbin"] {
            let path = "\(directory)/\(tool)"
            if access(path, X_OK) == 0 { return path }
        }
        return nil
    }

    // MARK: Calling

    /// `busctl --user --json=short call`: the reply's arguments, or the failed call's result.
    func busctl(_ arguments: [String]) throws -> TestSupport.CommandResult {
        try TestSupport.run(Self.which("busctl")!, ["--user", "--json=short", "call"] + arguments, scratch: scratch, environment: environment)
    }

    func call(_ path: String, _ interface: String, _ method: String, _ signature: String = "", _ values: [String] = [],
              file: StaticString = #filePath, line: UInt = #line) throws -> [Any] {
        let result = try busctl([busName, path, interface, method] + (signature.isEmpty ? [] : [signature]) + values)
        XCTAssertEqual(result.status, 0, result.description, file: file, line: line)
        guard result.status == 0, !result.stdout.isEmpty else { return [] }
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.stdout, file: file, line: line)
        return document["data"] as? [Any] ?? []
    }

    /// A call that must fail; returns busctl's output (its error message).
    func failing(_ path: String, _ interface: String, _ method: String, _ signature: String, _ values: [String],
                 file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let result = try busctl([busName, path, interface, method, signature] + values)
        XCTAssertNotEqual(result.status, 0, "the call should have failed: \(result.description)", file: file, line: line)
        return result.stderr
    }

    /// `gdbus call`: GDBus's own client, which introspects the object first. Returns the result.
    func gdbus(_ path: String, _ method: String, _ arguments: [String]) throws -> TestSupport.CommandResult {
        try TestSupport.run(Self.which("gdbus")!, ["call", "--session", "--dest", busName, "--object-path", path, "--method", method] + arguments,
                            scratch: scratch, environment: environment)
    }

    func nameHasOwner() throws -> Bool {
        let result = try TestSupport.run(Self.which("busctl")!, ["--user", "--json=short", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                                 "org.freedesktop.DBus", "NameHasOwner", "s", busName],
                                         scratch: scratch, environment: environment)
        guard result.status == 0, let document = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else { return false }
        return (document["data"] as? [Bool])?.first ?? false
    }

    func results(_ terms: [String], file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        try call(gnomePath, gnome, "GetInitialResultSet", "as", [String(terms.count)] + terms, file: file, line: line).first as? [String] ?? []
    }

    func id(_ bundle: String, _ unique: String) -> String {
        func encode(_ s: String) -> String {
            s.utf8.map { byte -> String in
                let c = Character(Unicode.Scalar(byte))
                return (c.isASCII && (c.isLetter || c.isNumber || "-._~".contains(c))) ? String(c) : String(format: "%%%02X", byte)
            }.joined()
        }
        return encode(bundle) + "/" + encode(unique)
    }

    /// The argument vectors recorded by the opener programs so far, waiting for `count` of them.
    func opened(count: Int) -> [[String]] {
        var found: [[String]] = []
        TestSupport.wait(upTo: 20) {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: "\(scratch)/opened")) ?? []).filter { !$0.hasPrefix(".") }
            found = names.compactMap { FileManager.default.contents(atPath: "\(scratch)/opened/\($0)") }.map { data in
                data.split(separator: 0, omittingEmptySubsequences: false).dropLast().map { String(decoding: $0, as: UTF8.self) }
            }
            return found.count >= count
        }
        return found
    }

    func clearOpened() throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: "\(scratch)/opened") {
            try FileManager.default.removeItem(atPath: "\(scratch)/opened/\(name)")
        }
    }

    // MARK: GNOME Shell

    func testResultsRefineAndDescribeThemselves() throws {
        // Words as `reindex search` takes them: every word, the last also as a prefix; expired items left out.
        XCTAssertEqual(Set(try results(["note"])), [id("com.example.notes", "n1"), id("com.example.notes", "n2"), id("com.example.notes", hostile)])
        XCTAssertEqual(try results(["alph"]), [id("com.example.notes", "n1")])
        XCTAssertEqual(try results(["nothing-matches-this"]), [])
        XCTAssertEqual(try results([]), [])
        // A query the language refuses is searched as its words.
        XCTAssertEqual(try results(["(alpha"]), [id("com.example.notes", "n1")])

        // Refinement keeps only what the previous set had.
        let previous = [id("com.example.notes", "n1"), id("com.example.notes", hostile)]
        let refined = try call(gnomePath, gnome, "GetSubsearchResultSet", "asas", ["2"] + previous + ["2", "note", "g"]).first as? [String]
        XCTAssertEqual(refined, [id("com.example.notes", hostile)])
        let narrowed = try call(gnomePath, gnome, "GetSubsearchResultSet", "asas", ["1", id("com.example.notes", "n2"), "1", "note"]).first as? [String]
        XCTAssertEqual(narrowed, [id("com.example.notes", "n2")])
        // In the order shown, whatever a fresh search's order; ids that name nothing, or
        // nothing live, are left out.
        let shown = [id("com.example.notes", hostile), "not an id", id("com.example.notes", "gone"), id("com.example.notes", "n2"), id("com.example.notes", "n1")]
        let kept = try call(gnomePath, gnome, "GetSubsearchResultSet", "asas", ["\(shown.count)"] + shown + ["1", "not"]).first as? [String]
        XCTAssertEqual(kept, [id("com.example.notes", hostile), id("com.example.notes", "n2"), id("com.example.notes", "n1")])

        let metas = try call(gnomePath, gnome, "GetResultMetas", "as", ["3", id("com.example.notes", "n1"), id("com.example.notes", hostile), id("com.example.links", "l1")])
            .first as? [[String: Any]]
        let values = try XCTUnwrap(metas).map { meta in meta.mapValues { ($0 as? [String: Any])?["data"] as? String ?? "" } }
        XCTAssertEqual(values.count, 3)
        XCTAssertEqual(values[0]["id"], id("com.example.notes", "n1"))
        XCTAssertEqual(values[0]["name"], "Alpha note")
        XCTAssertEqual(values[0]["description"], "the first")
        XCTAssertEqual(values[0]["clipboardText"], "Alpha note")
        XCTAssertEqual(values[0]["gicon"], "text-x-generic")
        XCTAssertEqual(values[1]["id"], id("com.example.notes", hostile))
        XCTAssertEqual(values[1]["name"], hostileTitle)
        XCTAssertEqual(values[2]["clipboardText"], "https://example.com/page?q=1&r=2")
        XCTAssertEqual(values[2]["description"], "Fixture hang.py", "without a contentDescription: the bundle's name")

        // GDBus (what GNOME Shell uses) reads the introspection data and calls the same method.
        let viaGDBus = try gdbus(gnomePath, "\(gnome).GetInitialResultSet", ["['alpha']"])
        XCTAssertEqual(viaGDBus.status, 0, viaGDBus.description)
        XCTAssertEqual(viaGDBus.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "(['com.example.notes/n1'],)")
    }

    func testActivationRunsTheDeclaredCommandWithHostileValuesAsSingleArguments() throws {
        _ = try call(gnomePath, gnome, "ActivateResult", "sasu", [id("com.example.notes", hostile), "1", "gamma", "0"])
        XCTAssertEqual(opened(count: 1), [["\(scratch)/bin/record-open", "--item", hostile, "in dom ain;: \(hostileTitle)", "com.example.notes"]])
        try clearOpened()

        // No declaration: the contentURL goes to xdg-open, as one argument.
        _ = try call(gnomePath, gnome, "ActivateResult", "sasu", [id("com.example.links", "l1"), "0", "0"])
        XCTAssertEqual(opened(count: 1), [["\(scratch)/bin/xdg-open", "https://example.com/page?q=1&r=2"]])
        try clearOpened()

        // A contentURL that would read as an option, or none at all: nothing is started.
        let none = try gdbus(gnomePath, "\(gnome).ActivateResult", [id("com.example.plain", "p1"), "[]", "0"])
        XCTAssertNotEqual(none.status, 0)
        XCTAssertTrue(none.stderr.contains("org.reindexhost.SearchProvider.Error.NothingToOpen"), none.description)
        let dashed = try gdbus(gnomePath, "\(gnome).ActivateResult", [id("com.example.links", "l2"), "[]", "0"])
        XCTAssertTrue(dashed.stderr.contains("org.reindexhost.SearchProvider.Error.NothingToOpen"), dashed.description)
        XCTAssertEqual(opened(count: 0), [])
    }

    func testASearchOvertakenByTheNextKeystrokeIsAbandoned() throws {
        // One connection sends two searches while the service is stopped, so both wait on its
        // socket: the first is answered with nothing, unsearched; the second is searched.
        var client: OpaquePointer? = nil
        XCTAssertGreaterThanOrEqual(sd_bus_new(&client), 0)
        defer { sd_bus_flush_close_unref(client) }
        XCTAssertGreaterThanOrEqual(sd_bus_set_address(client, bus), 0)
        XCTAssertGreaterThanOrEqual(sd_bus_set_bus_client(client, 1), 0)
        XCTAssertGreaterThanOrEqual(sd_bus_start(client), 0)
        func search(_ term: String) -> UInt64 {
            var m: OpaquePointer? = nil
            XCTAssertGreaterThanOrEqual(sd_bus_message_new_method_call(client, &m, busName, gnomePath, gnome, "GetInitialResultSet"), 0)
            defer { sd_bus_message_unref(m) }
            XCTAssertGreaterThanOrEqual(sd_bus_message_open_container(m, CChar(UInt8(ascii: "a")), "s"), 0)
            _ = term.withCString { sd_bus_message_append_basic(m, CChar(UInt8(ascii: "s")), $0) }
            XCTAssertGreaterThanOrEqual(sd_bus_message_close_container(m), 0)
            var cookie: UInt64 = 0
            XCTAssertGreaterThanOrEqual(sd_bus_send(client, m, &cookie), 0)
            return cookie
        }
        let pid = serve!.process.processIdentifier
        kill(pid, SIGSTOP)
        let first = search("alpha"), second = search("note")
        XCTAssertGreaterThanOrEqual(sd_bus_flush(client), 0)
        // The bus routes one sender's messages in order: once it has answered a call sent after
        // the two searches, it has passed both on to the stopped service, which then reads them
        // together (without this, the service could read the first before the bus passed on the
        // second, and answer it).
        var idCall: OpaquePointer? = nil, idReply: OpaquePointer? = nil
        var idError = sd_bus_error()
        XCTAssertGreaterThanOrEqual(sd_bus_message_new_method_call(client, &idCall, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                                   "org.freedesktop.DBus", "GetId"), 0)
        XCTAssertGreaterThanOrEqual(sd_bus_call(client, idCall, 5_000_000, &idError, &idReply), 0)
        sd_bus_message_unref(idCall)
        sd_bus_message_unref(idReply)
        sd_bus_error_free(&idError)
        kill(pid, SIGCONT)
        var replies: [UInt64: [String]] = [:]
        let deadline = Date().addingTimeInterval(20)
        while replies.count < 2 && Date() < deadline {
            var m: OpaquePointer? = nil
            let r = sd_bus_process(client, &m)
            XCTAssertGreaterThanOrEqual(r, 0)
            if let m {
                defer { sd_bus_message_unref(m) }
                var cookie: UInt64 = 0
                guard sd_bus_message_get_reply_cookie(m, &cookie) >= 0, cookie == first || cookie == second else { continue }
                XCTAssertNil(sd_bus_message_get_error(m)?.pointee.name.map { String(cString: $0) })
                var ids: [String] = []
                XCTAssertGreaterThan(sd_bus_message_enter_container(m, CChar(UInt8(ascii: "a")), "s"), 0)
                while true {
                    var p: UnsafePointer<CChar>? = nil
                    guard withUnsafeMutablePointer(to: &p, { sd_bus_message_read_basic(m, CChar(UInt8(ascii: "s")), $0) }) > 0, let p else { break }
                    ids.append(String(cString: p))
                }
                replies[cookie] = ids
            } else if r == 0 {
                _ = sd_bus_wait(client, 1_000_000)
            }
        }
        XCTAssertEqual(replies[first], [], "the overtaken search is answered with nothing")
        XCTAssertEqual(Set(replies[second] ?? []), [id("com.example.notes", "n1"), id("com.example.notes", "n2"), id("com.example.notes", hostile)])
        XCTAssertTrue(TestSupport.read(serve!.stderrPath)?.contains("abandoned GetInitialResultSet") == true)
        // Searches from one caller that do not overlap are each answered.
        XCTAssertEqual(try results(["alpha"]), [id("com.example.notes", "n1")])
        XCTAssertEqual(try results(["beta"]), [id("com.example.notes", "n2")])
    }

    func testTheServiceReadsNewWritesAndANewIndexFileWithoutRestarting() throws {
        XCTAssertEqual(try results(["zeta"]), [])
        try put("com.example.plain", [#"{"uniqueIdentifier":"z1","attributes":{"title":"Zeta thing"}}"#])
        XCTAssertEqual(try results(["zeta"]), [id("com.example.plain", "z1")])
        // Another index file at the same path (as after a restore): the next call reads it.
        try FileManager.default.removeItem(atPath: "\(scratch)/index.sqlite")
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: "\(scratch)/index.sqlite\(suffix)") }
        try put("com.example.plain", [#"{"uniqueIdentifier":"z2","attributes":{"title":"Zeta other"}}"#])
        XCTAssertEqual(try results(["zeta"]), [id("com.example.plain", "z2")])
        XCTAssertEqual(try results(["alpha"]), [])
    }

    func testLaunchSearchShowsReindexSearchInATerminalWithTheTermsAsOneArgument() throws {
        _ = try call(gnomePath, gnome, "LaunchSearch", "asu", ["2", "note", "$(id); rm -rf", "0"])
        let argv = try XCTUnwrap(opened(count: 1).first)
        XCTAssertEqual(Array(argv.prefix(4)), ["\(scratch)/bin/x-terminal-emulator", "-e", "sh", "-c"])
        XCTAssertFalse(argv[4].contains("note"), "the script is fixed text: \(argv[4])")
        XCTAssertEqual(Array(argv.suffix(3)), ["search", "--", "note $(id); rm -rf"])
        XCTAssertTrue(argv.contains("\(scratch)/index.sqlite"), "\(argv)")
        // The script, run as the terminal would: the search's results, then it waits for Enter.
        let shown = try TestSupport.run("/bin/sh", Array(argv.dropFirst(3).dropLast()) + ["note"], scratch: scratch, environment: environment, stdin: "\n")
        XCTAssertEqual(shown.status, 0, shown.description)
        XCTAssertTrue(shown.stdout.contains("Alpha note") && shown.stdout.contains("Press Enter"), shown.stdout)
    }

    func testMalformedCallsAreErrorsAndTheServiceStays() throws {
        // Unknown or malformed identifiers.
        for bad in [id("com.example.notes", "missing"), "no-slash", "a/b/c", "com.example.notes/%zz", id("com.example.notes", "old")] {
            let result = try gdbus(gnomePath, "\(gnome).GetResultMetas", ["['\(bad)']"])
            XCTAssertTrue(result.stderr.contains("org.reindexhost.SearchProvider.Error.UnknownItem"), "\(bad): \(result.description)")
        }
        // Wrong signatures.
        XCTAssertTrue(try failing(gnomePath, gnome, "GetInitialResultSet", "s", ["note"]).contains("takes (as)"))
        XCTAssertTrue(try failing(gnomePath, gnome, "ActivateResult", "s", ["x"]).contains("takes (sasu)"))
        XCTAssertTrue(try failing(krunnerPath, krunner, "Match", "as", ["1", "x"]).contains("takes (s)"))
        _ = try failing(gnomePath, gnome, "NoSuchMethod", "s", ["x"])
        // Too many terms, too long a term.
        let many = (0..<100).map { "t\($0)" }
        XCTAssertTrue(try failing(gnomePath, gnome, "GetInitialResultSet", "as", ["100"] + many).contains("too many search terms"))
        XCTAssertTrue(try failing(gnomePath, gnome, "GetInitialResultSet", "as", ["1", String(repeating: "x", count: 5000)]).contains("too long"))
        // Still serving.
        XCTAssertEqual(try results(["alpha"]), [id("com.example.notes", "n1")])
        XCTAssertTrue(serve?.process.isRunning ?? false)
    }

    // MARK: KRunner

    func testKRunnerMatchesAndRuns() throws {
        let actions = try call(krunnerPath, krunner, "Actions").first as? [Any]
        XCTAssertEqual(actions?.count, 0)
        let matches = try XCTUnwrap(try call(krunnerPath, krunner, "Match", "s", ["alph"]).first as? [[Any]])
        XCTAssertEqual(matches.count, 1)
        let match = try XCTUnwrap(matches.first)
        XCTAssertEqual(match[0] as? String, id("com.example.notes", "n1"))
        XCTAssertEqual(match[1] as? String, "Alpha note")
        XCTAssertEqual(match[3] as? Int, 30)
        XCTAssertEqual(match[4] as? Double, 1.0)
        let properties = try XCTUnwrap(match[5] as? [String: Any])
        XCTAssertEqual((properties["category"] as? [String: Any])?["data"] as? String, "Fixture hang.py")
        XCTAssertEqual((properties["subtext"] as? [String: Any])?["data"] as? String, "the first")

        let several = try XCTUnwrap(try call(krunnerPath, krunner, "Match", "s", ["note"]).first as? [[Any]])
        XCTAssertEqual(several.count, 3)
        let relevances = several.compactMap { $0[4] as? Double }
        XCTAssertEqual(relevances.max(), 1.0)
        XCTAssertTrue(relevances.allSatisfy { $0 > 0 && $0 <= 1 })
        let exact = try XCTUnwrap(try call(krunnerPath, krunner, "Match", "s", ["Linked page"]).first as? [[Any]])
        XCTAssertEqual(exact.first?[3] as? Int, 100)
        XCTAssertEqual(((exact.first?[5] as? [String: Any])?["urls"] as? [String: Any])?["data"] as? [String], ["https://example.com/page?q=1&r=2"])

        _ = try call(krunnerPath, krunner, "Run", "ss", [id("com.example.notes", "n2"), ""])
        XCTAssertEqual(opened(count: 1), [["\(scratch)/bin/record-open", "--item", "n2", "in : Beta note", "com.example.notes"]])
        XCTAssertTrue(try failing(krunnerPath, krunner, "Run", "ss", [id("com.example.notes", "n2"), "bogus"]).contains("unknown action"))
        _ = try failing(krunnerPath, krunner, "Run", "ss", ["nonsense", ""])
    }

    // MARK: Lifetime

    func testOneOwnerAndSIGTERMReleasesTheName() throws {
        let second = try TestSupport.runReindex(["--index", "\(scratch)/index.sqlite", "desktop", "serve"], scratch: scratch, environment: environment, timeout: 30)
        XCTAssertEqual(second.status, 69, second.description)
        XCTAssertTrue(second.stderr.contains("another process owns it"), second.stderr)
        var noBus = environment
        noBus["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(scratch)/no-such-bus"
        let unreachable = try TestSupport.runReindex(["--index", "\(scratch)/index.sqlite", "desktop", "serve"], scratch: scratch, environment: noBus, timeout: 30)
        XCTAssertEqual(unreachable.status, 69, unreachable.description)
        XCTAssertTrue(unreachable.stderr.contains("cannot connect to the session bus"), unreachable.stderr)

        let running = try XCTUnwrap(serve)
        kill(running.process.processIdentifier, SIGTERM)
        let ended = running.finish(timeout: 30)
        XCTAssertEqual(ended.status, 0, ended.description)
        XCTAssertFalse(ended.signaled)
        XCTAssertFalse(try nameHasOwner())
    }

    func testServeDesktopRunsTheProviderBesideTheService() throws {
        let standalone = try XCTUnwrap(serve)
        kill(standalone.process.processIdentifier, SIGTERM)
        XCTAssertEqual(standalone.finish(timeout: 30).status, 0)
        XCTAssertTrue(TestSupport.wait(upTo: 20) { (try? nameHasOwner()) == false })

        let empty = "\(scratch)/no-extensions"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let service = try TestSupport.RunningCommand(arguments: ["--index", "\(scratch)/index.sqlite", "--extensions-path", empty, "serve", "--desktop"],
                                                     environment: environment, scratch: scratch, feedsStdin: false)
        serve = service
        XCTAssertTrue(TestSupport.wait(upTo: 30) { (try? nameHasOwner()) == true }, TestSupport.read(service.stderrPath) ?? "")
        XCTAssertEqual(try results(["alpha"]), [id("com.example.notes", "n1")])

        kill(service.process.processIdentifier, SIGTERM)
        let ended = service.finish(timeout: 60)
        XCTAssertEqual(ended.status, 0, ended.description)
        XCTAssertFalse(try nameHasOwner(), "the desktop service stops with serve")
    }

    // MARK: Installation

    func testInstallWritesTheFourFilesAndUninstallRemovesThem() throws {
        let data = "\(scratch)/xdg-data"
        let expected = [
            "\(data)/gnome-shell/search-providers/org.reindexhost.SearchProvider.ini",
            "\(data)/krunner/dbusplugins/org.reindexhost.SearchProvider.desktop",
            "\(data)/dbus-1/services/org.reindexhost.SearchProvider.service",
            "\(data)/applications/org.reindexhost.SearchProvider.desktop",
        ]
        let install = try TestSupport.runReindex(["--json", "--index", "\(scratch)/my index.sqlite", "desktop", "install"], scratch: scratch, environment: environment)
        XCTAssertEqual(install.status, 0, install.description)
        let files = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(install.stdout.utf8)) as? [String: Any])["files"] as? [String]
        XCTAssertEqual(files, expected)
        for file in expected { XCTAssertTrue(FileManager.default.fileExists(atPath: file), file) }
        let ini = TestSupport.read(expected[0]) ?? ""
        for line in ["[Shell Search Provider]", "DesktopId=org.reindexhost.SearchProvider.desktop", "BusName=org.reindexhost.SearchProvider",
                     "ObjectPath=/org/reindexhost/SearchProvider", "Version=2"] {
            XCTAssertTrue(ini.contains(line + "\n"), "\(line) in \(ini)")
        }
        let runner = TestSupport.read(expected[1]) ?? ""
        for line in ["X-KDE-ServiceTypes=Plasma/Runner", "X-Plasma-API=DBus", "X-Plasma-DBusRunner-Service=org.reindexhost.SearchProvider",
                     "X-Plasma-DBusRunner-Path=/org/reindexhost/KRunner"] {
            XCTAssertTrue(runner.contains(line + "\n"), "\(line) in \(runner)")
        }
        let service = TestSupport.read(expected[2]) ?? ""
        XCTAssertTrue(service.contains("[D-BUS Service]\nName=org.reindexhost.SearchProvider\n"), service)
        let binary = URL(fileURLWithPath: TestSupport.reindexBinary).resolvingSymlinksInPath().path
        XCTAssertTrue(service.contains("Exec=\(binary) --index '\(scratch)/my index.sqlite' desktop serve\n"), service)
        let application = TestSupport.read(expected[3]) ?? ""
        XCTAssertTrue(application.contains("Exec=\(binary) --index \"\(scratch)/my index.sqlite\" desktop serve\n"), application)
        XCTAssertTrue(application.contains("NoDisplay=true\n"), application)

        let uninstall = try TestSupport.runReindex(["--json", "desktop", "uninstall"], scratch: scratch, environment: environment)
        XCTAssertEqual(uninstall.status, 0, uninstall.description)
        for file in expected { XCTAssertFalse(FileManager.default.fileExists(atPath: file), file) }
        // Removing what is not there is no error.
        XCTAssertEqual(try TestSupport.runReindex(["desktop", "uninstall"], scratch: scratch, environment: environment).status, 0)
        XCTAssertEqual(try TestSupport.runReindex(["desktop", "bogus"], scratch: scratch, environment: environment).status, 64)
    }
}

/// The pieces of desktop search that need no bus: identifiers, what opening runs, Exec quoting.
final class DesktopUnitTests: XCTestCase {
    func testResultIdentifiersReadBackToExactlyOneItem() {
        let identifiers = ["plain", "a/b", "%2F", "100%", "two words", "new\nline", "ümlaut ✓", "-x", "/", "%", "a%2Fb/c"]
        var seen = Set<String>()
        for unique in identifiers {
            let id = ItemKey(bundle: "com.example.x", uniqueIdentifier: unique)
            XCTAssertEqual(ItemKey(resultIdentifier: id.resultIdentifier), id, unique)
            XCTAssertTrue(seen.insert(id.resultIdentifier).inserted, "two items share \(id.resultIdentifier)")
            XCTAssertEqual(id.resultIdentifier.filter { $0 == "/" }.count, 1, id.resultIdentifier)
        }
        for bad in ["", "/", "a/", "/b", "a/b/c", "a/%zz", "a/%2f", "a/%C3", "a/b c", "a/%41"] {
            XCTAssertNil(ItemKey(resultIdentifier: bad), "\(bad) is no identifier this service makes")
        }
    }

    func testOpeningArguments() throws {
        func item(_ unique: String, url: String? = nil, title: String? = "T") -> SearchResult {
            var attributes: [(String, JSONValue)] = []
            if let title { attributes.append(("title", .string(title))) }
            if let url { attributes.append(("contentURL", .string(url))) }
            return SearchResult(bundleIdentifier: "com.example.x", uniqueIdentifier: unique, domainIdentifier: nil, expiration: nil,
                                score: nil, attributes: .object(attributes))
        }
        XCTAssertEqual(try Opening.arguments(for: item("a", url: "https://e.com/x"), declaration: nil), ["xdg-open", "https://e.com/x"])
        XCTAssertEqual(try Opening.arguments(for: item("a", url: "/home/me/file name"), declaration: nil), ["xdg-open", "/home/me/file name"])
        for url in ["--help", "-x", "relative/path", "https://e.com/\nx", ":nothing", "1http://x"] {
            XCTAssertThrowsError(try Opening.arguments(for: item("a", url: url), declaration: nil), url)
        }
        XCTAssertThrowsError(try Opening.arguments(for: item("a"), declaration: nil), "nothing to open")
        XCTAssertEqual(try Opening.arguments(for: item("x y;z"), declaration: .url("notes://open?id={uniqueIdentifier}")), ["xdg-open", "notes://open?id=x y;z"])
        XCTAssertThrowsError(try Opening.arguments(for: item("-rf"), declaration: .url("{uniqueIdentifier}")), "an identifier cannot become an option")
        XCTAssertEqual(try Opening.arguments(for: item("-rf \"a\"", title: nil), declaration: .command(["app", "--", "{uniqueIdentifier}", "{title}"])),
                       ["app", "--", "-rf \"a\"", "-rf \"a\""])
    }

    func testExecLinesQuoteWhatNeedsIt() {
        XCTAssertEqual(DesktopInstallation.dbusQuoted("/usr/bin/reindex"), "/usr/bin/reindex")
        XCTAssertEqual(DesktopInstallation.dbusQuoted("/a b/it's"), #"'/a b/it'\''s'"#)
        XCTAssertEqual(DesktopInstallation.desktopEntryQuoted("/a b/$x"), #""/a b/\\$x""#)
        XCTAssertEqual(DesktopInstallation.desktopEntryQuoted("100%"), "\"100%%\"")
    }
}

/// Desktop search on a PostgreSQL index: the same calls answer from the same engine.
final class PostgresDesktopTests: XCTestCase, @unchecked Sendable {
    private var scratch = ""
    private var daemon: TestSupport.RunningCommand?
    private var serve: TestSupport.RunningCommand?
    private var server: PostgresServer!
    private var schema = ""

    override func setUpWithError() throws {
        guard let daemonPath = DesktopTests.which("dbus-daemon"), DesktopTests.which("busctl") != nil else {
            XCTFail("dbus-daemon or busctl is missing: install dbus-daemon and systemd, e.g. Scripts/ensure-system-packages.sh")
            throw DesktopTests.MissingTool(name: "dbus-daemon")
        }
        scratch = try TestSupport.makeScratchDirectory(for: self)
        server = try PostgresServer.shared()
        schema = server.freshSchema("desktop")
        daemon = try TestSupport.RunningCommand(executable: daemonPath, arguments: ["--session", "--nofork", "--address=unix:path=\(scratch)/bus"],
                                                environment: TestSupport.commandEnvironment(scratch: scratch), scratch: scratch, feedsStdin: false)
        XCTAssertTrue(TestSupport.wait(upTo: 20) { FileManager.default.fileExists(atPath: "\(scratch)/bus") }, "dbus-daemon did not start")
    }

    override func tearDownWithError() throws {
        for command in [serve, daemon].compactMap({ $0 }) where command.process.isRunning {
            kill(command.process.processIdentifier, SIGKILL)
            command.process.waitUntilExit()
        }
    }

    private var index: String {
        "postgresql://postgres@\(server.socketDirectory.replacingOccurrences(of: "/", with: "%2F")):\(server.port)/postgres"
    }

    private var environment: [String: String] {
        TestSupport.commandEnvironment(scratch: scratch, extra: ["REINDEX_PG_SCHEMA": schema, "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(scratch)/bus"])
    }

    private func busctl(_ arguments: [String]) throws -> [Any] {
        let result = try TestSupport.run(DesktopTests.which("busctl")!, ["--user", "--json=short", "call"] + arguments, scratch: scratch, environment: environment)
        XCTAssertEqual(result.status, 0, result.description)
        guard result.status == 0 else { return [] }
        return (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])?["data"] as? [Any] ?? []
    }

    func testSearchAndMetasFromPostgreSQL() throws {
        let put = try TestSupport.runReindex(["--index", index, "put", "com.example.notes"], scratch: scratch, environment: environment, stdin: """
            {"uniqueIdentifier":"n1","attributes":{"title":"Alpha note","contentDescription":"the first"}}
            {"uniqueIdentifier":"a b/c","attributes":{"title":"Beta note"}}

            """)
        XCTAssertEqual(put.status, 0, put.description)
        serve = try TestSupport.RunningCommand(arguments: ["--index", index, "--extensions-path", "\(scratch)/none", "desktop", "serve"],
                                               environment: environment, scratch: scratch, feedsStdin: false)
        let owned = TestSupport.wait(upTo: 30) {
            let reply = try? TestSupport.run(DesktopTests.which("busctl")!, ["--user", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                                            "org.freedesktop.DBus", "NameHasOwner", "s", "org.reindexhost.SearchProvider"],
                                             scratch: scratch, environment: environment)
            return reply?.stdout.contains("true") ?? false
        }
        XCTAssertTrue(owned, TestSupport.read(serve!.stderrPath) ?? "")
        let path = "/org/reindexhost/SearchProvider", interface = "org.gnome.Shell.SearchProvider2", name = "org.reindexhost.SearchProvider"
        XCTAssertEqual(Set(try busctl([name, path, interface, "GetInitialResultSet", "as", "1", "note"]).first as? [String] ?? []),
                       ["com.example.notes/n1", "com.example.notes/a%20b%2Fc"])
        XCTAssertEqual(try busctl([name, path, interface, "GetInitialResultSet", "as", "1", "alph"]).first as? [String], ["com.example.notes/n1"])
        let metas = try busctl([name, path, interface, "GetResultMetas", "as", "1", "com.example.notes/a%20b%2Fc"]).first as? [[String: Any]]
        XCTAssertEqual((metas?.first?["name"] as? [String: Any])?["data"] as? String, "Beta note")
        // The connection is kept between calls; each still reads what is indexed now.
        let more = try TestSupport.runReindex(["--index", index, "put", "com.example.notes"], scratch: scratch, environment: environment,
                                              stdin: #"{"uniqueIdentifier":"n3","attributes":{"title":"Alphabet note"}}"# + "\n")
        XCTAssertEqual(more.status, 0, more.description)
        XCTAssertEqual(Set(try busctl([name, path, interface, "GetInitialResultSet", "as", "1", "alph"]).first as? [String] ?? []),
                       ["com.example.notes/n1", "com.example.notes/n3"])
        kill(serve!.process.processIdentifier, SIGTERM)
        XCTAssertEqual(serve!.finish(timeout: 30).status, 0)
    }
}
#endif
