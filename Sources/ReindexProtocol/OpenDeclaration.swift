/// How a bundle's items are opened when a person picks one in the desktop's search (the
/// manifest's `"open"`, an addition to the contract): a URL handed to the desktop's opener, or a
/// command run directly. Each template may hold the placeholders `{uniqueIdentifier}`,
/// `{domainIdentifier}`, `{bundleIdentifier}`, `{contentURL}` and `{title}`; they are replaced
/// inside each argument, in one pass (a value that itself reads `{title}` stays as it is), and
/// nothing is ever run through a shell, so a value cannot add or split arguments.
public enum OpenDeclaration: Sendable, Equatable, Codable {
    /// `{"url": TEMPLATE}`: the URL the desktop's opener (`xdg-open`) is given.
    case url(String)
    /// `{"command": [TEMPLATE, …]}`: the program (searched on PATH unless it has a slash; never a
    /// placeholder) and its arguments.
    case command([String])

    /// The placeholders a template may hold.
    public static let placeholders = ["uniqueIdentifier", "domainIdentifier", "bundleIdentifier", "contentURL", "title"]

    /// `open`: an object with exactly one of `url` (a non-empty string) and `command` (a
    /// non-empty array of strings whose first is non-empty). Errors name the key path.
    public static func parse(_ value: JSONValue) throws(FieldError) -> OpenDeclaration {
        let expected = #"an object {"url": TEMPLATE} or {"command": [TEMPLATE, …]}"#
        let r = try FieldReader.object(value, path: "open", what: expected)
        // Unlike the manifest's optional keys, null is not "absent" here: it is the wrong type.
        for key in ["url", "command"] where value[key]?.isNull == true {
            throw FieldError(path: "open.\(key)", expected: key == "url" ? "a string" : "an array of strings", got: "null")
        }
        let hasURL = value["url"] != nil
        let hasCommand = value["command"] != nil
        guard hasURL != hasCommand else {
            throw FieldError(path: "open", expected: "exactly one of \"url\" and \"command\"", got: hasURL ? "both" : "neither")
        }
        if let url = try r.string("url") {
            guard !url.isEmpty else { throw FieldError(path: "open.url", expected: "a non-empty URL template", got: "\"\"") }
            guard !url.utf8.contains(0) else { throw FieldError(path: "open.url", expected: "a template without NUL characters", got: nil) }
            return .url(url)
        }
        guard let command = try r.stringArray("command") else {
            throw FieldError(path: "open.command", expected: "an array of strings", got: nil)
        }
        guard let program = command.first else {
            throw FieldError(path: "open.command", expected: "a non-empty array (the program, then its arguments)", got: "[]")
        }
        guard !program.isEmpty else { throw FieldError(path: "open.command[0]", expected: "a non-empty program", got: "\"\"") }
        // The program is the bundle's choice, never an item's: no placeholder may pick it.
        guard !program.contains("{") else {
            throw FieldError(path: "open.command[0]", expected: "a program without placeholders (no '{')", got: JSONValue.string(program).preview(limit: 60))
        }
        for (n, argument) in command.enumerated() where argument.utf8.contains(0) {
            throw FieldError(path: "open.command[\(n)]", expected: "a template without NUL characters", got: nil)
        }
        return .command(command)
    }

    public var json: JSONValue {
        switch self {
        case .url(let template): return .object([("url", .string(template))])
        case .command(let templates): return .object([("command", .array(templates.map(JSONValue.string)))])
        }
    }

    /// `template` with each known placeholder replaced by its value (a missing value: empty),
    /// scanning once from the left; braces around anything else are kept as written.
    public static func substitute(_ template: String, _ values: [String: String]) -> String {
        var result = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            result += rest[..<open]
            let afterOpen = rest.index(after: open)
            if let close = rest[afterOpen...].firstIndex(of: "}"), placeholders.contains(String(rest[afterOpen..<close])) {
                result += values[String(rest[afterOpen..<close])] ?? ""
                rest = rest[rest.index(after: close)...]
            } else {
                result += "{"
                rest = rest[afterOpen...]
            }
        }
        result += rest
        return result
    }
}
