"""reindex_extension: write reindexing extensions for the `reindex` host in Python.

Subclass `Extension`, implement `reindex_all` and `reindex_items`, and call `MyExtension.main()`:

    from reindex_extension import Extension, Item

    class Notes(Extension):
        def reindex_all(self, index):
            index.put([Item("note.1", {"title": "Hello"})])

        def reindex_items(self, identifiers, index):
            index.delete(identifiers)

    Notes.main()

The SDK speaks reindex protocol version 1 (JSON-RPC 2.0, one message per line on stdin/stdout)
and uses nothing but the standard library. See README.md beside this package.
"""
from .errors import (
    Cancelled,
    ClientStateTooLarge,
    CommitRefused,
    Disconnected,
    ErrorCode,
    ReindexError,
    RequestEnded,
    RequestError,
)
from .items import Item, Reason, rfc3339
from .index import MAX_CLIENT_STATE_BYTES, SearchableIndex
from .extension import PROTOCOL_VERSIONS, Extension, HostInfo, identity, run, serve
from .stdio import protect_stdio
from .stdio import runs_under_host as _runs_under_host
from .debugger import DEFAULT_DEBUGPY_ADDRESS, wait_for_debugger

__version__ = "0.1.0"

# Under the host, stdout belongs to the protocol from the moment the SDK is imported: a print at
# the top of the script or in the extension's __init__ (both run before `run`) goes to stderr.
# Imported anywhere else (tests, a REPL) the SDK leaves the process alone until `run`.
if _runs_under_host():
    protect_stdio()

__all__ = [
    "Extension",
    "SearchableIndex",
    "Item",
    "Reason",
    "HostInfo",
    "run",
    "serve",
    "identity",
    "protect_stdio",
    "wait_for_debugger",
    "rfc3339",
    "ReindexError",
    "Cancelled",
    "Disconnected",
    "CommitRefused",
    "ClientStateTooLarge",
    "RequestEnded",
    "RequestError",
    "ErrorCode",
    "PROTOCOL_VERSIONS",
    "MAX_CLIENT_STATE_BYTES",
    "DEFAULT_DEBUGPY_ADDRESS",
    "__version__",
]
