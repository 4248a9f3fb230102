/// Thin, allocation-light wrappers over the POSIX calls discovery and the store need.
package enum FileSystem {
    package struct Status: Sendable {
        package var mode: UInt32
        package var owner: UInt32
        package var size: Int64
        package var modified: Double
        package var device: UInt64
        package var inode: UInt64

        package var isDirectory: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFDIR) }
        package var isRegularFile: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFREG) }
        package var isWorldWritable: Bool { mode & UInt32(S_IWOTH) != 0 }
        package var isGroupWritable: Bool { mode & UInt32(S_IWGRP) != 0 }
        package var permissions: String { "0" + String(mode & 0o7777, radix: 8) }
    }

    /// `stat` (following links), or nil with errno set.
    package static func status(_ path: String) -> Status? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        #if canImport(Darwin)
        let modified = Double(st.st_mtimespec.tv_sec) + Double(st.st_mtimespec.tv_nsec) / 1e9
        #else
        let modified = Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9
        #endif
        return Status(mode: UInt32(st.st_mode), owner: UInt32(st.st_uid), size: Int64(st.st_size),
                      modified: modified, device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
    }

    package static func isDirectory(_ path: String) -> Bool { status(path)?.isDirectory ?? false }
    package static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
    package static func isExecutable(_ path: String) -> Bool { access(path, X_OK) == 0 }
    /// Whether this process may write `path` (for a directory: make files in it).
    package static func isWritable(_ path: String) -> Bool { access(path, W_OK) == 0 }

    /// The names in a directory (without `.` and `..`), sorted, or nil when it cannot be read.
    package static func list(_ path: String) -> [String]? {
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = String(decoding: entryName(entry), as: UTF8.self)
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// An entry's name, read where `readdir` put it: a record is only as long as its name, so
    /// copying the whole `dirent` (`entry.pointee`) can read past the end of the directory's
    /// buffer — and fault, when that is the end of a page.
    private static func entryName(_ entry: UnsafeMutablePointer<dirent>) -> UnsafeRawBufferPointer {
        let name = UnsafeRawPointer(entry.pointer(to: \.d_name)!)
        return UnsafeRawBufferPointer(start: name, count: strlen(name.assumingMemoryBound(to: CChar.self)))
    }

    /// The names in a directory that start with `prefix`, in the directory's order, or nil when
    /// it cannot be read. Other names are compared as bytes and never made into strings, so a
    /// crowded directory (a shared `/tmp`) costs little more than the system's listing of it.
    package static func list(_ path: String, prefix: String) -> [String]? {
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        let wanted = Array(prefix.utf8)
        var names: [String] = []
        while let entry = readdir(dir) {
            let raw = entryName(entry)
            guard raw.count >= wanted.count, raw.prefix(wanted.count).elementsEqual(wanted) else { continue }
            names.append(String(decoding: raw, as: UTF8.self))
        }
        return names
    }

    /// The whole content of a regular file, at most `limit` bytes.
    package static func read(_ path: String, limit: Int = 16 << 20) throws(ReindexError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ReindexError(.ioError, "\(path): \(errnoText())", errno: errno) }
        defer { close(fd) }
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = buffer.withUnsafeMutableBytes { raw in retryingOnInterrupt { systemRead(fd, raw.baseAddress, raw.count) } }
            if n < 0 {
                throw ReindexError(.ioError, "\(path): \(errnoText())", errno: errno)
            }
            if n == 0 { break }
            result.append(contentsOf: buffer[0..<n])
            if result.count > limit { throw ReindexError(.invalidData, "\(path): larger than \(limit) bytes") }
        }
        return result
    }

    /// The first `count` bytes of a file (fewer if it is shorter), or nil when it cannot be read.
    package static func readPrefix(_ path: String, count: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: count)
        let n = buffer.withUnsafeMutableBytes { raw in retryingOnInterrupt { systemRead(fd, raw.baseAddress, count) } }
        guard n >= 0 else { return nil }
        return Array(buffer[0..<n])
    }

    /// Writes `bytes` to `path` atomically (temporary file, fsync, rename).
    package static func writeAtomically(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws(ReindexError) {
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw ReindexError(.ioError, "\(temporary): \(errnoText())", errno: errno) }
        guard writeAll(fd, bytes) else {
            let e = errno
            close(fd); unlink(temporary)
            throw ReindexError(.ioError, "\(temporary): \(errnoText(e))", errno: e)
        }
        fsync(fd)
        close(fd)
        guard rename(temporary, path) == 0 else {
            let e = errno
            unlink(temporary)
            throw ReindexError(.ioError, "\(path): \(errnoText(e))", errno: e)
        }
    }

    /// Creates `path` and its parents (mode 0700 for new directories).
    package static func makeDirectories(_ path: String, mode: mode_t = 0o700) throws(ReindexError) {
        if isDirectory(path) { return }
        let parent = directoryName(path)
        if parent != path && !parent.isEmpty { try makeDirectories(parent, mode: mode) }
        if mkdir(path, mode) != 0 && errno != EEXIST {
            throw ReindexError(.ioError, "cannot create directory \(path): \(errnoText())", errno: errno)
        }
    }

    package static func errnoText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }

    /// The canonical path (`realpath`: every symlink resolved), or nil when it does not exist.
    ///
    /// On Linux the kernel resolves it in one walk: the path opened `O_PATH`, its name read back
    /// from `/proc/self/fd` — three system calls, where `realpath` reads every component as a
    /// link (a sandbox profile resolves a few dozen paths before each start).
    package static func realPath(_ path: String) -> String? {
        #if os(Linux)
        let fd = open(path, 0o10000000 /* O_PATH, which Glibc's module leaves out */ | O_CLOEXEC)
        if fd < 0 && (errno == ENOENT || errno == ENOTDIR) { return nil }
        if fd >= 0 {
            defer { close(fd) }
            var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
            let n = buffer.withUnsafeMutableBytes { readlink("/proc/self/fd/\(fd)", $0.baseAddress!.assumingMemoryBound(to: CChar.self), Int(PATH_MAX)) }
            // A path of this namespace is absolute; anything else ("(deleted)", no /proc) goes the long way.
            if n > 0 && n < Int(PATH_MAX) && buffer[0] == UInt8(ascii: "/") {
                let name = String(decoding: buffer[0..<n], as: UTF8.self)
                if !name.hasSuffix(" (deleted)") { return name }
            }
        }
        #endif
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Whether `path` is a symbolic link itself (`lstat`).
    package static func isSymbolicLink(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && fileType(st) == UInt32(S_IFLNK)
    }

    /// The `S_IFMT` bits of a `stat` (their types differ between Glibc and Darwin).
    package static func fileType(_ st: stat) -> UInt32 {
        UInt32(st.st_mode) & UInt32(S_IFMT)
    }

    /// Whether `path` is `directory` or lies beneath it (both absolute, normalized).
    package static func isWithin(_ path: String, _ directory: String) -> Bool {
        if path == directory || directory == "/" { return true }
        return path.hasPrefix(directory) && path.utf8.dropFirst(directory.utf8.count).first == UInt8(ascii: "/")
    }

    /// The last component of a path (`"/a/b"` → `"b"`).
    package static func baseName(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// Removes a directory tree without ever following a symbolic link: a link inside it is
    /// removed, never what it points to (what an extension leaves in its temporary directory
    /// cannot steer the host into deleting anything else). Returns whether the tree is gone.
    @discardableResult
    package static func removeTree(_ path: String) -> Bool {
        var st = stat()
        guard lstat(path, &st) == 0 else { return errno == ENOENT }
        guard fileType(st) == UInt32(S_IFDIR) else { return unlink(path) == 0 }
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return false }
        removeContents(of: fd)
        close(fd)
        return rmdir(path) == 0
    }

    /// Empties the directory open at `fd`, descending only through real directories (`openat`
    /// with O_NOFOLLOW, so a directory swapped for a link meanwhile is not entered).
    private static func removeContents(of fd: Int32) {
        let copy = dup(fd)
        guard copy >= 0, let dir = fdopendir(copy) else { if copy >= 0 { close(copy) }; return }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = String(decoding: entryName(entry), as: UTF8.self)
            if name != "." && name != ".." { names.append(name) }
        }
        for name in names {
            var st = stat()
            guard fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            if fileType(st) == UInt32(S_IFDIR) {
                let child = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                if child >= 0 {
                    removeContents(of: child)
                    close(child)
                }
                unlinkat(fd, name, AT_REMOVEDIR)
            } else {
                unlinkat(fd, name, 0)
            }
        }
    }

    /// The directory part of a path (`"/a/b"` → `"/a"`, `"b"` → `"."`).
    package static func directoryName(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    /// Joins path components with `/`.
    package static func join(_ base: String, _ name: String) -> String {
        if name.hasPrefix("/") { return name }
        if base.hasSuffix("/") { return base + name }
        return base + "/" + name
    }

    /// An absolute path for `path`, against the current directory, with `.` and `..` resolved lexically.
    package static func absolute(_ path: String) -> String {
        var full = path
        if !path.hasPrefix("/") {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let cwd = getcwd(&buffer, buffer.count) != nil
                ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "/"
            full = join(cwd, path)
        }
        var parts: [Substring] = []
        for part in full.split(separator: "/") {
            if part == "." || part.isEmpty { continue }
            if part == ".." { if !parts.isEmpty { parts.removeLast() }; continue }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }
}

@inline(__always)
func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}
