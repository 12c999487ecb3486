"""Input checks. Each raises ValidationError naming the field; none touches Redis."""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from . import limits
from .errors import ValidationError

_LOGIN = re.compile(r"[A-Za-z0-9_]+")
_EXTRA_NAME = re.compile(r"[a-z][a-z0-9_]*")
#: Status fields redpoll owns; extras cannot shadow them.
RESERVED_FIELDS = frozenset(
    {
        "id",
        "text",
        "at",
        "uid",
        "login",
        "deleted",
        "user",
        "user_id",
        "created_at",
        # set by the engine from the text and reply (conversation.py)
        "in_reply_to_id",
        "in_reply_to_account_id",
        "mentions",
        "tags",
        "thread",
        "reblog_of",
        # set by the engine from a poll asked for (redpoll.polls)
        "poll",
        # set by the engine from the status's first link (redpoll.cards)
        "card",
    }
)


def text(value: Any, field: str, max_chars: int, *, allow_empty: bool = False) -> str:
    """A str or UTF-8 bytes, well-formed, at most ``max_chars`` characters."""
    if isinstance(value, (bytes, bytearray)):
        try:
            value = bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            raise ValidationError(field, "is not valid UTF-8") from None
    if not isinstance(value, str):
        raise ValidationError(field, "must be a string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates smuggled into a str
        raise ValidationError(field, "is not valid UTF-8") from None
    if "\x00" in value:
        raise ValidationError(field, "must not contain NUL characters")
    if not allow_empty and not value.strip():
        raise ValidationError(field, "must not be empty")
    if len(value) > max_chars:
        raise ValidationError(field, f"is longer than {max_chars} characters")
    return value


def status_text(value: Any) -> str:
    return text(value, "text", limits.STATUS_MAX_CHARS)


#: a link (http or https, up to white space, less a closing punctuation
#: mark) not inside a word or an address
_URL = re.compile(r"(?<![\w/@.])https?://[^\s<>\"]*[^\s<>\".,;:!?)\]']", re.IGNORECASE)
#: a mention of another server's account: counted as its username only
_REMOTE_MENTION = re.compile(r"(?<![\w/])(@\w[\w.]*)@[\w.-]+\.[a-z]{2,}", re.IGNORECASE)


def status_length(value: str) -> int:
    """The length of a status text as Mastodon counts it (its
    StatusLengthValidator) and the web app's counter: a link counts
    limits.STATUS_URL_CHARS, ``@user@domain`` counts as ``@user``."""
    short = _URL.sub("x" * limits.STATUS_URL_CHARS, value)
    return len(_REMOTE_MENTION.sub(r"\1", short))


def status_body(value: Any, field: str, *, allow_empty: bool = False, spoiler: str = "") -> str:
    """A local status's text: :func:`text` of at most
    limits.STATUS_TEXT_MAX_CHARS raw characters, and with ``spoiler`` (its
    content warning) at most limits.STATUS_MAX_CHARS as :func:`status_length`
    counts."""
    value = text(value, field, limits.STATUS_TEXT_MAX_CHARS, allow_empty=allow_empty)
    if status_length(value) + len(spoiler) > limits.STATUS_MAX_CHARS:
        raise ValidationError(field, f"is longer than {limits.STATUS_MAX_CHARS} characters")
    return value


def login(value: Any) -> str:
    value = text(value, "login", limits.LOGIN_MAX_CHARS)
    if not _LOGIN.fullmatch(value):
        raise ValidationError("login", "may contain only letters, digits and underscores")
    return value


def an_id(value: Any, field: str = "id") -> int:
    """A positive integer id, given as int or decimal string, below 2**53."""
    if type(value) is int and 0 < value <= limits.MAX_ID:  # the common case, first
        return value
    if isinstance(value, bool):
        raise ValidationError(field, "must be a numeric id")
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).decode("ascii", "replace")
    if isinstance(value, str):
        if not value.isascii() or not value.isdigit() or len(value) > 16:
            raise ValidationError(field, "must be a numeric id")
        value = int(value)
    if not isinstance(value, int):
        raise ValidationError(field, "must be a numeric id")
    if not 0 < value <= limits.MAX_ID:
        raise ValidationError(field, f"must be between 1 and {limits.MAX_ID}")
    return value


def optional_id(value: Any, field: str) -> int | None:
    return None if value is None or value == "" else an_id(value, field)


def page_limit(
    value: Any, default: int = limits.PAGE_DEFAULT, maximum: int = limits.PAGE_MAX
) -> int:
    if value is None or value == "":
        return default
    # int() would quietly turn True into 1 and 2.5 into 2, and raise
    # OverflowError (not a ValidationError) on infinity
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise ValidationError("limit", "must be an integer")
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValidationError("limit", "must be an integer") from None
    if number < 1:
        raise ValidationError("limit", "must be at least 1")
    return min(number, maximum)


