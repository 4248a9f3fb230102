import ReindexProtocol
import ReindexSystem

/// The fleet's workers: who serves this index, from where, running what (`reindex fleet-status`).
extension PostgresStore {
    /// Registers this process as a worker of the fleet (`reindex serve`).
    public func registerWorker(now: Double = Clock.now()) throws {
        try query("""
            INSERT INTO workers(id, host, pid, started, last_seen) VALUES($1, $2, $3, $4, $4)
            ON CONFLICT(id) DO UPDATE SET last_seen = $4
            """, [workerID, hostName, String(getpid()), String(now)])
    }

    /// Removes this worker's row (a clean stop).
    public func unregisterWorker() throws {
        try query("DELETE FROM workers WHERE id = $1", [workerID])
    }

    /// The workers seen within `within` seconds, with what each runs (from the leases).
    public func workers(now: Double = Clock.now(), within seconds: Double = 3 * PostgresStore.defaultLeaseSeconds) throws -> [FleetWorker] {
        let r = try query("""
            SELECT w.id, w.host, w.pid, w.started, w.last_seen,
                coalesce((SELECT array_agg(r.bundle_identifier ORDER BY r.id) FROM requests r
                          WHERE r.state = 'running' AND r.lease_worker = w.id AND r.lease_expires >= $1), '{}')
            FROM workers w WHERE w.last_seen >= $2 ORDER BY w.host, w.pid
            """, [String(now), String(now - seconds)])
        return (0..<r.rowCount).map { row in
            FleetWorker(id: r.text(row, 0) ?? "", host: r.text(row, 1) ?? "", pid: r.int(row, 2), startedAt: r.double(row, 3), lastSeen: r.double(row, 4),
                   running: PGArray.parse(r.text(row, 5)))
        }
    }

    /// The hosts that have a bundle installed (seen on their search path).
    public func hosts(bundle key: String) throws -> [String] {
        let r = try query("SELECT host FROM bundle_hosts WHERE bundle = $1 ORDER BY host", [key.lowercased()])
        return (0..<r.rowCount).compactMap { r.text($0, 0) }
    }
}
