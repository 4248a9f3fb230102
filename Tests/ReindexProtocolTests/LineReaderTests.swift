import XCTest
import ReindexProtocol

/// A small seeded generator (SplitMix64) so randomized tests are reproducible.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// One line the reader should produce: its bytes and where it starts in the stream.
private struct ExpectedLine: Equatable, CustomStringConvertible {
    var bytes: [UInt8]
    var offset: Int
    var description: String { "\(offset): \(String(decoding: bytes, as: UTF8.self).debugDescription)" }
}

/// Computes what a correct reader yields for `stream`, independently of LineReader.
private func expectedLines(_ stream: [UInt8]) -> [ExpectedLine] {
    var result: [ExpectedLine] = []
    var start = 0
    for (i, byte) in stream.enumerated() where byte == 0x0A {
        if i > start { result.append(ExpectedLine(bytes: Array(stream[start..<i]), offset: start)) }
        start = i + 1
    }
    return result
}

/// Feeds `stream` in the given chunk sizes (cycled) and collects every line.
private func read(_ stream: [UInt8], chunkSizes: [Int], maximumLineLength: Int = LineReader.defaultMaximumLineLength) throws -> (lines: [ExpectedLine], reader: LineReader) {
    var reader = LineReader(maximumLineLength: maximumLineLength)
    var lines: [ExpectedLine] = []
    var position = 0
    var n = 0
    while position < stream.count {
        let size = min(chunkSizes[n % chunkSizes.count], stream.count - position)
        n += 1
        let chunk = Array(stream[position..<(position + size)])
        position += size
        try chunk.withUnsafeBytes { raw in
            try reader.feed(raw) { line, offset in lines.append(ExpectedLine(bytes: Array(line), offset: offset)) }
        }
    }
    return (lines, reader)
}

private func messageStream() -> [UInt8] {
    let messages: [JSONValue] = [
        .object([("jsonrpc", "2.0"), ("id", 0), ("method", "initialize"), ("params", .object([("protocolVersions", [1])]))]),
        .object([("jsonrpc", "2.0"), ("method", "index/put"), ("params", .object([("items", .array([.object([("uniqueIdentifier", "a\nb")])]))]))]),
        .object([("jsonrpc", "2.0"), ("method", "$/progress"), ("params", .object([("requestId", 1), ("completed", 3)]))]),
        .object([("jsonrpc", "2.0"), ("id", 1), ("result", .object([]))]),
        .object([("jsonrpc", "2.0"), ("id", "x"), ("error", .object([("code", -32800), ("message", "Request cancelled")]))]),
    ]
    var stream: [UInt8] = []
    for message in messages { LineWriter.appendLine(message, to: &stream) }
    return stream
}

final class LineReaderTests: XCTestCase {
    func testSeveralMessagesFedOneByteAtATime() throws {
        let stream = messageStream()
        let (lines, reader) = try read(stream, chunkSizes: [1])
        XCTAssertEqual(lines.count, 5)
        XCTAssertEqual(lines, expectedLines(stream))
        XCTAssertEqual(lines.first?.offset, 0)
        // Every line decodes to the message that was written.
        for line in lines {
            let message = try line.bytes.withUnsafeBytes { raw in try Message.decode(line: raw) }
            XCTAssertEqual(message.line, line.bytes + [0x0A])
        }
        XCTAssertNil(reader.unterminatedTail)
        XCTAssertEqual(reader.streamOffset, stream.count)
        XCTAssertEqual(reader.bufferedByteCount, 0)
    }

    func testOffsetsOfLinesInOneChunk() throws {
        let stream = Array("{\"a\":1}\n[2]\n\"three\"\n".utf8)
        let (lines, _) = try read(stream, chunkSizes: [stream.count])
        XCTAssertEqual(lines, [
            ExpectedLine(bytes: Array("{\"a\":1}".utf8), offset: 0),
            ExpectedLine(bytes: Array("[2]".utf8), offset: 8),
            ExpectedLine(bytes: Array("\"three\"".utf8), offset: 12),
        ])
    }

    func testRandomChunkSizesOverManyIterations() throws {
        var generator = SplitMix64(seed: 42)
        for iteration in 0..<300 {
            // A stream of random lines: some empty, some long, some with \r, some not valid UTF-8.
            var stream: [UInt8] = []
            for _ in 0..<Int.random(in: 0...30, using: &generator) {
                let kind = Int.random(in: 0..<10, using: &generator)
                switch kind {
                case 0: break                                            // empty line
                case 1: stream += Array(repeating: UInt8(ascii: "x"), count: Int.random(in: 200...3000, using: &generator))
                case 2: stream += Array("{\"a\":1}\r".utf8)
                case 3: stream += [0xFF, 0xFE, 0x80]
                default:
                    for _ in 0..<Int.random(in: 1...40, using: &generator) {
                        stream.append(UInt8.random(in: 0x20...0x7E, using: &generator))
                    }
                }
                stream.append(0x0A)
            }
            let tail = Array("partial".utf8).prefix(Int.random(in: 0...7, using: &generator))
            stream += tail
            let sizes = (0..<8).map { _ in Int.random(in: 1...(Bool.random(using: &generator) ? 8 : 4096), using: &generator) }
            let (lines, reader) = try read(stream, chunkSizes: sizes)
            XCTAssertEqual(lines, expectedLines(stream), "iteration \(iteration), chunk sizes \(sizes)")
            XCTAssertEqual(reader.streamOffset, stream.count)
            if tail.isEmpty {
                XCTAssertNil(reader.unterminatedTail, "iteration \(iteration)")
            } else {
                XCTAssertEqual(reader.unterminatedTail?.bytes, Array(tail), "iteration \(iteration)")
                XCTAssertEqual(reader.unterminatedTail?.offset, stream.count - tail.count, "iteration \(iteration)")
            }
        }
    }

