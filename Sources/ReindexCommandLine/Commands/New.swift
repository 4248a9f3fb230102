import ReindexStore
import ReindexSystem
import ReindexHost
import ReindexProtocol

/// `reindex new swift|python|typescript NAME`: writes a working extension project to start from.
package struct NewCommand: ReindexCommand {
    package static let name = "new"
    package static let summary = "write a working extension project (manifest, handlers with a batch loop, README) to start from"
    package static let discussion = """
            Python and TypeScript projects are bundles as written: 'reindex validate DIR --run' passes. A Swift
            project is a bundle once built ('swift build'; its manifest names .build/debug/NAME). The project finds
            the SDK of the ReindexHost checkout this reindex was built from (or $REINDEX_SOURCE_ROOT,
            $REINDEX_PYTHON_SDK, $REINDEX_TS_SDK when set); its README says how to vendor it instead.
            Exit status: 0 written, 64 bad NAME, language or --id, 73 the output exists and is not empty.
            """

    package static let language = Argument<Self, String>(
        "LANGUAGE", help: "swift, python or typescript", completion: .values(NewExtension.Language.allCases.map(\.rawValue)))
    package static let extensionName = Argument<Self, String>(
        "NAME", help: "the extension's name: a letter, then letters, digits and _ (its type, executable and directory)")
    package static let id = Option<Self, String>(
        "id", value: "BUNDLE_ID", help: "the bundle identifier (default com.example.<name in lower case>.indexer)", completion: CompletionKind.none)
    package static let output = Option<Self, String>("output", value: "DIR", help: "where to write the project (default ./NAME); must be new or empty")
    package static let arguments: [any DeclaredArgument<Self>] = [language, extensionName]
    package static let options: [any DeclaredOption<Self>] = [id, output]

    package let language: String
    package let extensionName: String
    package let bundleIdentifier: String?
    package let output: String?

    package init(_ arguments: Arguments<Self>) throws(ReindexError) {
        language = arguments[Self.language]
        extensionName = arguments[Self.extensionName]
        bundleIdentifier = try arguments.value(Self.id)
        output = try arguments.value(Self.output)
    }

    package func run(_ context: CommandContext) throws -> Int32 {
        let options = try NewExtension.Options(
            language: language, name: extensionName, bundleIdentifier: bundleIdentifier, output: output, environment: context.environment)
        let result = try NewExtension.write(options)
        if context.json {
            Console.json(.object([
                ("directory", .string(result.directory)), ("bundleIdentifier", .string(options.bundleIdentifier)),
                ("language", .string(options.language.rawValue)),
                ("files", .array(result.files.map(JSONValue.string))), ("notes", .array(result.notes.map(JSONValue.string))),
                ("nextSteps", .array(result.nextSteps.map(JSONValue.string))),
            ]))
            return 0
        }
        Console.out("Wrote a \(options.language.rawValue) extension \(options.name) (\(options.bundleIdentifier)) in \(result.directory):")
        for file in result.files { Console.out("  \(file)") }
        for note in result.notes { Console.out("Note: \(note)") }
        Console.out("Next:")
        for step in result.nextSteps { Console.out("  \(step)") }
        return 0
    }
}
