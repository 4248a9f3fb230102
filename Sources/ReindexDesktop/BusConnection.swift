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

/// A connection to the session bus (sd-bus) with the objects it exports, worked by one thread
/// in `run` until a descriptor becomes readable.
package final class BusConnection {
    private var bus: OpaquePointer?
    private var boxes: [Unmanaged<ObjectBox>] = []
    private var ownedName: String?
    private let deferred = DeferredCalls()

    private final class ObjectBox {
        let object: any BusObject
        let deferred: DeferredCalls
        init(_ object: any BusObject, _ deferred: DeferredCalls) { self.object = object; self.deferred = deferred }
    }

    /// Searches read from the bus but not yet answered: answered once every call already sent
    /// has been read, so a search that a later one from the same caller replaces is never run.
    private final class DeferredCalls {
        struct Call {
            let message: OpaquePointer
            let object: any BusObject
            let abandon: [BusValue]
            /// Caller and object path: a later search with the same key supersedes this one.
            let key: String
        }
        var calls: [Call] = []
    }

    /// Connects to the session bus that `DBUS_SESSION_BUS_ADDRESS` names (else the user's bus).
    package init() throws(ReindexError) {
        // libsystemd is loaded here, not at start (CSDBus).
        guard reindex_sdbus_load() != 0 else {
            throw ReindexError(.cannotStart, "desktop search needs libsystemd's sd-bus, which cannot be loaded (\(String(cString: reindex_sdbus_error())))")
        }
        var bus: OpaquePointer? = nil
        let r = sd_bus_open_user(&bus)
        guard r >= 0, let bus else {
            throw ReindexError(.cannotStart, "cannot connect to the session bus: \(Self.describe(r)) (is DBUS_SESSION_BUS_ADDRESS set?)")
        }
        self.bus = bus
    }

    deinit { close() }

    /// Takes `name`, failing when another connection owns it.
    package func requestName(_ name: String) throws(ReindexError) {
        guard let bus else { return }
        let r = sd_bus_request_name(bus, name, 0)
        guard r >= 0 else {
            let why = r == -EEXIST ? "another process owns it (is 'reindex desktop serve' already running?)" : Self.describe(r)
            throw ReindexError(.cannotStart, "cannot own the bus name \(name): \(why)")
        }
        ownedName = name
    }

    /// Exports `object` at `path`: every call to that path goes to it.
    package func export(_ object: any BusObject, at path: String) throws(ReindexError) {
        guard let bus else { return }
        let box = Unmanaged.passRetained(ObjectBox(object, deferred))
        boxes.append(box)
        let r = sd_bus_add_object(bus, nil, path, { message, userdata, replyError in
            guard let message, let userdata else { return 0 }
            // Signals and replies that reach the path are not ours to answer.
            guard sd_bus_message_is_method_call(message, nil, nil) > 0 else { return 0 }
            let box = Unmanaged<ObjectBox>.fromOpaque(userdata).takeUnretainedValue()
            let object = box.object
            if let abandon = object.supersededReply(BusCall(message: message)) {
                let sender = sd_bus_message_get_sender(message).map { String(cString: $0) } ?? ""
                let path = sd_bus_message_get_path(message).map { String(cString: $0) } ?? ""
                box.deferred.calls.append(.init(message: sd_bus_message_ref(message), object: object, abandon: abandon,
                                                key: sender + "\u{0}" + path))
                return 1
            }
            do throws(BusError) {
                let values = try object.dispatch(BusCall(message: message))
                return BusConnection.reply(to: message, values)
            } catch {
                return sd_bus_error_set(replyError, error.name, error.message)
            }
        }, box.toOpaque())
        guard r >= 0 else { throw ReindexError(.cannotStart, "cannot export \(path): \(Self.describe(r))") }
    }

    /// Processes calls until `stopFD` becomes readable (a signal arrived), calling `idle` between
    /// them and `abandoned` for each search answered unrun because a later one superseded it.
    /// Returns normally on the stop; throws when the bus connection is lost.
    package func run(until stopFD: Int32, idle: () -> Void, abandoned: (String) -> Void = { _ in }) throws(ReindexError) {
        guard let bus else { return }
        while true {
            let r = sd_bus_process(bus, nil)
            guard r >= 0 else { throw ReindexError(.ioError, "lost the session bus: \(Self.describe(r))") }
            idle()
            if r > 0 { continue }
            // Every call sent so far is read: answer the deferred searches, then read again.
            if !deferred.calls.isEmpty {
                answerDeferred(abandoned)
                continue
            }
            var fds = [pollfd(fd: sd_bus_get_fd(bus), events: Int16(truncatingIfNeeded: sd_bus_get_events(bus)), revents: 0),
                       pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0)]
            // At most a second, so finished children are reaped promptly by `idle`.
            _ = poll(&fds, 2, 1000)
            if fds[1].revents != 0 { return }
        }
    }

    /// Runs the last deferred search of each caller, path and method, and answers the earlier
    /// ones with their abandoning reply (no results) without running them.
    private func answerDeferred(_ abandoned: (String) -> Void) {
        let calls = deferred.calls
        deferred.calls = []
        var last: [String: Int] = [:]
        for (n, call) in calls.enumerated() { last[call.key] = n }
        for (n, call) in calls.enumerated() {
            defer { sd_bus_message_unref(call.message) }
            if last[call.key] != n {
                abandoned(BusCall(message: call.message).member ?? "a search")
                _ = Self.reply(to: call.message, call.abandon)
                continue
            }
            do throws(BusError) {
                _ = Self.reply(to: call.message, try call.object.dispatch(BusCall(message: call.message)))
            } catch {
                var replyError = sd_bus_error()
                _ = sd_bus_error_set(&replyError, error.name, error.message)
                _ = sd_bus_reply_method_error(call.message, &replyError)
                sd_bus_error_free(&replyError)
            }
        }
    }

    /// Releases the name, sends what is queued and closes the connection.
    package func close() {
        guard let bus else { return }
        for call in deferred.calls { sd_bus_message_unref(call.message) }
        deferred.calls = []
        if let ownedName { _ = sd_bus_release_name(bus, ownedName) }
        ownedName = nil
        _ = sd_bus_flush(bus)
        _ = sd_bus_flush_close_unref(bus)
        self.bus = nil
        for box in boxes { box.release() }
        boxes = []
    }

    private static func reply(to call: OpaquePointer, _ values: [BusValue]) -> Int32 {
        var reply: OpaquePointer? = nil
        guard sd_bus_message_new_method_return(call, &reply) >= 0, let reply else { return -ENOMEM }
        defer { sd_bus_message_unref(reply) }
        for value in values {
            let r = append(value, to: reply)
            if r < 0 { return r }
        }
        // A caller that asked for no reply gets none.
        guard sd_bus_message_get_expect_reply(call) > 0 else { return 1 }
        let r = sd_bus_send(nil, reply, nil)
        return r < 0 ? r : 1
    }

    private static func append(_ value: BusValue, to m: OpaquePointer) -> Int32 {
        func basic<T>(_ code: Unicode.Scalar, _ v: T) -> Int32 {
            var v = v
            return withUnsafePointer(to: &v) { sd_bus_message_append_basic(m, BusCall.type(code), $0) }
        }
        func container(_ code: Unicode.Scalar, _ contents: String, _ members: [BusValue]) -> Int32 {
            var r = sd_bus_message_open_container(m, BusCall.type(code), contents)
            if r < 0 { return r }
            for member in members {
                r = append(member, to: m)
                if r < 0 { return r }
            }
            return sd_bus_message_close_container(m)
        }
        switch value {
        case .string(let s):
            // D-Bus strings hold no NUL; one inside a value ends it here.
            return s.withCString { sd_bus_message_append_basic(m, BusCall.type("s"), $0) }
        case .int32(let i): return basic("i", i)
        case .uint32(let u): return basic("u", u)
        case .double(let d): return basic("d", d)
        case .bool(let b): return basic("b", Int32(b ? 1 : 0))
        case .array(let element, let members): return container("a", element, members)
        case .structure(let members): return container("r", members.map(\.signature).joined(), members)
        case .dictEntry(let key, let value): return container("e", key.signature + value.signature, [key, value])
        case .variant(let inner): return container("v", inner.signature, [inner])
        }
    }

    static func describe(_ r: Int32) -> String { String(cString: strerror(-r)) }
}
#endif
