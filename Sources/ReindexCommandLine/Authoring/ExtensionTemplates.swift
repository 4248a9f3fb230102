import ReindexProtocol
import ReindexHost
import ReindexStore
import ReindexSystem
/// The files `reindex new` writes, as string resources (no resource bundle to find at run time).
///
/// Placeholders are replaced by `NewExtension`: `{{NAME}}` the project name, `{{ID}}` the bundle
/// identifier, `{{LOWER}}` the name in lower case, `{{SDK_DEPENDENCY}}` (Swift) the
/// `.package(…)` line, `{{ENVIRONMENT}}` (Python, TypeScript) the manifest's environment object,
/// `{{SANDBOX}}` the sandbox grant that lets the extension read the SDK outside its bundle.
/// Every template indexes five sample records in batches of two, committing each batch with a
/// client state (the index of the next record) and resuming from it, so the batch loop is
/// exercised from the first run. Raw string literals keep the templates' own `\(` and `{` as
/// they are.
enum ExtensionTemplates {
    // MARK: Swift

    static let swiftPackage = #"""
        // swift-tools-version: 6.1
        import PackageDescription

        let package = Package(
            name: "{{NAME}}",
            platforms: [.macOS(.v13)],
            dependencies: [
        {{SDK_DEPENDENCY}}
            ],
            targets: [
                .executableTarget(
                    name: "{{NAME}}",
                    dependencies: [.product(name: "ReindexExtension", package: "ReindexHost")]
                ),
                // `swift test`: the handlers run on a RecordingIndex, without the host.
                .testTarget(
                    name: "{{NAME}}Tests",
                    dependencies: ["{{NAME}}", .product(name: "ReindexExtensionTesting", package: "ReindexHost")]
                ),
            ]
        )

        """#

    static let swiftTests = #"""
        import ReindexExtension
        import ReindexExtensionTesting
        import XCTest
        @testable import {{NAME}}

        /// {{NAME}}'s handlers without the host: each runs on a `RecordingIndex`, which records what
        /// it puts, deletes, commits and reports, and reads every item back as the host would (an
        /// item the host would reject is in `rejections`, a misspelt attribute name in `warnings`).
        final class {{NAME}}Tests: XCTestCase {
            func testReindexAllPutsEveryRecordInBatches() async throws {
                let index = RecordingIndex()
                try await {{NAME}}().reindexAll(on: index)
                XCTAssertEqual(index.items.keys.sorted(), ["record.1", "record.2", "record.3", "record.4", "record.5"])
                XCTAssertEqual(index.items["record.1"]?.attributes.title, "Getting started")
                XCTAssertEqual(index.commits.map { String(decoding: $0, as: UTF8.self) }, ["2", "4"])
                XCTAssertEqual(index.progress.last?.completed, 5)
                XCTAssertEqual(index.rejections, [])
                XCTAssertEqual(index.warnings, [])
            }

            func testReindexAllResumesAfterTheLastCommittedBatch() async throws {
                let index = RecordingIndex(reason: .retry, clientState: Array("4".utf8))
                try await {{NAME}}().reindexAll(on: index)
                XCTAssertEqual(index.puts.map(\.uniqueIdentifier), ["record.5"])
            }

            func testReindexItemsPutsWhatExistsAndDeletesWhatIsGone() async throws {
                let index = RecordingIndex()
                try await {{NAME}}().reindexItems(identifiers: ["record.2", "record.9"], on: index)
                XCTAssertEqual(index.puts.map(\.uniqueIdentifier), ["record.2"])
                XCTAssertEqual(index.deletedIdentifiers, ["record.9"])
            }
        }

        """#

    static let swiftSource = #"""
        import ReindexExtension

