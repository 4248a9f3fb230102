/// PostgreSQL's SQLSTATEs (and libpq's lost connections), sorted into the store's codes.
extension StoreError {
    /// An error PostgreSQL (or libpq) reported; `connectionLost` when the connection is gone.
    public init(postgres sqlState: String?, message: String, context: String, connectionLost: Bool = false) {
        self.init(connectionLost ? .connectionLost : Self.code(sqlState: sqlState), message, context: context, sqlState: sqlState)
    }

    static func code(sqlState: String?) -> Code {
        guard let state = sqlState else { return .unavailable }
        switch state {
        case "40001", "40P01", "55P03", "57014": return .busy
        case "53100": return .full
        case "XX001", "XX002": return .damaged
        case "53200", "42601": return .invalid
        default:
            if state.hasPrefix("08") { return .connectionLost }
            if state.hasPrefix("54") || state.hasPrefix("22") { return .invalid }
            return .unavailable
        }
    }
}
