import ReindexSystem

/// The PostgreSQL index's part of an application's batches (`LocalIndex`): the client state each
/// bundle's application last ended a batch with. A batch is one transaction, so a writer that
/// died left nothing staged: the server rolled its transaction back.
extension PostgresStore {
    public func applicationClientState(bundle key: String) throws -> [UInt8]? {
        let r = try query("SELECT encode(state, 'hex') FROM app_client_states WHERE bundle = $1", [key.lowercased()])
        guard r.rowCount == 1 else { return nil }
        return Self.bytes(hex: r.text(0, 0) ?? "")
    }

    /// Records the state with the highest request id that exists now (see migration 5), inside
    /// the caller's transaction (the batch's).
    public func saveApplicationClientState(_ state: [UInt8], bundle key: String) throws {
        try query("""
            INSERT INTO app_client_states(bundle, state, written, last_request)
            VALUES($1, decode($2, 'hex'), $3, (SELECT coalesce(max(id), 0) FROM requests))
            ON CONFLICT(bundle) DO UPDATE SET state = EXCLUDED.state, written = EXCLUDED.written, last_request = EXCLUDED.last_request
            """, [key.lowercased(), Self.hex(state), String(Clock.now())])
    }

    /// A replacement of the bundle was acknowledged (in its transaction): as on SQLite, the
    /// application's client state goes if that request already existed when it was written.
    func clearApplicationClientState(bundle key: String, replacedBy request: Int64) throws {
        try query("DELETE FROM app_client_states WHERE bundle = $1 AND last_request >= $2", [key, String(request)])
    }

    public func sweepAbandonedStagings(bundle key: String) throws {}

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 15)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    static func bytes(hex: String) -> [UInt8] {
        func value(_ c: UInt8) -> UInt8 {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            default: return c &- UInt8(ascii: "A") &+ 10
            }
        }
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count - 1, by: 2).map { value(digits[$0]) << 4 | value(digits[$0 + 1]) }
    }
}
