import Foundation
import ReindexHost
@testable import ReindexStore
import ReindexProtocol
import ReindexTestSupport
import XCTest

/// The application's own index API (`LocalIndex`, `Searchable`) on both indexes: direct calls,
/// batches with a client state (all or nothing, the size limit, a process killed mid-batch and
/// resumed from the client state), deletion by domains, and how a replacement of the bundle
/// treats the client state.
final class LocalIndexTests: XCTestCase {
    typealias T = TestSupport
    let bundle = "com.example.notes"

    func note(_ uid: String, _ title: String, domain: String? = nil) -> SearchableItem {
        SearchableItem(uniqueIdentifier: uid, domainIdentifier: domain, attributes: SearchableItemAttributes(title: title))
    }

    func titles(_ store: any IndexBackend) throws -> [String: String] {
        var result: [String: String] = [:]
        for item in try store.items(bundle: bundle, domain: nil, limit: 10_000, now: Clock.now()) {
            result[item.uniqueIdentifier] = item.attributes["title"]?.stringValue ?? ""
        }
        return result
    }

    func state(_ text: String) -> [UInt8] { Array(text.utf8) }

    func testDirectCallsOnBothIndexes() throws {
        for index in try TestIndex.both(for: self) {
            let local = LocalIndex(store: try index.open(), bundleIdentifier: "com.example.colleagues")
            let other = try index.open()
            let counts = try local.put([
                SearchableItem(uniqueIdentifier: "employee.1", domainIdentifier: "staff.eng",
                               attributes: SearchableItemAttributes(title: "Ada Park", contentDescription: "Staff Engineer", keywords: ["compilers"])),
                SearchableItem(uniqueIdentifier: "employee.2", domainIdentifier: "staff.sales",
                               attributes: SearchableItemAttributes(title: "Bo Lind", contentDescription: "Account Executive")),
                SearchableItem(uniqueIdentifier: "employee.3", domainIdentifier: "staff.eng.infra",
                               attributes: SearchableItemAttributes(title: "Cy Moss", contentDescription: "Site Reliability")),
                SearchableItem(uniqueIdentifier: "employee.4", attributes: SearchableItemAttributes(title: "Di Wu", authors: ["Di Wu"])),
            ])
            XCTAssertEqual(counts.put, 4, index.name)
            XCTAssertEqual(try local.search("compilers").map(\.uniqueIdentifier), ["employee.1"], index.name)
            XCTAssertEqual(try other.itemCount(bundle: "com.example.colleagues"), 4, "\(index.name): another connection sees each call at once")

            // One invalid item: nothing of the call is written.
            XCTAssertThrowsError(try local.put([note("employee.5", "Eve Ng"), note("", "Nobody")]), index.name) { error in
                XCTAssertEqual((error as? ReindexError)?.code, .invalidData, index.name)
                XCTAssertTrue((error as? ReindexError)?.message.contains("com.example.colleagues") ?? false, "\(error)")
            }
            XCTAssertEqual(try other.itemCount(bundle: "com.example.colleagues"), 4, index.name)

            // A partial update merges into the item; one of an unknown identifier is counted.
            let update = try local.update([
                SearchableItem(uniqueIdentifier: "employee.2", attributes: SearchableItemAttributes(contentDescription: "Sales Director")),
                SearchableItem(uniqueIdentifier: "employee.9", attributes: SearchableItemAttributes(title: "Nobody")),
            ])
            XCTAssertEqual(update.ignoredUpdates, 1, index.name)
            let updated = try other.items(bundle: "com.example.colleagues").first { $0.uniqueIdentifier == "employee.2" }
            XCTAssertEqual(updated?.attributes["title"], .string("Bo Lind"), index.name)
            XCTAssertEqual(updated?.attributes["contentDescription"], .string("Sales Director"), index.name)

            XCTAssertEqual(try local.delete(identifiers: ["employee.2", "no.such.item"]), 1, index.name)
            XCTAssertEqual(try local.delete(domainIdentifiers: ["staff.eng"]), 2, index.name)
            XCTAssertEqual(try T.identifiers(other, bundle: "com.example.colleagues"), ["employee.4"], index.name)
            XCTAssertEqual(try local.deleteAll(), 1, index.name)
            XCTAssertEqual(try other.itemCount(bundle: "com.example.colleagues"), 0, index.name)
            other.assertHealthy(index.name)
        }
    }

