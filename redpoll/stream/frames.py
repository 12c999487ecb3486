"""The Mastodon WebSocket stream on the wire: RFC 6455 frames as the server
writes and reads them, the close codes, and each queued item as its message
text (``{"stream":[...],"event":...,"payload":...}``) and as a whole server
frame, each built once for every socket on the same stream.

Pure functions over bytes and text: both the ASGI WebSocket endpoint
(:mod:`.websocket`) and the handed-off socket (:class:`.handoff.LeanSocket`)
write through them.
"""

from __future__ import annotations

import json

from ..core import limits

OP_CONT, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0, 1, 2, 8, 9, 10
#: close codes
CLOSE_PROTOCOL_ERROR, CLOSE_BAD_DATA, CLOSE_TOO_BIG, CLOSE_INTERNAL = 1002, 1007, 1009, 1011
CLOSE_UNSUPPORTED = 1003
CLOSE_REVOKED = 1008  # policy violation: the token was revoked (or its user suspended)
CLOSE_SHUTDOWN = 1012
CLOSE_STALL = 1013
#: largest client message read (subscribe messages are tiny)
MAX_MESSAGE = 4096


def ws_frame(op: int, payload: bytes) -> bytes:
    """A server frame (FIN, never masked: RFC 6455 5.1)."""
    n = len(payload)
    if n < 126:
        return bytes((0x80 | op, n)) + payload
    if n < 65536:
        return bytes((0x80 | op, 126)) + n.to_bytes(2, "big") + payload
    return bytes((0x80 | op, 127)) + n.to_bytes(8, "big") + payload


def frame_size(buf, pos: int, end: int) -> tuple[int, int] | None:
    """The payload length of the frame at ``buf[pos:end]`` and its header's
    length before any mask key (RFC 6455 5.2: 7 bits, or 126 + 16 bits, or
    127 + 64 bits), or None while the length itself is not all there."""
    size = buf[pos + 1] & 0x7F
    if size == 126:
        return (int.from_bytes(buf[pos + 2 : pos + 4], "big"), 4) if end - pos >= 4 else None
    if size == 127:
        return (int.from_bytes(buf[pos + 2 : pos + 10], "big"), 10) if end - pos >= 10 else None
    return size, 2


def close_frame(code: int, reason: str = "") -> bytes:
    return ws_frame(OP_CLOSE, code.to_bytes(2, "big") + reason.encode()[:123])


#: the events whose payload is an entity's JSON (or a deleted id)
STATUS_EVENTS = frozenset({"update", "status.update", "delete", "notification", "conversation"})

#: (label JSON, event name, rendered payload) -> the message text: every
#: socket on the same stream gets the same text for an event, built once
#: (the payload's JSON escaping was a per-socket cost); cleared when full
_TEXTS: dict[tuple, str] = {}


#: the same messages as whole server frames, for handed-off sockets
_WIRE: dict[tuple, bytes] = {}


def wire(item: tuple) -> bytes | None:
    """``item`` as the bytes of a text frame (handoff.LeanSocket); an event's
    frame is built once for every socket on the same stream."""
    name, _, payload = item
    if name in STATUS_EVENTS:
        key = (payload[0], name, payload[1])
        data = _WIRE.get(key)
        if data is None:
            if len(_WIRE) >= limits.WS_MESSAGES_KEPT:
                _WIRE.clear()
            data = _WIRE[key] = ws_frame(OP_TEXT, frame(item).encode())
        return data
    text = frame(item)
    return None if text is None else ws_frame(OP_TEXT, text.encode())


def close_code(code: int) -> int:
    """A v1.1 disconnect code (hub.Subscriber.finish) as a WebSocket close code."""
    return {4: CLOSE_STALL, 6: CLOSE_REVOKED, 1003: CLOSE_UNSUPPORTED}.get(code, CLOSE_SHUTDOWN)


def frame(item: tuple) -> str | None:
    name, _, payload = item
    if name in STATUS_EVENTS:
        key = (payload[0], name, payload[1])  # bytes hash once per object, then cached
        text = _TEXTS.get(key)
        if text is None:
            if len(_TEXTS) >= limits.WS_MESSAGES_KEPT:
                _TEXTS.clear()
            label, data = payload
            # as json.dumps({"stream": label, "event": name, "payload": data.decode()},
            # separators=(",", ":"), ensure_ascii=False)
            text = _TEXTS[key] = (
                f'{{"stream":{label},"event":{json.dumps(name)},"payload":'
                f"{json.dumps(data.decode(), ensure_ascii=False)}}}"
            )
        return text
    if name == "error":
        return json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    return None  # keep-alives and warnings: the WebSocket pings instead
