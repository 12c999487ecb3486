"""The server's VAPID key pair (RFC 8292): a P-256 key that signs every
push request, its public half the ``server_key`` of each subscription, the
``vapid_key`` of applications and the instance's ``vapid.public_key``
(clients subscribe with it, push services check the signature against it).

Made once per database: the first process that needs it makes a pair and
writes it with SET NX (keys.PUSH_VAPID), then every process reads the one
written (first writer wins, atomic), so all of them sign with one key.
Read where it is used (one GET): a database made anew gets a new pair.
"""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from py_vapid import Vapid01, Vapid02

from ..core import keys, limits
from ..storage.store import Store


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@dataclass(frozen=True, slots=True)
class ServerKey:
    #: the private value (32 bytes), base64url
    private: str
    #: the public key, an uncompressed P-256 point (65 bytes), base64url
    public: str


def generate() -> ServerKey:
    key = ec.generate_private_key(ec.SECP256R1())
    private = key.private_numbers().private_value.to_bytes(32, "big")
    public = key.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    return ServerKey(b64url(private), b64url(public))


async def server_key(store: Store) -> ServerKey:
    """The server's key pair, made now if the database has none."""
    raw = await store.get(keys.PUSH_VAPID)
    if raw is None:
        made = generate()
        # SET NX: of processes racing here, the first write stands
        await store.set(
            keys.PUSH_VAPID, json.dumps({"private": made.private, "public": made.public}), nx=True
        )
        raw = await store.get(keys.PUSH_VAPID)
    data = json.loads(raw)
    return ServerKey(data["private"], data["public"])


def subject(public_url: str | None) -> str:
    """The JWT's ``sub``: how a push service reaches the server's operator."""
    if public_url and public_url.startswith("https://"):
        return public_url.rstrip("/")
    return "mailto:push@localhost"


def headers(
    key: ServerKey,
    endpoint: str,
    sub: str,
    *,
    standard: bool,
    crypto_key: str = "",
    now: float | None = None,
) -> dict[str, str]:
    """The VAPID headers of a request to ``endpoint``: RFC 8292's
    ``Authorization: vapid t=<JWT>, k=<key>`` (``standard``), or the draft
    form Mastodon sends older subscriptions (``Authorization: WebPush
    <JWT>`` and the key in ``Crypto-Key`` after ``crypto_key``)."""
    parts = urlsplit(endpoint)
    claims = {
        "aud": f"{parts.scheme}://{parts.netloc}",
        "sub": sub,
        "exp": int((now or time.time()) + limits.PUSH_VAPID_EXP_S),
    }
    signer = (Vapid02 if standard else Vapid01).from_raw(key.private.encode("ascii"))
    signed = signer.sign(claims, crypto_key or None) if not standard else signer.sign(claims)
    return {name.lower(): value for name, value in signed.items()}
