// What the store exports names the system module's public types (ReindexError, Clock): one import.
@_exported import ReindexSystem
