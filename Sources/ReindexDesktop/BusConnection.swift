// D-Bus desktop search (sd-bus) exists on Linux only.
#if os(Linux)
import CSDBus
import ReindexSystem

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