        /// {{NAME}}: a reindexing extension for the `reindex` host.
        ///
        /// The host starts it in the bundle directory and asks for `reindexAll` (index everything)
        /// or `reindexItems` (re-index these identifiers). Returning acknowledges a request; throwing
        /// refuses it and the host retries later. The name and version reported to the host come
        /// from manifest.json (`displayName`, `version`).
        @main
        struct {{NAME}}: IndexExtension {
            /// Records per batch. Each batch is put, then committed together with a client state (the
            /// index of the next record), so an interrupted reindexAll resumes after the last batch.
            static let batchSize = 2

            struct Record: Sendable {
                var id: String
                var title: String
                var text: String
            }

            /// Replace with your data source: files, a database, a web service…
            func loadRecords() throws -> [Record] {
                [
                    Record(id: "1", title: "Getting started", text: "The first record of {{NAME}}"),
                    Record(id: "2", title: "Batches", text: "Each batch is committed with a client state"),
                    Record(id: "3", title: "Resuming", text: "An interrupted reindexAll resumes after the last batch"),
                    Record(id: "4", title: "Searching", text: "reindex search finds words by prefix"),
                    Record(id: "5", title: "Debugging", text: "reindex debug attaches lldb or gdb"),
                ]
            }

            func item(_ record: Record) -> SearchableItem {
                SearchableItem(
                    uniqueIdentifier: "record.\(record.id)",
                    domainIdentifier: "{{ID}}.records",
                    attributes: .init(title: record.title, textContent: record.text))
            }

            func reindexAll(_ index: SearchableIndex) async throws {
                let records = try loadRecords()
                var next = 0
                if let state = index.clientState, let saved = Int(String(decoding: state, as: UTF8.self)), saved <= records.count {
                    next = saved   // resume after the last committed batch of an interrupted attempt
                    print("{{NAME}}: resuming at record \(next) of \(records.count)")   // print goes to the log
                }
                while next < records.count {
                    try Task.checkCancellation()   // the host's $/cancel stops the work here
                    let end = min(next + Self.batchSize, records.count)
                    try await index.put(records[next..<end].map(item))
                    index.progress(completed: end, total: records.count, message: "\(end) of \(records.count) records")
                    // The acknowledgement (returning) commits the last batch.
                    if end < records.count { try await index.commitBatch(clientState: Array(String(end).utf8)) }
                    next = end
                }
            }

            func reindexItems(identifiers: [String], index: SearchableIndex) async throws {
                let records = Dictionary(uniqueKeysWithValues: try loadRecords().map { ("record.\($0.id)", $0) })
                try await index.put(identifiers.compactMap { records[$0] }.map(item))
                let gone = identifiers.filter { records[$0] == nil }
                if !gone.isEmpty { try await index.delete(identifiers: gone) }
            }
        }

        """#

    /// The project directory is also a development bundle: after `swift build`, the manifest's
    /// executable is the debug build. `swift package bundle-extension` rewrites `executable`.
    static let swiftManifest = #"""
        {
          "manifestVersion": 1,
          "bundleIdentifier": "{{ID}}",
          "displayName": "{{NAME}}",
          "version": "1.0.0",
          "executable": ".build/debug/{{NAME}}",
          "timeouts": { "startupSeconds": 10, "idleSeconds": 60, "requestSeconds": 600 }
        }

        """#

    static let swiftGitignore = ".build/\n.swiftpm/\nbundles/\n"

    static let swiftReadme = #"""
        # {{NAME}}

        A reindexing extension for the `reindex` host, in Swift, made by `reindex new swift {{NAME}}`.
        Its bundle identifier is `{{ID}}`. `Sources/{{NAME}}/{{NAME}}.swift` indexes five sample
        records in batches of two, committing each batch with a client state and resuming from it;
        replace `loadRecords()` with your data.

        ## Develop

        This directory is a bundle as soon as it is built: `manifest.json` names the debug build.

        ```sh
        swift build
        reindex validate . --run                              # checks the manifest and the protocol
        reindex --extensions-path .. run {{ID}}               # index into your index (.. holds this bundle)
        reindex search record
        reindex --extensions-path .. debug {{ID}} --wait-for-debugger   # waits for gdb or lldb; see Debug below
        ```

