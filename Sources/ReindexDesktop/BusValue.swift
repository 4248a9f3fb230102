// D-Bus desktop search (sd-bus) exists on Linux only.
#if os(Linux)
import CSDBus
import ReindexSystem

/// A value of a reply, with its D-Bus type. Arrays carry their element signature so an empty
/// one is still well typed.
package indirect enum BusValue: Sendable {
    case string(String)
    case int32(Int32)
    case uint32(UInt32)
    case double(Double)
    case bool(Bool)
    case array(element: String, [BusValue])
    case structure([BusValue])
    case dictEntry(BusValue, BusValue)
    case variant(BusValue)

    package var signature: String {
        switch self {
        case .string: return "s"
        case .int32: return "i"
        case .uint32: return "u"
        case .double: return "d"
        case .bool: return "b"
        case .array(let element, _): return "a" + element
        case .structure(let members): return "(" + members.map(\.signature).joined() + ")"
        case .dictEntry(let key, let value): return "{" + key.signature + value.signature + "}"
        case .variant: return "v"
        }
    }

    /// `as`.
    package static func strings(_ values: [String]) -> BusValue { .array(element: "s", values.map(BusValue.string)) }

    /// `a{sv}`, in the order given.
    package static func dictionary(_ entries: [(String, BusValue)]) -> BusValue {
        .array(element: "{sv}", entries.map { .dictEntry(.string($0.0), .variant($0.1)) })
    }
}
#endif
