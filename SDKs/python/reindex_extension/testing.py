"""Unit tests of an extension's handlers without the host.

    import unittest
    from reindex_extension.testing import run_reindex_all, run_reindex_items

    class NotesTests(unittest.TestCase):
        def test_reindex_all_puts_every_note(self):
            index = run_reindex_all(Notes())
            self.assertEqual(sorted(index.items), ["note.1", "note.2"])
            self.assertEqual(index.rejections, [])

`run_reindex_all` and `run_reindex_items` call the handler in this process with a real
`SearchableIndex` whose writes go to a `RecordingIndex` instead of the host, and answer the request
as the SDK does under the host: a handler that raises raises here (its exception as it is), a
handler that returns while a thread it started still runs is refused (`RequestError`), writes
after the answer raise `RequestEnded`. Each item put is read back the way the host reads it: an
item the host would reject is in `rejections` with the reason, not in `items`; an attribute name
that looks like a misspelt built-in or declared one (`keyword`, `titel`) is in `warnings`.
"""
from __future__ import annotations

import base64
import json
import threading
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

from .errors import ErrorCode, RequestError
from .extension import Extension, _unjoined_threads
from .index import SearchableIndex
from .items import ATTRIBUTE_TYPES, MAX_IDENTIFIER_BYTES, check_attribute, is_rfc3339

__all__ = ["RecordingIndex", "run_reindex_all", "run_reindex_items", "suggest"]

_DECLARED_TYPES = {"string": "string", "strings": "strings", "number": "number", "bool": "bool", "date": "date"}


#: The members of an item (protocol-v1.md, "Item"); the host ignores any other.
ITEM_MEMBERS = ["uniqueIdentifier", "domainIdentifier", "expirationDate", "attributes", "isUpdate"]


def suggest(name: str, candidates: Iterable[str]) -> Optional[str]:
    """The candidate nearest to `name` by edit distance (insertions, deletions, substitutions and
    swaps of neighbours; case ignored) when it is near enough to be a typo — at most one edit for
    names of up to four characters, two up to eight, three beyond — else None. The host's rule."""
    word = name.lower()
    allowed = 1 if len(word) <= 4 else 2 if len(word) <= 8 else 3
    best: Optional[Tuple[int, str]] = None
    for candidate in candidates:
        other = candidate.lower()
        if other == word or abs(len(other) - len(word)) > allowed:
            continue
        d = _distance(word, other)
        if d <= allowed and (best is None or d < best[0]):
            best = (d, candidate)
    return best[1] if best else None