        ## Test

        `swift test` runs `Tests/{{NAME}}Tests`: the handlers on a `RecordingIndex`
        (`import ReindexExtensionTesting`), without the host. It records what a handler puts,
        deletes, commits and reports, reads each item back as the host would (`rejections`,
        `warnings` for misspelt attribute names), and throws what would refuse the request.

        ## Debug

        From nothing to a breakpoint:

        ```sh
        swift build
        reindex --extensions-path .. debug {{ID}} --wait-for-debugger   # prints the PID; the extension waits
        gdb -p PID -ex 'break {{NAME}}.swift:LINE' -ex continue          # or: lldb -p PID, then b, c
        ```

        The SDK's gate waits before your `init()` runs, so breakpoints there are hit too. Ctrl-C ends
        the wait. More in docs/DEBUGGING.md of ReindexHost.

        ## Install

        ```sh
        swift package bundle-extension --product {{NAME}} --configuration release   # into ~/.local/share/reindex/extensions
        reindex list
        ```

        The `bundle-extension` plugin comes with the ReindexHost package. It takes `manifest.json`
        from `Sources/{{NAME}}/Bundle/` when that folder exists (declare `exclude: ["Bundle"]` on the
        target then), else from this directory, and sets `executable` to the built binary.

        ## The dependency

        {{SDK_NOTE}}

        The SDK's reference is `docs/SDK.md` of ReindexHost; the protocol is `docs/PROTOCOL.md`.

        """#

    // MARK: Python

    static let pythonSource = #"""
        #!/usr/bin/env python3
        """{{NAME}}: a reindexing extension for the `reindex` host, written with the Python SDK.

        The host starts it in the bundle directory and asks for reindex_all (index everything) or
        reindex_items (re-index these identifiers). Returning acknowledges a request; raising refuses
        it and the host retries later. The name and version reported to the host come from
        manifest.json (displayName, version). print() goes to stderr, the host's log of the bundle.
        """
        import os
        import sys


        def find_sdk():
            """Makes the `reindex_extension` package importable: from $REINDEX_PYTHON_SDK (set in
            manifest.json's "environment" -- the host passes no other variables of yours), from a
            copy beside this file (vendor SDKs/python/reindex_extension into the bundle to ship it),
            or from the installed packages (pip install SDKs/python)."""
            here = os.path.dirname(os.path.realpath(__file__))
            for candidate in (os.environ.get("REINDEX_PYTHON_SDK"), here):
                if candidate and os.path.isfile(os.path.join(candidate, "reindex_extension", "__init__.py")):
                    sys.path.insert(0, candidate)
                    return
            try:
                import reindex_extension  # noqa: F401 (installed)
            except ImportError:
                sys.exit("{{LOWER}}: cannot find the Python SDK (reindex_extension): set REINDEX_PYTHON_SDK "
                         "in manifest.json's environment to SDKs/python, copy SDKs/python/reindex_extension "
                         "beside this file, or pip install SDKs/python")


        find_sdk()
        from reindex_extension import Extension, Item  # noqa: E402

        BATCH_SIZE = 2  # records per batch; each batch is committed with a client state
        DOMAIN = "{{ID}}.records"


        def load_records():
            """Replace with your data source: files, a database, a web service..."""
            return [
                {"id": "1", "title": "Getting started", "text": "The first record of {{NAME}}"},
                {"id": "2", "title": "Batches", "text": "Each batch is committed with a client state"},
                {"id": "3", "title": "Resuming", "text": "An interrupted reindexAll resumes after the last batch"},
                {"id": "4", "title": "Searching", "text": "reindex search finds words by prefix"},
                {"id": "5", "title": "Debugging", "text": "reindex debug waits for debugpy"},
            ]


        def to_item(record):
            return Item("record." + record["id"], {"title": record["title"], "textContent": record["text"]},
                        domain_identifier=DOMAIN)