    func testOpeningByPathOrConnectionStringAndABadIdentifier() throws {
        for index in try TestIndex.both(for: self) {
            XCTAssertThrowsError(try LocalIndex(path: index.argument, bundleIdentifier: "not an identifier", environment: index.environment)) { error in
                XCTAssertEqual((error as? ReindexError)?.code, .usage, index.name)
            }
            let local = try LocalIndex(path: index.argument, bundleIdentifier: bundle, environment: index.environment)
            XCTAssertEqual(index.isPostgreSQL, local.store is PostgresStore, index.name)
            try local.put([note("n1", "Opened by its location")])
            XCTAssertEqual(try titles(try index.open()), ["n1": "Opened by its location"], index.name)
        }
    }

    // MARK: Batches

    func testABatchIsInvisibleUntilItEndsThenPublishedWithItsClientState() throws {
        for index in try TestIndex.both(for: self) {
            let local = LocalIndex(store: try index.open(), bundleIdentifier: bundle)
            let reader = try index.open()
            XCTAssertNil(try local.fetchLastClientState(), index.name)
            try local.put([note("a", "Before the batch"), note("b", "Replaced by the batch")])

            try local.beginBatch()
            XCTAssertTrue(local.isBatchOpen)
            XCTAssertEqual(try local.put([note("b", "From the batch"), note("c", "New in the batch")]).put, 2, index.name)
            XCTAssertEqual(try local.delete(identifiers: ["a"]), 0, "\(index.name): inside a batch, deletions are counted when it ends")
            XCTAssertEqual(try titles(reader), ["a": "Before the batch", "b": "Replaced by the batch"], "\(index.name): nothing of an open batch is visible")
            XCTAssertNil(try reader.applicationClientState(bundle: bundle), index.name)
            XCTAssertThrowsError(try local.search("batch"), index.name) { XCTAssertEqual(($0 as? ReindexError)?.code, .usage) }
            XCTAssertThrowsError(try local.beginBatch(), index.name) { XCTAssertEqual(($0 as? ReindexError)?.code, .usage) }

            let counts = try local.endBatch(clientState: state("line 3"))
            XCTAssertEqual(counts.put, 2, index.name)
            XCTAssertEqual(counts.deleted, 1, index.name)
            XCTAssertFalse(local.isBatchOpen)
            XCTAssertEqual(try titles(reader), ["b": "From the batch", "c": "New in the batch"], index.name)
            XCTAssertEqual(try local.fetchLastClientState(), state("line 3"), index.name)
            XCTAssertEqual(try LocalIndex(store: reader, bundleIdentifier: bundle).fetchLastClientState(), state("line 3"),
                           "\(index.name): another connection fetches the same state")
            XCTAssertThrowsError(try local.endBatch(clientState: []), index.name) { XCTAssertEqual(($0 as? ReindexError)?.code, .usage) }
            XCTAssertNil(try LocalIndex(store: reader, bundleIdentifier: "com.example.other").fetchLastClientState(),
                         "\(index.name): a client state is the bundle's own")

            // An empty batch still records its state; the closure form ends with what it returns.
            try local.beginBatch()
            try local.endBatch(clientState: [])
            XCTAssertEqual(try local.fetchLastClientState(), [], index.name)
            try local.batch { index in
                try index.put([self.note("d", "Closure batch")])
                return self.state("line 4")
            }
            XCTAssertEqual(try local.fetchLastClientState(), state("line 4"), index.name)
            XCTAssertEqual(try titles(reader)["d"], "Closure batch", index.name)
            reader.assertHealthy(index.name)
        }
    }

