// D-Bus desktop search (sd-bus) exists on Linux only.
#if os(Linux)
import CSDBus
import ReindexSystem

/// An object exported on the bus: answers the calls sent to its path.
package protocol BusObject: AnyObject {
    /// The interface the object implements, its object path and its introspection XML.
    static var interface: String { get }
    static var path: String { get }
    static var interfaceXML: String { get }
    /// The reply's values to a call of the object's own interface, or an error the caller
    /// receives as a D-Bus error.
    func handle(_ call: BusCall) throws(BusError) -> [BusValue]
    /// For a search a later one from the same caller makes pointless (the next keystroke's),
    /// the reply that abandons it; nil for every other call, which is answered at once.
    func supersededReply(_ call: BusCall) -> [BusValue]?
}

extension BusObject {
    package func supersededReply(_ call: BusCall) -> [BusValue]? { nil }
}

extension BusObject {
    /// Answers `Introspect`, refuses another interface, and hands the rest to `handle`.
    func dispatch(_ call: BusCall) throws(BusError) -> [BusValue] {
        if call.interface == "org.freedesktop.DBus.Introspectable" && call.member == "Introspect" {
            return [.string(Introspection.document(Self.interfaceXML))]
        }
        guard call.interface == nil || call.interface == Self.interface else {
            throw .unknownMethod("\(Self.path) has no interface \(call.interface ?? "")")
        }
        return try handle(call)
    }
}
#endif
