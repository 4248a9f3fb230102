// Applications that link the engine see the store too: one import for both.
@_exported import ReindexStore
