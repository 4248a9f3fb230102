// D-Bus desktop search (sd-bus) exists on Linux only.
#if os(Linux)
import Foundation
import ReindexSystem

/// The four files that make the desktops find the search provider, under `$XDG_DATA_HOME`:
/// GNOME Shell's search-provider keyfile, KRunner's D-Bus plugin, the D-Bus service that starts
/// `reindex desktop serve` on the first call, and the application entry GNOME names the
/// provider by (hidden from menus).
package struct DesktopInstallation: Sendable {
    package struct File: Sendable {
        package var path: String
        package var contents: String
    }

    /// The data home (`$XDG_DATA_HOME`, else `~/.local/share`).
    package var dataHome: String
    /// The argument vector that starts the service (the reindex executable, its global options, `desktop serve`).
    package var serveCommand: [String]

    package init(dataHome: String, serveCommand: [String]) {
        self.dataHome = dataHome
        self.serveCommand = serveCommand
    }

    static let name = DesktopService.busName

    package var files: [File] {
        let desktopId = "\(Self.name).desktop"
        return [
            File(path: dataHome + "/gnome-shell/search-providers/\(Self.name).ini", contents: """
                [Shell Search Provider]
                DesktopId=\(desktopId)
                BusName=\(Self.name)
                ObjectPath=\(GNOMESearchProvider.path)
                Version=2

                """),
            File(path: dataHome + "/krunner/dbusplugins/\(desktopId)", contents: """
                [Desktop Entry]
                Name=Reindex
                Comment=Items indexed by reindexing extensions
                Icon=system-search
                Type=Service
                X-KDE-ServiceTypes=Plasma/Runner
                X-KDE-PluginInfo-Name=\(Self.name)
                X-KDE-PluginInfo-EnabledByDefault=true
                X-Plasma-API=DBus
                X-Plasma-API-Minimum-Version=2.0
                X-Plasma-DBusRunner-Service=\(Self.name)
                X-Plasma-DBusRunner-Path=\(KRunnerProvider.path)

                """),
            File(path: dataHome + "/dbus-1/services/\(Self.name).service", contents: """
                [D-BUS Service]
                Name=\(Self.name)
                Exec=\(serveCommand.map(Self.dbusQuoted).joined(separator: " "))

                """),
            File(path: dataHome + "/applications/\(desktopId)", contents: """
                [Desktop Entry]
                Type=Application
                Name=Reindex
                Comment=Search the items reindexing extensions keep in the index
                Icon=system-search
                Exec=\(serveCommand.map(Self.desktopEntryQuoted).joined(separator: " "))
                NoDisplay=true
                Terminal=false
                Categories=Utility;

                """),
        ]
    }

    /// Writes the four files (each replaced whole, directories made as needed); returns their paths.
    package func install() throws(ReindexError) -> [String] {
        for file in files {
            do {
                try FileManager.default.createDirectory(atPath: (file.path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try Data(file.contents.utf8).write(to: URL(fileURLWithPath: file.path), options: .atomic)
            } catch {
                throw ReindexError(.ioError, "\(file.path): cannot write: \(error.localizedDescription)")
            }
        }
        return files.map(\.path)
    }

    /// Removes the four files, those that exist; returns the four paths.
    package func uninstall() throws(ReindexError) -> [String] {
        for file in files where unlink(file.path) != 0 && errno != ENOENT {
            throw ReindexError(.ioError, "\(file.path): cannot remove: \(String(cString: strerror(errno)))")
        }
        return files.map(\.path)
    }

    /// One argument of a D-Bus service's Exec line (shell-like quoting): as it is when plain,
    /// else in single quotes.
    package static func dbusQuoted(_ argument: String) -> String {
        if isPlain(argument) { return argument }
        return "'" + argument.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    /// One argument of a desktop entry's Exec key: as it is when plain, else in double quotes
    /// with `"` `` ` `` `$` `\` escaped, then the key file's own escape of `\`; `%` doubled.
    package static func desktopEntryQuoted(_ argument: String) -> String {
        let percent = argument.replacingOccurrences(of: "%", with: "%%")
        if isPlain(argument) { return percent }
        var quoted = "\""
        for character in percent {
            if "\"`$\\".contains(character) { quoted.append("\\") }
            quoted.append(character)
        }
        quoted.append("\"")
        return quoted.replacingOccurrences(of: "\\", with: "\\\\")
    }

    private static func isPlain(_ argument: String) -> Bool {
        !argument.isEmpty && argument.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "/._+-=:,@".unicodeScalars.contains($0)
        }
    }
}
#endif
