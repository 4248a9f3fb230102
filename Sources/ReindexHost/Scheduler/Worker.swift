import ReindexStore
import CReindexSystem
import class Foundation.Thread
import ReindexProtocol
import ReindexSystem

/// One request running on its own thread.
final class Worker: @unchecked Sendable {
    let bundle: DiscoveredBundle
    let request: QueuedRequest
    private let cancelPipe = WakePipe()
    /// Readable once the worker was asked to stop (the session polls it).
    var cancelRead: Int32 { cancelPipe.readFD }
    private let lock = Lock()
    private var _results: [RequestResult]? = nil
    private var _error: String? = nil
    private var _busy = false

    init(bundle: DiscoveredBundle, request: QueuedRequest) {
        self.bundle = bundle
        self.request = request
    }

    func cancel() { cancelPipe.wake() }

    /// Runs `work` on a thread of its own, then wakes `wake` (the serve loop collects it).
    func start(waking wake: WakePipe, _ work: @escaping @Sendable () -> Void) {
        let thread = Thread {
            work()
            wake.wake()
        }
        thread.start()
    }

    var finished: (results: [RequestResult]?, error: String?)? {
        lock.withLock { (_results == nil && _error == nil) ? nil : (_results, _error) }
    }

    /// Whether it could not start because another process or worker holds its bundle.
    var busy: Bool { lock.withLock { _busy } }

    func finish(results: [RequestResult]?, error: String?, busy: Bool = false) {
        lock.withLock {
            _results = results ?? []
            _error = error
            _busy = busy
        }
    }
}