    func testABatchThatThrowsOrFailsAppliesNothingAndKeepsThePreviousClientState() throws {
        struct Stop: Error {}
        for index in try TestIndex.both(for: self) {
            let store = try index.open()
            let local = LocalIndex(store: store, bundleIdentifier: bundle)
            let reader = try index.open()
            try local.batch { index in
                try index.put([self.note("a", "First"), self.note("b", "Second")])
                return self.state("2")
            }
            let before = try titles(reader)

            // The application throws in the middle: the batch is cancelled.
            XCTAssertThrowsError(try local.batch { index in
                try index.put([self.note("c", "Never seen")])
                try index.delete(identifiers: ["a"])
                try index.delete(domainIdentifiers: ["anything"])
                throw Stop()
            }) { XCTAssertTrue($0 is Stop, "\($0)") }
            XCTAssertFalse(local.isBatchOpen, index.name)
            XCTAssertEqual(try titles(reader), before, index.name)
            XCTAssertEqual(try local.fetchLastClientState(), state("2"), index.name)

            // An invalid item discards the whole batch, what came before it too.
            try local.beginBatch()
            try local.put([note("c", "Staged before the bad one")])
            XCTAssertThrowsError(try local.put([note("", "No identifier")]), index.name) { error in
                XCTAssertEqual((error as? ReindexError)?.code, .invalidData, index.name)
                XCTAssertTrue("\(error)".contains("the batch was discarded"), "\(error)")
            }
            XCTAssertThrowsError(try local.put([note("d", "After the failure")]), "\(index.name): a discarded batch refuses further writes")
            XCTAssertThrowsError(try local.endBatch(clientState: state("4")), index.name) { error in
                XCTAssertTrue("\(error)".contains("nothing of it was applied"), "\(error)")
            }
            XCTAssertFalse(local.isBatchOpen, index.name)
            XCTAssertEqual(try titles(reader), before, index.name)
            XCTAssertEqual(try local.fetchLastClientState(), state("2"), index.name)

            // A write the database itself refuses (a trigger) in the middle of a batch.
            try execute(store, index.isPostgreSQL ? """
                CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN IF NEW.uid = 'poison' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$;
                CREATE TRIGGER refuse_poison BEFORE INSERT OR UPDATE ON items FOR EACH ROW EXECUTE FUNCTION refuse_poison();
                """ : "CREATE TRIGGER refuse_poison BEFORE INSERT ON items WHEN NEW.uid = 'poison' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;")
            try local.beginBatch()
            try local.put([note("e", "Staged before the refused write")])
            try local.delete(identifiers: ["a"])
            // PostgreSQL sends puts without waiting, so the refusal may surface at the next call.
            _ = try? local.put([note("poison", "Refused by the database")])
            _ = try? local.put([note("f", "After the refused write")])
            XCTAssertThrowsError(try local.endBatch(clientState: state("9")), "\(index.name): a batch with a refused write is not applied")
            XCTAssertEqual(try titles(reader), before, index.name)
            XCTAssertEqual(try local.fetchLastClientState(), state("2"), index.name)

            // The same LocalIndex goes on with the next batch.
            try local.batch { index in
                try index.put([self.note("g", "After the failures")])
                return self.state("5")
            }
            XCTAssertEqual(try titles(reader), before.merging(["g": "After the failures"]) { $1 }, index.name)
            XCTAssertEqual(try local.fetchLastClientState(), state("5"), index.name)
            XCTAssertEqual(try index.isPostgreSQL ? 0 : reader.rowCount("SELECT count(*) FROM items WHERE gen < 0"), 0,
                           "\(index.name): no staged rows are left behind")
            reader.assertHealthy(index.name)
        }
    }