    func testArrayConvenienceFeed() throws {
        var reader = LineReader()
        let first = try reader.feed(Array("ab\ncd".utf8))
        XCTAssertEqual(first.map(\.line), [Array("ab".utf8)])
        XCTAssertEqual(first.map(\.offset), [0])
        XCTAssertEqual(reader.bufferedByteCount, 2)
        let second = try reader.feed(Array("e\n\nfg\n".utf8))
        XCTAssertEqual(second.map(\.line), [Array("cde".utf8), Array("fg".utf8)])
        XCTAssertEqual(second.map(\.offset), [3, 8])
        XCTAssertEqual(reader.bufferedByteCount, 0)
        XCTAssertEqual(reader.streamOffset, 11)
        XCTAssertTrue(try reader.feed([]).isEmpty)
    }

    func testEmptyLinesAreSkipped() throws {
        let stream = Array("\n\n{}\n\n\n[]\n\n".utf8)
        for sizes in [[1], [2], [3], [stream.count]] {
            let (lines, _) = try read(stream, chunkSizes: sizes)
            XCTAssertEqual(lines, [ExpectedLine(bytes: Array("{}".utf8), offset: 2), ExpectedLine(bytes: Array("[]".utf8), offset: 7)], "\(sizes)")
        }
        let (none, reader) = try read(Array("\n\n\n".utf8), chunkSizes: [1])
        XCTAssertTrue(none.isEmpty)
        XCTAssertNil(reader.unterminatedTail)
    }

    func testCarriageReturnIsKept() throws {
        let (lines, _) = try read(Array("{}\r\n\r\n".utf8), chunkSizes: [1])
        XCTAssertEqual(lines, [ExpectedLine(bytes: Array("{}\r".utf8), offset: 0), ExpectedLine(bytes: [0x0D], offset: 4)])
        // A message with a trailing \r still decodes (\r is JSON white space).
        let message = try Array("{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\r".utf8).withUnsafeBytes { try Message.decode(line: $0) }
        XCTAssertEqual(message, .notification(method: "m", params: nil))
    }

    func testUnterminatedTail() throws {
        var reader = LineReader()
        XCTAssertNil(reader.unterminatedTail)
        _ = try reader.feed(Array("{\"a\":1}\n{\"b\"".utf8))
        XCTAssertEqual(reader.unterminatedTail?.bytes, Array("{\"b\"".utf8))
        XCTAssertEqual(reader.unterminatedTail?.offset, 8)
        _ = try reader.feed(Array(":2".utf8))
        XCTAssertEqual(reader.unterminatedTail?.bytes, Array("{\"b\":2".utf8))
        XCTAssertEqual(reader.unterminatedTail?.offset, 8)
        let lines = try reader.feed(Array("}\n".utf8))
        XCTAssertEqual(lines.map(\.line), [Array("{\"b\":2}".utf8)])
        XCTAssertNil(reader.unterminatedTail)
    }

    // MARK: Line length limit

    private func lineTooLongOffset(_ stream: [UInt8], chunkSizes: [Int], limit: Int,
                                   file: StaticString = #filePath, line: UInt = #line) -> (offset: Int, linesBefore: Int, buffered: Int)? {
        var reader = LineReader(maximumLineLength: limit)
        var lines = 0
        var position = 0
        var n = 0
        do {
            while position < stream.count {
                let size = min(chunkSizes[n % chunkSizes.count], stream.count - position)
                n += 1
                try stream[position..<(position + size)].withUnsafeBytes { raw in
                    try reader.feed(raw) { _, _ in lines += 1 }
                }
                position += size
            }
        } catch let error as LineFramingError {
            switch error {
            case let .lineTooLong(offset, reportedLimit):
                XCTAssertEqual(reportedLimit, limit, file: file, line: line)
                XCTAssertLessThanOrEqual(reader.bufferedByteCount, limit, "buffered more than the limit", file: file, line: line)
                return (offset, lines, reader.bufferedByteCount)
            }
        } catch {
            XCTFail("unexpected error \(error)", file: file, line: line)
            return nil
        }
        XCTFail("no lineTooLong error", file: file, line: line)
        return nil
    }

