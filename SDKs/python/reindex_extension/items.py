"""Items, and how the SDK writes them as JSON."""
from __future__ import annotations

import base64
import datetime as _dt
import json
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Union

__all__ = ["Item", "Reason", "rfc3339", "encode_json"]

DateLike = Union[str, _dt.datetime, _dt.date]


class Reason:
    """The reasons protocol version 1 names. `index.reason` is a plain string, and may be a
    reason that is not listed here: treat an unknown reason like any other."""

    FORCED = "forced"
    INDEX_LOST = "indexLost"
    BUNDLE_CHANGED = "bundleChanged"
    EXPIRING = "expiring"
    RETRY = "retry"


def rfc3339(value: DateLike) -> str:
    """`value` as an RFC 3339 timestamp.

    A `datetime` with a time zone is converted to UTC; a naive `datetime` is taken to be UTC
    already; a `date` is midnight UTC of that day; a string is returned unchanged.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, _dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        text = value.strftime("%Y-%m-%dT%H:%M:%S")
        if value.microsecond:
            text += (".%06d" % value.microsecond).rstrip("0")
        return text + "Z"
    if isinstance(value, _dt.date):
        return "%04d-%02d-%02dT00:00:00Z" % (value.year, value.month, value.day)
    raise TypeError("expected a str, datetime or date, got %s" % type(value).__name__)


@dataclass
class Item:
    """One searchable item, the protocol's Item shape with Python names.

    `attributes` holds the protocol's attribute keys as they are on the wire (`title`,
    `contentDescription`, `keywords`, …). Values may be `datetime`/`date` (written as RFC 3339
    timestamps) and `bytes` (written as base64, for `thumbnailData`). `index.put` accepts these
    and plain dicts in the wire shape alike.
    """

    unique_identifier: str
    attributes: Dict[str, Any] = field(default_factory=dict)
    domain_identifier: Optional[str] = None
    expiration_date: Optional[DateLike] = None
    #: A partial update: the attributes are merged into the existing item (`None` removes one).
    is_update: bool = False

    def to_json(self) -> Dict[str, Any]:
        """The item as the protocol's JSON object."""
        if not isinstance(self.unique_identifier, str):
            raise TypeError("unique_identifier must be a str, got %s" % type(self.unique_identifier).__name__)
        result: Dict[str, Any] = {"uniqueIdentifier": self.unique_identifier}
        if self.domain_identifier is not None:
            result["domainIdentifier"] = self.domain_identifier
        if self.expiration_date is not None:
            result["expirationDate"] = rfc3339(self.expiration_date)
        if self.is_update:
            result["isUpdate"] = True
        result["attributes"] = dict(self.attributes)
        return result


def _default(value: Any) -> Any:
    if isinstance(value, Item):
        return value.to_json()
    if isinstance(value, (_dt.datetime, _dt.date)):
        return rfc3339(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, (set, frozenset)):
        return sorted(value) if all(isinstance(v, str) for v in value) else list(value)
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, (list, tuple)):
        return list(value)
    try:
        return list(value)  # other iterables, e.g. a generator of keywords
    except TypeError:
        pass
    raise TypeError("%s is not JSON serializable" % type(value).__name__)


def encode_json(value: Any) -> bytes:
    """`value` as compact UTF-8 JSON: one protocol line without its newline.

    `Item`s, `datetime`/`date` (RFC 3339), `bytes` (base64), sets and other iterables are
    converted; NaN and infinities are refused (they are not JSON).
    """
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False,
                      default=_default).encode("utf-8")
