"""Items, and how the SDK writes them as JSON."""
from __future__ import annotations

import base64
import binascii
import datetime as _dt
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple, Union

__all__ = ["Item", "Reason", "rfc3339", "encode_json", "ATTRIBUTE_TYPES"]

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


#: The attributes protocol version 1 defines, and the type each takes on the wire:
#: "string", "strings" (a list of strings), "number" (finite), "bool", "date" (RFC 3339) or
#: "base64". Any other key is a custom attribute, kept as given (any JSON value) and not searched
#: unless the manifest declares it.
ATTRIBUTE_TYPES: Dict[str, str] = {
    "title": "string", "displayName": "string", "contentDescription": "string", "textContent": "string",
    "contentType": "string", "contentURL": "string", "thumbnailURL": "string", "relatedUniqueIdentifier": "string",
    "keywords": "strings", "alternateNames": "strings", "authors": "strings",
    "emailAddresses": "strings", "phoneNumbers": "strings",
    "rating": "number", "rankingHint": "number", "latitude": "number", "longitude": "number",
    "supportsPhoneCall": "bool", "supportsNavigation": "bool",
    "startDate": "date", "endDate": "date", "contentCreationDate": "date", "contentModificationDate": "date",
    "thumbnailData": "base64",
}

#: The identifier's length limit, in UTF-8 bytes.
MAX_IDENTIFIER_BYTES = 1024

_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def _type_name(value: Any) -> str:
    return "None" if value is None else type(value).__name__


