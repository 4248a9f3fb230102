@_exported import ReindexProtocol
