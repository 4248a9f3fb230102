"""`SearchableIndex`: where one request's items go."""
from __future__ import annotations

import base64
import threading
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional, Union

from .connection import log
from .errors import Cancelled, ClientStateTooLarge, RequestEnded
from .items import Item, encode_json, non_finite_numbers

if TYPE_CHECKING:  # pragma: no cover
    from .connection import Connection, _Pending

__all__ = ["SearchableIndex", "MAX_CLIENT_STATE_BYTES"]

#: The longest client state the protocol allows, in bytes before base64.
MAX_CLIENT_STATE_BYTES = 250

ItemLike = Union[Item, Mapping[str, Any]]


class SearchableIndex:
    """Where a request's items go: Core Spotlight's `CSSearchableIndex`, bound to one request.

    The SDK gives one to `reindex_all` / `reindex_items`. Writes are streamed to the host as they
    are made; they become visible to searches when the request is acknowledged (for
    `reindex_items`, also at each `commit_batch`). Once the host cancels the request every method
    raises `Cancelled`; once the request is answered (the handler returned or raised) they raise
    `RequestEnded`, log why to stderr and send nothing.
    """

    #: Items per `index/put` message at most.
    items_per_message = 500
    #: Bytes per `index/put` (or delete) message at most, far below the host's 16 MiB lines.
    bytes_per_message = 4 << 20

    def __init__(self, connection: "Connection", request_id: Any, method: str, reason: str,
                 client_state: Optional[bytes]) -> None:
        self._connection = connection
        self._lock = threading.RLock()
        self._cancelled = False
        self._finished = False
        self._answer = "answered"
        self._allow_empty = False
        self._waiter: Optional["_Pending"] = None
        #: The host's id of this request (`$/progress` and `batch/commit` name it).
        self.request_id = request_id
        #: `"reindexAll"` or `"reindexItems"`.
        self.method = method
        #: Why the host asked: `forced`, `indexLost`, `bundleChanged`, `expiring`, `retry`, or a
        #: reason this SDK does not know yet (see `Reason`).
        self.reason = reason
        #: For `reindex_all`: the client state of the last committed batch of an interrupted
        #: earlier attempt, to resume from; None when starting fresh (and for `reindex_items`).
        self.client_state = client_state

    # MARK: State

    @property
    def cancelled(self) -> bool:
        """Whether the host cancelled this request. Check it in long work that makes no index
        calls; the SDK answers a cancelled request with -32800 however the handler ends."""
        return self._cancelled

    def check_cancelled(self) -> None:
        """Raises `Cancelled` if the host cancelled this request."""
        self._raise_if_cancelled()

    def _raise_if_cancelled(self) -> None:
        if self._cancelled:
            raise Cancelled()

    def _cancel(self) -> None:
        with self._lock:
            if self._finished:
                return
            self._cancelled = True
        waiter = self._waiter
        if waiter is not None:
            waiter.event.set()

    def _finish(self, answer: str = "answered") -> None:
        """Called by the SDK before it answers the request (`answer` says how: acknowledged,
        refused, cancelled): from then on nothing more is sent for it. Waits for an operation
        another thread is sending right now."""
        with self._lock:
            self._finished = True
            self._answer = answer

    def _check(self, operation: str) -> None:
        if self._finished:
            handler = "reindex_all" if self.method == "reindexAll" else "reindex_items"
            message = ("request %r was already %s; index.%s() after %s returned is not sent. A thread (or task) "
                       "the handler started is still using the index: join your threads (or await your tasks) "
                       "before returning" % (self.request_id, self._answer, operation, handler))
            log(message)
            raise RequestEnded(message)
        self._raise_if_cancelled()

    # MARK: Operations

    def put(self, items: Union[ItemLike, Iterable[ItemLike]]) -> None:
        """Adds or replaces items (`Item`s or dicts in the protocol's Item shape; one alone is
        accepted too). Any iterable works, a generator included; large amounts are split into
        several `index/put` messages."""
        if isinstance(items, (Item, Mapping)):
            items = [items]
        self._check("put")
        chunk: List[bytes] = []
        size = 0
        for item in items:
            encoded = self._encode_item(item)
            if chunk and (len(chunk) >= self.items_per_message or size + len(encoded) > self.bytes_per_message):
                self._send_put(chunk)
                chunk, size = [], 0
            chunk.append(encoded)
            size += len(encoded) + 1
        if chunk:
            self._send_put(chunk)

    @staticmethod
    def _encode_item(item: Any) -> bytes:
        if isinstance(item, Item):
            return encode_json(item.to_json())
        if type(item) is dict or isinstance(item, Mapping):  # a plain dict skips the ABC check
            identifier = item.get("uniqueIdentifier")
            if not isinstance(identifier, str):
                raise TypeError("an item needs a string 'uniqueIdentifier', got %r" % (identifier,))
            try:
                return encode_json(item)
            except ValueError as error:
                if "Circular reference" in str(error):
                    raise ValueError("item %r contains itself (a dict or list inside its own value): JSON has no "
                                     "references" % identifier[:80]) from None
                # json.dumps refuses NaN and infinities without saying where; say it. (Looked
                # for only on failure: walking every item costs more than encoding it.)
                for path, number in non_finite_numbers(item, "item %r" % identifier[:80]):
                    raise ValueError("%s must hold finite numbers only, got %r: JSON has no NaN or infinities"
                                     % (path, number)) from None
                raise
        raise TypeError("an item must be an Item or a dict in the protocol's Item shape, got %s" % type(item).__name__)

    def _send_put(self, encoded_items: List[bytes]) -> None:
        line = b'{"jsonrpc":"2.0","method":"index/put","params":{"items":[' + b",".join(encoded_items) + b"]}}"
        with self._lock:
            self._check("put")
            self._connection.write_line(line)

    def delete(self, identifiers: Union[str, Iterable[str]]) -> None:
        """Removes items by unique identifier (a single string is one identifier)."""
        self._send_list("delete", "index/delete", "identifiers", identifiers)

    def delete_domains(self, domains: Union[str, Iterable[str]]) -> None:
        """Removes every item in these domains; a domain `a.b` also covers `a.b.c`, never `a.bc`."""
        self._send_list("delete_domains", "index/deleteDomains", "domainIdentifiers", domains)

    def delete_all(self) -> None:
        """Removes every item of this extension (and only this extension's)."""
        self._notify("delete_all", "index/deleteAll", {})

    def _send_list(self, operation: str, method: str, key: str, values: Union[str, Iterable[str]]) -> None:
        if isinstance(values, str):
            values = [values]
        self._check(operation)
        batch: List[str] = []
        size = 0
        for value in values:
            if not isinstance(value, str):
                raise TypeError("%s: expected strings, got %s" % (key, type(value).__name__))
            if batch and size + len(value) > self.bytes_per_message // 2:
                self._notify(operation, method, {key: batch})
                batch, size = [], 0
            batch.append(value)
            size += len(value) + 8
        if batch:
            self._notify(operation, method, {key: batch})

    def _notify(self, operation: str, method: str, params: Any) -> None:
        with self._lock:
            self._check(operation)
            self._connection.notify(method, params)

    def _send_request(self, message: Mapping[str, Any]) -> None:
        """Sends a request of the SDK's own for this request (`batch/commit`), unless it has
        been answered or cancelled meanwhile (checked under the same lock as `_finish`)."""
        with self._lock:
            self._check("commit_batch")
            self._connection.send(dict(message))

    def commit_batch(self, client_state: Optional[bytes] = None) -> int:
        """Makes everything sent so far durable, together with `client_state` (at most 250 bytes;
        None stores none), and waits for the host's confirmation. If this `reindex_all` is
        interrupted later, the next attempt receives the state in `index.client_state`. Returns
        how many operations the host committed.

        Raises `ClientStateTooLarge` (nothing is sent), `CommitRefused` when the host answers
        with an error, `Cancelled` when the host cancels the request while the SDK waits.
        """
        encoded: Optional[str] = None
        if client_state is not None:
            if isinstance(client_state, str):
                raise TypeError("client_state must be bytes (encode your str first)")
            state = bytes(client_state)
            if len(state) > MAX_CLIENT_STATE_BYTES:
                raise ClientStateTooLarge(len(state), MAX_CLIENT_STATE_BYTES)
            encoded = base64.b64encode(state).decode("ascii")
        self._check("commit_batch")
        result = self._connection.request("batch/commit", {"requestId": self.request_id, "clientState": encoded}, self)
        committed = result.get("committed") if isinstance(result, dict) else None
        return committed if isinstance(committed, int) and not isinstance(committed, bool) else 0

    def progress(self, completed: int, total: Optional[int] = None, message: Optional[str] = None) -> None:
        """Reports progress (`reindex run` shows a progress bar). Every message resets the host's
        idle timeout, so report well within `idleSeconds` during long work."""
        params: Dict[str, Any] = {"requestId": self.request_id, "completed": int(completed)}
        if total is not None:
            params["total"] = int(total)
        if message is not None:
            params["message"] = str(message)
        self._notify("progress", "$/progress", params)

    def allow_empty(self) -> None:
        """Says that this `reindex_all` really has no items: the acknowledgement then carries
        `{"allowEmpty": true}`, and the host publishes the empty result (removing every item of
        the bundle). Without it the host refuses to publish a `reindexAll` that put no accepted
        item while the bundle has items: the old items stay and the request fails, as a guard
        against a source that was empty by mistake (an unmounted disk, an empty response).

        Call it only when the data is empty on purpose; in a run that does put items it changes
        nothing. Only `reindex_all` can use it: in `reindex_items` it raises `ValueError` (which
        refuses the request unless caught), since there deleting the identifiers that are gone
        is how an extension says so."""
        with self._lock:
            self._check("allow_empty")
            if self.method != "reindexAll":
                raise ValueError("allow_empty() is only meaningful in reindex_all (request %r is %s); in "
                                 "reindex_items delete the identifiers that are gone instead"
                                 % (self.request_id, self.method))
            self._allow_empty = True

    @property
    def empty_allowed(self) -> bool:
        """Whether `allow_empty()` was called for this request."""
        return self._allow_empty

    def __repr__(self) -> str:
        return "SearchableIndex(request_id=%r, method=%r, reason=%r)" % (self.request_id, self.method, self.reason)