        class {{NAME}}(Extension):
            def reindex_all(self, index):
                records = load_records()
                start = 0
                if index.client_state:
                    try:
                        start = min(int(index.client_state.decode("utf-8")), len(records))
                        print("{{LOWER}}: resuming at record %d of %d" % (start, len(records)), file=sys.stderr)
                    except ValueError:
                        print("{{LOWER}}: unreadable client state; starting from the beginning", file=sys.stderr)
                for first in range(start, len(records), BATCH_SIZE):
                    index.check_cancelled()  # the host's $/cancel stops the work here
                    batch = records[first:first + BATCH_SIZE]
                    index.put(to_item(record) for record in batch)
                    done = first + len(batch)
                    index.progress(done, len(records), "%d of %d records" % (done, len(records)))
                    if done < len(records):  # the acknowledgement (returning) commits the last batch
                        index.commit_batch(str(done).encode("utf-8"))

            def reindex_items(self, identifiers, index):
                records = {"record." + record["id"]: record for record in load_records()}
                index.put(to_item(records[uid]) for uid in identifiers if uid in records)
                gone = [uid for uid in identifiers if uid not in records]
                if gone:
                    index.delete(gone)


        if __name__ == "__main__":
            {{NAME}}.main()

        """#

    /// The Python project's unit test (`python3 -m unittest` in the project directory).
    static let pythonTests = #"""
        """Unit tests of {{NAME}}'s handlers without the host: `python3 -m unittest` in this directory.

        run_reindex_all / run_reindex_items call a handler in this process on a RecordingIndex, which
        records what it puts, deletes, commits and reports, and reads every item back as the host
        would (an item the host would reject is in `rejections`, a misspelt attribute name in
        `warnings`).
        """
        import importlib
        import json
        import os
        import sys
        import unittest

        HERE = os.path.dirname(os.path.abspath(__file__))
        # Find the SDK where the host does (manifest.json's environment), unless it is set already.
        with open(os.path.join(HERE, "manifest.json"), encoding="utf-8") as manifest:
            for key, value in json.load(manifest).get("environment", {}).items():
                os.environ.setdefault(key, value)
        sys.path.insert(0, HERE)
        {{NAME}} = getattr(importlib.import_module("{{LOWER}}"), "{{NAME}}")  # {{LOWER}}.py finds the SDK

        from reindex_extension.testing import run_reindex_all, run_reindex_items  # noqa: E402


        class {{NAME}}Tests(unittest.TestCase):
            def test_reindex_all_puts_every_record_in_batches(self):
                index = run_reindex_all({{NAME}}())
                self.assertEqual(sorted(index.items), ["record.1", "record.2", "record.3", "record.4", "record.5"])
                self.assertEqual(index.items["record.1"]["attributes"]["title"], "Getting started")
                self.assertEqual(index.commits, [b"2", b"4"])
                self.assertEqual(index.progress[-1][0], 5)
                self.assertEqual(index.rejections, [])
                self.assertEqual(index.warnings, [])

            def test_reindex_all_resumes_after_the_last_committed_batch(self):
                index = run_reindex_all({{NAME}}(), reason="retry", client_state=b"4")
                self.assertEqual([item["uniqueIdentifier"] for item in index.puts], ["record.5"])

            def test_reindex_items_puts_what_exists_and_deletes_what_is_gone(self):
                index = run_reindex_items({{NAME}}(), ["record.2", "record.9"])
                self.assertEqual([item["uniqueIdentifier"] for item in index.puts], ["record.2"])
                self.assertEqual(index.deleted, ["record.9"])


        if __name__ == "__main__":
            unittest.main()

        """#

    static let scriptManifest = #"""
        {
          "manifestVersion": 1,
          "bundleIdentifier": "{{ID}}",
          "displayName": "{{NAME}}",
          "version": "1.0.0",
          "executable": "{{EXECUTABLE}}",
          "environment": {{ENVIRONMENT}},{{SANDBOX}}
          "timeouts": { "startupSeconds": 10, "idleSeconds": 60, "requestSeconds": 600 }
        }

