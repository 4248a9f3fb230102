import Foundation
import ReindexExtension
import ReindexExtensionTesting
import XCTest

/// Handlers run without the host on a `RecordingIndex`, as an extension's own tests run them.
final class RecordingIndexTests: XCTestCase {
    /// Five records in batches of two, each batch committed with the next record's index;
    /// resumes from a client state. `reindexItems` puts what exists and deletes what is gone.
    struct Shelf: IndexRequestHandler {
        var titles = ["One", "Two", "Three", "Four", "Five"]

        func item(_ n: Int) -> SearchableItem {
            SearchableItem(uniqueIdentifier: "book.\(n + 1)", domainIdentifier: "shelf.\(n % 2 == 0 ? "even" : "odd")",
                           attributes: .init(title: titles[n], rating: Double(n)))
        }

        func reindexAll(_ index: SearchableIndex) async throws {
            var next = index.clientState.flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0
            if titles.isEmpty { index.allowEmpty() }
            while next < titles.count {
                let end = min(next + 2, titles.count)
                try await index.put((next..<end).map(item))
                index.progress(completed: end, total: titles.count)
                if end < titles.count { try await index.commitBatch(clientState: Array(String(end).utf8)) }
                next = end
            }
        }

        func reindexItems(identifiers: [String], index: SearchableIndex) async throws {
            let known = Dictionary(uniqueKeysWithValues: titles.indices.map { ("book.\($0 + 1)", $0) })
            try await index.put(identifiers.compactMap { known[$0] }.map(item))
            try await index.delete(identifiers: identifiers.filter { known[$0] == nil })
        }
    }

    func testReindexAllRecordsPutsCommitsAndProgress() async throws {
        let index = RecordingIndex()
        try await Shelf().reindexAll(on: index)
        XCTAssertEqual(index.orderedItems.map(\.uniqueIdentifier), ["book.1", "book.2", "book.3", "book.4", "book.5"])
        XCTAssertEqual(index.items["book.3"]?.attributes.title, "Three")
        XCTAssertEqual(index.commits.map { String(decoding: $0, as: UTF8.self) }, ["2", "4"])
        XCTAssertEqual(index.progress.map(\.completed), [2, 4, 5])
        XCTAssertEqual(index.progress.last?.total, 5)
        XCTAssertEqual(index.acknowledgements, 1)
        XCTAssertFalse(index.allowsEmpty)
        XCTAssertEqual(index.rejections, [])
        XCTAssertEqual(index.operations.first, .put([Shelf().item(0), Shelf().item(1)]))
    }

    func testReindexAllResumesFromTheRecordingsClientState() async throws {
        let index = RecordingIndex(reason: .retry, clientState: Array("4".utf8))
        try await Shelf().reindexAll(on: index)
        XCTAssertEqual(index.puts.map(\.uniqueIdentifier), ["book.5"])
        XCTAssertEqual(index.commits, [])
    }

    func testReindexItemsPutsWhatExistsAndDeletesWhatIsGone() async throws {
        let index = RecordingIndex()
        try await Shelf().reindexAll(on: index)
        try await Shelf(titles: ["One", "Two"]).reindexItems(identifiers: ["book.2", "book.4"], on: index)
        XCTAssertEqual(index.deletedIdentifiers, ["book.4"])
        XCTAssertEqual(index.items.keys.sorted(), ["book.1", "book.2", "book.3", "book.5"])
        XCTAssertEqual(index.acknowledgements, 2)
    }

    func testAllowEmptyIsRecorded() async throws {
        let index = RecordingIndex()
        try await Shelf(titles: []).reindexAll(on: index)
        XCTAssertTrue(index.allowsEmpty)
        XCTAssertEqual(index.puts, [])
    }

    struct Scripted: IndexRequestHandler {
        let body: @Sendable (SearchableIndex) async throws -> Void
        func reindexAll(_ index: SearchableIndex) async throws { try await body(index) }
        func reindexItems(identifiers: [String], index: SearchableIndex) async throws { try await body(index) }
    }

    func testDeletesOfDomainsAndAllApplyToTheRecordedItems() async throws {
        let index = RecordingIndex()
        try await Shelf().reindexAll(on: index)
        try await Scripted { try await $0.delete(domainIdentifiers: ["shelf.odd"]) }.reindexItems(identifiers: [], on: index)
        XCTAssertEqual(index.items.keys.sorted(), ["book.1", "book.3", "book.5"])
        XCTAssertEqual(index.deletedDomains, ["shelf.odd"])
        try await Scripted { try await $0.deleteAll() }.reindexItems(identifiers: [], on: index)
        XCTAssertEqual(index.items, [:])
        XCTAssertEqual(index.deleteAllCount, 1)
    }

