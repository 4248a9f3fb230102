import ReindexProtocol
import ReindexSystem

/// Attribute names that look like a misspelling of a built-in or declared one (`keyword` for
/// `keywords`, `titel` for `title`), and members of an item that are not members of an item (an
/// attribute beside `uniqueIdentifier` instead of inside `attributes`, `attributeSet`). Such an attribute is not an error — the protocol keeps an
/// attribute it does not know as a custom one, returned but not searched — so the item is
/// accepted, but what the author meant is lost without a word: the session warns, once per name.
///
/// One per session, used by the stdout decoder's thread only.
public struct MisspeltAttributes {
    package init() {}

    /// Every undeclared name seen so far, misspelt or not (each is judged once).
    private var seen = Set<String>()
    private var pending: [String] = []

    /// The words every warning starts with, so a reader of warnings (the conformance suite)
    /// can tell these from the others.
    static let prefix = "attribute '"

    /// Judges an attribute that is neither built in nor declared, the first time its name is seen.
    package mutating func note(_ name: String, item: String?, declarations: [String: AttributeDeclaration]) {
        guard seen.insert(name).inserted else { return }
        let candidates = AttributeSchema.kinds.keys.sorted() + declarations.keys.sorted()
        guard let meant = Suggestion.nearest(to: name, among: candidates) else { return }
        let built = AttributeSchema.kinds[meant] != nil ? "a built-in attribute" : "an attribute the manifest declares"
        pending.append("\(Self.prefix)\(name)'\(item.map { " (first in item '\($0.prefix(80))')" } ?? "") is neither built in nor declared, so it is kept as a custom attribute and not searched; did you mean '\(meant)' (\(built))?")
    }

    /// Judges a member of an item that is not one (`ItemValidator.members`), the first time its
    /// name is seen: it is ignored, and what it held is lost. An attribute written beside
    /// `uniqueIdentifier` instead of inside `attributes`, and Core Spotlight's `attributeSet`, are
    /// the usual ones.
    package mutating func noteMember(_ name: String, item: String?, declarations: [String: AttributeDeclaration]) {
        guard seen.insert("\u{0}" + name).inserted else { return }
        let first = item.map { " (first in item '\($0.prefix(80))')" } ?? ""
        let advice: String
        if AttributeSchema.kinds[name] != nil || declarations[name] != nil {
            advice = "attributes go inside \"attributes\": {\"uniqueIdentifier\": …, \"attributes\": {\"\(name)\": …}}"
        } else if name == "attributeSet" {
            advice = "Core Spotlight's attributeSet is \"attributes\" here"
        } else if let meant = Suggestion.nearest(to: name, among: ItemValidator.members) {
            advice = "did you mean '\(meant)'?"
        } else {
            advice = "an item has " + ItemValidator.members.map { "'\($0)'" }.joined(separator: ", ")
        }
        pending.append("\(Self.memberPrefix)\(name)'\(first) is not part of an item and is ignored; \(advice)")
    }

    /// The words a warning about an item's member starts with.
    static let memberPrefix = "item member '"

    /// The warnings found since the last call.
    package mutating func take() -> [String] {
        defer { pending.removeAll() }
        return pending
    }

    /// Whether a session warning is one of these.
    public static func isWarning(_ text: String) -> Bool { text.hasPrefix(prefix) || text.hasPrefix(memberPrefix) }
}