        """#

    /// The one Python debugging workflow (the same as SDKs/python/README.md and docs/DEBUGGING.md).
    static let pythonDebugSection = #"""
        From nothing to a breakpoint:

        ```sh
        python3 -m pip install debugpy                                  # once, for the python3 this script runs with
        reindex --extensions-path .. debug {{ID}} --wait-for-debugger   # the extension waits for a debugger
        ```

        Then set a breakpoint in `reindex_all` in VS Code and start this configuration from
        `.vscode/launch.json`:

        ```json
        { "name": "Attach to {{NAME}} (debugpy)", "type": "debugpy", "request": "attach",
          "connect": { "host": "127.0.0.1", "port": 5678 } }
        ```

        Another port: `REINDEX_DEBUGPY_PORT=5690 reindex … debug …`. A limit:
        `--wait-for-debugger=120`. Ctrl-C ends the wait. Native code: `gdb -p PID`, with the PID the
        extension prints. Do not use `pdb` or `breakpoint()`: stdin and stdout belong to the
        protocol. More in SDKs/python/README.md (Debugging) and docs/DEBUGGING.md.
        """#

    /// The one Node debugging workflow (the same as SDKs/typescript/README.md and docs/DEBUGGING.md).
    static let nodeDebugSection = #"""
        From nothing to a breakpoint:

        ```sh
        reindex --extensions-path .. debug {{ID}} --wait-for-debugger   # 1. the extension waits for a debugger
        node inspect 127.0.0.1:9229                                     # 2. in a second terminal: attach
        debug> sb('build/{{NAME}}.js', LINE); cont                      # 3. break on a line of the compiled handler and run to it
        ```

        The SDK opens Node's inspector on 127.0.0.1:9229 and waits until a debugger attaches, then
        pauses once before your handler so you can set breakpoints. node inspect works on the lines
        of the compiled `build/{{NAME}}.js`; VS Code and Chrome map breakpoints set in
        `src/{{NAME}}.ts` through the source maps tsc writes beside it. When the request is over, leave
        node inspect with `.exit` and the extension exits. VS Code: attach with
        `{"type":"node","request":"attach","address":"127.0.0.1","port":9229}` and press Continue once
        at the SDK's pause. Chrome: chrome://inspect, then "inspect". Another port:
        `REINDEX_INSPECTOR_PORT=N reindex debug …`; a time limit: `--wait-for-debugger=60`. Ctrl-C
        ends the wait. More in SDKs/typescript/README.md and docs/DEBUGGING.md.
        """#

    static let scriptReadme = #"""
        # {{NAME}}

        A reindexing extension for the `reindex` host, in {{LANGUAGE}}, made by
        `reindex new {{COMMAND}} {{NAME}}`. Its bundle identifier is `{{ID}}`. This directory is the
        bundle: `manifest.json` and the executable `{{EXECUTABLE}}`, which indexes five sample
        records in batches of two, committing each batch with a client state and resuming from it;
        replace `{{LOADER}}` with your data.

        ## Develop

        ```sh
        reindex validate . --run                              # checks the manifest and the protocol
        reindex --extensions-path .. run {{ID}}               # index into your index (.. holds this bundle)
        reindex search record
        reindex --extensions-path .. debug {{ID}} --trace     # every protocol message
        reindex --extensions-path .. debug {{ID}} --wait-for-debugger   # {{DEBUGGER}}; see Debug below
        ```

        ## Debug

        {{DEBUG_SECTION}}

        ## Install

        ```sh
        cp -R . ~/.local/share/reindex/extensions/{{ID}}
        reindex list
        ```

        ## The SDK

        {{SDK_NOTE}}

