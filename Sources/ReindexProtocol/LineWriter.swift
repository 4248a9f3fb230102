/// Frames outgoing messages: each value becomes its compact JSON text followed by one `\n`.
public enum LineWriter {
    /// Appends one framed line for `value` to `output`.
    public static func appendLine(_ value: JSONValue, to output: inout [UInt8]) {
        JSONWriter.write(value, into: &output)
        output.append(0x0A)
    }

    /// The framed line for `value`.
    public static func line(_ value: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        appendLine(value, to: &output)
        return output
    }
}
