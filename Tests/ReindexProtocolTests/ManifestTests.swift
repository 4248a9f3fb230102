import XCTest
import ReindexProtocol

private func manifest(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> Manifest? {
    do { return try Manifest.parse(Array(text.utf8)) } catch {
        XCTFail("unexpected manifest error: \(error)", file: file, line: line)
        return nil
    }
}

private func manifestError(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> FieldError? {
    do {
        let parsed = try Manifest.parse(bytes)
        XCTFail("expected an error, got \(parsed)", file: file, line: line)
        return nil
    } catch {
        return error
    }
}

private func manifestError(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> FieldError? {
    manifestError(Array(text.utf8), file: file, line: line)
}

/// A minimal valid manifest with `extra` members added (or replacing the required ones).
private func minimal(_ extra: String = "") -> String {
    let base = #""manifestVersion":1,"bundleIdentifier":"com.example.test","executable":"bin/indexer""#
    return extra.isEmpty ? "{\(base)}" : "{\(base),\(extra)}"
}

final class ManifestTests: XCTestCase {
    // MARK: Defaults

    func testEveryFieldsDefault() throws {
        let m = try XCTUnwrap(manifest(minimal()))
        XCTAssertEqual(m.manifestVersion, 1)
        XCTAssertEqual(m.bundleIdentifier, "com.example.test")
        XCTAssertEqual(m.executable, "bin/indexer")
        XCTAssertEqual(m.displayName, "com.example.test", "displayName defaults to the identifier")
        XCTAssertEqual(m.version, "0")
        XCTAssertEqual(m.arguments, [])
        XCTAssertEqual(m.environment, [:])
        XCTAssertEqual(m.protocolVersions, [1])
        XCTAssertEqual(m.timeouts.startupSeconds, 10)
        XCTAssertEqual(m.timeouts.idleSeconds, 60)
        XCTAssertEqual(m.timeouts.requestSeconds, 3600)
        XCTAssertEqual(m.retry.maxAttempts, 5)
        XCTAssertEqual(m.refreshBeforeExpirySeconds, 86400)
        XCTAssertNil(m.limits.addressSpaceMiB)
        XCTAssertNil(m.limits.cpuSeconds)
        XCTAssertEqual(m.sandbox, Manifest.Sandbox(isEnabled: true, network: true, read: [], write: []), "sandboxed, network allowed")
        XCTAssertEqual(m.priority, .utility)
        XCTAssertEqual(m, Manifest(bundleIdentifier: "com.example.test", executable: "bin/indexer"))
    }

    func testNullOptionalFieldsTakeTheirDefaults() throws {
        let m = try XCTUnwrap(manifest(minimal(#""displayName":null,"version":null,"arguments":null,"environment":null,"timeouts":null,"retry":null,"sandbox":null,"priority":null"#)))
        XCTAssertEqual(m, Manifest(bundleIdentifier: "com.example.test", executable: "bin/indexer"))
    }

    func testPartialNestedObjectsKeepTheOtherDefaults() throws {
        let m = try XCTUnwrap(manifest(minimal(#""timeouts":{"idleSeconds":5},"retry":{}"#)))
        XCTAssertEqual(m.timeouts, Manifest.Timeouts(startupSeconds: 10, idleSeconds: 5, requestSeconds: 3600))
        XCTAssertEqual(m.retry.maxAttempts, 5)
    }

    func testTheContractsExample() throws {
        let m = try XCTUnwrap(manifest(#"""
        {
          "manifestVersion": 1,
          "bundleIdentifier": "com.example.colleagues.indexer",
          "displayName": "Colleagues",
          "version": "1.0.0",
          "executable": "bin/ColleaguesIndexer",
          "arguments": ["--verbose", "x y"],
          "environment": {"COLLEAGUES_DB": "/var/db", "EMPTY": ""},
          "protocolVersions": [1, 2],
          "timeouts": { "startupSeconds": 2.5, "idleSeconds": 30, "requestSeconds": 7200 },
          "retry": { "maxAttempts": 3 },
          "refreshBeforeExpirySeconds": 0,
          "limits": { "addressSpaceMiB": 512, "cpuSeconds": 60 },
          "someFutureKey": {"anything": [1, 2, 3]}
        }
        """#))
        XCTAssertEqual(m.bundleIdentifier, "com.example.colleagues.indexer")
        XCTAssertEqual(m.displayName, "Colleagues")
        XCTAssertEqual(m.version, "1.0.0")
        XCTAssertEqual(m.executable, "bin/ColleaguesIndexer")
        XCTAssertEqual(m.arguments, ["--verbose", "x y"])
        XCTAssertEqual(m.environment, ["COLLEAGUES_DB": "/var/db", "EMPTY": ""])
        XCTAssertEqual(m.protocolVersions, [1, 2])
        XCTAssertEqual(m.timeouts, Manifest.Timeouts(startupSeconds: 2.5, idleSeconds: 30, requestSeconds: 7200))
        XCTAssertEqual(m.retry.maxAttempts, 3)
        XCTAssertEqual(m.refreshBeforeExpirySeconds, 0)
        XCTAssertEqual(m.limits, Manifest.Limits(addressSpaceMiB: 512, cpuSeconds: 60))
    }

    func testJSONRoundTrip() throws {
        let original = try XCTUnwrap(manifest(minimal(#""displayName":"D","version":"2","arguments":["a"],"environment":{"K":"V","A":"B"},"protocolVersions":[1],"timeouts":{"startupSeconds":1,"idleSeconds":2,"requestSeconds":3.5},"retry":{"maxAttempts":9},"refreshBeforeExpirySeconds":12.5,"limits":{"cpuSeconds":10}"#)))
        let written = JSONWriter.bytes(original.json)
        XCTAssertEqual(try Manifest.parse(written), original)
        let defaults = Manifest(bundleIdentifier: "a.b", executable: "/abs/x")
        XCTAssertEqual(try Manifest.parse(JSONWriter.bytes(defaults.json)), defaults)
        XCTAssertNil(defaults.json["limits"], "limits are written only when set")
    }

    func testSandboxAndPriorityRoundTrip() throws {
        for extra in [#""sandbox":false,"priority":"background""#,
                      #""sandbox":{"network":false,"read":["~/Documents/Recipes","/srv/recipes"],"write":["~/.cache/recipes"]},"priority":"interactive""#] {
            let original = try XCTUnwrap(manifest(minimal(extra)))
            XCTAssertEqual(try Manifest.parse(JSONWriter.bytes(original.json)), original, extra)
        }
        XCTAssertEqual(Manifest(bundleIdentifier: "a.b", executable: "x", sandbox: .off).json["sandbox"], .bool(false))
    }

    func testRecordDefaultsToTrueRoundTripsAndNamesItsKeyPath() throws {
        XCTAssertEqual(try XCTUnwrap(manifest(minimal())).record, true)
        XCTAssertEqual(try XCTUnwrap(manifest(minimal(#""record":null"#))).record, true)
        let off = try XCTUnwrap(manifest(minimal(#""record":false"#)))
        XCTAssertEqual(off.record, false)
        XCTAssertEqual(try Manifest.parse(JSONWriter.bytes(off.json)), off)
        XCTAssertEqual(manifestError(minimal(#""record":"no""#))?.description, #"record: expected true or false, got "no""#)
        XCTAssertEqual(manifestError(minimal(#""record":0"#))?.description, "record: expected true or false, got 0")
        XCTAssertEqual(Manifest.warnings(Array(minimal(#""recrod":false"#).utf8)), ["unknown key 'recrod' is ignored; did you mean 'record'?"])
    }

    // MARK: Sandbox and priority

    func testSandboxDeclarations() throws {
        let off = try XCTUnwrap(manifest(minimal(#""sandbox":false"#)))
        XCTAssertFalse(off.sandbox.isEnabled)
        XCTAssertEqual(try XCTUnwrap(manifest(minimal(#""sandbox":true"#))).sandbox, Manifest.Sandbox())
        let declared = try XCTUnwrap(manifest(minimal(#""sandbox":{"network":false,"read":["~/Documents/Recipes","~","/media/recipes/"],"write":["/tmp/x/./y"]}"#)))
        XCTAssertTrue(declared.sandbox.isEnabled)
        XCTAssertFalse(declared.sandbox.network)
        XCTAssertEqual(declared.sandbox.read, ["~/Documents/Recipes", "~", "/media/recipes/"], "kept as written; ~ is expanded when the extension starts")
        XCTAssertEqual(declared.sandbox.write, ["/tmp/x/./y"])
        XCTAssertEqual(try XCTUnwrap(manifest(minimal(#""sandbox":{}"#))).sandbox, Manifest.Sandbox(), "an empty object keeps every default")
        for priority in Manifest.Priority.allCases {
            XCTAssertEqual(manifest(minimal("\"priority\":\"\(priority.rawValue)\""))?.priority, priority)
        }
    }

    func testSandboxAndPriorityErrorsNameTheKeyPath() {
        let cases: [(String, String)] = [
            (minimal(#""sandbox":"off""#), #"sandbox: expected false or an object {"network": bool, "read": [path], "write": [path]}, got "off""#),
            (minimal(#""sandbox":0"#), #"sandbox: expected false or an object {"network": bool, "read": [path], "write": [path]}, got 0"#),
            (minimal(#""sandbox":["~/x"]"#), #"sandbox: expected false or an object {"network": bool, "read": [path], "write": [path]}, got an array"#),
            (minimal(#""sandbox":{"network":"no"}"#), #"sandbox.network: expected true or false, got "no""#),
            (minimal(#""sandbox":{"read":"~/Documents"}"#), #"sandbox.read: expected an array of strings, got "~/Documents""#),
            (minimal(#""sandbox":{"read":["~/ok",7]}"#), "sandbox.read[1]: expected a string, got 7"),
            (minimal(#""sandbox":{"read":["Documents/Recipes"]}"#), #"sandbox.read[0]: expected an absolute path or one starting with ~/, without '..', or one relative to the bundle starting with ./ or ../, got "Documents/Recipes""#),
            (minimal(#""sandbox":{"read":["~/ok","~/Documents/../.ssh"]}"#), #"sandbox.read[1]: expected an absolute path or one starting with ~/, without '..', or one relative to the bundle starting with ./ or ../, got "~/Documents/../.ssh""#),
            (minimal(#""sandbox":{"write":["/var/../etc"]}"#), #"sandbox.write[0]: expected an absolute path or one starting with ~/, without '..', or one relative to the bundle starting with ./ or ../, got "/var/../etc""#),
            (minimal(#""sandbox":{"write":["/x/.."]}"#), #"sandbox.write[0]: expected an absolute path or one starting with ~/, without '..', or one relative to the bundle starting with ./ or ../, got "/x/..""#),
            (minimal(#""sandbox":{"write":["~root/.ssh"]}"#), #"sandbox.write[0]: expected an absolute path or one starting with ~/, without '..', or one relative to the bundle starting with ./ or ../, got "~root/.ssh""#),
            (minimal(#""sandbox":{"write":[""]}"#), #"sandbox.write[0]: expected an absolute path or one starting with ~/, without '..', or one relative to the bundle starting with ./ or ../, got """#),
            (minimal(#""sandbox":{"write":["/a\u0000b"]}"#), #"sandbox.write[0]: expected an absolute path or one starting with ~/, without '..', or one relative to the bundle starting with ./ or ../, got "/a\u0000b""#),
            (minimal(#""priority":"fast""#), #"priority: expected one of "background", "utility", "interactive", got "fast""#),
            (minimal(#""priority":"Background""#), #"priority: expected one of "background", "utility", "interactive", got "Background""#),
            (minimal(#""priority":19"#), "priority: expected a string, got 19"),
        ]
        for (text, expected) in cases {
            XCTAssertEqual(manifestError(text)?.description, expected, text)
        }
        XCTAssertTrue(Manifest.Sandbox.isValidPath("/a/..b/c..d"), "only a whole '..' component is refused")
        XCTAssertTrue(Manifest.Sandbox.isValidPath("../../SDKs/python"), "relative to the bundle")
        XCTAssertTrue(Manifest.Sandbox.isValidPath("./vendor"), "relative to the bundle")
        XCTAssertFalse(Manifest.Sandbox.isValidPath("vendor/lib"), "a bare relative path is ambiguous (home? bundle?)")
    }

    // MARK: Opening items

    func testOpenDeclarations() throws {
        XCTAssertNil(try XCTUnwrap(manifest(minimal(#""open":null"#))).open)
        XCTAssertEqual(manifest(minimal(#""open":{"url":"{contentURL}"}"#))?.open, .url("{contentURL}"))
        let command = try XCTUnwrap(manifest(minimal(#""open":{"command":["/usr/bin/app","--id","{uniqueIdentifier}"]}"#)))
        XCTAssertEqual(command.open, .command(["/usr/bin/app", "--id", "{uniqueIdentifier}"]))
        XCTAssertEqual(try Manifest.parse(JSONWriter.bytes(command.json)), command)
        XCTAssertTrue(Manifest.knownKeys["open"]?.contains("command") ?? false)
    }

    func testOpenErrorsNameTheKeyPath() {
        let object = #"an object {"url": TEMPLATE} or {"command": [TEMPLATE, …]}"#
        let cases: [(String, String)] = [
            (minimal(#""open":"xdg-open {contentURL}""#), "open: expected \(object), got \"xdg-open {contentURL}\""),
            (minimal(#""open":{}"#), #"open: expected exactly one of "url" and "command", got neither"#),
            (minimal(#""open":{"url":"x:y","command":["a"]}"#), #"open: expected exactly one of "url" and "command", got both"#),
            (minimal(#""open":{"url":5}"#), "open.url: expected a string, got 5"),
            (minimal(#""open":{"url":null}"#), "open.url: expected a string, got null"),
            (minimal(#""open":{"url":""}"#), #"open.url: expected a non-empty URL template, got """#),
            (minimal(#""open":{"command":"app"}"#), #"open.command: expected an array of strings, got "app""#),
            (minimal(#""open":{"command":[]}"#), "open.command: expected a non-empty array (the program, then its arguments), got []"),
            (minimal(#""open":{"command":["app",1]}"#), "open.command[1]: expected a string, got 1"),
            (minimal(#""open":{"command":[""]}"#), #"open.command[0]: expected a non-empty program, got """#),
            (minimal(#""open":{"command":["{contentURL}"]}"#), #"open.command[0]: expected a program without placeholders (no '{'), got "{contentURL}""#),
        ]
        for (text, expected) in cases {
            XCTAssertEqual(manifestError(text)?.description, expected, text)
        }
    }

    func testPlaceholdersAreReplacedOnceInsideEachArgument() {
        let values = ["uniqueIdentifier": "-rf; \"x\" {title}\n", "title": "T", "contentURL": "https://e.com/a b"]
        XCTAssertEqual(OpenDeclaration.substitute("--id={uniqueIdentifier}", values), "--id=-rf; \"x\" {title}\n", "a value's braces stay as they are")
        XCTAssertEqual(OpenDeclaration.substitute("{title}{title} {domainIdentifier}|{unknown}{", values), "TT |{unknown}{")
        XCTAssertEqual(OpenDeclaration.substitute("{{contentURL}}", values), "{https://e.com/a b}")
    }

    func testUnknownTopLevelKeysAreIgnored() {
        XCTAssertEqual(manifest(minimal(#""future":1,"another":{"x":[null]}"#)), Manifest(bundleIdentifier: "com.example.test", executable: "bin/indexer"))
    }

    func testWholeNumbersWrittenAsDoublesAreAccepted() throws {
        let m = try XCTUnwrap(manifest(#"{"manifestVersion":1.0,"bundleIdentifier":"a.b","executable":"x","retry":{"maxAttempts":2.0},"protocolVersions":[1.0]}"#))
        XCTAssertEqual(m.retry.maxAttempts, 2)
        XCTAssertEqual(m.protocolVersions, [1])
    }

    // MARK: Document-level errors

    func testEmptyFile() {
        XCTAssertEqual(manifestError([])?.description, "the file is empty (expected a JSON object)")
    }

    func testInvalidJSON() throws {
        let truncated = try XCTUnwrap(manifestError(#"{"manifestVersion":1,"bundle"#))
        XCTAssertEqual(truncated.path, "")
        XCTAssertTrue(truncated.description.hasPrefix("not valid JSON: "), truncated.description)
        XCTAssertTrue(truncated.description.hasSuffix("at line 1, column 22 (byte 21)"), truncated.description)
        XCTAssertEqual(manifestError("   \n")?.description, "not valid JSON: unexpected end of input at line 2, column 1 (byte 4)")
        let bytes: [UInt8] = Array(#"{"manifestVersion":1,"displayName":"a"#.utf8) + [0xFF] + Array(#""}"#.utf8)
        XCTAssertEqual(manifestError(bytes)?.description, "not valid JSON: invalid UTF-8 in a string at line 1, column 38 (byte 37)")
    }

    /// Line and column count characters, not bytes, so an editor lands on the spot.
    func testInvalidJSONPositionCountsCharacters() {
        let text = "{\n  \"displayName\": \"Café\" \"version\": \"1\"\n}"
        XCTAssertEqual(manifestError(text)?.description, "not valid JSON: expected ',' or '}' in an object at line 2, column 25 (byte 27)")
    }

    func testWarningsSuggestTheKnownKeyForAMisspelling() {
        let value: JSONValue = ["manifestVersion": 1, "Timeouts": ["requestSecond": 5], "enviroment": [:], "retyr": ["maxAttempts": 2], "vendorData": true]
        XCTAssertEqual(Manifest.warnings(value), [
            "unknown key 'Timeouts' is ignored; did you mean 'timeouts'?",
            "unknown key 'enviroment' is ignored; did you mean 'environment'?",
            "unknown key 'retyr' is ignored; did you mean 'retry'?",
        ])
        let nested: JSONValue = ["timeouts": ["requestSecond": 5], "limits": ["cpuSecond": 1]]
        XCTAssertEqual(Manifest.warnings(nested), [
            "unknown key 'limits.cpuSecond' is ignored; did you mean 'limits.cpuSeconds'?",
            "unknown key 'timeouts.requestSecond' is ignored; did you mean 'timeouts.requestSeconds'?",
        ])
    }

    func testTopLevelMustBeAnObject() {
        XCTAssertEqual(manifestError("[]")?.description, "expected a JSON object at the top level, got an array")
        XCTAssertEqual(manifestError("\"x\"")?.description, "expected a JSON object at the top level, got \"x\"")
        XCTAssertEqual(manifestError("null")?.description, "expected a JSON object at the top level, got null")
    }

    func testDeepNestingIsRefused() throws {
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        let error = try XCTUnwrap(manifestError(minimal("\"x\":\(deep)")))
        XCTAssertTrue(error.description.contains("nesting deeper than 64 levels"), error.description)
    }

    func testDuplicateKeysTakeTheLastValue() {
        XCTAssertEqual(manifestError(minimal(#""bundleIdentifier":5"#))?.description, "bundleIdentifier: expected a string, got 5")
        XCTAssertEqual(manifest(minimal(#""displayName":"first","displayName":"second""#))?.displayName, "second")
    }

    // MARK: Every field's type errors

    func testRequiredFieldErrors() {
        XCTAssertEqual(manifestError(#"{"bundleIdentifier":"a.b","executable":"x"}"#)?.description, "manifestVersion: is required (1)")
        XCTAssertEqual(manifestError(#"{"manifestVersion":1,"executable":"x"}"#)?.description,
                       "bundleIdentifier: is required (a reverse-DNS identifier such as com.example.app.indexer)")
        XCTAssertEqual(manifestError(#"{"manifestVersion":1,"bundleIdentifier":"a.b"}"#)?.description,
                       "executable: is required (a path to the extension's executable)")
    }

    func testFieldTypeErrors() {
        let cases: [(String, String)] = [
            (#"{"manifestVersion":"1","bundleIdentifier":"a.b","executable":"x"}"#, #"manifestVersion: expected 1, got "1""#),
            (#"{"manifestVersion":2,"bundleIdentifier":"a.b","executable":"x"}"#, "manifestVersion: expected 1, got 2"),
            (#"{"manifestVersion":1.5,"bundleIdentifier":"a.b","executable":"x"}"#, "manifestVersion: expected 1, got 1.5"),
            (#"{"manifestVersion":null,"bundleIdentifier":"a.b","executable":"x"}"#, "manifestVersion: expected 1, got null"),
            (#"{"manifestVersion":1,"bundleIdentifier":42,"executable":"x"}"#, "bundleIdentifier: expected a string, got 42"),
            (#"{"manifestVersion":1,"bundleIdentifier":"a.b","executable":5}"#, "executable: expected a string, got 5"),
            (#"{"manifestVersion":1,"bundleIdentifier":"a.b","executable":""}"#, #"executable: expected a non-empty path, got """#),
            (#"{"manifestVersion":1,"bundleIdentifier":"a.b","executable":"a\u0000b"}"#, "executable: a path without NUL characters"),
            (minimal(#""displayName":7"#), "displayName: expected a string, got 7"),
            (minimal(#""version":1"#), "version: expected a string, got 1"),
            (minimal(#""version":[1,0]"#), "version: expected a string, got an array"),
            (minimal(#""arguments":"--verbose""#), #"arguments: expected an array of strings, got "--verbose""#),
            (minimal(#""arguments":["ok",1]"#), "arguments[1]: expected a string, got 1"),
            (minimal(#""environment":[]"#), "environment: expected an object, got an array"),
            (minimal(#""environment":{"A":"1","B":2}"#), "environment.B: expected a string, got 2"),
            (minimal(#""environment":{"A=B":"1"}"#), #"environment: expected variable names without '=' or NUL, got "A=B""#),
            (minimal(#""environment":{"":"1"}"#), #"environment: expected variable names without '=' or NUL, got """#),
            (minimal(#""protocolVersions":1"#), "protocolVersions: expected an array, got 1"),
            (minimal(#""protocolVersions":[]"#), "protocolVersions: expected a non-empty array of positive whole numbers, got []"),
            (minimal(#""protocolVersions":["1"]"#), #"protocolVersions[0]: expected a positive whole number, got "1""#),
            (minimal(#""protocolVersions":[1,0]"#), "protocolVersions[1]: expected a positive whole number, got 0"),
            (minimal(#""protocolVersions":[1.5]"#), "protocolVersions[0]: expected a positive whole number, got 1.5"),
            (minimal(#""timeouts":60"#), "timeouts: expected an object, got 60"),
            (minimal(#""timeouts":{"idleSeconds":"sixty"}"#), #"timeouts.idleSeconds: expected a positive number, got "sixty""#),
            (minimal(#""timeouts":{"idleSeconds":0}"#), "timeouts.idleSeconds: expected a positive number, got 0"),
            (minimal(#""timeouts":{"idleSeconds":-1}"#), "timeouts.idleSeconds: expected a positive number, got -1"),
            (minimal(#""timeouts":{"startupSeconds":"ten"}"#), #"timeouts.startupSeconds: expected a positive number, got "ten""#),
            (minimal(#""timeouts":{"startupSeconds":0}"#), "timeouts.startupSeconds: expected a positive number, got 0"),
            (minimal(#""timeouts":{"startupSeconds":-0.5}"#), "timeouts.startupSeconds: expected a positive number, got -0.5"),
            (minimal(#""timeouts":{"requestSeconds":true}"#), "timeouts.requestSeconds: expected a positive number, got true"),
            (minimal(#""timeouts":{"requestSeconds":0}"#), "timeouts.requestSeconds: expected a positive number, got 0"),
            (minimal(#""timeouts":{"requestSeconds":-3600}"#), "timeouts.requestSeconds: expected a positive number, got -3600"),
            (minimal(#""retry":5"#), "retry: expected an object, got 5"),
            (minimal(#""retry":{"maxAttempts":0}"#), "retry.maxAttempts: expected a positive whole number, got 0"),
            (minimal(#""retry":{"maxAttempts":1.5}"#), "retry.maxAttempts: expected a positive whole number, got 1.5"),
            (minimal(#""retry":{"maxAttempts":-2}"#), "retry.maxAttempts: expected a positive whole number, got -2"),
            (minimal(#""retry":{"maxAttempts":"5"}"#), #"retry.maxAttempts: expected a positive whole number, got "5""#),
            (minimal(#""refreshBeforeExpirySeconds":-1"#), "refreshBeforeExpirySeconds: expected a number of 0 or more, got -1"),
            (minimal(#""refreshBeforeExpirySeconds":"1d""#), #"refreshBeforeExpirySeconds: expected a number of 0 or more, got "1d""#),
            (minimal(#""limits":[]"#), "limits: expected an object, got an array"),
            (minimal(#""limits":{"addressSpaceMiB":0}"#), "limits.addressSpaceMiB: expected a positive whole number, got 0"),
            (minimal(#""limits":{"cpuSeconds":"1m"}"#), #"limits.cpuSeconds: expected a positive whole number, got "1m""#),
            (minimal(#""limits":{"cpuSeconds":4294967296}"#), "limits.cpuSeconds: expected a positive whole number up to 2147483647, got 4294967296"),
            (minimal(#""retry":{"maxAttempts":1e30}"#), "retry.maxAttempts: expected a positive whole number up to 2147483647, got 1e+30"),
        ]
        for (text, expected) in cases {
            XCTAssertEqual(manifestError(text)?.description, expected, text)
        }
        // The contract's own example message, word for word.
        XCTAssertEqual(manifestError(minimal(#""timeouts":{"idleSeconds":"sixty"}"#))?.path, "timeouts.idleSeconds")
    }

    func testLongValuesAreShortenedInMessages() throws {
        let long = String(repeating: "x", count: 200)
        let error = try XCTUnwrap(manifestError(minimal("\"timeouts\":{\"idleSeconds\":\"\(long)\"}")))
        XCTAssertTrue(error.description.hasPrefix("timeouts.idleSeconds: expected a positive number, got \"xxx"), error.description)
        XCTAssertLessThan(error.description.count, 120)
    }

    // MARK: Identifier rules

    func testValidIdentifiers() {
        for identifier in ["a.b", "com.example", "com.example.colleagues.indexer", "Com.Example.App", "a-b.c-d", "1.2",
                           "com.example.x-1", "-a.b-", String(repeating: "a", count: 127) + "." + String(repeating: "b", count: 127)] {
            XCTAssertTrue(Manifest.isValidBundleIdentifier(identifier), identifier)
        }
    }

    func testInvalidIdentifiers() {
        let invalid = [
            "", "com", "indexer",                                // one label
            ".com.example", "com..example", "com.example.", ".", "..",  // empty labels
            "com.exa_mple", "com.exa mple", "com/example", "com.exämple", "com.example!", "com:example",
            " com.example", "com.example ", "com.example\n", "com.\u{0}example", "..\\..", "../../etc",
        ]
        for identifier in invalid {
            XCTAssertFalse(Manifest.isValidBundleIdentifier(identifier), identifier.debugDescription)
        }
    }

    func testIdentifierLengthLimit() {
        let limit = Manifest.maximumIdentifierLength
        XCTAssertEqual(limit, 255)
        let exactly255 = "com." + String(repeating: "a", count: 251)
        let exactly256 = "com." + String(repeating: "a", count: 252)
        XCTAssertEqual(exactly255.count, 255)
        XCTAssertEqual(exactly256.count, 256)
        XCTAssertTrue(Manifest.isValidBundleIdentifier(exactly255))
        XCTAssertFalse(Manifest.isValidBundleIdentifier(exactly256))
        XCTAssertNotNil(manifest(#"{"manifestVersion":1,"bundleIdentifier":"\#(exactly255)","executable":"x"}"#))
        let error = manifestError(#"{"manifestVersion":1,"bundleIdentifier":"\#(exactly256)","executable":"x"}"#)
        XCTAssertEqual(error?.path, "bundleIdentifier")
    }

    func testInvalidIdentifierMessage() {
        XCTAssertEqual(manifestError(#"{"manifestVersion":1,"bundleIdentifier":"indexer","executable":"x"}"#)?.description,
                       #"bundleIdentifier: expected a reverse-DNS identifier (two or more dot-separated labels of A-Z a-z 0-9 -, at most 255 characters), got "indexer""#)
        XCTAssertEqual(manifestError(#"{"manifestVersion":1,"bundleIdentifier":"com..x","executable":"x"}"#)?.path, "bundleIdentifier")
        XCTAssertEqual(manifestError(#"{"manifestVersion":1,"bundleIdentifier":"com.ex ample","executable":"x"}"#)?.path, "bundleIdentifier")
    }

    func testIdentifierCaseIsPreserved() {
        let m = manifest(#"{"manifestVersion":1,"bundleIdentifier":"Com.Example.MixedCase","executable":"x"}"#)
        XCTAssertEqual(m?.bundleIdentifier, "Com.Example.MixedCase")
        XCTAssertEqual(m?.displayName, "Com.Example.MixedCase")
    }

    // MARK: Executable

    func testExecutablePathsAreKeptAsWritten() {
        XCTAssertEqual(manifest(#"{"manifestVersion":1,"bundleIdentifier":"a.b","executable":"/usr/bin/true"}"#)?.executable, "/usr/bin/true")
        XCTAssertEqual(manifest(#"{"manifestVersion":1,"bundleIdentifier":"a.b","executable":"./bin/../bin/x"}"#)?.executable, "./bin/../bin/x")
    }
}
