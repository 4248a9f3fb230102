import ReindexSystem
import ReindexStore
import CReindexSystem
import ReindexProtocol

/// How an extension process ended.
public enum ProcessExit: Sendable, Equatable, CustomStringConvertible {
    case exited(Int32)
    case signaled(Int32)

    public var description: String {
        switch self {
        case .exited(let code): return "exited with status \(code)"
        case .signaled(let signal): return "was killed by signal \(signal) (\(signalName(signal)))"
        }
    }
}

func signalName(_ signal: Int32) -> String {
    switch signal {
    case SIGKILL: return "SIGKILL"
    case SIGTERM: return "SIGTERM"
    case SIGSEGV: return "SIGSEGV"
    case SIGABRT: return "SIGABRT"
    case SIGBUS: return "SIGBUS"
    case SIGILL: return "SIGILL"
    case SIGTRAP: return "SIGTRAP"
    case SIGPIPE: return "SIGPIPE"
    case SIGXCPU: return "SIGXCPU, CPU time limit"
    case SIGINT: return "SIGINT"
    case SIGFPE: return "SIGFPE"
    default: return "signal \(signal)"
    }
}
