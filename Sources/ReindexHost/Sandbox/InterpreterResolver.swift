import ReindexStore
import ReindexSystem

/// What an executable needs beyond itself to run: the interpreter of a script (through `env` and
/// the PATH the extension gets, and through an interpreter that is itself a script), the dynamic
/// loader and run-time library directories of a binary. The sandbox grants these read and execute.
///
/// An interpreter is granted its *installation*: for `…/versions/3.11.7/bin/python3` that is
/// `…/versions/3.11.7`, so the standard library and shared libraries beside it are readable;
/// both the path as found and the file it links to are followed. An installation that would be
/// the home directory, one of its ancestors, a shared temporary directory or `~/.local` itself
/// is narrowed to the directory holding the interpreter, or to the file alone.
struct InterpreterResolver {
    /// One thing to grant, with why (for `validate` and the log).
    struct Need: Equatable {
        var path: String
        var why: String
    }

    /// The directories an interpreter may not widen to (besides the home directory and its ancestors).
    var home: String
    var temporaryDirectory: String
    /// The PATH the extension gets (for `#!/usr/bin/env NAME`).
    var searchPath: String
    /// The extension's working directory (its bundle): a relative `#!` path is resolved against it.
    var workingDirectory: String

    private(set) var needs: [Need] = []
    private var visited = Set<String>()

    init(home: String, temporaryDirectory: String, searchPath: String?, workingDirectory: String) {
        self.home = home
        self.temporaryDirectory = temporaryDirectory
        self.searchPath = searchPath ?? "/usr/local/bin:/usr/bin:/bin"
        self.workingDirectory = workingDirectory
    }

    /// Everything `executable` needs. `grantItself` adds the executable's own installation (for an
    /// executable outside its bundle, such as `/usr/bin/python3` named in a manifest).
    static func needs(of executable: String, grantItself: Bool, home: String, temporaryDirectory: String,
                      searchPath: String?, workingDirectory: String) -> [Need] {
        var resolver = InterpreterResolver(home: home, temporaryDirectory: temporaryDirectory, searchPath: searchPath,
                                           workingDirectory: workingDirectory)
        resolver.visit(executable, as: grantItself ? "the executable" : nil, depth: 0)
        return resolver.needs
    }

    // MARK: Walking

    /// Grants `file`'s installation (unless `role` is nil) and follows what it runs in turn. The
    /// kernel follows at most four interpreters; so does this.
    private mutating func visit(_ file: String, as role: String?, depth: Int) {
        guard depth <= 4, visited.insert(file).inserted else { return }
        let real = FileSystem.realPath(file) ?? file
        if let role {
            grantInstallation(of: file, why: "\(role) \(file)")
            if real != file { grantInstallation(of: real, why: "\(role) \(file) (links to \(real))") }
        }
        guard let head = FileSystem.readPrefix(real, count: 256), head.count >= 4 else { return }
        if head[0] == UInt8(ascii: "#") && head[1] == UInt8(ascii: "!") {
            followShebang(head, of: file, depth: depth)
        } else if head[0] == 0x7F && head[1] == UInt8(ascii: "E") && head[2] == UInt8(ascii: "L") && head[3] == UInt8(ascii: "F") {
            followELF(real)
        }
    }

    /// `#!INTERPRETER [ARGUMENT]`, the way the kernel reads it (one optional argument, the rest of
    /// the line); `env` gets its program looked up on the extension's PATH.
    private mutating func followShebang(_ head: [UInt8], of file: String, depth: Int) {
        let line = head.dropFirst(2).prefix { $0 != UInt8(ascii: "\n") }
        let text = String(decoding: line, as: UTF8.self).trimming(" \t\r")
        let space = text.firstIndex(where: { $0 == " " || $0 == "\t" }) ?? text.endIndex
        var interpreter = String(text[..<space])
        let argument = String(text[space...]).trimming(" \t")
        guard !interpreter.isEmpty else { return }
        if !interpreter.hasPrefix("/") { interpreter = FileSystem.absolute(FileSystem.join(workingDirectory, interpreter)) }
        visit(interpreter, as: "the interpreter of \(file):", depth: depth + 1)
        guard FileSystem.baseName(interpreter) == "env", let program = Self.envProgram(argument) else { return }
        if program.contains("/") {
            let path = program.hasPrefix("/") ? program : FileSystem.absolute(FileSystem.join(workingDirectory, program))
            visit(path, as: "the interpreter of \(file):", depth: depth + 1)
        } else if let found = lookUp(program) {
            visit(found, as: "the interpreter of \(file) (env \(program) on PATH):", depth: depth + 1)
        }
    }

