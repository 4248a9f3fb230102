import ReindexStore
import ReindexSystem
import ReindexHost
import ReindexProtocol

extension Reindex {
    static func new(_ context: CommandContext) throws -> Int32 {
        let arguments = context.arguments
        guard arguments.positional.count == 2 else {
            throw ReindexError(.usage, "'new' needs LANGUAGE and NAME; usage: reindex \(ReindexCommands.parser.synopsis(ReindexCommands.new))")
        }
        let options = try NewExtension.Options(
            language: arguments.positional[0], name: arguments.positional[1],
            bundleIdentifier: arguments.value("id"), output: arguments.value("output"), environment: context.environment)
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