    func testAPartialUpdateIsMergedIntoTheItem() async throws {
        let index = RecordingIndex()
        try await Shelf().reindexAll(on: index)
        try await Scripted { index in
            try await index.put(SearchableItem(uniqueIdentifier: "book.1", attributes: .init(textContent: "new text"), isUpdate: true))
            try await index.put(SearchableItem(uniqueIdentifier: "book.99", attributes: .init(title: "not there"), isUpdate: true))
        }.reindexItems(identifiers: [], on: index)
        XCTAssertEqual(index.items["book.1"]?.attributes.title, "One")
        XCTAssertEqual(index.items["book.1"]?.attributes.textContent, "new text")
        XCTAssertNil(index.items["book.99"], "an update of an item that does not exist is ignored, as the host does")
    }

    func testTheHandlersErrorIsRethrownAsItIs() async throws {
        let index = RecordingIndex()
        do {
            try await Scripted { _ in throw IndexRequestError(code: -32001, "the database is down") }.reindexAll(on: index)
            XCTFail("expected the handler's error")
        } catch let error as IndexRequestError {
            XCTAssertEqual(error.code, -32001)
            XCTAssertEqual(error.message, "the database is down")
        }
        XCTAssertEqual(index.acknowledgements, 0)
    }

    func testWritesAfterTheHandlerReturnedAreRefused() async throws {
        final class Keep: @unchecked Sendable { var index: SearchableIndex? }
        let keep = Keep()
        let recording = RecordingIndex()
        try await Scripted { keep.index = $0 }.reindexAll(on: recording)
        let late = try XCTUnwrap(keep.index)
        do {
            try await late.put(SearchableItem(uniqueIdentifier: "late"))
            XCTFail("a put after the acknowledgement must throw")
        } catch SearchableIndexError.requestEnded {}
        XCTAssertEqual(recording.puts, [])
    }

    func testANonFiniteNumberIsRefusedByPutNamingItemAndAttribute() async throws {
        let index = RecordingIndex()
        for (attributes, name) in [(SearchableItemAttributes(rating: .nan), "rating"),
                                   (SearchableItemAttributes(latitude: -.infinity), "latitude"),
                                   (SearchableItemAttributes(custom: ["scores": [1, .double(.infinity)]]), "scores[1]")] {
            do {
                try await Scripted { try await $0.put([SearchableItem(uniqueIdentifier: "ok"), SearchableItem(uniqueIdentifier: "bad", attributes: attributes)]) }
                    .reindexAll(on: index)
                XCTFail("\(name): expected put to throw")
            } catch let SearchableIndexError.invalidItem(uid, attribute, reason) {
                XCTAssertEqual(uid, "bad")
                XCTAssertEqual(attribute, name)
                XCTAssertTrue(reason.contains("not a finite number"), reason)
                XCTAssertTrue("\(SearchableIndexError.invalidItem(uniqueIdentifier: uid, attribute: attribute, reason: reason))".contains("item 'bad': attribute '\(name)'"))
            }
        }
        XCTAssertEqual(index.puts, [], "nothing of a refused put is sent")
    }

    func testItemsTheHostWouldRejectAreRejectionsWithTheHostsReason() async throws {
        let index = RecordingIndex(declarations: ["pages": AttributeDeclaration(kind: .number)])
        try await Scripted { index in
            try await index.put([
                SearchableItem(uniqueIdentifier: "good", attributes: .init(title: "Fine", custom: ["pages": 12])),
                SearchableItem(uniqueIdentifier: "bad", attributes: .init(title: "Bad", custom: ["pages": "many"])),
                SearchableItem(uniqueIdentifier: String(repeating: "x", count: 2000)),
            ])
        }.reindexAll(on: index)
        XCTAssertEqual(index.items.keys.sorted(), ["good"])
        XCTAssertEqual(index.rejections.count, 2)
        XCTAssertEqual(index.rejections.first?.uniqueIdentifier, "bad")
        XCTAssertEqual(index.rejections.first?.reason, #"item.attributes.pages: expected a number, got "many""#)
        XCTAssertTrue(index.rejections.last?.reason.contains("1 to 1024 UTF-8 bytes") ?? false, "\(index.rejections)")
    }

    func testMisspeltAttributeNamesAreWarnedOncePerName() async throws {
        let index = RecordingIndex(declarations: ["director": AttributeDeclaration(kind: .string)])
        try await Scripted { index in
            try await index.put((1...3).map { n in
                SearchableItem(uniqueIdentifier: "film.\(n)", attributes: .init(
                    title: "Film \(n)", custom: ["keyword": "noir", "directer": "Lang", "shelf": "B"]))
            })
        }.reindexAll(on: index)
        XCTAssertEqual(index.items.count, 3, "a misspelt attribute is kept, not rejected")
        XCTAssertEqual(index.warnings.count, 2, "\(index.warnings)")
        XCTAssertTrue(index.warnings.contains { $0.hasPrefix("attribute 'keyword' (first in item 'film.1')") && $0.hasSuffix("did you mean 'keywords'?") }, "\(index.warnings)")
        XCTAssertTrue(index.warnings.contains { $0.hasPrefix("attribute 'directer'") && $0.hasSuffix("did you mean 'director'?") }, "\(index.warnings)")
    }
}