def _distance(a: str, b: str) -> int:
    rows = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        rows[i][0] = i
    for j in range(len(b) + 1):
        rows[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            rows[i][j] = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                rows[i][j] = min(rows[i][j], rows[i - 2][j - 2] + 1)
    return rows[len(a)][len(b)]


class _RecordingConnection:
    """What a `SearchableIndex` writes to, in place of the host connection."""

    def __init__(self, recording: "RecordingIndex") -> None:
        self._recording = recording

    def write_line(self, payload: bytes) -> None:
        message = json.loads(payload)
        self._recording._put(message["params"]["items"])

    def notify(self, method: str, params: Any) -> None:
        self._recording._notification(method, params)

    def send(self, message: Dict[str, Any]) -> None:  # requests are answered by `request`
        pass

    def request(self, method: str, params: Any, index: SearchableIndex) -> Any:
        index._send_request({"jsonrpc": "2.0", "id": 0, "method": method, "params": params})
        return self._recording._commit(params.get("clientState"))


class RecordingIndex:
    """A stand-in for the host that records what handlers do (one or several requests in turn).

    Everything below is in the protocol's JSON shape, as the host receives it:

    - `operations`: every operation in order, as tuples: `("put", [item, ...])`,
      `("delete", [id, ...])`, `("delete_domains", [domain, ...])`, `("delete_all",)`,
      `("commit", client_state_bytes_or_None)`, `("progress", completed, total, message)`.
    - `puts`: every accepted item put, in order (item dicts: `uniqueIdentifier`, `attributes`, …).
    - `items`: what the index holds after the operations, by unique identifier (a partial update
      merged into the item it updates; deletes applied). Starts empty, or with `existing`.
    - `deleted`, `deleted_domains`, `delete_all_count`, `commits` (client states, bytes or None),
      `progress` (`(completed, total, message)` tuples).
    - `rejections`: `(unique_identifier, reason)` of the items the host would reject.
    - `warnings`: attribute names that look like a misspelt built-in or declared one, once each.
    - `empty_allowed`: an acknowledged `reindex_all` called `allow_empty()`.
    - `acknowledgements`: how many requests were acknowledged.

    `reason` and `client_state` are what the handler's index gets (`client_state` only in
    `reindex_all`). `declarations` are the manifest's custom attributes
    (`{"pages": {"type": "number"}}`): their values are checked as the host checks them.
    """

    def __init__(self, reason: str = "forced", client_state: Optional[bytes] = None,
                 declarations: Optional[Mapping[str, Mapping[str, Any]]] = None,
                 existing: Optional[Mapping[str, Mapping[str, Any]]] = None) -> None:
        self.reason = reason
        self.client_state = client_state
        self.declarations: Dict[str, Mapping[str, Any]] = dict(declarations or {})
        self.operations: List[Tuple[Any, ...]] = []
        self.items: Dict[str, Dict[str, Any]] = {uid: dict(item) for uid, item in (existing or {}).items()}
        self.rejections: List[Tuple[Optional[str], str]] = []
        self.warnings: List[str] = []
        self.empty_allowed = False
        self.acknowledgements = 0
        self._names_seen: set = set()
        self._since_commit = 0
        self._next_request = 1
        self._lock = threading.RLock()

    # MARK: What was recorded

    def _of(self, kind: str) -> List[Tuple[Any, ...]]:
        return [operation for operation in self.operations if operation[0] == kind]

    @property
    def puts(self) -> List[Dict[str, Any]]:
        return [item for operation in self._of("put") for item in operation[1]]

    @property
    def deleted(self) -> List[str]:
        return [uid for operation in self._of("delete") for uid in operation[1]]

    @property
    def deleted_domains(self) -> List[str]:
        return [domain for operation in self._of("delete_domains") for domain in operation[1]]

    @property
    def delete_all_count(self) -> int:
        return len(self._of("delete_all"))

    @property
    def commits(self) -> List[Optional[bytes]]:
        return [operation[1] for operation in self._of("commit")]

    @property
    def progress(self) -> List[Tuple[int, Optional[int], Optional[str]]]:
        return [tuple(operation[1:]) for operation in self._of("progress")]  # type: ignore[misc]

    # MARK: What the host does with each operation

    def _record(self, operation: Tuple[Any, ...], count: int) -> None:
        self.operations.append(operation)
        self._since_commit += count

    def _put(self, items: List[Dict[str, Any]]) -> None:
        with self._lock:
            accepted = []
            for item in items:
                uid = item.get("uniqueIdentifier")
                problem = self._problem(item)
                if problem is not None:
                    self.rejections.append((uid if isinstance(uid, str) else None, problem))
                    continue
                accepted.append(item)
                self._apply(item)
            self._record(("put", accepted), len(items))

    def _problem(self, item: Dict[str, Any]) -> Optional[str]:
        """Why the host would reject `item` (its validation, in short), or None."""
        uid = item.get("uniqueIdentifier")
        if not isinstance(uid, str) or not 1 <= len(uid.encode("utf-8")) <= MAX_IDENTIFIER_BYTES:
            return "uniqueIdentifier: expected 1 to %d UTF-8 bytes of text, got %r" % (MAX_IDENTIFIER_BYTES, uid)
        if item.get("domainIdentifier") is not None and not isinstance(item["domainIdentifier"], str):
            return "domainIdentifier: expected a string"
        expiration = item.get("expirationDate")
        if expiration is not None and not (isinstance(expiration, str) and is_rfc3339(expiration)):
            return "expirationDate: expected an RFC 3339 date, got %r" % (expiration,)
        attributes = item.get("attributes") or {}
        if not isinstance(attributes, dict):
            return "attributes: expected an object"
        for key in item:
            if key not in ITEM_MEMBERS:
                self._check_member(key, uid)
        where = "item %r" % uid[:80]
        for key, value in attributes.items():
            declared = self.declarations.get(key)
            if key not in ATTRIBUTE_TYPES and declared is None:
                self._check_name(key, uid)
            try:
                if declared is not None and key not in ATTRIBUTE_TYPES:
                    kind = "strings" if declared.get("multiValued") else _DECLARED_TYPES.get(str(declared.get("type")), "")
                    _check_declared(key, value, kind, where)
                else:
                    check_attribute(key, value, where)
            except (TypeError, ValueError) as error:
                return str(error)
        return None

    def _check_name(self, name: str, uid: str) -> None:
        if name in self._names_seen:
            return
        self._names_seen.add(name)
        meant = suggest(name, sorted(ATTRIBUTE_TYPES) + sorted(self.declarations))
        if meant is not None:
            self.warnings.append("attribute %r (first in item %r) is neither built in nor declared, so it is kept as "
                                 "a custom attribute and not searched; did you mean %r?" % (name, uid, meant))

    def _check_member(self, name: str, uid: str) -> None:
        # A member an item does not have is ignored by the host, with a warning, as here.
        if ("\0" + name) in self._names_seen:
            return
        self._names_seen.add("\0" + name)
        if name in ATTRIBUTE_TYPES or name in self.declarations:
            advice = ('attributes go inside "attributes": {"uniqueIdentifier": \u2026, "attributes": {"%s": \u2026}}' % name)
        elif name == "attributeSet":
            advice = 'Core Spotlight\'s attributeSet is "attributes" here'
        else:
            meant = suggest(name, ITEM_MEMBERS)
            advice = ("did you mean %r?" % meant) if meant is not None else ("an item has " + ", ".join(repr(m) for m in ITEM_MEMBERS))
        self.warnings.append("item member %r (first in item %r) is not part of an item and is ignored; %s" % (name, uid[:80], advice))

    def _apply(self, item: Dict[str, Any]) -> None:
        uid = item["uniqueIdentifier"]
        if not item.get("isUpdate"):
            self.items[uid] = item
            return
        existing = self.items.get(uid)
        if existing is None:
            return  # the host ignores an update of an item it does not have
        merged = dict(existing)
        attributes = dict(existing.get("attributes") or {})
        for key, value in (item.get("attributes") or {}).items():
            if value is None:
                attributes.pop(key, None)
            else:
                attributes[key] = value
        merged["attributes"] = attributes
        for key in ("domainIdentifier", "expirationDate"):
            if item.get(key) is not None:
                merged[key] = item[key]
        self.items[uid] = merged

    def _notification(self, method: str, params: Dict[str, Any]) -> None:
        with self._lock:
            if method == "index/delete":
                ids = list(params["identifiers"])
                self._record(("delete", ids), len(ids))
                for uid in ids:
                    self.items.pop(uid, None)
            elif method == "index/deleteDomains":
                domains = list(params["domainIdentifiers"])
                self._record(("delete_domains", domains), len(domains))
                for uid, item in list(self.items.items()):
                    domain = item.get("domainIdentifier")
                    if isinstance(domain, str) and any(domain == d or domain.startswith(d + ".") for d in domains):
                        del self.items[uid]
            elif method == "index/deleteAll":
                self._record(("delete_all",), 1)
                self.items.clear()
            elif method == "$/progress":
                self._record(("progress", params["completed"], params.get("total"), params.get("message")), 0)

    def _commit(self, encoded: Optional[str]) -> Dict[str, Any]:
        with self._lock:
            state = base64.b64decode(encoded) if encoded is not None else None
            committed = self._since_commit
            self._since_commit = 0
            self.operations.append(("commit", state))
            return {"committed": committed}

    # MARK: Running a request

    def _run(self, extension: Extension, method: str, identifiers: List[str]) -> "RecordingIndex":
        request_id = self._next_request
        self._next_request += 1
        index = SearchableIndex(_RecordingConnection(self), request_id, method, self.reason,  # type: ignore[arg-type]
                                self.client_state if method == "reindexAll" else None)
        threads_before = set(threading.enumerate())
        try:
            if method == "reindexAll":
                extension.reindex_all(index)
            else:
                extension.reindex_items(list(identifiers), index)
        except BaseException:
            index._finish("refused")
            raise
        refusal = _unjoined_threads(method, threads_before)
        if refusal is not None:
            index._finish("refused")
            raise RequestError(refusal[1], refusal[0])
        index._finish("acknowledged")
        self.acknowledgements += 1
        if index.empty_allowed:
            self.empty_allowed = True
        return self


def _check_declared(key: str, value: Any, kind: str, where: str) -> None:
    """A declared custom attribute's value, checked like the built-in attribute of its type."""
    stand_in = {"string": "title", "strings": "keywords", "number": "rating", "bool": "supportsPhoneCall",
                "date": "startDate"}.get(kind)
    if stand_in is None:
        return
    try:
        check_attribute(stand_in, value, where)
    except (TypeError, ValueError) as error:
        raise type(error)(str(error).replace(repr(stand_in), repr(key), 1)) from None


def run_reindex_all(extension: Extension, index: Optional[RecordingIndex] = None, *, reason: str = "forced",
                    client_state: Optional[bytes] = None) -> RecordingIndex:
    """Calls `extension.reindex_all` on a recording, as the SDK does under the host, and returns
    the recording (`index`, or a new `RecordingIndex(reason, client_state)`). Raises what the
    handler raised; `RequestError` when it returned while a thread it started still runs."""
    recording = index if index is not None else RecordingIndex(reason=reason, client_state=client_state)
    return recording._run(extension, "reindexAll", [])


def run_reindex_items(extension: Extension, identifiers: Iterable[str], index: Optional[RecordingIndex] = None, *,
                      reason: str = "forced") -> RecordingIndex:
    """Calls `extension.reindex_items(identifiers, …)` on a recording; see `run_reindex_all`.
    Pass the recording of an earlier `run_reindex_all` to see deletes applied to its items."""
    recording = index if index is not None else RecordingIndex(reason=reason)
    return recording._run(extension, "reindexItems", list(identifiers))
