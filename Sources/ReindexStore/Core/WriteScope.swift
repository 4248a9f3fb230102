/// How a writer's operations become visible, on either backend (protocol-v1.md's rules; the
/// SQLite side is told in full at `StagedWrites`, the PostgreSQL side at `PostgresWrites`):
/// - `replacement`: a reindexAll's new generation of the bundle's items, swapped in whole at its
///   acknowledgement; committed batches survive a failed attempt, so a retry resumes.
/// - `live`: a reindexItems request or a stream of direct writes, applied to the live items at
///   each batch commit and at the acknowledgement.
/// - `direct`: writes whose operations are all in hand (`LocalIndex`), applied in the one
///   transaction the acknowledgement commits.
public enum WriteScope: Sendable, Equatable {
    case live
    case replacement(generation: Int64)
    case direct
}
