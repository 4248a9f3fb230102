import ReindexStore
import ReindexProtocol
import ReindexSystem

/// Entries of a directory that no extension may reach: those named exactly `name` (or starting
/// with it, for a prefix), except the bundle's own.
struct Protected: Equatable {
    var directory: String
    var name: String
    var isPrefix: Bool
    var except: String?
    var what: String

    /// Where it is, for messages.
    var location: String { isPrefix ? FileSystem.join(directory, name) + "*" : (name.isEmpty ? directory : FileSystem.join(directory, name)) }

    func matches(_ entry: String) -> Bool {
        guard entry != except else { return false }
        return isPrefix ? entry.hasPrefix(name) : entry == name
    }

    /// Whether `path` is a protected entry or lies beneath one.
    func covers(_ path: String) -> Bool {
        guard path != directory, FileSystem.isWithin(path, directory) else { return false }
        let rest = path.utf8.dropFirst(directory == "/" ? 1 : directory.utf8.count + 1)
        let first = String(decoding: rest.prefix { $0 != UInt8(ascii: "/") }, as: UTF8.self)
        return matches(first)
    }

    /// Every protected place of these host locations. Directories are canonical (symlinks
    /// resolved) so they compare with the canonical grants; places that do not exist are left out.
    static func places(paths: [HostPaths], bundleDirectory: String, dataDirectory: String, temporaryDirectory: String,
                       hostTemporary: String) -> [Protected] {
        var result: [Protected] = []
        func add(_ directory: String, _ name: String, prefix: Bool = false, except: String? = nil, _ what: String) {
            guard let real = FileSystem.realPath(directory) else { return }
            let place = Protected(directory: real, name: name, isPrefix: prefix, except: except, what: what)
            if !result.contains(place) { result.append(place) }
        }
        /// The bundle's own entry of a directory that holds it.
        func own(in directory: String, _ path: String) -> String? {
            guard let real = FileSystem.realPath(directory), let mine = FileSystem.realPath(path) else { return nil }
            return FileSystem.directoryName(mine) == real ? FileSystem.baseName(mine) : nil
        }
        for host in paths {
            // An index kept by a database server has no file here to protect.
            if let index = Index.file(host.index) {
                let indexDirectory = FileSystem.directoryName(index)
                add(indexDirectory, FileSystem.baseName(index), prefix: true, "the index")
                add(indexDirectory, "locks", "the index's locks")
            }
            add(FileSystem.directoryName(host.logs), FileSystem.baseName(host.logs), "the logs")
            add(FileSystem.directoryName(host.recordings), FileSystem.baseName(host.recordings), "the recorded sessions")
            for entry in host.searchPath {
                add(entry.directory, "", prefix: true, except: own(in: entry.directory, bundleDirectory), "another bundle's directory")
            }
            add(host.data, "", prefix: true, except: own(in: host.data, dataDirectory), "another bundle's data directory")
        }
        add(hostTemporary, SandboxLaunch.temporaryPrefix, prefix: true, except: own(in: hostTemporary, temporaryDirectory),
            "another run's temporary directory")
        return result
    }

    /// `grant` as grants that reach none of `protected`: itself when it holds none, else, one
    /// level at a time down to each protected place, every entry beside it (symbolic links are
    /// left out: a link is no grant, and its target is reachable only when granted itself).
    /// Returns the pieces and the places that were kept out.
    static func split(_ grant: String, around protected: [Protected]) -> (pieces: [String], kept: [Protected]) {
        let inside = protected.filter { FileSystem.isWithin($0.directory, grant) && $0.hasEntries }
        guard !inside.isEmpty else { return ([grant], []) }
        guard FileSystem.isDirectory(grant), let names = FileSystem.list(grant) else { return ([], inside) }
        var pieces: [String] = []
        for name in names {
            let child = FileSystem.join(grant, name)
            if inside.contains(where: { $0.directory == grant && $0.matches(name) }) { continue }
            if FileSystem.isSymbolicLink(child) { continue }
            if inside.contains(where: { $0.directory != grant && FileSystem.isWithin($0.directory, child) }) {
                pieces += split(child, around: inside).pieces
            } else {
                pieces.append(child)
            }
        }
        return (pieces, inside)
    }

    /// Whether the directory holds anything this place protects.
    var hasEntries: Bool {
        (FileSystem.list(directory) ?? []).contains(where: matches)
    }
}
