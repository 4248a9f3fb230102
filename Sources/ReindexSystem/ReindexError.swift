
/// An error the host reports to its user: one stable code, a message that names the bundle, file
/// or request it is about, and (for extensions that failed) the tail of the extension's stderr.
public struct ReindexError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is; each maps to one exit code of the command-line contract.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        /// The sysexits code the command exits with.
        public let exitCode: Int32

        /// What was looked up is not there, though where it was looked for exists (an item of a
        /// known bundle): `1`, as `grep` finds nothing.
        public static let notFound = Code(name: "notFound", exitCode: 1)
        public static let usage = Code(name: "usage", exitCode: 64)
        public static let invalidData = Code(name: "invalidData", exitCode: 65)
        public static let bundleNotFound = Code(name: "bundleNotFound", exitCode: 66)
        /// An input that must exist does not (no index at the path a read-only command was
        /// given): `EX_NOINPUT`, the same status as a bundle not found.
        public static let noInput = Code(name: "noInput", exitCode: 66)
        public static let cannotStart = Code(name: "cannotStart", exitCode: 69)
        public static let `internal` = Code(name: "internal", exitCode: 70)
        public static let ioError = Code(name: "ioError", exitCode: 74)
        /// An output file or directory cannot be created (it exists and is not empty): `EX_CANTCREAT`.
        public static let cannotCreate = Code(name: "cannotCreate", exitCode: 73)
        public static let requestFailed = Code(name: "requestFailed", exitCode: 75)
        public static let protocolViolation = Code(name: "protocolViolation", exitCode: 76)

        public var description: String { name }
    }

    public var code: Code
    public var message: String
    /// The last lines the extension wrote to stderr, when an extension was involved.
    public var stderrTail: [String]
    /// The underlying errno, when a system call failed.
    public var errno: Int32?

    public init(_ code: Code, _ message: String, stderrTail: [String] = [], errno: Int32? = nil) {
        self.code = code
        self.message = message
        self.stderrTail = stderrTail
        self.errno = errno
    }

    public var description: String { message }
}