    func testALargeBatchIsWrittenInGroupsHoldingNothingBetweenCalls() throws {
        for index in try TestIndex.both(for: self) {
            let local = LocalIndex(store: try index.open(), bundleIdentifier: bundle)
            let other = LocalIndex(store: try index.open(), bundleIdentifier: "com.example.other")
            let reader = try index.open()
            try local.put([note("old", "Deleted by the batch")])
            try local.beginBatch()
            let count = LocalIndex.bufferedOperations * 2 + 100
            for n in 0..<count { try local.put([note("n\(n)", "Note \(n)")]) }
            try local.delete(identifiers: ["old", "n7"])
            if !index.isPostgreSQL {
                XCTAssertGreaterThanOrEqual(try reader.rowCount("SELECT count(*) FROM items WHERE gen < 0"), LocalIndex.bufferedOperations * 2,
                                            "the full groups are written (staged) before the batch ends")
            }
            // Another writer is not held up by the open batch (on SQLite it would wait for the
            // write lock, and fail after the busy timeout, if the batch held it).
            let started = Clock.monotonic()
            try other.put([note("x", "Written while the batch is open")])
            XCTAssertLessThan(Clock.monotonic() - started, 30, index.name)
            XCTAssertEqual(try reader.itemCount(bundle: bundle), 1, "\(index.name): nothing of the batch is visible yet")
            let counts = try local.endBatch(clientState: state("large"))
            XCTAssertEqual(counts.put, count, index.name)
            XCTAssertEqual(counts.deleted, 2, index.name)
            XCTAssertEqual(try reader.itemCount(bundle: bundle), count - 1, index.name)
            XCTAssertEqual(try reader.itemCount(bundle: "com.example.other"), 1, index.name)
            reader.assertHealthy(index.name)
        }
    }

    func testAClientStateOfMoreThan250BytesIsRefusedAndNothingIsApplied() throws {
        for index in try TestIndex.both(for: self) {
            let store = try index.open()
            let local = LocalIndex(store: store, bundleIdentifier: bundle)
            let reader = try index.open()
            // Any bytes, 0 and 255 included, up to 250.
            let largest = (0..<250).map { UInt8(($0 * 37 + 255) % 256) }
            XCTAssertTrue(largest.contains(0) && largest.contains(255))
            try local.beginBatch()
            try local.put([note("a", "Kept")])
            try local.endBatch(clientState: largest)
            XCTAssertEqual(try local.fetchLastClientState(), largest, index.name)

            try local.beginBatch()
            try local.put([note("b", "Not applied")])
            try local.delete(identifiers: ["a"])
            XCTAssertThrowsError(try local.endBatch(clientState: [UInt8](repeating: 7, count: 251)), index.name) { error in
                XCTAssertEqual((error as? ReindexError)?.code, .invalidData, index.name)
                XCTAssertTrue("\(error)".contains("251 bytes, more than the 250 allowed"), "\(error)")
            }
            XCTAssertFalse(local.isBatchOpen, index.name)
            XCTAssertEqual(try titles(reader), ["a": "Kept"], index.name)
            XCTAssertEqual(try local.fetchLastClientState(), largest, index.name)
            // The index itself refuses one too (a CHECK constraint), whoever writes it.
            XCTAssertThrowsError(try store.saveApplicationClientState([UInt8](repeating: 1, count: 251), bundle: bundle), index.name)
            XCTAssertEqual(try local.fetchLastClientState(), largest, index.name)
        }
    }

    func testDeletingByDomainTakesSubdomainsOnlyInAndOutOfABatch() throws {
        for index in try TestIndex.both(for: self) {
            let local = LocalIndex(store: try index.open(), bundleIdentifier: bundle)
            let reader = try index.open()
            try local.put([note("1", "Work", domain: "notes.work"), note("2", "Archive", domain: "notes.work.archive"),
                           note("3", "Workshop", domain: "notes.workshop"), note("4", "Home", domain: "notes.home"),
                           note("5", "No domain")])
            XCTAssertEqual(try local.delete(domainIdentifiers: ["notes.work"]), 2, index.name)
            XCTAssertEqual(try T.identifiers(reader, bundle: bundle), ["3", "4", "5"], "\(index.name): notes.workshop is not inside notes.work")

            try local.beginBatch()
            try local.put([note("6", "Staged into home", domain: "notes.home.kitchen"), note("7", "Staged elsewhere", domain: "notes.garden")])
            try local.delete(domainIdentifiers: ["notes.home"])
            try local.put([note("8", "Put after the deletion", domain: "notes.home")])
            XCTAssertEqual(try T.identifiers(reader, bundle: bundle), ["3", "4", "5"], index.name)
            let counts = try local.endBatch(clientState: state("domains"))
            XCTAssertEqual(counts.deleted, 2, "\(index.name): the live item 4 and the staged item 6")
            XCTAssertEqual(try T.identifiers(reader, bundle: bundle), ["3", "5", "7", "8"], index.name)
            XCTAssertEqual(try reader.items(bundle: bundle, domain: "notes.home").map(\.uniqueIdentifier), ["8"], index.name)
        }
    }

