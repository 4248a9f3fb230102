/// The numeric attributes of an item the store keeps in indexed columns, in
/// `AttributeSchema.filtered` order after `contentType`; dates as seconds since 1970.
public struct FilterValues: Sendable, Equatable {
    public var rating: Double?
    public var rankingHint: Double?
    public var startDate: Double?
    public var endDate: Double?
    public var contentCreationDate: Double?
    public var contentModificationDate: Double?

    public init() {}

    public static let count = 6

    /// By position (0 = rating … 5 = contentModificationDate).
    public subscript(position: Int) -> Double? {
        get {
            switch position {
            case 0: return rating
            case 1: return rankingHint
            case 2: return startDate
            case 3: return endDate
            case 4: return contentCreationDate
            default: return contentModificationDate
            }
        }
        set {
            switch position {
            case 0: rating = newValue
            case 1: rankingHint = newValue
            case 2: startDate = newValue
            case 3: endDate = newValue
            case 4: contentCreationDate = newValue
            default: contentModificationDate = newValue
            }
        }
    }
}
