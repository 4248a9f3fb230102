// D-Bus desktop search (sd-bus) exists on Linux only.
#if os(Linux)
import CSDBus
import ReindexSystem

/// One incoming method call; its arguments are read in order.
package struct BusCall {
    let message: OpaquePointer

    package var interface: String? { sd_bus_message_get_interface(message).map { String(cString: $0) } }
    package var member: String? { sd_bus_message_get_member(message).map { String(cString: $0) } }
    package var signature: String { sd_bus_message_get_signature(message, 1).map { String(cString: $0) } ?? "" }

    /// Refuses a call whose arguments are not exactly `expected`, naming both.
    package func requireSignature(_ expected: String) throws(BusError) {
        let got = signature
        guard got == expected else {
            throw .invalidArgs("\(member ?? "the method") takes (\(expected)), got (\(got))")
        }
    }

    package func readString() throws(BusError) -> String {
        var pointer: UnsafePointer<CChar>? = nil
        let r = withUnsafeMutablePointer(to: &pointer) { sd_bus_message_read_basic(message, Self.type("s"), $0) }
        guard r > 0, let pointer else { throw .invalidArgs("expected a string argument") }
        return String(cString: pointer)
    }

    package func readUInt32() throws(BusError) -> UInt32 {
        var value: UInt32 = 0
        let r = withUnsafeMutablePointer(to: &value) { sd_bus_message_read_basic(message, Self.type("u"), $0) }
        guard r > 0 else { throw .invalidArgs("expected a uint32 argument") }
        return value
    }

    /// An `as` argument of at most `count` strings of at most `bytes` bytes each; more is an
    /// error rather than work (a caller cannot make the service hold or search an unbounded array).
    package func readStrings(atMost count: Int, bytes: Int, what: String) throws(BusError) -> [String] {
        guard sd_bus_message_enter_container(message, Self.type("a"), "s") > 0 else { throw .invalidArgs("expected an array of strings (\(what))") }
        var strings: [String] = []
        while true {
            var pointer: UnsafePointer<CChar>? = nil
            let r = withUnsafeMutablePointer(to: &pointer) { sd_bus_message_read_basic(message, Self.type("s"), $0) }
            if r == 0 { break }
            guard r > 0, let pointer else { throw .invalidArgs("unreadable \(what)") }
            guard strings.count < count else { throw .invalidArgs("too many \(what): at most \(count)") }
            let length = strlen(pointer)
            guard length <= bytes else { throw .invalidArgs("\(what) too long: at most \(bytes) bytes each") }
            strings.append(String(cString: pointer))
        }
        guard sd_bus_message_exit_container(message) >= 0 else { throw .invalidArgs("unreadable \(what)") }
        return strings
    }

    static func type(_ code: Unicode.Scalar) -> CChar { CChar(truncatingIfNeeded: code.value) }
}
#endif
