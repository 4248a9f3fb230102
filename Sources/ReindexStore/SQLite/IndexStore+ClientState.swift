import ReindexSystem

/// The SQLite index's part of an application's batches (`LocalIndex`): the client state each
/// bundle's application last ended a batch with, and the stagings of writers that died.
extension IndexStore {
    public func applicationClientState(bundle key: String) throws(StoreError) -> [UInt8]? {
        let select = try statement("SELECT state FROM app_client_states WHERE bundle = ?1")
        select.bind(1, key.lowercased())
        defer { select.reset() }
        guard try select.step() else { return nil }
        return select.blob(0)
    }

    /// Records the state with the highest request id that exists now (see migration 8), inside
    /// the caller's transaction (the batch's publication).
    public func saveApplicationClientState(_ state: [UInt8], bundle key: String) throws(StoreError) {
        let save = try statement("""
            INSERT INTO app_client_states(bundle, state, written, last_request)
            VALUES(?1, ?2, ?3, (SELECT coalesce(max(id), 0) FROM requests))
            ON CONFLICT(bundle) DO UPDATE SET state = excluded.state, written = excluded.written, last_request = excluded.last_request
            """)
        save.bind(1, key.lowercased())
        save.bindBlob(2, state)
        save.bind(3, Clock.now())
        try save.run()
    }

    /// A replacement of the bundle was acknowledged (in its transaction): the application's
    /// client state goes if that request already existed when the state was written, since the
    /// replacement may then have been running while the batch ended and replaced its items.
    func clearApplicationClientState(bundle key: String, replacedBy request: Int64) throws(StoreError) {
        let clear = try statement("DELETE FROM app_client_states WHERE bundle = ?1 AND last_request >= ?2")
        clear.bind(1, key)
        clear.bind(2, request)
        try clear.run()
    }

    /// Drops the stagings of this bundle whose process is gone (an application killed in the
    /// middle of a batch): their rows were never visible.
    public func sweepAbandonedStagings(bundle key: String) throws(StoreError) {
        let key = key.lowercased()
        for staging in try stagings(bundle: key) where !staging.owner.isAlive {
            try writeTransaction { () throws(StoreError) in try dropStaging(staging.id, bundle: key) }
        }
    }
}
