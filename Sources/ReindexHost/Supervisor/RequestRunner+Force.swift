import ReindexStore
import ReindexSystem
import ReindexProtocol

extension RequestRunner {
    /// Runs `selection` now, as its own request: takes the bundle's lock (`hold`), puts back what
    /// a dead host left running, discards what an unfinished `reindexAll` committed unless the
    /// selection resumes it (a person forcing a reindexAll, after fixing a bug say, means from
    /// the start), queues the request — a forced reindexAll takes over a pending one, forced
    /// reindexItems run exactly the identifiers given — and runs it in one session. `note` hears,
    /// before the session starts, what the person who asked should know (a discarded partial run).
    public func force(_ selection: RequestSelection, bundle: DiscoveredBundle, store: any IndexBackend,
                      options: SessionOptions, note: (String) -> Void = { _ in }) throws(ReindexError) -> RequestResult {
        let release = try hold(bundle, store: store)
        defer { release() }
        // The extension starts while the request is queued, its own start overlapping the host's
        // books; it hears nothing before `initialize` (`launch` says when it waits instead).
        let session = self.session(bundle: bundle, store: store, options: options)
        session.launch()
        let request: QueuedRequest
        var discarded: String?
        do {
            try store.recoverAbandoned(bundle: bundle.identifier)
            if selection.kind == .reindexAll && !selection.resume,
               let partial = try store.requests(bundle: bundle.identifier, state: .pending).first(where: { $0.kind == .reindexAll }),
               let items = try store.discardPartialReplacement(partial) {
                discarded = "discarded a partial reindexAll from request \(partial.id): \(items) committed item(s); pass --resume to resume one instead"
            }
            request = try store.enqueue(
                bundleIdentifier: bundle.identifier, kind: selection.kind, identifiers: selection.identifiers,
                reason: selection.reason, maxAttempts: bundle.manifest.retry.maxAttempts, notBefore: nil, coalesce: selection.kind == .reindexAll)
        } catch {
            throw store.explain(error, doing: "\(bundle.identifier): cannot queue the request")
        }
        if let discarded { note(discarded) }
        guard let result = run(bundle: bundle, requests: [request], store: store, options: options, session: session).first else {
            throw ReindexError(.internal, "\(bundle.identifier): the request vanished from the queue")
        }
        return result
    }
}