def location(value: str) -> str:
    """``"lat,lon"`` in degrees: a status's ``location`` field (the v1.1
    stream's ``locations`` boxes match it)."""
    parts = value.split(",")
    try:
        lat, lon = (float(p) for p in parts)
    except ValueError:
        raise ValidationError("location", 'must be "lat,lon" in degrees') from None
    if not (math.isfinite(lat) and math.isfinite(lon) and -90 <= lat <= 90 and -180 <= lon <= 180):
        raise ValidationError("location", "is outside -90..90 latitude / -180..180 longitude")
    return f"{_degrees(lat)},{_degrees(lon)}"


def _degrees(value: float) -> str:
    """Fixed-point, at most 7 decimals (about 1 cm): ``:g`` kept only 6
    significant digits, which moved a longitude like 151.209296 by ~30 m, and
    wrote tiny values in exponent form."""
    text = f"{value:.7f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def profile_fields(fields: Any) -> str:
    """A profile's name/value pairs, as the JSON the user record keeps."""
    if not isinstance(fields, (list, tuple)):
        raise ValidationError("fields", "must be a list of name/value pairs")
    if len(fields) > limits.PROFILE_FIELDS_MAX:
        raise ValidationError("fields", f"at most {limits.PROFILE_FIELDS_MAX} fields")
    clean = []
    for pair in fields:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise ValidationError("fields", "each field is a name and a value")
        name = text(pair[0], "fields.name", limits.PROFILE_FIELD_MAX_CHARS, allow_empty=True)
        value = text(pair[1], "fields.value", limits.PROFILE_FIELD_MAX_CHARS, allow_empty=True)
        if name.strip() or value.strip():  # Mastodon drops blank rows
            clean.append([name, value])
    return json.dumps(clean, ensure_ascii=False, separators=(",", ":"))


def normalize_tag(name: str) -> str:
    """A hashtag's name as Mastodon keeps it: NFKC, lowercased, without '#'."""
    return unicodedata.normalize("NFKC", name).lstrip("#").lower()


def tag_name(value) -> str:
    """A hashtag name from a path or query: validated and normalized."""
    name = normalize_tag(text(value, "tag", limits.TAG_MAX_CHARS + 1))
    if not re.fullmatch(r"\w+", name) or name.isdigit():
        raise ValidationError("tag", "must be letters, digits or underscores, not only digits")
    return name


_HOST_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")


def attribution_domains(domains: Any) -> str:
    """The domains allowed to credit an account (lower-cased, a leading
    ``*.`` or trailing dot dropped, each once), as the JSON the user record
    keeps."""
    if not isinstance(domains, (list, tuple)):
        raise ValidationError("attribution_domains", "must be a list of domains")
    clean: list[str] = []
    for raw in domains:
        if not isinstance(raw, str):
            raise ValidationError("attribution_domains", "each is a domain name")
        host = raw.strip().lower().removeprefix("*.").rstrip(".")
        if not host:
            continue
        labels = host.split(".")
        if (
            len(host) > limits.ATTRIBUTION_DOMAIN_MAX_CHARS
            or len(labels) < 2
            or not all(_HOST_LABEL.fullmatch(label) for label in labels)
        ):
            raise ValidationError("attribution_domains", f"{raw[:64]!r} is not a domain name")
        if host not in clean:
            clean.append(host)
    if len(clean) > limits.ATTRIBUTION_DOMAINS_MAX:
        raise ValidationError(
            "attribution_domains", f"at most {limits.ATTRIBUTION_DOMAINS_MAX} domains"
        )
    return json.dumps(clean, separators=(",", ":"))


def extra_fields(extra: Mapping[str, Any] | None) -> dict[str, str]:
    if not extra:
        return {}
    if not isinstance(extra, Mapping):
        raise ValidationError("extra", "must be a mapping of names to strings")
    if len(extra) > limits.EXTRA_MAX_FIELDS:
        raise ValidationError("extra", f"has more than {limits.EXTRA_MAX_FIELDS} fields")
    clean: dict[str, str] = {}
    for name, value in extra.items():
        if (
            not isinstance(name, str)
            or len(name) > limits.EXTRA_NAME_MAX
            or not _EXTRA_NAME.fullmatch(name)
        ):
            raise ValidationError(
                "extra",
                f"field name {name!r} must match [a-z][a-z0-9_]* "
                f"and be at most {limits.EXTRA_NAME_MAX} characters",
            )
        if name in RESERVED_FIELDS:
            raise ValidationError("extra", f"field name {name!r} is reserved")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        value = text(value, f"extra.{name}", limits.EXTRA_VALUE_MAX_BYTES)
        if len(value.encode("utf-8")) > limits.EXTRA_VALUE_MAX_BYTES:
            raise ValidationError(
                f"extra.{name}", f"is longer than {limits.EXTRA_VALUE_MAX_BYTES} bytes"
            )
        clean[name] = location(value) if name == "location" else value
    return clean
