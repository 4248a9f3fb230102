import ReindexHost
import ReindexStore
import ReindexProtocol
import ReindexSystem

/// `reindex new swift|python|typescript NAME`: writes a working extension project from the
/// templates in `ExtensionTemplates`.
package enum NewExtension {
    package enum Language: String, Sendable, CaseIterable {
        case swift, python, typescript
    }

    /// What to write.
    package struct Options: Sendable {
        package var language: Language
        package var name: String
        package var bundleIdentifier: String
        package var output: String
        package var environment: [String: String]

        /// Checks the name and the identifier; the defaults are `com.example.<name>.indexer` and `./NAME`.
        package init(language: String, name: String, bundleIdentifier: String?, output: String?, environment: [String: String]) throws(ReindexError) {
            guard let language = Language(rawValue: language) else {
                throw ReindexError(.usage, "unknown language '\(language)'; 'reindex new' writes \(Language.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            try NewExtension.checkName(name)
            let identifier = bundleIdentifier ?? "com.example.\(name.lowercased().replacingOccurrences(of: "_", with: "-")).indexer"
            guard Manifest.isValidBundleIdentifier(identifier) else {
                throw ReindexError(.usage, "--id '\(identifier)' is not a bundle identifier: two or more dot-separated labels of A-Z a-z 0-9 - (such as com.example.notes.indexer)")
            }
            self.language = language
            self.name = name
            self.bundleIdentifier = identifier
            self.output = FileSystem.absolute(output ?? name)
            self.environment = environment
        }
    }

    /// What was written, and what the author should know about it.
    package struct Result: Sendable {
        package var directory: String
        package var files: [String]
        /// Where the project finds the SDK, or why it does not yet.
        package var notes: [String]
        /// The commands from here to an indexed, conformant extension.
        package var nextSteps: [String]
    }

    /// A name that is a type name in all three languages: a letter, then letters, digits and `_`.
    package static func checkName(_ name: String) throws(ReindexError) {
        let scalars = Array(name.unicodeScalars)
        func isLetter(_ c: Unicode.Scalar) -> Bool { ("a"..."z").contains(c) || ("A"..."Z").contains(c) }
        guard let first = scalars.first, isLetter(first),
              scalars.allSatisfy({ isLetter($0) || ("0"..."9").contains($0) || $0 == "_" }), scalars.count <= 64 else {
            throw ReindexError(.usage, "NAME '\(name)' must start with a letter and hold only letters, digits and '_' (at most 64; it becomes the type, executable and directory name), such as NotesIndexer")
        }
    }

    /// Writes the project. Refuses (exit 73) when the output exists and is not an empty directory.
    package static func write(_ options: Options) throws(ReindexError) -> Result {
        let directory = options.output
        if let st = FileSystem.status(directory) {
            guard st.isDirectory else {
                throw ReindexError(.cannotCreate, "\(directory) exists and is not a directory; choose another --output")
            }
            if let names = FileSystem.list(directory), !names.isEmpty {
                throw ReindexError(.cannotCreate, "\(directory) is not empty (\(names.sorted().prefix(3).joined(separator: ", "))\(names.count > 3 ? ", …" : "")); 'reindex new' writes only into a new or empty directory; choose another --output or NAME")
            }
        }
        let (files, notes, steps) = render(options)
        for (relative, text, mode) in files {
            let path = FileSystem.join(directory, relative)
            try FileSystem.makeDirectories(FileSystem.directoryName(path), mode: 0o755)
            try FileSystem.writeAtomically(Array(text.utf8), to: path, mode: mode)
        }
        return Result(directory: directory, files: files.map(\.0), notes: notes, nextSteps: steps)
    }

    typealias File = (path: String, text: String, mode: mode_t)

    static func render(_ options: Options) -> (files: [File], notes: [String], steps: [String]) {
        let name = options.name
        var values = ["NAME": name, "ID": options.bundleIdentifier, "LOWER": name.lowercased()]
        func fill(_ template: String) -> String {
            var text = template
            // Sections first: they hold placeholders of their own.
            for key in values.keys.sorted(by: { ($0.hasSuffix("_SECTION") ? 0 : 1, $0) < ($1.hasSuffix("_SECTION") ? 0 : 1, $1) }) {
                text = text.replacingOccurrences(of: "{{\(key)}}", with: values[key] ?? "")
            }
            return text
        }
        let env = options.environment
        var notes: [String] = []
        let dir = options.output
        switch options.language {
        case .swift:
            let dependency: String
            if let root = SourceTree.root(environment: env) {
                dependency = """
                        // The ReindexHost checkout that \'reindex new\' was run from. The name makes the
                        // package: "ReindexHost" below independent of the checkout's directory name.
                        // Once ReindexHost is published, use its URL instead:
                        //   .package(url: "https://github.com/OWNER/ReindexHost.git", from: "\(ReindexVersion.string)"),
                        .package(name: "ReindexHost", path: \(JSONWriter.string(.string(root)))),
                """
                values["SDK_NOTE"] = "`Package.swift` depends on the ReindexHost checkout at `\(root)` by path (`.package(name: \"ReindexHost\", path: …)`). When ReindexHost is published, replace it with `.package(url: \"https://github.com/OWNER/ReindexHost.git\", from: \"\(ReindexVersion.string)\")`; the product line stays `.product(name: \"ReindexExtension\", package: \"ReindexHost\")`."
                notes.append("Package.swift depends on the ReindexHost checkout at \(root) by path")
            } else {
                dependency = """
                        // ReindexHost has no public URL yet: replace OWNER with where your copy lives,
                        // or use .package(name: "ReindexHost", path: "/path/to/ReindexHost").
                        .package(url: "https://github.com/OWNER/ReindexHost.git", from: "\(ReindexVersion.string)"),
                """
                values["SDK_NOTE"] = "`Package.swift` names ReindexHost by URL with an `OWNER` placeholder, because this `reindex` was not run from a source build: replace it with where ReindexHost lives, or with `.package(name: \"ReindexHost\", path: \"/path/to/ReindexHost\")`."
                notes.append("this reindex is not a source build: edit the ReindexHost dependency in Package.swift (it names OWNER) or set REINDEX_SOURCE_ROOT and run 'reindex new' again")
            }
            values["SDK_DEPENDENCY"] = dependency
            return ([
                ("Package.swift", fill(ExtensionTemplates.swiftPackage), 0o644),
                ("Sources/\(name)/\(name).swift", fill(ExtensionTemplates.swiftSource), 0o644),
                ("Tests/\(name)Tests/\(name)Tests.swift", fill(ExtensionTemplates.swiftTests), 0o644),
                ("manifest.json", fill(ExtensionTemplates.swiftManifest), 0o644),
                (".gitignore", ExtensionTemplates.swiftGitignore, 0o644),
                ("README.md", fill(ExtensionTemplates.swiftReadme), 0o644),
            ], notes, [
                "cd \(dir)", "swift build", "swift test", "reindex validate . --run", "reindex --extensions-path .. run \(options.bundleIdentifier)",
            ])
        case .python, .typescript:
            let python = options.language == .python
            let executable = python ? "\(name.lowercased()).py" : "\(name.lowercased()).mjs"
            let variable = python ? "REINDEX_PYTHON_SDK" : "REINDEX_TS_SDK"
            let sdk = python ? SourceTree.pythonSDK(environment: env) : SourceTree.typescriptSDK(environment: env)
            let tree = python ? "SDKs/python" : "SDKs/typescript"
            values["EXECUTABLE"] = executable
            values["LANGUAGE"] = python ? "Python (3.9 or later, standard library only)" : "TypeScript for Node 18 or later"
            values["COMMAND"] = options.language.rawValue
            values["LOADER"] = python ? "load_records()" : "loadRecords()"
            values["DEBUGGER"] = python ? "waits for debugpy" : "waits for Node's inspector"
            values["DEBUG_SECTION"] = python ? ExtensionTemplates.pythonDebugSection : ExtensionTemplates.nodeDebugSection
            if let sdk {
                values["ENVIRONMENT"] = JSONWriter.string(.object([(variable, .string(sdk))]))
                // The extension runs sandboxed: it may read the SDK where it lies, and no more.
                values["SANDBOX"] = "\n  \"sandbox\": { \"read\": [" + JSONWriter.string(.string(sdk)) + "] },"
                values["SDK_NOTE"] = "`manifest.json` sets `\(variable)` to `\(sdk)`, the SDK found when the project was made (`$\(variable)` then, else `\(tree)` of the ReindexHost checkout `reindex` was built from). The host passes extensions no other variables of yours. To ship the bundle on its own, vendor the SDK instead: " + (python
                    ? "copy `\(sdk)/reindex_extension` beside `\(executable)`, or `pip install \(sdk)`, and remove the variable and the `sandbox.read` entry (the extension runs sandboxed: it may read its own bundle and, by that entry, the SDK)."
                    : "`mkdir -p node_modules && cp -R \(sdk) node_modules/reindex-extension`, and remove the variable and the `sandbox.read` entry (the extension runs sandboxed: it may read its own bundle and, by that entry, the SDK).")
                notes.append("manifest.json points \(variable) at the SDK in \(sdk)")
            } else {
                values["ENVIRONMENT"] = "{}"
                values["SANDBOX"] = ""
                values["SDK_NOTE"] = "No SDK was found when the project was made. Set `\(variable)` in `manifest.json`'s `environment` to the ReindexHost checkout's `\(tree)`, or " + (python
                    ? "copy `\(tree)/reindex_extension` beside `\(executable)`."
                    : "copy `\(tree)` to `node_modules/reindex-extension` beside `\(executable)`.")
                notes.append("the \(python ? "Python" : "TypeScript") SDK was not found (set \(variable) to \(tree) of a ReindexHost checkout and run 'reindex new' again, or vendor it; see README.md)")
            }
            if !python {
                return (typescriptFiles(name: name, executable: executable, fill: fill), notes, [
                    "cd \(dir)", "npm run build", "npm test", "reindex validate . --run", "reindex --extensions-path .. run \(options.bundleIdentifier)",
                ])
            }
            return ([
                ("manifest.json", fill(ExtensionTemplates.scriptManifest), 0o644),
                (executable, fill(ExtensionTemplates.pythonSource), 0o755),
                ("README.md", fill(ExtensionTemplates.scriptReadme), 0o644),
                // The handlers' unit test, without the host.
                ("test_\(name.lowercased()).py", fill(ExtensionTemplates.pythonTests), 0o644),
            ], notes, ["cd \(dir)", "python3 -m unittest", "reindex validate . --run", "reindex --extensions-path .. run \(options.bundleIdentifier)"])
        }
    }

    /// The TypeScript project: sources compiled by `tsc` into `build/`, and a launcher the
    /// manifest names, written once with its executable mode (see `ExtensionTemplates`).
    static func typescriptFiles(name: String, executable: String, fill: (String) -> String) -> [File] {
        [
            ("manifest.json", fill(ExtensionTemplates.scriptManifest), 0o644),
            (executable, fill(ExtensionTemplates.typescriptLauncher), 0o755),
            ("src/\(name).ts", fill(ExtensionTemplates.typescriptSource), 0o644),
            ("src/main.ts", fill(ExtensionTemplates.typescriptMain), 0o644),
            ("test/\(name).test.mjs", fill(ExtensionTemplates.typescriptTest), 0o644),
            ("package.json", fill(ExtensionTemplates.typescriptPackage), 0o644),
            ("tsconfig.json", ExtensionTemplates.typescriptConfig, 0o644),
            ("scripts/link-sdk.mjs", ExtensionTemplates.typescriptLinkSDK, 0o644),
            (".gitignore", ExtensionTemplates.typescriptGitignore, 0o644),
            ("README.md", fill(ExtensionTemplates.typescriptReadme), 0o644),
        ]
    }
}
