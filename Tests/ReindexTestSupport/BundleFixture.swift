import Foundation

/// Builds bundles in a real temporary directory: manifests, and executables that are real shell
/// scripts with real permissions.
package struct BundleFixture {
    package let root: String

    package static func make(prefix: String) throws -> BundleFixture {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return BundleFixture(root: url.path)
    }

    package func remove() {
        try? FileManager.default.removeItem(atPath: root)
    }

    /// `root/relative`, created as a directory.
    @discardableResult
    package func directory(_ relative: String) throws -> String {
        let path = root + "/" + relative
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    package static func manifest(_ identifier: String, executable: String = "bin/indexer", extra: String = "") -> String {
        var text = #"{"manifestVersion":1,"bundleIdentifier":"\#(identifier)","executable":"\#(executable)""#
        if !extra.isEmpty { text += "," + extra }
        return text + "}"
    }

    package static func chmod(_ path: String, _ mode: Int) throws {
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    /// Writes a file with exactly `mode`.
    package static func write(_ bytes: [UInt8], to path: String, mode: Int = 0o644) throws {
        let directory = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        try chmod(path, mode)
    }

    /// Writes a runnable shell script.
    package static func writeScript(to path: String, mode: Int = 0o755) throws {
        try write(Array("#!/bin/sh\nexit 0\n".utf8), to: path, mode: mode)
    }

    /// A bundle `searchDirectory/name` with `manifest` and (unless nil) an executable script at
    /// `executable` relative to the bundle. Returns the bundle directory.
    @discardableResult
    package static func bundle(in searchDirectory: String, _ name: String, manifest: String,
                               executable: String? = "bin/indexer", manifestMode: Int = 0o644, executableMode: Int = 0o755) throws -> String {
        try bundle(in: searchDirectory, name, manifestBytes: Array(manifest.utf8), executable: executable,
                   manifestMode: manifestMode, executableMode: executableMode)
    }

    @discardableResult
    package static func bundle(in searchDirectory: String, _ name: String, manifestBytes: [UInt8],
                               executable: String? = "bin/indexer", manifestMode: Int = 0o644, executableMode: Int = 0o755) throws -> String {
        let directory = searchDirectory + "/" + name
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try write(manifestBytes, to: directory + "/manifest.json", mode: manifestMode)
        if let executable { try writeScript(to: directory + "/" + executable, mode: executableMode) }
        return directory
    }
}
