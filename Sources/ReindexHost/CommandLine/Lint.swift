import ReindexProtocol
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif

/// `reindex validate DIR --run`: starts a bundle against a scratch index, runs `reindexAll`, and
/// reports every protocol problem it saw — a lint for extension authors.
public enum BundleLint {
    public struct Report: Sendable {
        public var problems: [String] = []
        public var notes: [String] = []
        public var counts = WriteCounts()
        public var failure: RequestFailure?
        public var exit: ProcessExit?
        public var stderrTail: [String] = []
    }

    /// Runs `bundle` once against a scratch index. `sandbox` says how it is sandboxed; its paths
    /// (the real ones) stay out of reach, and its data directory is a scratch one too.
    public static func run(bundle: DiscoveredBundle, environment: [String: String], sandbox: SandboxOptions = SandboxOptions()) throws(ReindexError) -> Report {
        let scratch = FileSystem.join(SandboxLaunch.temporaryRoot(environment), "reindex-validate-\(getpid())-\(Int(Clock.now() * 1000))")
        try FileSystem.makeDirectories(scratch)
        defer { removeTree(scratch) }
        var paths = HostPaths(extensionsPath: nil, index: FileSystem.join(scratch, "index.sqlite"), environment: environment)
        paths.data = FileSystem.join(scratch, "data")
        let store = try IndexStore.open(path: paths.index)
        var report = Report()
        var options = SessionOptions()
        options.environment = environment
        options.sandbox = sandbox
        options.sandbox.alsoProtect += sandbox.paths.map { [$0] } ?? []
        options.sandbox.paths = paths
        let collected = Collector()
        options.onRecoverableViolation = { collected.problems.append($0) }
        options.onProgress = { progress in
            if let total = progress.total, progress.completed > total {
                collected.problems.append("$/progress: completed \(progress.completed) is more than total \(total)")
            }
        }
        let request: QueuedRequest
        do {
            request = try store.enqueue(bundleIdentifier: bundle.identifier, kind: .reindexAll, reason: .forced, maxAttempts: 1)
        } catch {
            throw ReindexError(.ioError, "cannot prepare a scratch index: \(error)")
        }
        let session = ExtensionSession(bundle: bundle, store: store, logPath: FileSystem.join(scratch, "extension.log"), options: options)
        let started = Clock.monotonic()
        do {
            try session.start()
            if let result = session.initializeResult {
                if result.extensionName.isEmpty { report.notes.append("initialize: the reply names no extension (result.extension.name)") }
                report.notes.append("initialize: \(result.extensionName) \(result.extensionVersion), protocol \(result.protocolVersion), in \(milliseconds(Clock.monotonic() - started)) ms")
            }
            let outcome = session.perform(request) { _, _ throws(SQLiteError) in }
            report.counts = outcome.counts
            report.problems += outcome.rejections
            report.failure = outcome.failure
        } catch {
            report.failure = error
        }
        let shutdownStarted = Clock.monotonic()
        report.exit = session.shutdown(graceful: report.failure == nil)
        let exitTime = Clock.monotonic() - shutdownStarted
        report.stderrTail = session.log.lastLines
        report.problems.insert(contentsOf: collected.problems, at: 0)
        if report.failure == nil {
            switch report.exit {
            case .exited(0)?:
                if exitTime > 4 { report.problems.append("shutdown: the extension took \(Int(exitTime)) s to exit after stdin was closed") }
            case let exit?:
                report.problems.append("shutdown: after stdin was closed the extension \(exit) (expected status 0)")
            case nil: break
            }
        }
        if report.counts.rejected > 0 { report.problems.append("\(report.counts.rejected) item(s) were rejected") }
        return report
    }

    final class Collector: @unchecked Sendable { var problems: [String] = [] }

    static func milliseconds(_ seconds: Double) -> Int { Int((seconds * 1000).rounded()) }

    static func removeTree(_ path: String) {
        FileSystem.removeTree(path)
    }
}
