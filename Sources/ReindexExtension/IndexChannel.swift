import ReindexProtocol

/// Where the writes of a `SearchableIndex` go: the host's connection when the extension runs
/// under the host, a recording when a test runs a handler (`ReindexExtensionTesting`). Package
/// access only: authors meet `SearchableIndex`, never this.
package protocol IndexChannel: AnyObject, Sendable {
    /// Sends one `index/put` of these items; returns once they are taken.
    func sendPut(_ items: ArraySlice<SearchableItem>) async throws
    /// Sends a notification (`index/delete`, `index/deleteDomains`, `index/deleteAll`, `$/progress`).
    func send(_ message: Message) throws
    /// Sends a request of the SDK's own (`batch/commit`) and returns the host's result.
    func request(method: String, params: JSONValue) async throws -> JSONValue
}

extension HostConnection: IndexChannel {}
