"""Request parameters as Mastodon reads them: query and body merged (the
body wins), bounded body parsing (JSON, forms, multipart; nested
``a[0][b]`` keys), typed getters that raise Mastodon's 422s."""

from __future__ import annotations

import builtins
import math
import re
from typing import Any
from urllib.parse import parse_qsl

import orjson
from starlette.datastructures import UploadFile
from starlette.requests import Request

from ..core import limits, validate
from ..core.errors import ValidationError
from ..gateway.body import check_json_depth, read_body
from .responses import ApiError


class Params:
    """Query and body parameters merged (body wins), as Mastodon reads them.

    Form keys ending in ``[]`` are lists (``id[]=1&id[]=2``); a JSON body may
    hold any JSON type, so every getter checks the type it gets.
    """

    def __init__(self, data: dict[str, Any]):
        self.data = data

    def has(self, name: str) -> bool:
        return self.data.get(name) not in (None, "")

    def raw(self, name: str) -> Any:
        return self.data.get(name)

    def bool(self, name: str, default: bool = False) -> bool:
        value = self.data.get(name)
        if value is None or value == "":
            return default
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "1", "on", "yes"):
            return True
        if isinstance(value, str) and value.lower() in ("false", "0", "off", "no"):
            return False
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        raise ValidationError(name, "must be a boolean")

    def number(self, name: str) -> float | None:
        value = self.data.get(name)
        if value is None or value == "":
            return None
        if isinstance(value, bool) or isinstance(value, list):
            raise ValidationError(name, "must be a number")
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValidationError(name, "must be a number") from None
        if not math.isfinite(number):
            raise ValidationError(name, "must be a finite number")
        return number

    def cursor(self, name: str) -> int | None:
        value = self.data.get(name)
        if value is None or value == "":
            return None
        if isinstance(value, list):
            raise ValidationError(name, "must be a single id")
        return validate.an_id(value, name)

    def nested(self, name: str) -> dict | None:
        """An object parameter: a JSON object (``{"poll": {"options": [...]}}``)
        or form keys with its name and a bracketed part, as Rails reads them
        (``poll[options][]=a&poll[expires_in]=300`` gives ``{"options": ["a"],
        "expires_in": "300"}``); None when not sent."""
        value = self.data.get(name)
        if isinstance(value, dict):
            return value
        if value not in (None, ""):
            raise ValidationError(name, "must be an object")
        prefix = name + "["
        out = {
            key[len(prefix) : -1]: v
            for key, v in self.data.items()
            if key.startswith(prefix) and key.endswith("]") and "[" not in key[len(prefix) : -1]
        }
        return out or None

    def tree(self, name: str) -> dict | None:
        """An object parameter nested deeper than :meth:`nested` reads: a
        JSON object, or form keys ``name[a][b]...`` as Rails reads them
        (``data[alerts][mention]=true`` gives ``{"alerts": {"mention":
        "true"}}``); None when not sent. A key both a value and an object
        is refused (422)."""
        value = self.data.get(name)
        if isinstance(value, dict):
            return value
        if value not in (None, ""):
            raise ValidationError(name, "must be an object")
        out: dict = {}
        prefix = name + "["
        for key, item in self.data.items():
            if not (key.startswith(prefix) and key.endswith("]")):
                continue
            path = key[len(name) + 1 : -1].split("][")
            if len(path) > 4 or any(not part or "[" in part or "]" in part for part in path):
                raise ValidationError(name, f"malformed parameter {key[:60]!r}")
            node = out
            for part in path[:-1]:
                node = node.setdefault(part, {})
                if not isinstance(node, dict):
                    raise ValidationError(name, f"malformed parameter {key[:60]!r}")
            if isinstance(node.get(path[-1]), dict):
                raise ValidationError(name, f"malformed parameter {key[:60]!r}")
            node[path[-1]] = item
        return out or None

    def ids(self, name: str, *, max_count: int = limits.API_IDS_PER_REQUEST) -> list[int]:
        value = self.data.get(name)
        if value is None or value == "":
            return []
        items = value if isinstance(value, list) else [value]
        if len(items) > max_count:
            raise ValidationError(name, f"at most {max_count} ids")
        return [validate.an_id(item, name) for item in items]

    def cursors(self) -> dict:
        """max_id / since_id / min_id / limit for the engine (it validates them)."""
        out = {}
        for name in ("max_id", "since_id", "min_id", "limit"):
            value = self.data.get(name)
            if isinstance(value, list):
                raise ValidationError(name, "must be a single value")
            if value is not None and value != "":
                out[name] = value
        return out

    # (last in the class: a method named ``str`` would hide the type in the
    # annotations after it, as ``bool`` does in its own)
    def str(
        self,
        name: str,
        *,
        required: builtins.bool = False,
        max_chars: int = 10_000,
        allow_empty: builtins.bool = True,
    ) -> str | None:
        value = self.data.get(name)
        if value is None or (value == "" and not required):
            if required:
                raise ValidationError(name, "is missing")
            return None
        if isinstance(value, list):
            raise ValidationError(name, "must be a single value")
        if not isinstance(value, str):
            raise ValidationError(name, "must be a string")
        return validate.text(value, name, max_chars, allow_empty=allow_empty and not required)


