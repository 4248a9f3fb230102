import ReindexHost
import ReindexStore
import ReindexSystem
import ReindexProtocol

/// The options `run` and `debug` share: what to ask for, why, and whether to resume. Declared
/// here once, typed for each command that conforms.
package protocol RequestCommand: ReindexCommand {}

extension RequestCommand {
    package static var all: Flag<Self> { Flag("all", help: "reindex everything (reindexAll; the default)", exclusiveGroup: "request") }
    package static var ids: Option<Self, [String]> {
        Option("ids", value: "ID[,ID…]", help: "reindex these items (reindexItems)", exclusiveGroup: "request", as: .commaList)
    }
    package static var idsFrom: Option<Self, String> {
        Option("ids-from", value: "FILE", help: "reindex the items listed in FILE, one per line ('-' for stdin)", exclusiveGroup: "request")
    }
    package static var resume: Flag<Self> {
        Flag("resume", help: "resume an unfinished reindexAll from its last committed batch (default: start fresh, discarding it)")
    }
    package static var reason: Option<Self, ReindexReason> {
        Option("reason", value: "R", help: "the reason sent to the extension (default forced)", completion: .values(ReindexReason.known.map(\.rawValue)),
               as: .last { _, text in ReindexReason(text) })
    }
    /// `--all | --ids | --ids-from` and `--resume`, in help's order.
    static var requestOptions: [any DeclaredOption<Self>] { [all, ids, idsFrom, resume] }

    /// What the command line asks for; `--ids-from` is read when the request is made.
    static func request(_ arguments: Arguments<Self>) throws(ReindexError) -> RequestSelection.Asked {
        let ids = try arguments.value(Self.ids)
        return RequestSelection.Asked(ids: ids, idsFrom: try arguments.value(Self.idsFrom),
                                      reason: try arguments.value(Self.reason, default: .forced), resume: arguments[Self.resume])
    }
}