    func testLineOverASmallLimitThrowsWithItsStartOffset() throws {
        let limit = 64
        let short = Array("{\"ok\":true}\n".utf8)                       // 12 bytes, offset 0
        let exact = Array(repeating: UInt8(ascii: "e"), count: limit) + [0x0A] // fits exactly, offset 12
        let long = Array(repeating: UInt8(ascii: "L"), count: limit + 1) + [0x0A] // offset 77
        let stream = short + exact + long + short
        let longOffset = short.count + exact.count
        for sizes in [[1], [2], [7], [63], [64], [65], [100], [stream.count], [3, 50, 1, 90]] {
            let result = try XCTUnwrap(lineTooLongOffset(stream, chunkSizes: sizes, limit: limit), "\(sizes)")
            XCTAssertEqual(result.offset, longOffset, "chunk sizes \(sizes)")
            XCTAssertEqual(result.linesBefore, 2, "chunk sizes \(sizes)")
        }
    }

    func testUnterminatedLineOverTheLimitThrowsWithoutItsNewline() throws {
        let stream = Array("a\n".utf8) + Array(repeating: UInt8(ascii: "z"), count: 1000)
        for sizes in [[1], [10], [stream.count]] {
            let result = try XCTUnwrap(lineTooLongOffset(stream, chunkSizes: sizes, limit: 64), "\(sizes)")
            XCTAssertEqual(result.offset, 2)
        }
    }

    func testLinesAtTheLimitAreAccepted() throws {
        let line = Array(repeating: UInt8(ascii: "y"), count: 64)
        let stream = line + [0x0A] + line + [0x0A]
        for sizes in [[1], [64], [65], [stream.count]] {
            let (lines, _) = try read(stream, chunkSizes: sizes, maximumLineLength: 64)
            XCTAssertEqual(lines, [ExpectedLine(bytes: line, offset: 0), ExpectedLine(bytes: line, offset: 65)], "\(sizes)")
        }
    }

    func testLineTooLongDescription() {
        XCTAssertEqual(LineFramingError.lineTooLong(offset: 5, limit: 64).description,
                       "a line longer than 64 bytes (starting at byte 5 of the stream)")
    }

    func testDefaultLimitIs16MiB() {
        XCTAssertEqual(LineReader.defaultMaximumLineLength, 16 * 1024 * 1024)
        XCTAssertEqual(LineReader().maximumLineLength, 16 * 1024 * 1024)
    }

    func testA17MiBLineOverTheReal16MiBDefault() throws {
        let prefix = Array("{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n".utf8)
        var stream = prefix
        stream += Array(repeating: UInt8(ascii: "a"), count: 17 * 1024 * 1024)
        stream.append(0x0A)
        for sizes in [[1 << 20], [65536, 4093], [stream.count]] {
            let result = try XCTUnwrap(lineTooLongOffset(stream, chunkSizes: sizes, limit: LineReader.defaultMaximumLineLength), "\(sizes)")
            XCTAssertEqual(result.offset, prefix.count, "\(sizes)")
            XCTAssertEqual(result.linesBefore, 1, "\(sizes)")
        }
    }

    func testAnExactly16MiBLineIsAccepted() throws {
        var stream = Array(repeating: UInt8(ascii: "b"), count: LineReader.defaultMaximumLineLength)
        stream.append(0x0A)
        stream += Array("{}\n".utf8)
        var reader = LineReader()
        var lengths: [Int] = []
        var offsets: [Int] = []
        var position = 0
        while position < stream.count {
            let size = min(1 << 20, stream.count - position)
            try stream[position..<(position + size)].withUnsafeBytes { raw in
                try reader.feed(raw) { line, offset in lengths.append(line.count); offsets.append(offset) }
            }
            position += size
        }
        XCTAssertEqual(lengths, [LineReader.defaultMaximumLineLength, 2])
        XCTAssertEqual(offsets, [0, LineReader.defaultMaximumLineLength + 1])
    }

    // MARK: Invalid UTF-8

    func testInvalidUTF8IsPassedThroughButMessageDecodeReportsTheOffset() throws {
        // {"jsonrpc":"2.0","method":"a<FF>"}  — the bad byte is at offset 28 of the line.
        let bad: [UInt8] = Array("{\"jsonrpc\":\"2.0\",\"method\":\"a".utf8) + [0xFF] + Array("\"}".utf8)
        let good = Array("{\"jsonrpc\":\"2.0\",\"method\":\"b\"}".utf8)
        let stream = good + [0x0A] + bad + [0x0A] + good + [0x0A]
        for sizes in [[1], [5], [stream.count]] {
            let (lines, _) = try read(stream, chunkSizes: sizes)
            XCTAssertEqual(lines.map(\.bytes), [good, bad, good], "\(sizes)")
            XCTAssertEqual(lines.map(\.offset), [0, good.count + 1, good.count + bad.count + 2])
        }
        do {
            let message = try bad.withUnsafeBytes { try Message.decode(line: $0) }
            XCTFail("decoded \(message)")
        } catch let error as MessageDecodingError {
            XCTAssertEqual(error.code, RPCError.parseError)
            XCTAssertTrue(error.reason.contains("invalid UTF-8"), error.reason)
            XCTAssertTrue(error.reason.hasSuffix("at byte 28"), error.reason)
            XCTAssertNil(error.id)
        } catch {
            XCTFail("unexpected error \(error)")
        }
    }
}
