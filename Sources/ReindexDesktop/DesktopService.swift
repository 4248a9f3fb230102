// D-Bus desktop search (sd-bus) exists on Linux only.
#if os(Linux)
import ReindexHost
import ReindexSystem

/// `reindex desktop serve`: owns `org.reindexhost.SearchProvider` on the session bus, exports
/// GNOME Shell's and KRunner's search provider interfaces, and answers them until SIGTERM or
/// SIGINT, then releases the name and returns 0.
package enum DesktopService {
    package static let busName = "org.reindexhost.SearchProvider"

    package static func serve(catalog: DesktopCatalog, log: (String) -> Void) throws(ReindexError) -> Int32 {
        // Before anything can fail half-way: a SIGTERM from now on ends the loop, not the process.
        let stop = CancelSignal(signals: [SIGTERM, SIGINT])
        let connection = try BusConnection()
        defer { connection.close() }
        try connection.export(GNOMESearchProvider(catalog: catalog), at: GNOMESearchProvider.path)
        try connection.export(KRunnerProvider(catalog: catalog), at: KRunnerProvider.path)
        // The name last, so the first call that finds us finds both objects.
        try connection.requestName(busName)
        log("serving \(busName): \(GNOMESearchProvider.interface) at \(GNOMESearchProvider.path), \(KRunnerProvider.interface) at \(KRunnerProvider.path)")
        try connection.run(until: stop.readFD, idle: { Opening.reapChildren() },
                           abandoned: { method in log("abandoned \(method): a later search from the same caller replaces it") })
        log("stopping: releasing \(busName)")
        connection.close()
        return 0
    }
}
#endif