    // MARK: A replacement of the bundle

    func testAReplacementThatMayHaveRunDuringABatchClearsTheClientStateAndALaterOneDoesNot() throws {
        for index in try TestIndex.both(for: self) {
            let store = try index.open()
            let local = LocalIndex(store: store, bundleIdentifier: bundle)
            // A reindexAll queued before the batch ends: it may have read the app's data before
            // the batch's changes, and its acknowledgement replaces the bundle's items.
            let early = try store.enqueue(bundleIdentifier: bundle, kind: .reindexAll, reason: .forced)
            try local.batch { index in
                try index.put([self.note("app.1", "Indexed by the app")])
                return self.state("app 1")
            }
            let replacement = try store.makeWriter(bundleIdentifier: bundle, scope: .replacement(generation: early.id), requestID: nil, declarations: [:])
            try replacement.put(T.item("ext.1", title: "Indexed by the extension"))
            _ = try replacement.acknowledge(with: { _ in })
            XCTAssertEqual(try T.identifiers(store, bundle: bundle), ["ext.1"], index.name)
            XCTAssertNil(try local.fetchLastClientState(), "\(index.name): the app starts over rather than trust a state whose items are gone")

            // A reindexAll queued after the state was written read the app's data after it.
            try local.batch { index in
                try index.put([self.note("app.2", "Indexed by the app again")])
                return self.state("app 2")
            }
            let late = try store.enqueue(bundleIdentifier: bundle, kind: .reindexAll, identifiers: [], reason: .forced,
                                         maxAttempts: 5, notBefore: nil, coalesce: false)
            let second = try store.makeWriter(bundleIdentifier: bundle, scope: .replacement(generation: late.id), requestID: nil, declarations: [:])
            try second.put(T.item("app.2", title: "Indexed by the extension too"))
            _ = try second.acknowledge(with: { _ in })
            XCTAssertEqual(try local.fetchLastClientState(), state("app 2"), index.name)

            // Forgetting the bundle forgets its client state.
            _ = try store.removeBundle(bundle)
            XCTAssertNil(try local.fetchLastClientState(), index.name)
        }
    }

    // MARK: Upgrading an index made before client states

    func testAnIndexFromBeforeClientStatesGainsTheirTableWhenOpened() throws {
        for index in try TestIndex.both(for: self) {
            let store = try index.open()
            try LocalIndex(store: store, bundleIdentifier: bundle).put([note("old", "Written before the upgrade")])
            if index.isPostgreSQL {
                // Version 4: before client states (5), the filter indexes (6), rank lists (7) and
                // the page-order index (8).
                let before = PostgresSchema.migrations.firstIndex { $0.contains("CREATE TABLE app_client_states") } ?? 0
                XCTAssertEqual(before, 4)
                try execute(store, """
                    DROP TABLE app_client_states; DROP FUNCTION reindex_seconds(text) CASCADE;
                    DROP INDEX items_content_type, items_ranking_hint, items_order;
                    DROP TABLE rank_entries, rank_lists; DROP TRIGGER items_changed ON items; DROP FUNCTION reindex_item_changed();
                    ALTER TABLE items DROP COLUMN tx; UPDATE schema_version SET version = \(before)
                    """)
            } else {
                // Version 7: before client states (8) and rank lists (9).
                let before = SQLiteSchema.migrations.firstIndex { $0.contains("CREATE TABLE app_client_states") } ?? 0
                XCTAssertEqual(before, 7)
                try execute(store, "DROP TABLE app_client_states; DROP TABLE rank_entries; DROP TABLE rank_lists; DROP TABLE rank_statistics; DROP TABLE unit_frequencies; DROP TABLE unit_frequencies_structure; PRAGMA user_version = \(before)")
            }
            XCTAssertThrowsError(try store.applicationClientState(bundle: bundle), "\(index.name): the table is really gone")
            let upgraded = LocalIndex(store: try index.open(), bundleIdentifier: bundle)
            XCTAssertNil(try upgraded.fetchLastClientState(), index.name)
            try upgraded.batch { index in
                try index.put([self.note("new", "Written after the upgrade")])
                return self.state("upgraded")
            }
            XCTAssertEqual(try upgraded.fetchLastClientState(), state("upgraded"), index.name)
            XCTAssertEqual(try T.identifiers(upgraded.store, bundle: bundle), ["new", "old"], index.name)
        }
    }

