import ReindexProtocol
import ReindexHost
import ReindexStore
import ReindexSystem
/// The ReindexHost checkout this `reindex` was built from, and the SDKs in it. `reindex new`
/// points generated projects at them, so a project works before any SDK is published.
package enum SourceTree {
    /// The checkout: `$REINDEX_SOURCE_ROOT` when set, else the directory this file was compiled
    /// from, when it still holds the package (a source build). `nil` for a copied binary.
    package static func root(environment: [String: String]) -> String? {
        if let configured = environment["REINDEX_SOURCE_ROOT"], !configured.isEmpty {
            let root = FileSystem.absolute(configured)
            return isPackage(root) ? root : nil
        }
        var root = #filePath
        for _ in 0..<4 { root = FileSystem.directoryName(root) }   // …/Sources/ReindexHost/Authoring/SourceTree.swift
        return isPackage(root) ? root : nil
    }

    /// The Python SDK (the directory holding `reindex_extension/`): `$REINDEX_PYTHON_SDK`, else
    /// `SDKs/python` of the checkout.
    package static func pythonSDK(environment: [String: String]) -> String? {
        sdk(environment["REINDEX_PYTHON_SDK"], inTree: "SDKs/python", marker: "reindex_extension/__init__.py", environment: environment)
    }

    /// The TypeScript SDK (the directory holding `dist/index.js`): `$REINDEX_TS_SDK`, else
    /// `SDKs/typescript` of the checkout.
    package static func typescriptSDK(environment: [String: String]) -> String? {
        sdk(environment["REINDEX_TS_SDK"], inTree: "SDKs/typescript", marker: "dist/index.js", environment: environment)
    }

    static func sdk(_ configured: String?, inTree relative: String, marker: String, environment: [String: String]) -> String? {
        if let configured, !configured.isEmpty {
            let path = FileSystem.absolute(configured)
            return FileSystem.exists(FileSystem.join(path, marker)) ? path : nil
        }
        guard let root = root(environment: environment) else { return nil }
        let path = FileSystem.join(root, relative)
        return FileSystem.exists(FileSystem.join(path, marker)) ? path : nil
    }

    static func isPackage(_ directory: String) -> Bool {
        FileSystem.exists(FileSystem.join(directory, "Package.swift"))
            && FileSystem.isDirectory(FileSystem.join(directory, "Sources/ReindexExtension"))
    }
}
