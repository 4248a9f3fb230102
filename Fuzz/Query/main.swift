// libFuzzer entry point of the "query" fuzz target. Scripts/fuzz.sh compiles it together with
// the query language's sources (Sources/ReindexStore/Query: the parser, the SQLite compiler,
// folding) and Tests/ReindexStoreTests/QueryFuzzHarness.swift, which holds what the target does
// with an input (QueryFuzzTests replays saved inputs through the same function).

/// Runs one input; an invariant that does not hold traps, so libFuzzer records the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    if let failure = QueryFuzzHarness.run(bytes) {
        fatalError("fuzz target query: \(failure)")
    }
    return 0
}