        """#

    // MARK: TypeScript
    //
    // A TypeScript project: `src/{{NAME}}.ts` (the handler, exported so the unit test can call it),
    // `src/main.ts` (runs it), compiled by `tsc` into `build/`. The manifest's executable is
    // `{{EXECUTABLE}}`, a small committed launcher that imports `build/main.js`: its mode is set
    // once by `reindex new` and survives every build (tsc writes files 0644), and it says what
    // to do when the build is missing. `npm run build` first links `node_modules/reindex-extension`
    // to the SDK (`scripts/link-sdk.mjs`), so tsc finds its types and node finds it at run time.

    static let typescriptSource = #"""
        // {{NAME}}: a reindexing extension for the `reindex` host, written with the TypeScript SDK.
        //
        // The host starts it (`{{EXECUTABLE}}` → build/main.js) in the bundle directory and asks for
        // reindexAll (index everything) or reindexItems (re-index these identifiers). Resolving
        // acknowledges a request; throwing refuses it (its message and stack go to the host) and the
        // host retries later. console.log goes to stderr, the bundle's log.

        import type { IndexExtension, SearchableIndex, SearchableItem } from 'reindex-extension';

        const BATCH_SIZE = 2; // records per batch; each batch is committed with a client state
        const DOMAIN = '{{ID}}.records';

        export interface SourceRecord {
          id: string;
          title: string;
          text: string;
          /** A custom attribute: declare it in manifest.json's "attributes" to filter and sort by it. */
          words?: number;
        }

        /** The custom attributes of an item (see SourceRecord.words). */
        export interface RecordAttributes {
          words?: number;
        }

        /** Replace with your data source: files, a database, a web service... */
        export function loadRecords(): SourceRecord[] {
          return [
            { id: '1', title: 'Getting started', text: 'The first record of {{NAME}}' },
            { id: '2', title: 'Batches', text: 'Each batch is committed with a client state' },
            { id: '3', title: 'Resuming', text: 'An interrupted reindexAll resumes after the last batch' },
            { id: '4', title: 'Searching', text: 'reindex search finds words by prefix' },
            { id: '5', title: 'Debugging', text: 'reindex debug opens the Node inspector' },
          ];
        }

        export function toItem(record: SourceRecord): SearchableItem<RecordAttributes> {
          return {
            uniqueIdentifier: `record.${record.id}`,
            domainIdentifier: DOMAIN,
            attributes: { title: record.title, textContent: record.text, custom: { words: record.text.split(' ').length } },
          };
        }

        export class {{NAME}} implements IndexExtension {
          constructor(private readonly load: () => SourceRecord[] = loadRecords) {}

          async reindexAll(index: SearchableIndex): Promise<void> {
            const records = this.load();
            if (records.length === 0) index.allowEmpty(); // empty on purpose: publish that
            let start = 0;
            if (index.clientState) {
              const saved = Number.parseInt(index.clientState.toString('utf8'), 10);
              if (Number.isInteger(saved) && saved >= 0 && saved <= records.length) {
                start = saved;
                console.log(`{{LOWER}}: resuming at record ${start} of ${records.length}`);
              }
            }
            for (let first = start; first < records.length; first += BATCH_SIZE) {
              index.throwIfCancelled(); // the host's $/cancel stops the work here
              const batch = records.slice(first, first + BATCH_SIZE);
              await index.put(batch.map(toItem));
              const done = first + batch.length;
              index.progress(done, records.length, `${done} of ${records.length} records`);
              // The acknowledgement (resolving) commits the last batch.
              if (done < records.length) await index.commitBatch(String(done));
            }
          }

          async reindexItems(identifiers: string[], index: SearchableIndex): Promise<void> {
            const records = new Map(this.load().map((record) => [`record.${record.id}`, record]));
            const found = identifiers.flatMap((id) => records.get(id) ?? []);
            await index.put(found.map(toItem));
            const gone = identifiers.filter((id) => !records.has(id));
            if (gone.length > 0) await index.delete(gone);
          }
        }

