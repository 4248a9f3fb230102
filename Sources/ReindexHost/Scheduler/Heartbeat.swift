import CReindexSystem
import class Foundation.Thread
import ReindexProtocol
import ReindexStore
import ReindexSystem

/// Renews the leases of this worker's running requests and its `last_seen`, every third of the
/// lease, on a connection of its own (reconnecting with backoff when it is lost).
final class Heartbeat: @unchecked Sendable {
    let location: PostgresLocation
    let workerID: String
    let leaseSeconds: Double
    private let lock = Lock()
    private var stopped = false

    init(location: PostgresLocation, workerID: String, leaseSeconds: Double) {
        self.location = location
        self.workerID = workerID
        self.leaseSeconds = leaseSeconds
    }

    func start() {
        let thread = Thread { [self] in
            var store: PostgresStore?
            while !lock.withLock({ stopped }) {
                if store == nil { store = try? PostgresStore.open(location) }
                if let store {
                    store.adoptWorkerID(workerID)
                    do { try store.renewLeases() } catch { ServeLog.warning("cannot renew this worker's leases: \(error)") }
                }
                usleep(useconds_t(max(0.05, leaseSeconds / 3) * 1_000_000))
            }
        }
        thread.start()
    }

    func stop() { lock.withLock { stopped = true } }
}
