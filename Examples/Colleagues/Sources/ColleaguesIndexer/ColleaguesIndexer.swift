import Foundation
import ReindexExtension

/// One person in the company directory (`employees.json` in the bundle).
struct Employee: Codable, Sendable {
    var id: Int
    var name: String
    var department: String
    var title: String
    var phone: String
    var email: String
    var skills: [String]
    var office: String
    /// The day they joined (`2019-03-04`), as the item's contentCreationDate; older directory
    /// files may lack it.
    var hired: String?

    var item: SearchableItem {
        SearchableItem(
            uniqueIdentifier: "employee.\(id)",
            domainIdentifier: "com.example.colleagues.employee",
            attributes: SearchableItemAttributes(
                title: name,
                displayName: name,
                contentDescription: "\(department) · \(title) · \(office) · \(phone)",
                contentType: "public.contact",
                keywords: skills + [department, office],
                emailAddresses: [email],
                phoneNumbers: [phone],
                supportsPhoneCall: true,
                contentCreationDate: hired.flatMap(Self.day)))
    }

    /// A `yyyy-MM-dd` day at midnight UTC.
    static func day(_ text: String) -> Date? {
        let parts = text.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3 else { return nil }
        var components = DateComponents(year: parts[0], month: parts[1], day: parts[2])
        components.timeZone = TimeZone(identifier: "UTC")
        return Calendar(identifier: .gregorian).date(from: components)
    }
}

/// The Colleagues extension: indexes a company directory so people can be found by name,
/// department, title or skill.
struct ColleaguesIndexer: IndexRequestHandler {
    var extensionName: String { "Colleagues" }
    var extensionVersion: String { "1.0.0" }

    /// The directory file: `COLLEAGUES_DATA` if set, else `employees.json` in the bundle
    /// (the host starts extensions in their bundle directory).
    func loadEmployees() throws -> [Employee] {
        let path = ProcessInfo.processInfo.environment["COLLEAGUES_DATA"] ?? "employees.json"
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return try JSONDecoder().decode([Employee].self, from: data)
    }

    func reindexAll(_ index: SearchableIndex) async throws {
        let employees = try loadEmployees()
        FileHandle.standardError.write(Data("colleagues: indexing \(employees.count) people (reason: \(index.reason))\n".utf8))
        if ProcessInfo.processInfo.environment["COLLEAGUES_CHATTY"] != nil {
            // A stray print, as libraries do: the SDK sends descriptor 1 to the log, so this
            // cannot corrupt the protocol stream.
            print("colleagues: chatty print to stdout while indexing")
        }
        try await index.put(employees.map(\.item))
        index.progress(completed: employees.count, total: employees.count, message: "\(employees.count) people")
    }

    func reindexItems(identifiers: [String], index: SearchableIndex) async throws {
        let byID = Dictionary(uniqueKeysWithValues: try loadEmployees().map { ("employee.\($0.id)", $0) })
        let present = identifiers.compactMap { byID[$0]?.item }
        let gone = identifiers.filter { byID[$0] == nil }
        if !present.isEmpty { try await index.put(present) }
        if !gone.isEmpty { try await index.delete(identifiers: gone) }
        FileHandle.standardError.write(Data("colleagues: re-indexed \(present.count), removed \(gone.count) who left\n".utf8))
    }
}

@main
struct Main {
    static func main() async {
        await ExtensionMain.run(ColleaguesIndexer())
    }
}
