// D-Bus desktop search (sd-bus) exists on Linux only.
#if os(Linux)
import ReindexStore

/// `org.gnome.Shell.SearchProvider2`: GNOME Shell's overview asks it for the results of what is
/// typed, refines them as typing goes on, asks for their names and icons, and activates the one
/// picked. Result identifiers are `ItemKey.resultIdentifier`s.
package final class GNOMESearchProvider: BusObject {
    package static let interface = "org.gnome.Shell.SearchProvider2"
    package static let path = "/org/reindexhost/SearchProvider"

    private let catalog: DesktopCatalog

    package init(catalog: DesktopCatalog) {
        self.catalog = catalog
    }

    package func handle(_ call: BusCall) throws(BusError) -> [BusValue] {
        switch call.member {
        case "GetInitialResultSet":
            try call.requireSignature("as")
            let terms = try readTerms(call)
            return [.strings(catalog.search(terms.joined(separator: " ")).map(Self.identifier))]
        case "GetSubsearchResultSet":
            try call.requireSignature("asas")
            let previous = try call.readStrings(atMost: DesktopCatalog.maximumIdentifiers, bytes: DesktopCatalog.maximumIdentifierBytes, what: "previous results")
            let terms = try readTerms(call)
            // The previous results that hold the new terms, in their order: the set narrows as
            // typing goes on, and costs what the results shown cost (DesktopCatalog.refine).
            let refined = catalog.refine(previous, query: terms.joined(separator: " ")).map(Self.identifier)
            return [.strings(Array(refined.prefix(DesktopCatalog.resultLimit)))]
        case "GetResultMetas":
            try call.requireSignature("as")
            let ids = try call.readStrings(atMost: DesktopCatalog.maximumIdentifiers, bytes: DesktopCatalog.maximumIdentifierBytes, what: "result identifiers")
            var metas: [BusValue] = []
            for id in ids { metas.append(.dictionary(try meta(id))) }
            return [.array(element: "a{sv}", metas)]
        case "ActivateResult":
            try call.requireSignature("sasu")
            let id = try call.readString()
            _ = try readTerms(call)
            _ = try call.readUInt32()
            try catalog.open(id)
            return []
        case "LaunchSearch":
            // "Show all results": `reindex search` in a terminal (`DesktopCatalog.launchSearch`).
            try call.requireSignature("asu")
            let terms = try readTerms(call)
            _ = try call.readUInt32()
            try catalog.launchSearch(terms)
            return []
        default:
            throw .unknownMethod("\(Self.interface) has no method \(call.member ?? "")")
        }
    }

    /// A result set GNOME Shell asked for while typing is pointless once it asks for the next
    /// one: abandoned with no results (the shell ignores a cancelled call's reply).
    package func supersededReply(_ call: BusCall) -> [BusValue]? {
        guard call.interface == nil || call.interface == Self.interface,
              call.member == "GetInitialResultSet" || call.member == "GetSubsearchResultSet" else { return nil }
        return [.strings([])]
    }

    private func readTerms(_ call: BusCall) throws(BusError) -> [String] {
        try call.readStrings(atMost: DesktopCatalog.maximumTerms, bytes: DesktopCatalog.maximumTermBytes, what: "search terms")
    }

    private static func identifier(_ result: SearchResult) -> String {
        ItemKey(bundle: result.bundleIdentifier, uniqueIdentifier: result.uniqueIdentifier).resultIdentifier
    }

    /// id, name, description (the item's contentDescription, else its bundle's name), gicon (a
    /// themed icon name) and clipboardText (the contentURL, else the title).
    private func meta(_ id: String) throws(BusError) -> [(String, BusValue)] {
        let item = try catalog.item(id)
        let title = Opening.title(of: item)
        let description = item.attributes["contentDescription"]?.stringValue ?? catalog.displayName(of: item.bundleIdentifier)
        return [
            ("id", .string(id)),
            ("name", .string(title)),
            ("description", .string(description)),
            ("gicon", .string(Introspection.iconName(for: item))),
            ("clipboardText", .string(item.attributes["contentURL"]?.stringValue ?? title)),
        ]
    }

    package static let interfaceXML = """
          <interface name="org.gnome.Shell.SearchProvider2">
            <method name="GetInitialResultSet">
              <arg type="as" name="terms" direction="in"/>
              <arg type="as" name="results" direction="out"/>
            </method>
            <method name="GetSubsearchResultSet">
              <arg type="as" name="previous_results" direction="in"/>
              <arg type="as" name="terms" direction="in"/>
              <arg type="as" name="results" direction="out"/>
            </method>
            <method name="GetResultMetas">
              <arg type="as" name="identifiers" direction="in"/>
              <arg type="aa{sv}" name="metas" direction="out"/>
            </method>
            <method name="ActivateResult">
              <arg type="s" name="identifier" direction="in"/>
              <arg type="as" name="terms" direction="in"/>
              <arg type="u" name="timestamp" direction="in"/>
            </method>
            <method name="LaunchSearch">
              <arg type="as" name="terms" direction="in"/>
              <arg type="u" name="timestamp" direction="in"/>
            </method>
          </interface>
        """
}
#endif
