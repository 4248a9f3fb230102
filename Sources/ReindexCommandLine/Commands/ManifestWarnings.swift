import ReindexStore
import ReindexSystem
import ReindexHost
import ReindexProtocol

extension Reindex {
    /// `reindex validate`, preceded by the manifest's warnings (misspelt keys) on stderr, one
    /// `warning:` line each. Kept apart from Validate.swift, which the conformance work owns.
    static func validateWithWarnings(_ context: CommandContext) throws -> Int32 {
        if let directory = context.arguments.positional.first, case .success(let bundle) = Discovery.load(directory: directory) {
            for warning in bundle.warnings { Console.err("warning: \(warning)") }
        }
        return try validate(context)
    }
}
