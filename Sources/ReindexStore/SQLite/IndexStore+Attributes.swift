import ReindexSystem
import ReindexProtocol

// The statements of the rows an item's attributes add besides its own: the declarations in
// effect per bundle, the searchable custom text (`attributes_fts`), the filter columns, and the
// typed values of declared attributes (`item_attributes`) — written with the item, kept aside
// and restored with it (see ARCHITECTURE.md "Visibility").
extension IndexStore {
    /// The custom attributes in effect for a bundle: those its last acknowledged reindexAll was
    /// run with (none before the first). A record this version cannot read counts as none.
    public func declarations(bundle key: String) throws(StoreError) -> [String: AttributeDeclaration] {
        let select = try statement("SELECT attributes FROM bundles WHERE key = ?1")
        select.bind(1, key.lowercased())
        defer { select.reset() }
        guard try select.step(), !select.isNull(0) else { return [:] }
        guard let json = try? JSONParser.parse(select.bytes(0)) else { return [:] }
        return (try? AttributeDeclaration.parseAll(json)) ?? [:]
    }

    /// Every bundle's custom attributes in effect (for queries over all bundles); a name two
    /// bundles declare differently takes the first bundle's declaration, by bundle key.
    func allDeclarations() throws(StoreError) -> [String: AttributeDeclaration] {
        let select = try statement("SELECT attributes FROM bundles WHERE attributes IS NOT NULL ORDER BY key")
        defer { select.reset() }
        var result: [String: AttributeDeclaration] = [:]
        while try select.step() {
            guard let json = try? JSONParser.parse(select.bytes(0)), let declared = try? AttributeDeclaration.parseAll(json) else { continue }
            result.merge(declared) { first, _ in first }
        }
        return result
    }

    /// Records the custom attributes a bundle's items were written with (at a reindexAll's
    /// acknowledgement, in its transaction).
    func recordDeclarations(_ declarations: [String: AttributeDeclaration], bundle key: String) throws(StoreError) {
        let update = try statement("UPDATE bundles SET attributes = ?2 WHERE key = ?1")
        update.bind(1, key)
        update.bind(2, declarations.isEmpty ? nil : String(decoding: JSONWriter.bytes(AttributeDeclaration.json(declarations)), as: UTF8.self))
        try update.run()
    }

    /// Whether any item has searchable custom attribute text (else deletions skip that table).
    func hasAttributeText() throws(StoreError) -> Bool {
        let any = try statement("SELECT 1 FROM attributes_fts LIMIT 1")
        defer { any.reset() }
        return try any.step()
    }

    /// Removes an item's searchable custom attribute text.
    func deleteAttributeText(item id: Int64) throws(StoreError) {
        let remove = try statement("DELETE FROM attributes_fts WHERE rowid BETWEEN ?1 AND ?2")
        remove.bind(1, id << 6)
        remove.bind(2, id << 6 | 63)
        try remove.run()
    }

    /// The filter columns as their values in the item's JSON: what schema 5 filled existing rows
    /// with, and what a restored row is given.
    static let filterColumnsFromJSON = AttributeSchema.table.compactMap { attribute in
        attribute.filterColumn.map { column in
            let value = "json_extract(attributes, '$.\(attribute.key)')"
            return "\(column) = " + (attribute.kind == .date ? "reindex_seconds(\(value))" : value)
        }
    }.joined(separator: ",\n")

    /// Fills an item's filter columns from its JSON (for a row restored from `staged_undo`).
    func fillFilterColumns(item id: Int64) throws(StoreError) {
        try prepareQueries()
        let fill = try statement("""
            UPDATE items SET \(Self.filterColumnsFromJSON) WHERE id = ?1
            """)
        fill.bind(1, id)
        try fill.run()
    }