#: ``name[][field]`` / ``name[0][field]``: a list of objects in a form (Rails' nested params)
_NESTED = re.compile(r"([^\[\]]+)\[(\d*)\]\[([^\[\]]+)\]")


def _merge(data: dict[str, Any], pairs) -> None:
    indexed: dict[tuple[str, str], dict] = {}
    for key, value in pairs:
        nested = _NESTED.fullmatch(key) if "][" in key else None
        if nested is not None:  # a list of objects: a new one where a field repeats (Rails)
            name, index, attr = nested.groups()
            items = data.get(name)
            if not isinstance(items, list):
                items = data[name] = []
            if index:
                item = indexed.get((name, index))
                if item is None:
                    item = indexed[(name, index)] = {}
                    items.append(item)
            else:
                if not items or not isinstance(items[-1], dict) or attr in items[-1]:
                    items.append({})
                item = items[-1]
            item[attr] = value
            continue
        if key.endswith("[]"):
            data.setdefault(key[:-2], [])
            if not isinstance(data[key[:-2]], list):
                data[key[:-2]] = [data[key[:-2]]]
            data[key[:-2]].append(value)
        else:
            data[key] = value


async def parse_params(
    request: Request,
    files: dict[str, bytes] | None = None,
    max_bytes: int = limits.API_MAX_BODY_BYTES,
    too_big: str = "",
) -> Params:
    """The request's parameters. A multipart body's files are refused (422)
    unless ``files`` is given, which gets them by field name (the bytes);
    the body is bounded by ``max_bytes`` (413 ``too_big`` beyond)."""
    data: dict[str, Any] = {}
    _merge(data, request.query_params.multi_items())
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if request.method in ("GET", "HEAD") and not (
        (kind == "application/json" or kind.endswith("+json"))
        and request.headers.get("content-length", "0") not in ("", "0")
    ):
        # (a GET's parameters are its query, or a JSON body as Rails reads one:
        # Mastodon.py sends familiar_followers' ids so)
        return Params(data)
    body = await read_body(request, max_bytes, too_big)
    if not body.strip():
        return Params(data)
    if kind == "application/json" or kind.endswith("+json"):
        check_json_depth(body)
        try:
            parsed = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise ApiError(400, "The request body is not valid JSON") from None
        if not isinstance(parsed, dict):
            raise ApiError(422, "The request body must be a JSON object")
        for key, value in parsed.items():
            data[key[:-2] if key.endswith("[]") else key] = value
    elif kind in ("application/x-www-form-urlencoded", ""):
        try:
            text = body.decode("utf-8")
            pairs = parse_qsl(
                text,
                keep_blank_values=True,
                strict_parsing=False,
                max_num_fields=1000,
                errors="strict",
            )
        except (UnicodeDecodeError, ValueError):
            raise ApiError(400, "The request body is not valid form data") from None
        _merge(data, pairs)
    elif kind == "multipart/form-data":
        try:
            # files are allowed through the parser (the body is bounded
            # already) so that an upload gets the clear 422 below
            form = await request.form(max_files=8, max_fields=1000)
        except Exception:  # python-multipart / starlette parse errors
            raise ApiError(400, "The request body is not valid multipart form data") from None
        items = form.multi_items()
        sent = [(k, v) for k, v in items if isinstance(v, UploadFile)]
        if sent and files is None:
            raise ApiError(
                422,
                "File uploads are only taken by POST /api/v1/media, "
                "POST /api/v2/media and update_credentials (avatar, header)",
            )
        for key, upload in sent:
            assert files is not None  # (refused above otherwise)
            files[key] = await upload.read()
            await upload.close()
        _merge(data, [(k, v) for k, v in items if not isinstance(v, UploadFile)])
    else:
        raise ApiError(415, f"Unsupported content type {kind[:60]!r}")
    return Params(data)
