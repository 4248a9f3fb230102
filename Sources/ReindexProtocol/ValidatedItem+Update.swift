/// Partial updates (`"isUpdate": true` on an item of `index/put`).
extension ValidatedItem {
    /// The whole item this update makes of an existing one: the existing attributes with the
    /// update's merged over them — a key the update sets replaces the existing value, a key it
    /// sets to `null` is removed, every other key stays. The update's `domainIdentifier` and
    /// `expirationDate` replace the existing ones when given; otherwise the existing ones stay.
    /// The result is an ordinary item (not an update), with its searched text recomputed.
    ///
    /// `existingAttributes` is the existing item's attributes as stored (compact JSON, already
    /// validated when it was put).
    public func merged(intoAttributes existingAttributes: [UInt8], domainIdentifier existingDomain: String?,
                       expiration existingExpiration: Double?,
                       declarations: [String: AttributeDeclaration] = [:]) throws(FieldError) -> ValidatedItem {
        var members: [(String, JSONValue)] = []
        if let existing = try? JSONParser.parse(existingAttributes), case .object(let old) = existing { members = old }
        let update: JSONValue
        do { update = try JSONParser.parse(attributesJSON) } catch {
            throw FieldError(path: "item.attributes", expected: "an object", got: "unreadable JSON")
        }
        for (key, value) in update.objectValue ?? [] {
            let at = members.firstIndex { $0.0 == key }
            if value.isNull {
                if let at { members.remove(at: at) }
            } else if let at {
                members[at].1 = value
            } else {
                members.append((key, value))
            }
        }
        var item: [(String, JSONValue)] = [("uniqueIdentifier", .string(uniqueIdentifier))]
        if let domain = domainIdentifier ?? existingDomain { item.append(("domainIdentifier", .string(domain))) }
        item.append(("attributes", .object(members)))
        let merged = try ItemValidator.validate(.object(item), declarations: declarations)
        return ValidatedItem(storage: merged.storage, expiration: expiration ?? existingExpiration, filters: merged.filters)
    }
}
