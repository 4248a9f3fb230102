import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real PostgreSQL server for the tests and the benchmark: `initdb` into a temporary directory as the
/// unprivileged `postgres` user (PostgreSQL refuses to run as root), started with `pg_ctl` on a
/// Unix socket in that directory (no TCP port to collide with), shared by every test of the
/// process and stopped at its exit. If it cannot be started the tests that need it fail with the
/// reason and the server's log; they are never skipped.
public final class PostgresServer: @unchecked Sendable {
    public let directory: String
    public let socketDirectory: String
    public let port: Int
    public let binaries: String
    private let lock = NSLock()
    private var schemaCounter = 0

    /// The one server of this test process, started on first use.
    public static func shared() throws -> PostgresServer {
        startLock.lock()
        defer { startLock.unlock() }
        if let server = sharedServer { return server }
        if let failure = sharedFailure { throw failure }
        do {
            let server = try PostgresServer()
            sharedServer = server
            registeredForExit = server.directory
            atexit { PostgresServer.stopAtExit() }
            return server
        } catch {
            sharedFailure = error
            throw error
        }
    }

    private static let startLock = NSLock()
    nonisolated(unsafe) private static var sharedServer: PostgresServer?
    nonisolated(unsafe) private static var sharedFailure: Error?
    nonisolated(unsafe) private static var registeredForExit: String?

    public struct StartFailure: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    /// Starts a private server (the shared one, or one a test stops and restarts itself).
    public init() throws {
        guard let bin = Self.findBinaries() else {
            throw StartFailure(description: "PostgreSQL tests: no initdb found under /usr/lib/postgresql/*/bin; run Scripts/ensure-system-packages.sh (postgresql, postgresql-contrib)")
        }
        binaries = bin
        var template = Array("/tmp/reindex-pg-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) != nil }) else {
            throw StartFailure(description: "PostgreSQL tests: cannot create a temporary directory: errno \(errno)")
        }
        directory = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        socketDirectory = directory
        port = 5432
        chmod(directory, 0o755)
        let user = Self.serverUser()
        if getuid() == 0 {
            _ = try Self.run("/bin/chown", [user, directory])
        }
        let initdb = try asServerUser(["\(bin)/initdb", "-D", "\(directory)/data", "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-locale", "--no-sync"])
        guard initdb.status == 0 else {
            throw StartFailure(description: "PostgreSQL tests: initdb failed (status \(initdb.status)): \(initdb.output)")
        }
        try start()
        try watchOwner()
    }

    /// A test run that is killed never reaches `atexit`: a detached watcher stops the server and
    /// removes its directory once this process is gone, so killed runs leave no server behind.
    private func watchOwner() throws {
        let runAs = getuid() == 0 ? "/sbin/runuser -u \(Self.serverUser()) -- " : ""
        let script = "while [ -d /proc/\(getpid()) ]; do sleep 2; done; "
            + "[ -f \(directory)/data/postmaster.pid ] && \(runAs)\(binaries)/pg_ctl stop -w -m immediate -D \(directory)/data; rm -rf \(directory)"
        // The outer shell ends at once; the watcher, in a session of its own, is nobody's child here.
        let started = try Self.run("/bin/sh", ["-c", "setsid /bin/sh -c '\(script)' </dev/null >/dev/null 2>&1 &"])
        guard started.status == 0 else { throw StartFailure(description: "PostgreSQL tests: cannot start the server's watcher: \(started.output)") }
    }

    /// `pg_ctl start` on the socket in `directory`, waiting until it accepts connections.
    public func start() throws {
        let options = "-k \(socketDirectory) -p \(port) -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        let started = try asServerUser(["\(binaries)/pg_ctl", "start", "-w", "-t", "60", "-D", "\(directory)/data", "-l", "\(directory)/server.log", "-o", options])
        guard started.status == 0 else {
            let log = (try? String(contentsOfFile: "\(directory)/server.log", encoding: .utf8)) ?? ""
            throw StartFailure(description: "PostgreSQL tests: pg_ctl start failed (status \(started.status)): \(started.output)\n\(log)")
        }
    }

    /// `pg_ctl stop` (fast: open sessions are ended).
    public func stop() throws {
        let stopped = try asServerUser(["\(binaries)/pg_ctl", "stop", "-w", "-m", "fast", "-D", "\(directory)/data"])
        guard stopped.status == 0 else { throw StartFailure(description: "pg_ctl stop failed: \(stopped.output)") }
    }

    /// Stops the server and removes its directory.
    public func destroy() {
        _ = try? asServerUser(["\(binaries)/pg_ctl", "stop", "-w", "-m", "immediate", "-D", "\(directory)/data"])
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static func stopAtExit() {
        sharedServer?.destroy()
    }

    /// A libpq keyword connection string to the server's `postgres` database.
    public var connectionString: String { "host=\(socketDirectory) port=\(port) user=postgres dbname=postgres" }

    /// The same as a URI (the socket directory percent-encoded as the host).
    public var connectionURI: String {
        let host = socketDirectory.replacingOccurrences(of: "/", with: "%2F")
        return "postgresql://postgres@\(host):\(port)/postgres"
    }

    /// A schema name no other test uses, so each test starts from an empty index.
    public func freshSchema(_ label: String = "t") -> String {
        lock.lock()
        defer { lock.unlock() }
        schemaCounter += 1
        return "\(label)_\(getpid())_\(schemaCounter)"
    }

    /// Runs SQL through psql as the superuser (test set-up and faults only).
    @discardableResult
    public func psql(_ sql: String) throws -> String {
        let result = try Self.run("\(binaries)/psql", ["-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-d", connectionString, "-c", sql])
        guard result.status == 0 else { throw StartFailure(description: "psql failed: \(result.output)") }
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    // MARK: Processes

    private func asServerUser(_ command: [String]) throws -> (status: Int32, output: String) {
        if getuid() == 0 {
            return try Self.run("/sbin/runuser", ["-u", Self.serverUser(), "--"] + command)
        }
        return try Self.run(command[0], Array(command.dropFirst()))
    }

    private static func serverUser() -> String {
        ProcessInfo.processInfo.environment["REINDEX_TEST_PG_USER"] ?? "postgres"
    }

    public static func findBinaries() -> String? {
        let base = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: base)) ?? [])
            .compactMap(Int.init).sorted(by: >)
        for version in versions where FileManager.default.isExecutableFile(atPath: "\(base)/\(version)/bin/initdb") {
            return "\(base)/\(version)/bin"
        }
        return nil
    }

    /// Runs a command to its end (posix_spawn and waitpid), its output collected in a file (not a
    /// pipe: the server that `pg_ctl start` leaves running would hold a pipe open).
    public static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let outputPath = NSTemporaryDirectory() + "reindex-pg-output-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        defer { unlink(outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard rc == 0 else { throw StartFailure(description: "cannot start \(executable): errno \(rc)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let exited = (status & 0x7f) == 0
        return (exited ? (status >> 8) & 0xff : 128 + (status & 0x7f), text)
    }
}