def is_rfc3339(text: str) -> bool:
    """Whether `text` is an RFC 3339 timestamp the host accepts (`2024-05-01T12:00:00Z`,
    fractions and offsets such as `+02:00` included)."""
    if not _RFC3339.match(text):
        return False
    try:
        _dt.datetime.strptime(text[:19].replace("t", "T").replace(" ", "T"), "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return False
    return True


def non_finite_numbers(value: Any, path: str) -> Iterator[Tuple[str, float]]:
    """Where NaN and infinities are in `value` (dicts, lists, tuples walked), as `(path, number)`:
    JSON has no spelling for them."""
    if isinstance(value, float):
        if not math.isfinite(value):
            yield path, value
    elif isinstance(value, Mapping):
        for key, member in value.items():
            yield from non_finite_numbers(member, "%s.%s" % (path, key))
    elif isinstance(value, (list, tuple)):
        for n, element in enumerate(value):
            yield from non_finite_numbers(element, "%s[%d]" % (path, n))


def _string_list(value: Any) -> Optional[List[Any]]:
    """A list from a list, tuple, set or other iterable (not a str, bytes or mapping), else None."""
    if isinstance(value, list):
        return value
    if isinstance(value, (set, frozenset)):
        return sorted(value) if all(isinstance(v, str) for v in value) else list(value)
    if isinstance(value, (str, bytes, bytearray, Mapping)):
        return None
    try:
        return list(value)
    except TypeError:
        return None


def check_attribute(key: str, value: Any, where: str) -> Any:
    """Checks one attribute against `ATTRIBUTE_TYPES` (custom ones for NaN and infinities only)
    and returns it as it is sent (an iterable of keywords as a list). Raises `TypeError` for a
    value of the wrong type and `ValueError` for a wrong value, both naming `where` (the item)
    and the attribute. `None` is always allowed: no value (in an update: remove it)."""
    if value is None:
        return None
    kind = ATTRIBUTE_TYPES.get(key)
    # The common well-typed values first, before any message is formatted.
    kind_of_value = type(value)
    if kind == "string":
        if kind_of_value is str:
            return value
    elif kind == "strings":
        if kind_of_value is list and all(type(element) is str for element in value):
            return value
    elif kind == "number":
        if kind_of_value is int or (kind_of_value is float and math.isfinite(value)):
            return value
    elif kind == "bool":
        if kind_of_value is bool:
            return value
    at = "%s: attribute %r" % (where, key)
    if kind == "string":
        if not isinstance(value, str):
            raise TypeError("%s must be a str, got %s" % (at, _type_name(value)))
    elif kind == "strings":
        listed = _string_list(value)
        if listed is None:
            raise TypeError("%s must be a list of str, got %s" % (at, _type_name(value)))
        for n, element in enumerate(listed):
            if not isinstance(element, str):
                raise TypeError("%s[%d] must be a str, got %s" % (at, n, _type_name(element)))
        return listed
    elif kind == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError("%s must be a number (int or float), got %s" % (at, _type_name(value)))
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("%s must be a finite number, got %r: JSON has no NaN or infinities" % (at, value))
    elif kind == "bool":
        if not isinstance(value, bool):
            raise TypeError("%s must be a bool, got %s" % (at, _type_name(value)))
    elif kind == "date":
        if isinstance(value, str):
            if not is_rfc3339(value):
                raise ValueError("%s must be an RFC 3339 timestamp such as 2024-05-01T12:00:00Z, got %r" % (at, value))
        elif not isinstance(value, (_dt.datetime, _dt.date)):
            raise TypeError("%s must be a datetime, a date or an RFC 3339 str, got %s" % (at, _type_name(value)))
    elif kind == "base64":
        if isinstance(value, str):
            try:
                base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                raise ValueError("%s must be bytes or base64 text, got %r" % (at, value[:40])) from None
        elif not isinstance(value, (bytes, bytearray, memoryview)):
            raise TypeError("%s must be bytes or base64 text, got %s" % (at, _type_name(value)))
    else:
        for path, number in non_finite_numbers(value, key):
            raise ValueError("%s: attribute %r must hold finite numbers only, got %r: JSON has no NaN or infinities"
                             % (where, path, number))
    return value


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

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """Checks every field against the protocol's types (`ATTRIBUTE_TYPES` for attributes).
        Runs when the item is made and again when it is sent; raises `TypeError` (wrong type) or
        `ValueError` (wrong value: an empty or over-long identifier, NaN or an infinity, a date
        string that is not RFC 3339), naming the item and the attribute."""
        uid = self.unique_identifier
        if not isinstance(uid, str):
            raise TypeError("Item: unique_identifier must be a str, got %s" % _type_name(uid))
        where = "Item %r" % uid[:80]
        if not 1 <= len(uid.encode("utf-8")) <= MAX_IDENTIFIER_BYTES:
            raise ValueError("%s: unique_identifier must be 1 to %d UTF-8 bytes" % (where, MAX_IDENTIFIER_BYTES))
        if self.domain_identifier is not None and not isinstance(self.domain_identifier, str):
            raise TypeError("%s: domain_identifier must be a str, got %s" % (where, _type_name(self.domain_identifier)))
        if self.expiration_date is not None:
            if isinstance(self.expiration_date, str):
                if not is_rfc3339(self.expiration_date):
                    raise ValueError("%s: expiration_date must be an RFC 3339 timestamp, got %r" % (where, self.expiration_date))
            elif not isinstance(self.expiration_date, (_dt.datetime, _dt.date)):
                raise TypeError("%s: expiration_date must be a datetime, a date or an RFC 3339 str, got %s"
                                % (where, _type_name(self.expiration_date)))
        if not isinstance(self.is_update, bool):
            raise TypeError("%s: is_update must be a bool, got %s" % (where, _type_name(self.is_update)))
        if type(self.attributes) is not dict and not isinstance(self.attributes, Mapping):
            raise TypeError("%s: attributes must be a dict, got %s" % (where, _type_name(self.attributes)))
        for key, value in self.attributes.items():
            if not isinstance(key, str):
                raise TypeError("%s: attribute names must be str, got %s" % (where, _type_name(key)))
            checked = check_attribute(key, value, where)
            if checked is not value:
                self.attributes[key] = checked  # an iterable of strings, kept as the list it was read into

    def to_json(self) -> Dict[str, Any]:
        """The item as the protocol's JSON object."""
        self.check()
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
    return _ENCODER.encode(value).encode("utf-8")


#: One encoder for every message: `json.dumps` with options builds a new one per call.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_default)