    /// The `item_attributes` rows of one declared attribute's value: numbers as they are, dates
    /// as seconds, bools as 0 or 1, a string as text, a list as one row per string.
    static func typedValues(_ value: JSONValue, _ declaration: AttributeDeclaration) -> [(num: Double?, text: String?)] {
        switch (declaration.attributeKind, value) {
        case (.number, .integer(let n)): return [(Double(n), nil)]
        case (.number, .double(let d)): return [(d, nil)]
        case (.date, .string(let s)): return RFC3339.parse(s).map { [($0, nil)] } ?? []
        case (.boolean, .bool(let b)): return [(b ? 1 : 0, nil)]
        case (.string, .string(let s)): return [(nil, s)]
        case (.stringList, .array(let list)): return list.compactMap(\.stringValue).map { (nil, $0) }
        case (.stringList, .string(let s)): return [(nil, s)]
        default: return []
        }
    }

    /// Whether any item has a declared attribute's value (else deletions skip that table).
    func hasTypedAttributes() throws(StoreError) -> Bool {
        let any = try statement("SELECT 1 FROM item_attributes LIMIT 1")
        defer { any.reset() }
        return try any.step()
    }

    /// Removes an item's declared attribute values.
    func deleteTypedAttributes(item id: Int64) throws(StoreError) {
        let remove = try statement("DELETE FROM item_attributes WHERE item = ?1")
        remove.bind(1, id)
        try remove.run()
    }

    /// Writes back the declared attribute values `keepCommittedRows` kept aside (a JSON array
    /// of [name, num, text]) for the restored item `id`.
    func restoreTypedAttributes(_ kept: String?, item id: Int64) throws(StoreError) {
        guard let kept, let json = try? JSONParser.parse(text: kept), case .array(let rows) = json, !rows.isEmpty else { return }
        let insert = try statement("INSERT INTO item_attributes(item, name, num, text) VALUES(?1, ?2, ?3, ?4)")
        for case .array(let row) in rows where row.count == 3 {
            guard let name = row[0].stringValue else { continue }
            insert.reset()
            insert.bind(1, id)
            insert.bind(2, name)
            insert.bind(3, row[1].doubleValue)
            insert.bind(4, row[2].stringValue)
            try insert.run()
        }
    }

    /// Fills `item_attributes` for the items an index held before it existed (schema 7), from
    /// each item's JSON and its bundle's recorded declarations, inside the migration.
    func fillTypedAttributes() throws(StoreError) {
        let bundles = try statement("SELECT key FROM bundles WHERE attributes IS NOT NULL")
        var keys: [String] = []
        while try bundles.step() { keys.append(bundles.text(0) ?? "") }
        bundles.reset()
        let select = try statement("SELECT id, attributes FROM items WHERE bundle = ?1")
        let insert = try statement("INSERT INTO item_attributes(item, name, num, text) VALUES(?1, ?2, ?3, ?4)")
        for key in keys {
            let declared = try declarations(bundle: key)
            guard !declared.isEmpty else { continue }
            select.reset()
            select.bind(1, key)
            while try select.step() {
                guard case .object(let members)? = try? JSONParser.parse(select.bytes(1)) else { continue }
                for (name, value) in members {
                    guard let declaration = declared[name] else { continue }
                    for row in Self.typedValues(value, declaration) {
                        insert.reset()
                        insert.bind(1, select.int64(0))
                        insert.bind(2, name)
                        insert.bind(3, row.num)
                        insert.bind(4, row.text)
                        try insert.run()
                    }
                }
            }
            select.reset()
        }
    }

    /// Writes back the custom attribute text `keepCommittedRows` kept aside (a JSON array of
    /// [slot, name, value]) for the restored item `id`.
    func restoreAttributeText(_ kept: String?, item id: Int64) throws(StoreError) {
        guard let kept, let json = try? JSONParser.parse(text: kept), case .array(let rows) = json, !rows.isEmpty else { return }
        let insert = try statement("INSERT INTO attributes_fts(rowid, name, value) VALUES(?1, ?2, ?3)")
        for case .array(let row) in rows where row.count == 3 {
            guard let slot = row[0].integerValue, let name = row[1].stringValue, let value = row[2].stringValue else { continue }
            insert.reset()
            insert.bind(1, id << 6 | (slot & 63))
            insert.bind(2, name)
            insert.bind(3, value)
            try insert.run()
        }
    }
}
