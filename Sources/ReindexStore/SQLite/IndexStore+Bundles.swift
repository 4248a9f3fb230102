import ReindexSystem
import ReindexProtocol

extension IndexStore {
    /// Every bundle the index has a row for.
    public func bundleRecords() throws(StoreError) -> [BundleRecord] {
        let s = try statement("SELECT key, identifier, version, fingerprint, missing_since FROM bundles ORDER BY key")
        var records: [BundleRecord] = []
        while try s.step() {
            records.append(BundleRecord(key: s.text(0) ?? "", identifier: s.text(1) ?? "", version: s.text(2), fingerprint: s.text(3),
                                        missingSince: s.optionalDouble(4)))
        }
        s.reset()
        return records
    }

    /// Records that a bundle was seen on the search path with this version and executable.
    public func recordSeen(key: String, identifier: String, version: String?, fingerprint: String?, now: Double = Clock.now()) throws(StoreError) {
        let s = try statement("""
            INSERT INTO bundles(key, identifier, live_gen, version, fingerprint, first_seen, last_seen, missing_since)
            VALUES(?1, ?2, 0, ?3, ?4, ?5, ?5, NULL)
            ON CONFLICT(key) DO UPDATE SET identifier = ?2, version = ?3, fingerprint = ?4, last_seen = ?5, missing_since = NULL
            """)
        s.bind(1, key)
        s.bind(2, identifier)
        s.bind(3, version)
        s.bind(4, fingerprint)
        s.bind(5, now)
        try s.run()
    }

    /// Marks a bundle missing from the search path (keeps the first time it was noticed).
    public func markMissing(_ key: String, now: Double = Clock.now()) throws(StoreError) {
        let s = try statement("UPDATE bundles SET missing_since = coalesce(missing_since, ?2) WHERE key = ?1")
        s.bind(1, key)
        s.bind(2, now)
        try s.run()
    }

    /// Forgets a removed bundle: its items (every generation), its queued requests and its row.
    /// Returns how many live items went.
    @discardableResult
    public func removeBundle(_ key: String) throws -> Int {
        try transaction { () throws -> Int in
            let count = try itemCount(bundle: key, now: 0)
            try deleteItems(where: "bundle = ?1") { $0.bind(1, key) }
            for sql in ["DELETE FROM staged_deletes WHERE staging IN (SELECT id FROM stagings WHERE bundle = ?1)",
                        "DELETE FROM stagings WHERE bundle = ?1", "DELETE FROM retired_generations WHERE bundle = ?1",
                        "DELETE FROM staged_undo WHERE request IN (SELECT gen FROM staged_generations WHERE bundle = ?1)",
                        "DELETE FROM staged_generations WHERE bundle = ?1",
                        "DELETE FROM staged_undo WHERE request IN (SELECT id FROM requests WHERE bundle = ?1)",
                        "DELETE FROM app_client_states WHERE bundle = ?1"] {
                let forget = try statement(sql)
                forget.bind(1, key)
                try forget.run()
            }
            let requests = try statement("DELETE FROM requests WHERE bundle = ?1 AND state IN ('pending', 'running')")
            requests.bind(1, key)
            try requests.run()
            let row = try statement("DELETE FROM bundles WHERE key = ?1")
            row.bind(1, key)
            try row.run()
            return count
        }
    }

    /// Live items of a bundle whose expiration falls in `(after, until]` and whose refresh has not
    /// been asked for at that expiration yet, by identifier.
    public func expiringItems(bundle key: String, after: Double, until: Double, limit: Int = 10_000) throws(StoreError) -> [String] {
        let s = try statement("""
            SELECT i.uid FROM items i JOIN bundles b ON b.key = i.bundle AND b.live_gen = i.gen
            WHERE i.bundle = ?1 AND i.expires > ?2 AND i.expires <= ?3
            AND (i.refresh_asked_for IS NULL OR i.refresh_asked_for != i.expires)
            ORDER BY i.expires LIMIT ?4
            """)
        s.bind(1, key)
        s.bind(2, after)
        s.bind(3, until)
        s.bind(4, limit)
        var ids: [String] = []
        while try s.step() { if let id = s.text(0) { ids.append(id) } }
        s.reset()
        return ids
    }

    /// Remembers that a refresh was asked for these items at their current expiration.
    public func markRefreshAsked(bundle key: String, identifiers: [String]) throws(StoreError) {
        let s = try statement("""
            UPDATE items SET refresh_asked_for = expires
            WHERE bundle = ?1 AND uid = ?2 AND gen = (SELECT live_gen FROM bundles WHERE key = ?1)
            """)
        for identifier in identifiers {
            s.reset()
            s.bind(1, key)
            s.bind(2, identifier)
            try s.run()
        }
    }

    /// Deletes every live item whose expiration has passed; returns how many.
    @discardableResult
    public func purgeExpired(now: Double = Clock.now()) throws -> Int {
        try transaction { () throws -> Int in
            try deleteItems(where: "expires IS NOT NULL AND expires <= ?1") { $0.bind(1, now) }
        }
    }

    /// Whether the file at `path` is still the database this connection has open (it may have
    /// been deleted or replaced underneath a long-running process).
    public var fileIsStillThere: Bool {
        guard let st = FileSystem.status(path) else { return false }
        return st.inode == openedInode && st.device == openedDevice
    }
}