        """#

    static let typescriptMain = #"""
        // The extension's entry point: serves the host's requests with {{NAME}} until the host
        // closes stdin. Kept apart from {{NAME}}.ts so that tests import the handler without running it.
        import { run } from 'reindex-extension';
        import { {{NAME}} } from './{{NAME}}.js';

        run({{NAME}});

        """#

    static let typescriptLauncher = #"""
        #!/usr/bin/env node
        // The bundle's executable (manifest.json names it): runs the compiled extension,
        // build/main.js. `npm run build` writes build/ from src/; this file stays as it is, so it
        // keeps its executable mode through every build.
        import { existsSync } from 'node:fs';

        const main = new URL('./build/main.js', import.meta.url);
        if (!existsSync(main)) {
          process.stderr.write('{{LOWER}}: build/main.js is missing: run `npm run build` in this directory first\n');
          process.exit(1);
        }
        await import(main.href);

        """#

    static let typescriptTest = #"""
        // Unit test of the handler, in process, without the host: `npm test` (after `npm run build`).
        // reindex-extension/testing calls reindexAll/reindexItems on a recording index.
        import assert from 'node:assert/strict';
        import { test } from 'node:test';
        import { reindexAll, reindexItems } from 'reindex-extension/testing';
        import { {{NAME}} } from '../build/{{NAME}}.js';

        test('reindexAll puts every record in batches, committing after each but the last', async () => {
          const index = await reindexAll({{NAME}});
          assert.deepEqual(index.puts.map((item) => item.uniqueIdentifier), ['record.1', 'record.2', 'record.3', 'record.4', 'record.5']);
          assert.deepEqual(index.commits.map((commit) => commit.clientState), ['2', '4']);
          assert.deepEqual(index.progress.at(-1), { completed: 5, total: 5, message: '5 of 5 records' });
          assert.equal(index.puts[0].attributes.words, 5, 'the custom attribute is sent beside the others');
        });

        test('a retry resumes after the last committed batch', async () => {
          const index = await reindexAll({{NAME}}, { reason: 'retry', clientState: '4' });
          assert.deepEqual(index.puts.map((item) => item.uniqueIdentifier), ['record.5']);
        });

        test('reindexItems puts what exists and deletes what is gone', async () => {
          const index = await reindexItems({{NAME}}, ['record.2', 'record.99']);
          assert.deepEqual(index.puts.map((item) => item.uniqueIdentifier), ['record.2']);
          assert.deepEqual(index.deletes, ['record.99']);
        });

        test('an empty source is published on purpose', async () => {
          const index = await reindexAll(new {{NAME}}(() => []));
          assert.equal(index.allowEmpty, true);
          assert.deepEqual(index.puts, []);
        });

        """#

    static let typescriptPackage = #"""
        {
          "name": "{{LOWER}}",
          "version": "1.0.0",
          "private": true,
          "type": "module",
          "scripts": {
            "build": "node scripts/link-sdk.mjs && tsc -p .",
            "test": "node --test"
          }
        }

        """#

    static let typescriptConfig = #"""
        {
          // TypeScript 4.8 or later. "types": [] because the extension needs no @types package;
          // to use Node's APIs with types, install @types/node and list "node" here.
          "compilerOptions": {
            "target": "es2022",
            "module": "nodenext",
            "moduleResolution": "nodenext",
            "lib": ["es2022", "dom"],
            "types": [],
            "strict": true,
            "rootDir": "src",
            "outDir": "build",
            "sourceMap": true,
            "newLine": "lf"
          },
          "include": ["src/**/*.ts"]
        }

        """#

    static let typescriptLinkSDK = #"""
        // Makes node_modules/reindex-extension the TypeScript SDK, for tsc (its types) and for node
        // (at run time): a link to $REINDEX_TS_SDK, else to manifest.json's environment.REINDEX_TS_SDK.
        // A real directory there (a vendored copy of the SDK) is left alone.
        import fs from 'node:fs';
        import path from 'node:path';
        import { fileURLToPath } from 'node:url';