    /// The program `env` runs for a `#!…/env ARGUMENT` line: options (`-i`, `-u NAME`, `-C DIR`,
    /// `-S` and its split string) and `NAME=VALUE` assignments are skipped.
    static func envProgram(_ argument: String) -> String? {
        var words = argument.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        while !words.isEmpty {
            let word = words.removeFirst()
            if word == "-u" || word == "-C" || word == "--unset" || word == "--chdir" {
                if !words.isEmpty { words.removeFirst() }
                continue
            }
            if word.hasPrefix("-S") && word.count > 2 { words.insert(String(word.dropFirst(2)), at: 0); continue }
            if word.hasPrefix("-") || word.contains("=") { continue }
            return word
        }
        return nil
    }

    /// The first executable regular file named `program` on the extension's PATH.
    private func lookUp(_ program: String) -> String? {
        for directory in searchPath.split(separator: ":", omittingEmptySubsequences: true) where directory.hasPrefix("/") {
            let candidate = FileSystem.join(String(directory), program)
            if let st = FileSystem.status(candidate), st.isRegularFile, FileSystem.isExecutable(candidate) { return candidate }
        }
        return nil
    }

    // MARK: ELF binaries

    /// The dynamic loader (`PT_INTERP`) and the run-time library path (`DT_RUNPATH`/`DT_RPATH`)
    /// of a 64-bit little-endian ELF file. A library directory is granted only when it holds a
    /// shared library the file names (`DT_NEEDED`), and a Swift toolchain's (`…/usr/lib/swift/…`) as its whole `usr`, where the
    /// runtime's helpers (the crash backtracer) live.
    private mutating func followELF(_ path: String) {
        guard let elf = ELFFile(path) else { return }
        if let loader = elf.interpreter, loader.hasPrefix("/") {
            grantInstallation(of: loader, why: "the dynamic loader of \(path)")
            if let real = FileSystem.realPath(loader), real != loader { grantInstallation(of: real, why: "the dynamic loader of \(path)") }
        }
        let origin = FileSystem.directoryName(path)
        for entry in elf.runPath {
            let expanded = entry.replacing("${ORIGIN}", with: origin).replacing("$ORIGIN", with: origin)
            guard expanded.hasPrefix("/"), let directory = FileSystem.realPath(expanded), FileSystem.isDirectory(directory) else { continue }
            // Granted only when it holds a library the binary names (a look-up per name, not a
            // listing of what may be a crowded build directory).
            guard elf.needed.contains(where: { !$0.contains("/") && FileSystem.exists(FileSystem.join(directory, $0)) }) else { continue }
            let slashed = directory + "/"
            if let range = slashed.firstRange(of: "/usr/lib/swift/") {
                let usr = String(slashed[..<range.lowerBound]) + "/usr"
                if !isTooBroad(usr) { add(usr, why: "the Swift runtime of \(path) (run path \(entry))"); continue }
            }
            if !isTooBroad(directory) { add(directory, why: "a library directory of \(path) (run path \(entry))") }
        }
    }

    // MARK: Installations

    /// Grants the installation holding `file`: the parent of its `bin`, `sbin`, `libexec` or
    /// `shims` directory, else its directory — narrowed when that is too broad.
    private mutating func grantInstallation(of file: String, why: String) {
        let directory = FileSystem.directoryName(file)
        let container = FileSystem.baseName(directory)
        var candidates: [String] = []
        if ["bin", "sbin", "libexec", "shims"].contains(container) { candidates.append(FileSystem.directoryName(directory)) }
        candidates.append(directory)
        for candidate in candidates where !isTooBroad(candidate) {
            add(candidate, why: why)
            return
        }
        add(file, why: why)
    }

    /// A directory no interpreter widens a grant to: `/`, the home directory and its ancestors,
    /// anyone's home directory, the user's data trees, and shared temporary directories.
    func isTooBroad(_ directory: String) -> Bool {
        if directory == "/" || FileSystem.isWithin(home, directory) || FileSystem.isWithin(temporaryDirectory, directory) { return true }
        let broad: Set<String> = ["/home", "/root", "/tmp", "/var", "/var/tmp", "/run", "/mnt", "/media", "/srv", "/Users", "/private", "/private/tmp"]
        if broad.contains(directory) { return true }
        if FileSystem.directoryName(directory) == "/home" || FileSystem.directoryName(directory) == "/Users" { return true }
        for tree in [".local", ".config", ".cache", ".local/share", ".local/state"] where directory == FileSystem.join(home, tree) { return true }
        return false
    }

