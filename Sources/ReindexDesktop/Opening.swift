// D-Bus desktop search (sd-bus) exists on Linux only.
#if os(Linux)
import Foundation
import ReindexProtocol
import ReindexStore
import ReindexSystem

/// What picking an item does: the argument vector of the program to start, worked out from the
/// bundle's `open` declaration and the item, or why there is nothing to open.
package enum Opening {
    /// The desktop's opener for URLs.
    package static let urlOpener = "xdg-open"

    /// The values of the placeholders for one item.
    package static func values(of item: SearchResult) -> [String: String] {
        let attributes = item.attributes
        return [
            "uniqueIdentifier": item.uniqueIdentifier,
            "domainIdentifier": item.domainIdentifier ?? "",
            "bundleIdentifier": item.bundleIdentifier,
            "contentURL": attributes["contentURL"]?.stringValue ?? "",
            "title": Opening.title(of: item),
        ]
    }

    /// What people see as the item's name: its title, display name, or identifier.
    package static func title(of item: SearchResult) -> String {
        item.attributes["title"]?.stringValue ?? item.attributes["displayName"]?.stringValue ?? item.uniqueIdentifier
    }

    /// The argument vector that opens `item`: the declared command with its placeholders
    /// replaced (each template stays one argument), the declared URL or the item's `contentURL`
    /// given to `xdg-open`. A URL must have a scheme (or be an absolute path) and no control
    /// characters, so what an item holds can never read as one of the opener's options.
    package static func arguments(for item: SearchResult, declaration: OpenDeclaration?) throws(BusError) -> [String] {
        let values = values(of: item)
        switch declaration {
        case .command(let templates):
            return templates.map { OpenDeclaration.substitute($0, values) }
        case .url(let template):
            let url = OpenDeclaration.substitute(template, values)
            guard isOpenableURL(url) else {
                throw BusError(nothingToOpen, "\(item.bundleIdentifier): the declared URL for '\(item.uniqueIdentifier)' is not a URL with a scheme or an absolute path")
            }
            return [urlOpener, url]
        case nil:
            guard let url = item.attributes["contentURL"]?.stringValue, isOpenableURL(url) else {
                throw BusError(nothingToOpen, "\(item.bundleIdentifier): '\(item.uniqueIdentifier)' has no contentURL and its bundle declares no \"open\"")
            }
            return [urlOpener, url]
        }
    }

    package static let nothingToOpen = "org.reindexhost.SearchProvider.Error.NothingToOpen"
    package static let openFailed = "org.reindexhost.SearchProvider.Error.OpenFailed"

    /// `scheme:rest` (RFC 3986 scheme) or an absolute path, without control characters.
    package static func isOpenableURL(_ url: String) -> Bool {
        guard !url.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return false }
        if url.hasPrefix("/") { return true }
        guard let colon = url.firstIndex(of: ":"), colon != url.startIndex else { return false }
        let scheme = url[..<colon].unicodeScalars
        guard let first = scheme.first, first.isASCIILetter else { return false }
        return scheme.allSatisfy { $0.isASCIILetter || ("0"..."9").contains($0) || $0 == "+" || $0 == "-" || $0 == "." }
    }

    /// Starts `arguments` (the program looked up on PATH unless it holds a slash) in a session
    /// of its own, stdin from /dev/null, with default signal dispositions and an empty signal
    /// mask; does not wait for it (the serve loop reaps it). No shell is involved.
    package static func spawn(_ arguments: [String]) throws(BusError) {
        do { _ = try start(arguments, newSession: true) } catch { throw BusError(openFailed, error.message) }
    }

    /// Starts `arguments` directly (posix_spawnp, never a shell) with stdin from /dev/null, default
    /// signal dispositions and an empty signal mask, in a new session when `newSession`; returns its pid.
    package static func start(_ arguments: [String], newSession: Bool) throws(ReindexError) -> pid_t {
        guard let program = arguments.first, !program.isEmpty else { throw ReindexError(.cannotStart, "no program to start") }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGXFSZ, SIGCHLD, SIGQUIT] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        let setsid: Int32 = 0x80  // POSIX_SPAWN_SETSID (glibc 2.26)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | (newSession ? setsid : 0)))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)

        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        argv.append(nil)
        var envp: [UnsafeMutablePointer<CChar>?] = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") }
        envp.append(nil)
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let r = posix_spawnp(&pid, program, &actions, &attributes, argv, envp)
        guard r == 0 else { throw ReindexError(.cannotStart, "cannot start \(program): \(String(cString: strerror(r)))") }
        return pid
    }

    /// The terminals tried, in order, when neither `--terminal` nor `$TERMINAL` names one: each
    /// program with the option after which it runs a command's argument vector.
    package static let terminals: [[String]] = [["x-terminal-emulator", "-e"], ["gnome-terminal", "--"], ["konsole", "-e"], ["xterm", "-e"]]

    /// What `LaunchSearch` starts: `terminal` (the configured one, else `$TERMINAL -e`, else the
    /// first of `terminals` on PATH) running `reindex search -- TERMS` through `searchCommand`
    /// (this executable and its global options), then waiting for Enter so the results stay on
    /// screen. The script is fixed text; the terms and paths are its positional arguments, never
    /// part of it, so nothing typed is read as shell syntax.
    package static func launchSearchArguments(terms: [String], searchCommand: [String], terminal: [String]?,
                                              environment: [String: String] = ProcessInfo.processInfo.environment) throws(BusError) -> [String] {
        let query = terms.joined(separator: " ")
        guard !query.trimmingCharacters(in: .whitespaces).isEmpty else { throw BusError(nothingToOpen, "no search terms to show") }
        let chosen: [String]
        if let terminal, !terminal.isEmpty {
            chosen = terminal
        } else if let program = environment["TERMINAL"], !program.isEmpty {
            chosen = [program, "-e"]
        } else if let found = terminals.first(where: { isOnPath($0[0], environment["PATH"]) }) {
            chosen = found
        } else {
            throw BusError(openFailed, "no terminal to show the search in: start 'reindex desktop serve --terminal \"PROGRAM -e\"' or set $TERMINAL")
        }
        let script = #""$0" "$@"; printf '\n%s' 'Press Enter to close. '; read -r _"#
        return chosen + ["sh", "-c", script] + searchCommand + ["search", "--", query]
    }

    static func isOnPath(_ program: String, _ path: String?) -> Bool {
        (path ?? "/usr/bin:/bin").split(separator: ":").contains { access("\($0)/\(program)", X_OK) == 0 }
    }

    /// Reaps every child that has ended, without waiting.
    package static func reapChildren() {
        var status: Int32 = 0
        while waitpid(-1, &status, WNOHANG) > 0 {}
    }
}

extension Unicode.Scalar {
    fileprivate var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
}
#endif
