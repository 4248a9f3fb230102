// The wire module stands alone (the fuzzers compile its sources by themselves), so it imports
// the C library for memchr here rather than through ReindexSystem.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif

/// Why a line could not be taken from a stream.
public enum LineFramingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A line grew past the limit before its newline arrived. `offset` is where the line began.
    case lineTooLong(offset: Int, limit: Int)

    public var description: String {
        switch self {
        case let .lineTooLong(offset, limit):
            return "a line longer than \(limit) bytes (starting at byte \(offset) of the stream)"
        }
    }
}

/// Splits a byte stream into protocol lines.
///
/// Feed it whatever each `read` returned, in any sizes, and take the complete lines it finds;
/// a line split across many reads is joined, and bytes are copied only when a line spans reads.
/// Empty lines are skipped. A trailing `\r` is kept: lines are ended by `\n` alone. Each line
/// comes with the byte offset at which it starts in the whole stream, for error messages.
public struct LineReader: Sendable {
    /// The contract's limit on one line: 16 MiB.
    public static let defaultMaximumLineLength = 16 * 1024 * 1024

    public let maximumLineLength: Int
    private var pending: [UInt8] = []
    private var pendingOffset = 0   // stream offset of pending[0]
    private var fed = 0             // bytes fed so far

    /// Whether empty lines are skipped (the protocol's rule) or passed on (to count lines).
    public var skipsEmptyLines: Bool

    public init(maximumLineLength: Int = LineReader.defaultMaximumLineLength, skipsEmptyLines: Bool = true) {
        self.maximumLineLength = maximumLineLength
        self.skipsEmptyLines = skipsEmptyLines
    }

    /// Bytes received but not yet part of a complete line.
    public var bufferedByteCount: Int { pending.count }

    /// Total bytes fed so far.
    public var streamOffset: Int { fed }

    /// Feeds `chunk` and calls `body` with each complete, non-empty line (without its `\n`) and
    /// the line's offset in the stream. The buffer passed to `body` is valid only during the call.
    /// Throws when a line exceeds the limit, without buffering more than the limit.
    public mutating func feed(
        _ chunk: UnsafeRawBufferPointer,
        _ body: (UnsafeRawBufferPointer, Int) throws -> Void
    ) throws {
        let base = fed
        let count = chunk.count
        fed += count
        var index = 0
        if !pending.isEmpty {
            guard let newline = findNewline(chunk, from: 0) else {
                try ensureFits(pending.count + count, offset: pendingOffset)
                pending.append(contentsOf: chunk)
                return
            }
            try ensureFits(pending.count + newline, offset: pendingOffset)
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<newline]))
            try pending.withUnsafeBytes { try body($0, pendingOffset) }
            if pending.capacity > 1 << 20 {
                pending = []  // do not keep a huge buffer alive after one long line
            } else {
                pending.removeAll(keepingCapacity: true)
            }
            index = newline + 1
        }
        // Whole lines inside this chunk are passed without copying.
        while index < count, let newline = findNewline(chunk, from: index) {
            if newline > index || !skipsEmptyLines {
                try ensureFits(newline - index, offset: base + index)
                try body(UnsafeRawBufferPointer(rebasing: chunk[index..<newline]), base + index)
            }
            index = newline + 1
        }
        if index < count {
            try ensureFits(count - index, offset: base + index)
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[index..<count]))
            pendingOffset = base + index
        }
    }

    /// Convenience for arrays: feeds `chunk` and returns the complete lines as arrays.
    public mutating func feed(_ chunk: [UInt8]) throws -> [(line: [UInt8], offset: Int)] {
        var lines: [(line: [UInt8], offset: Int)] = []
        try chunk.withUnsafeBytes { raw in
            try feed(raw) { line, offset in lines.append((Array(line), offset)) }
        }
        return lines
    }

    /// Bytes left without a final newline when the stream ended (nil if none), and their offset.
    public var unterminatedTail: (bytes: [UInt8], offset: Int)? {
        pending.isEmpty ? nil : (pending, pendingOffset)
    }

    private func ensureFits(_ length: Int, offset: Int) throws {
        if length > maximumLineLength {
            throw LineFramingError.lineTooLong(offset: offset, limit: maximumLineLength)
        }
    }

    @inline(__always)
    private func findNewline(_ chunk: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard start < chunk.count, let base = chunk.baseAddress else { return nil }
        guard let found = memchr(base + start, 0x0A, chunk.count - start) else { return nil }
        return base.distance(to: UnsafeRawPointer(found))
    }
}