    // MARK: Searchable

    struct Note: Identifiable, Searchable {
        var id: Int
        var title: String
        var searchableAttributes: SearchableItemAttributes { SearchableItemAttributes(title: title) }
    }

    struct Photo: Searchable {
        var path: String
        var album: String
        var expires: Date?
        var searchableIdentifier: String { "photo:" + path }
        var searchableDomain: String? { "albums.\(album)" }
        var searchableExpiration: Date? { expires }
        var searchableAttributes: SearchableItemAttributes { SearchableItemAttributes(title: path, keywords: [album]) }
    }

    func testSearchableDefaultsAndCalls() throws {
        let note = Note(id: 7, title: "Seven")
        XCTAssertEqual(note.searchableIdentifier, "7", "an Identifiable type's id names its item")
        XCTAssertNil(note.searchableDomain)
        XCTAssertNil(note.searchableExpiration)
        XCTAssertEqual(note.searchableItem, SearchableItem(uniqueIdentifier: "7", attributes: SearchableItemAttributes(title: "Seven")))
        let expiry = Date(timeIntervalSince1970: 4_000_000_000)
        let photo = Photo(path: "beach.jpg", album: "summer", expires: expiry)
        XCTAssertEqual(photo.searchableItem.uniqueIdentifier, "photo:beach.jpg")
        XCTAssertEqual(photo.searchableItem.domainIdentifier, "albums.summer")
        XCTAssertEqual(photo.searchableItem.expirationDate, expiry)

        for index in try TestIndex.both(for: self) {
            let local = LocalIndex(store: try index.open(), bundleIdentifier: bundle)
            let reader = try index.open()
            XCTAssertEqual(try note.index(in: local).put, 1, index.name)
            try photo.index(in: local)
            try local.index([Note(id: 8, title: "Eight"), Note(id: 9, title: "Nine")])
            XCTAssertEqual(try titles(reader), ["7": "Seven", "8": "Eight", "9": "Nine", "photo:beach.jpg": "beach.jpg"], index.name)
            XCTAssertEqual(try reader.items(bundle: bundle, domain: "albums").map(\.uniqueIdentifier), ["photo:beach.jpg"], index.name)
            XCTAssertTrue(try note.remove(from: local), index.name)
            XCTAssertFalse(try note.remove(from: local), "\(index.name): removing it again finds nothing")
            XCTAssertEqual(try local.remove([Note(id: 8, title: ""), Note(id: 10, title: "")]), 1, index.name)
            // Inside a batch, like any other call.
            try local.batch { index in
                try Note(id: 11, title: "Eleven").index(in: index)
                try photo.remove(from: index)
                return self.state("searchable")
            }
            XCTAssertEqual(try titles(reader), ["9": "Nine", "11": "Eleven"], index.name)
        }
    }

    // MARK: A process killed in the middle of a batch

