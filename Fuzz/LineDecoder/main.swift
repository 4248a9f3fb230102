// libFuzzer entry point of the "line-decoder" fuzz target. Scripts/fuzz.sh compiles it together with
// Tests/ReindexProtocolTests/FuzzHarness.swift, which holds what the target does with an input
// (FuzzRegressionTests replays saved inputs through the same function).

/// Runs one input; an invariant that does not hold traps, so libFuzzer records the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do {
        _ = try FuzzHarness.run(target: "line-decoder", bytes)
    } catch {
        fatalError("fuzz target line-decoder: \(error)")
    }
    return 0
}
