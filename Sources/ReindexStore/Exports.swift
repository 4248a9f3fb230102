// What the store exports names the system module's public types (ReindexError, Clock) and the
// wire's (SearchableItem, its attributes, JSONValue): one import.
@_exported import ReindexSystem
@_exported import ReindexProtocol
