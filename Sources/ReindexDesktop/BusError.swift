// D-Bus desktop search (sd-bus) exists on Linux only.
#if os(Linux)
import CSDBus
import ReindexSystem

/// An error reply to a method call: a D-Bus error name and a sentence for people.
package struct BusError: Error, Sendable, Equatable {
    package var name: String
    package var message: String

    package init(_ name: String, _ message: String) {
        self.name = name
        self.message = message
    }

    /// The caller sent arguments of the wrong type, too many, or ones that name nothing.
    package static func invalidArgs(_ message: String) -> BusError { BusError("org.freedesktop.DBus.Error.InvalidArgs", message) }
    package static func unknownMethod(_ message: String) -> BusError { BusError("org.freedesktop.DBus.Error.UnknownMethod", message) }
    package static func failed(_ message: String) -> BusError { BusError("org.freedesktop.DBus.Error.Failed", message) }
}
#endif
