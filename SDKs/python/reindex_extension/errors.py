"""The exceptions of the SDK, and the JSON-RPC error codes of reindex protocol version 1."""
from __future__ import annotations

from typing import Any, Optional

__all__ = [
    "ErrorCode",
    "ReindexError",
    "Cancelled",
    "Disconnected",
    "CommitRefused",
    "ClientStateTooLarge",
    "RequestEnded",
    "RequestError",
]


class ErrorCode:
    """The error codes of the protocol (JSON-RPC 2.0's, plus -32800)."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    REQUEST_CANCELLED = -32800
    #: The code of a refusal raised as any exception other than `RequestError` (as in the Swift SDK).
    REFUSED = -32000


class ReindexError(Exception):
    """The base class of the errors the SDK raises."""


class Cancelled(ReindexError):
    """The host cancelled the request (`$/cancel`): stop working on it.

    Raised by the index operations of a cancelled request. Let it propagate (or return): the SDK
    answers the request with error -32800 either way.
    """

    def __init__(self, message: str = "the request was cancelled by the host") -> None:
        super().__init__(message)


class Disconnected(Cancelled):
    """The host closed the connection (end of stdin, or stdout is broken).

    A subclass of `Cancelled`: a handler that stops on `Cancelled` stops on this too.
    """

    def __init__(self, message: str = "the connection to the host is closed") -> None:
        super().__init__(message)


class CommitRefused(ReindexError):
    """The host answered a `batch/commit` with an error (for example a client state it refused)."""

    def __init__(self, message: str, code: int = ErrorCode.INTERNAL_ERROR, data: Any = None) -> None:
        super().__init__("the host refused the batch commit: %s" % message)
        self.code = code
        self.host_message = message
        self.data = data


class ClientStateTooLarge(ReindexError, ValueError):
    """A client state longer than the protocol's 250 bytes; nothing was sent."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__("client state is %d bytes; at most %d are allowed" % (size, limit))
        self.size = size
        self.limit = limit


class RequestEnded(ReindexError):
    """An index operation on a request that has already been answered.

    The protocol forbids index operations outside an outstanding request, so the SDK refuses to
    send them.
    """


class RequestError(Exception):
    """Raise this from `reindex_all` / `reindex_items` to refuse the request with exactly this
    message (and code). Any other exception refuses it too, with code -32000 and `str(error)`."""

    def __init__(self, message: str, code: int = ErrorCode.REFUSED, data: Optional[Any] = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.data = data

    def __str__(self) -> str:
        return self.message