        const project = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
        const target = path.join(project, 'node_modules', 'reindex-extension');
        const fail = (message) => { process.stderr.write(`link-sdk: ${message}\n`); process.exit(1); };

        const existing = fs.lstatSync(target, { throwIfNoEntry: false });
        if (existing && !existing.isSymbolicLink()) process.exit(0); // vendored

        let sdk = process.env.REINDEX_TS_SDK;
        if (!sdk) {
          const manifest = JSON.parse(fs.readFileSync(path.join(project, 'manifest.json'), 'utf8'));
          sdk = manifest.environment?.REINDEX_TS_SDK;
        }
        if (!sdk) {
          fail('no SDK: set REINDEX_TS_SDK in manifest.json\'s "environment" to SDKs/typescript of a ReindexHost ' +
            'checkout, or copy that directory to node_modules/reindex-extension');
        }
        sdk = path.resolve(project, sdk);
        if (!fs.existsSync(path.join(sdk, 'dist', 'index.js'))) fail(`REINDEX_TS_SDK is ${sdk}, but ${path.join(sdk, 'dist', 'index.js')} does not exist`);
        fs.mkdirSync(path.dirname(target), { recursive: true });
        if (existing) fs.unlinkSync(target);
        fs.symlinkSync(sdk, target, 'dir');

        """#

    static let typescriptGitignore = #"""
        build/
        node_modules/

        """#

    static let typescriptReadme = #"""
        # {{NAME}}

        A reindexing extension for the `reindex` host, in TypeScript, made by
        `reindex new typescript {{NAME}}`. Its bundle identifier is `{{ID}}`. `src/{{NAME}}.ts`
        indexes five sample records in batches of two, committing each batch with a client state and
        resuming from it; replace `loadRecords()` with your data.

        | file | |
        | --- | --- |
        | `src/{{NAME}}.ts` | the handler: `reindexAll`, `reindexItems` |
        | `src/main.ts` | runs it: `run({{NAME}})` |
        | `test/{{NAME}}.test.mjs` | its unit test, without the host (`reindex-extension/testing`) |
        | `{{EXECUTABLE}}` | the executable `manifest.json` names: it runs `build/main.js` |
        | `scripts/link-sdk.mjs` | links `node_modules/reindex-extension` to the SDK (part of the build) |

        ## Develop

        Needs Node 18 or later and `tsc` (TypeScript 4.8 or later; Debian: `apt-get install
        node-typescript`). No package is installed from npm.

        ```sh
        npm run build                                         # links the SDK, then tsc: src/ → build/
        npm test                                              # the unit test, in process
        reindex validate . --run                              # checks the manifest and the protocol
        reindex --extensions-path .. run {{ID}}               # index into your index (.. holds this bundle)
        reindex search record
        reindex --extensions-path .. debug {{ID}} --trace     # every protocol message
        reindex --extensions-path .. debug {{ID}} --wait-for-debugger   # {{DEBUGGER}}; see Debug below
        ```

        Without npm: `node scripts/link-sdk.mjs && tsc -p .`, then `node --test test/`. Rebuild after
        every change to `src/`: the host runs `build/`.

        Attributes are typed: a misspelt one (`keyword:` for `keywords:`) does not compile. Your own
        go in `custom`, typed by `RecordAttributes`; declare them in `manifest.json`'s
        `"attributes"` (`{"words": {"type": "number"}}`) to filter and sort by them. A number that is
        not finite (`Number('n/a')`) refuses the request, naming the item and the attribute.

        ## Debug

        {{DEBUG_SECTION}}

        ## Install

        ```sh
        npm run build
        cp -R . ~/.local/share/reindex/extensions/{{ID}}
        reindex list
        ```

        ## The SDK

        {{SDK_NOTE}}

        """#
}