    private mutating func add(_ path: String, why: String) {
        guard !needs.contains(where: { $0.path == path }) else { return }
        needs.append(Need(path: path, why: why))
    }
}

/// The few facts of an ELF file the sandbox needs, read with bounded `pread`s.
struct ELFFile {
    var interpreter: String?
    var runPath: [String] = []
    /// The shared libraries it names (`DT_NEEDED`).
    var needed: [String] = []

    init?(_ path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        func bytes(_ offset: UInt64, _ count: Int) -> [UInt8]? {
            guard count > 0, count <= 1 << 20, offset < UInt64(Int64.max) else { return nil }
            var buffer = [UInt8](repeating: 0, count: count)
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
            return n == count ? buffer : nil
        }
        func u16(_ b: [UInt8], _ at: Int) -> UInt64 { UInt64(b[at]) | UInt64(b[at + 1]) << 8 }
        func u32(_ b: [UInt8], _ at: Int) -> UInt64 { u16(b, at) | u16(b, at + 2) << 16 }
        func u64(_ b: [UInt8], _ at: Int) -> UInt64 { u32(b, at) | u32(b, at + 4) << 32 }
        func string(_ offset: UInt64, limit: Int = 4096) -> String? {
            var result: [UInt8] = []
            var at = offset
            while result.count < limit, let chunk = bytes(at, 64) ?? bytes(at, 1) {
                if let end = chunk.firstIndex(of: 0) { result += chunk[..<end]; return String(decoding: result, as: UTF8.self) }
                result += chunk
                at += UInt64(chunk.count)
            }
            return nil
        }
        // 64-bit (class 2), little-endian (data 1): what the supported systems run.
        guard let header = bytes(0, 64), header[4] == 2, header[5] == 1 else { return nil }
        let programHeaders = u64(header, 0x20), entrySize = Int(u16(header, 0x36)), count = Int(u16(header, 0x38))
        guard entrySize >= 56, count > 0, count <= 512, let table = bytes(programHeaders, entrySize * count) else { return nil }
        var loads: [(vaddr: UInt64, offset: UInt64, size: UInt64)] = []
        var dynamic: (offset: UInt64, size: UInt64)?
        for n in 0..<count {
            let at = n * entrySize
            let type = u32(table, at)
            let offset = u64(table, at + 8), vaddr = u64(table, at + 16), fileSize = u64(table, at + 32)
            switch type {
            case 1: loads.append((vaddr, offset, fileSize))
            case 2: dynamic = (offset, fileSize)
            case 3: interpreter = string(offset, limit: Int(min(fileSize, 4096)))
            default: break
            }
        }
        guard let dynamic, dynamic.size >= 16, dynamic.size <= 1 << 16, let entries = bytes(dynamic.offset, Int(dynamic.size)) else { return }
        var stringTable: UInt64?
        var paths: [UInt64] = []
        var libraries: [UInt64] = []
        for n in 0..<(entries.count / 16) {
            let tag = u64(entries, n * 16), value = u64(entries, n * 16 + 8)
            if tag == 0 { break }
            if tag == 5 { stringTable = value }            // DT_STRTAB (an address)
            if tag == 15 || tag == 29 { paths.append(value) }  // DT_RPATH, DT_RUNPATH (offsets)
            if tag == 1 && libraries.count < 256 { libraries.append(value) }  // DT_NEEDED (offsets)
        }
        guard let address = stringTable,
              let load = loads.first(where: { address >= $0.vaddr && address - $0.vaddr < $0.size }) else { return }
        let tableOffset = address - load.vaddr + load.offset
        for offset in paths {
            guard let text = string(tableOffset + offset) else { continue }
            runPath += text.split(separator: ":").map(String.init).filter { !$0.isEmpty }
        }
        needed = libraries.compactMap { string(tableOffset + $0) }
    }
}

extension String {
    /// The string without `set`'s characters at either end.
    func trimming(_ set: String) -> String {
        var s = Substring(self)
        while let first = s.first, set.contains(first) { s.removeFirst() }
        while let last = s.last, set.contains(last) { s.removeLast() }
        return String(s)
    }
}