    /// The example application (Examples/Notes) as a real process, killed with SIGKILL in the
    /// middle of its third batch; run again, it resumes from the client state the second batch
    /// recorded, and the items end exactly as the whole change log says.
    func testAnApplicationKilledMidBatchResumesFromItsClientState() throws {
        let app = "\(TestSupport.productsDirectory)/NotesApp"
        guard FileManager.default.isExecutableFile(atPath: app) else {
            return XCTFail("NotesApp is not built beside the tests (\(app)); swift build --build-tests builds it")
        }
        for index in try TestIndex.both(for: self) {
            let scratch = try TestSupport.makeScratchDirectory(for: self)
            // 40 changes: puts (some replacing earlier ones), deletions, a folder deleted.
            var changes: [String] = []
            for n in 1...40 {
                switch n {
                case 13: changes.append(#"{"op":"delete","id":2}"#)
                case 20: changes.append(#"{"op":"deleteFolder","folder":"work"}"#)
                case 30: changes.append(#"{"op":"delete","id":21}"#)
                default:
                    let id = n % 9 == 0 ? n / 9 : n   // lines 9, 18, 27, 36 replace notes 1–4
                    let folder = ["work", "home", "work.archive", "travel"][n % 4]
                    changes.append(#"{"op":"put","id":\#(id),"folder":"\#(folder)","title":"Note \#(id) from line \#(n)","body":"line \#(n)"}"#)
                }
            }
            let log = "\(scratch)/changes.jsonl"
            try TestSupport.write(changes.joined(separator: "\n") + "\n", to: log)
            var environment = TestSupport.commandEnvironment(scratch: scratch)
            for (key, value) in index.environment { environment[key] = value }
            let arguments = ["--index", index.argument, "--log", log, "--batch", "8"]

            let first = try TestSupport.RunningCommand(executable: app, arguments: arguments + ["--delay", "0.2"],
                                                       environment: environment, scratch: scratch, feedsStdin: false)
            // Lines 17–24 are the third batch; after line 18 is staged the app waits 0.2 s per line.
            let midBatch = TestSupport.wait(upTo: 60) { (TestSupport.read(first.stdoutPath) ?? "").contains("batch 3: line 18 staged") }
            kill(first.process.processIdentifier, SIGKILL)
            let killed = first.finish(timeout: 30)
            XCTAssertTrue(midBatch, "\(index.name): the app never reached its third batch: \(killed)")
            XCTAssertTrue(killed.signaled && killed.status == SIGKILL, "\(index.name): \(killed)")
            XCTAssertFalse(killed.stdout.contains("batch 3: lines"), "\(index.name): the third batch must not have ended: \(killed.stdout)")

            let reader = try index.open()
            XCTAssertEqual(try LocalIndex(store: reader, bundleIdentifier: bundle).fetchLastClientState(), state("16"), index.name)
            XCTAssertEqual(try titles(reader), try expected(changes.prefix(16)), "\(index.name): exactly the first two batches")

            let second = try TestSupport.run(app, arguments, scratch: scratch, environment: environment, timeout: 120)
            XCTAssertEqual(second.status, 0, "\(index.name): \(second)")
            XCTAssertTrue(second.stdout.hasPrefix("resuming after line 16\n"), "\(index.name): \(second.stdout)")
            XCTAssertTrue(second.stdout.contains("indexed through line 40"), "\(index.name): \(second.stdout)")
            XCTAssertEqual(try titles(reader), try expected(changes[...]), "\(index.name): exactly what the whole log says")
            XCTAssertEqual(try LocalIndex(store: reader, bundleIdentifier: bundle).fetchLastClientState(), state("40"), index.name)
            if !index.isPostgreSQL {
                XCTAssertEqual(try reader.rowCount("SELECT count(*) FROM stagings"), 0, "the killed batch's staging was swept")
                XCTAssertEqual(try reader.rowCount("SELECT count(*) FROM items WHERE gen < 0"), 0, "its staged rows too")
            }
            reader.assertHealthy(index.name)
        }
    }

    /// What the change log's lines leave indexed: identifier → title.
    func expected(_ lines: ArraySlice<String>) throws -> [String: String] {
        var notes: [String: (folder: String, title: String)] = [:]
        for line in lines {
            let change = try XCTUnwrap(JSONParser.parse(text: line))
            switch change["op"]?.stringValue {
            case "put":
                let id = try XCTUnwrap(change["id"]?.integerValue)
                notes[String(id)] = (try XCTUnwrap(change["folder"]?.stringValue), try XCTUnwrap(change["title"]?.stringValue))
            case "delete":
                notes[String(try XCTUnwrap(change["id"]?.integerValue))] = nil
            default:
                let folder = try XCTUnwrap(change["folder"]?.stringValue)
                notes = notes.filter { $0.value.folder != folder && !$0.value.folder.hasPrefix(folder + ".") }
            }
        }
        return notes.mapValues(\.title)
    }

    func execute(_ store: any IndexBackend, _ sql: String) throws {
        switch store {
        case let sqlite as IndexStore: try sqlite.connection.execute(sql)
        case let postgres as PostgresStore: _ = try postgres.connection.execute(sql)
        default: throw TestIndexError(description: "unknown index type \(type(of: store))")
        }
    }
}
