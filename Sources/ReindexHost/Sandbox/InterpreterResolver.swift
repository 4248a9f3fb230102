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
package struct InterpreterResolver {
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
        guard let (interpreter, argument) = Self.shebang(head, workingDirectory: workingDirectory) else { return }
        visit(interpreter, as: "the interpreter of \(file):", depth: depth + 1)
        guard FileSystem.baseName(interpreter) == "env", let program = Self.envProgram(argument) else { return }
        if program.contains("/") {
            let path = program.hasPrefix("/") ? program : FileSystem.absolute(FileSystem.join(workingDirectory, program))
            visit(path, as: "the interpreter of \(file):", depth: depth + 1)
        } else if let found = lookUp(program) {
            visit(found, as: "the interpreter of \(file) (env \(program) on PATH):", depth: depth + 1)
        }
    }

    /// The interpreter of a file that begins `#!` (absolute, a relative one taken from
    /// `workingDirectory` as the kernel does) and its one optional argument; nil for any other
    /// file.
    static func shebang(_ head: [UInt8], workingDirectory: String) -> (interpreter: String, argument: String)? {
        guard head.count > 2, head[0] == UInt8(ascii: "#"), head[1] == UInt8(ascii: "!") else { return nil }
        let line = head.dropFirst(2).prefix { $0 != UInt8(ascii: "\n") }
        let text = String(decoding: line, as: UTF8.self).trimming(" \t\r")
        let space = text.firstIndex(where: { $0 == " " || $0 == "\t" }) ?? text.endIndex
        var interpreter = String(text[..<space])
        guard !interpreter.isEmpty else { return nil }
        if !interpreter.hasPrefix("/") { interpreter = FileSystem.absolute(FileSystem.join(workingDirectory, interpreter)) }
        return (interpreter, String(text[space...]).trimming(" \t"))
    }

    /// The interpreter a `#!` script names when it does not exist (the kernel then fails its
    /// exec with "no such file", as if the script itself were missing); nil otherwise.
    package static func missingInterpreter(of executable: String, workingDirectory: String) -> String? {
        guard FileSystem.status(executable) != nil, let head = FileSystem.readPrefix(executable, count: 256),
              let (interpreter, _) = shebang(head, workingDirectory: workingDirectory),
              FileSystem.status(interpreter) == nil else { return nil }
        return interpreter
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
