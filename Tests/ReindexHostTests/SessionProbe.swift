import Foundation
import ReindexHost
import ReindexProtocol

/// Collects what a session reports through its hooks.
final class SessionProbe {
    var pid: pid_t = 0
    var progress: [ProgressParams] = []
    var stderrLines: [String] = []

    /// Session options with this probe's hooks, small shutdown graces (the fixtures that need the
    /// whole escalation keep the tests short this way) and the given environment.
    func options(environment: [String: String] = ProcessInfo.processInfo.environment, exitGrace: Double = 1, termGrace: Double = 0.5) -> SessionOptions {
        var options = SessionOptions()
        options.environment = environment
        options.exitGraceSeconds = exitGrace
        options.termGraceSeconds = termGrace
        options.onSpawn = { [unowned self] process in self.pid = process.pid }
        options.onProgress = { [unowned self] progress in self.progress.append(progress) }
        options.onStderrLine = { [unowned self] line in self.stderrLines.append(line) }
        return options
    }
}
