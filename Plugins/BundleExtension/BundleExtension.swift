import Foundation
import PackagePlugin

/// `swift package bundle-extension --product NAME [--output DIR] [--configuration debug|release]`
///
/// Builds the product and writes a reindex bundle: `manifest.json` (from the template
/// `Bundle/manifest.json` beside the product's sources, else `manifest.json` at the package root,
/// with `executable` set to the built binary), the executable in `bin/`, and every other file of
/// `Bundle/` copied alongside.
/// The default output is the user's extensions directory
/// (`$XDG_DATA_HOME/reindex/extensions`, else `~/.local/share/reindex/extensions`).
@main
struct BundleExtension: CommandPlugin {
    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    static let usage = "usage: swift package bundle-extension --product NAME [--output DIR] [--configuration debug|release]"

    func performCommand(context: PluginContext, arguments: [String]) async throws {
        var extractor = ArgumentExtractor(arguments)
        if extractor.extractFlag(named: "help") > 0 {
            print(Self.usage)
            return
        }
        let productNames = extractor.extractOption(named: "product")
        let outputs = extractor.extractOption(named: "output")
        let configurations = extractor.extractOption(named: "configuration")
        guard !extractor.remainingArguments.contains(where: { $0.hasPrefix("-") }) else {
            throw Failure("unknown arguments \(extractor.remainingArguments); \(Self.usage)")
        }
        guard productNames.count == 1, let productName = productNames.first else {
            throw Failure("name exactly one --product; \(Self.usage)")
        }
        let configuration: PackageManager.BuildConfiguration
        switch configurations.last ?? "debug" {
        case "debug": configuration = .debug
        case "release": configuration = .release
        case let other: throw Failure("--configuration must be debug or release, got '\(other)'")
        }
        guard let product = context.package.products.first(where: { $0.name == productName }) else {
            let names = context.package.products.compactMap { $0 as? ExecutableProduct }.map(\.name)
            throw Failure("no product named '\(productName)'; executable products: \(names.joined(separator: ", "))")
        }
        guard let executableProduct = product as? ExecutableProduct else {
            throw Failure("'\(productName)' is not an executable product")
        }
        let target = executableProduct.mainTarget
        // The template: Bundle/manifest.json beside the product's sources (with data files to copy),
        // else manifest.json at the package root (a project made by 'reindex new swift').
        let bundleFolder = target.directoryURL.appendingPathComponent("Bundle")
        let usesBundleFolder = FileManager.default.fileExists(atPath: bundleFolder.appendingPathComponent("manifest.json").path)
            || !FileManager.default.fileExists(atPath: context.package.directoryURL.appendingPathComponent("manifest.json").path)
        let templateDirectory = usesBundleFolder ? bundleFolder : context.package.directoryURL
        let templateURL = templateDirectory.appendingPathComponent("manifest.json")
        var manifest = try loadTemplate(templateURL)

        let result = try packageManager.build(.product(productName), parameters: .init(configuration: configuration, logging: .concise))
        guard result.succeeded else {
            print(result.logText)
            throw Failure("building '\(productName)' failed")
        }
        guard let built = result.builtArtifacts.first(where: { $0.kind == .executable }) else {
            throw Failure("building '\(productName)' produced no executable")
        }

        let identifier = manifest["bundleIdentifier"] as? String ?? ""
        let output = outputs.last.map { URL(fileURLWithPath: $0, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath)) }
            ?? Self.userExtensionsDirectory()
        let bundle = output.appendingPathComponent(identifier)
        let fileManager = FileManager.default
        try fileManager.createDirectory(at: bundle.appendingPathComponent("bin"), withIntermediateDirectories: true)
        // Other files of the template directory travel with the bundle.
        for name in usesBundleFolder ? try fileManager.contentsOfDirectory(atPath: templateDirectory.path) : [] where name != "manifest.json" {
            let destination = bundle.appendingPathComponent(name)
            try? fileManager.removeItem(at: destination)
            try fileManager.copyItem(at: templateDirectory.appendingPathComponent(name), to: destination)
        }
        let binaryName = built.url.lastPathComponent
        let destination = bundle.appendingPathComponent("bin").appendingPathComponent(binaryName)
        try? fileManager.removeItem(at: destination)
        try fileManager.copyItem(at: built.url, to: destination)
        try fileManager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: destination.path)
        manifest["executable"] = "bin/\(binaryName)"
        let data = try JSONSerialization.data(withJSONObject: manifest, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        let manifestURL = bundle.appendingPathComponent("manifest.json")
        try data.write(to: manifestURL, options: .atomic)
        try fileManager.setAttributes([.posixPermissions: 0o644], ofItemAtPath: manifestURL.path)
        print("bundle-extension: wrote \(bundle.path) (\(identifier), \(configuration == .release ? "release" : "debug") build)")
        print("bundle-extension: check it with: reindex validate \(bundle.path)")
    }

    /// Reads and checks the manifest template, with an error that says what to fix.
    func loadTemplate(_ url: URL) throws -> [String: Any] {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw Failure("\(url.path): the manifest template is missing; create it with at least {\"manifestVersion\": 1, \"bundleIdentifier\": \"com.example.app.indexer\"}")
        }
        let data = try Data(contentsOf: url)
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw Failure("\(url.path): the manifest template is not valid JSON: \(error.localizedDescription)")
        }
        guard let manifest = object as? [String: Any] else {
            throw Failure("\(url.path): the manifest template must be a JSON object")
        }
        guard let version = manifest["manifestVersion"] as? Int, version == 1 else {
            throw Failure("\(url.path): manifestVersion: expected 1")
        }
        guard let identifier = manifest["bundleIdentifier"] as? String, Self.isValidIdentifier(identifier) else {
            throw Failure("\(url.path): bundleIdentifier: expected a reverse-DNS identifier such as com.example.app.indexer")
        }
        return manifest
    }

    static func isValidIdentifier(_ identifier: String) -> Bool {
        let labels = identifier.split(separator: ".", omittingEmptySubsequences: false)
        guard identifier.count <= 255, labels.count >= 2 else { return false }
        return labels.allSatisfy { label in
            !label.isEmpty && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        }
    }

    static func userExtensionsDirectory() -> URL {
        let environment = ProcessInfo.processInfo.environment
        let dataHome = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share"
        return URL(fileURLWithPath: dataHome).appendingPathComponent("reindex/extensions")
    }
}
