// D-Bus desktop search (sd-bus) exists on Linux only.
#if os(Linux)
import ReindexStore

/// `org.kde.krunner1`: KRunner sends what is typed to `Match` and runs the picked match with
/// `Run`. Match identifiers are `ItemKey.resultIdentifier`s; each match carries its relevance (the
/// score relative to the best one), its bundle's name as category, and its contentURL.
package final class KRunnerProvider: BusObject {
    package static let interface = "org.kde.krunner1"
    package static let path = "/org/reindexhost/KRunner"

    /// KRunner's match types.
    static let exactMatch: Int32 = 100
    static let possibleMatch: Int32 = 30

    private let catalog: DesktopCatalog

    package init(catalog: DesktopCatalog) {
        self.catalog = catalog
    }

    package func handle(_ call: BusCall) throws(BusError) -> [BusValue] {
        switch call.member {
        case "Actions":
            try call.requireSignature("")
            // Opening is the match's own action (an empty action identifier); there are no others.
            return [.array(element: "(sss)", [])]
        case "Config":
            try call.requireSignature("")
            return [.dictionary([])]
        case "Teardown":
            try call.requireSignature("")
            return []
        case "Match":
            try call.requireSignature("s")
            let query = try call.readString()
            guard query.utf8.count <= DesktopCatalog.maximumTermBytes * 4 else {
                throw .invalidArgs("the query is too long: at most \(DesktopCatalog.maximumTermBytes * 4) bytes")
            }
            return [.array(element: "(sssida{sv})", matches(query))]
        case "Run":
            try call.requireSignature("ss")
            let id = try call.readString()
            let action = try call.readString()
            guard action.isEmpty else { throw .invalidArgs("unknown action '\(String(action.prefix(100)))' (Actions lists none)") }
            try catalog.open(id)
            return []
        default:
            throw .unknownMethod("\(Self.interface) has no method \(call.member ?? "")")
        }
    }

    /// KRunner sends `Match` on every keystroke; one overtaken by the next is answered with no
    /// matches, unsearched.
    package func supersededReply(_ call: BusCall) -> [BusValue]? {
        guard call.interface == nil || call.interface == Self.interface, call.member == "Match" else { return nil }
        return [.array(element: "(sssida{sv})", [])]
    }

    private func matches(_ query: String) -> [BusValue] {
        let results = catalog.search(query)
        let best = results.compactMap(\.score).max() ?? 0
        let typed = query.lowercased()
        return results.map { item in
            let title = Opening.title(of: item)
            let relevance = best > 0 ? max(0, min(1, (item.score ?? 0) / best)) : 0.5
            var properties: [(String, BusValue)] = [("category", .string(catalog.displayName(of: item.bundleIdentifier)))]
            if let subtext = item.attributes["contentDescription"]?.stringValue { properties.append(("subtext", .string(subtext))) }
            if let url = item.attributes["contentURL"]?.stringValue { properties.append(("urls", .strings([url]))) }
            return .structure([
                .string(ItemKey(bundle: item.bundleIdentifier, uniqueIdentifier: item.uniqueIdentifier).resultIdentifier),
                .string(title),
                .string(Introspection.iconName(for: item)),
                .int32(title.lowercased() == typed ? Self.exactMatch : Self.possibleMatch),
                .double(relevance),
                .dictionary(properties),
            ])
        }
    }

    package static let interfaceXML = """
          <interface name="org.kde.krunner1">
            <method name="Actions">
              <arg type="a(sss)" name="matches" direction="out"/>
            </method>
            <method name="Config">
              <arg type="a{sv}" name="config" direction="out"/>
            </method>
            <method name="Teardown"/>
            <method name="Match">
              <arg type="s" name="query" direction="in"/>
              <arg type="a(sssida{sv})" name="matches" direction="out"/>
            </method>
            <method name="Run">
              <arg type="s" name="matchId" direction="in"/>
              <arg type="s" name="actionId" direction="in"/>
            </method>
          </interface>
        """
}
#endif
