"""HTTP Signatures as Mastodon signs and checks them (draft-cavage-12:
``Signature: keyId=...,algorithm="rsa-sha256",headers="(request-target) host
date digest",signature=...``) and the ``Digest`` of a body (RFC 3230); and,
on incoming requests, HTTP Message Signatures (RFC 9421: ``Signature-Input``
and ``Signature``, with ``Content-Digest``, RFC 9530), checked and, for
peers known to take them, made by the ``http-message-signatures`` library.

The cryptography is ``cryptography``'s (RSA 2048, PKCS#1 v1.5 over SHA-256,
as Mastodon); this module only builds the signing string the draft defines
(docs/decisions.md says why no signature library does that part).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime
from urllib.parse import urlsplit

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from http_message_signatures import (
    ContentDigest,
    HTTPMessageSignaturesException,
    HTTPMessageSigner,
    HTTPMessageVerifier,
    HTTPSignatureKeyResolver,
)
from http_message_signatures import InvalidSignature as InvalidRfc9421
from http_message_signatures.algorithms import RSA_V1_5_SHA256

from ..core import limits

#: headers a signature must cover: a POST its body's digest too (Mastodon)
REQUIRED = ("(request-target)", "host", "date")


class SignatureError(ValueError):
    """A request whose signature is missing, malformed, stale or wrong."""


@dataclass(frozen=True)
class KeyPair:
    private_pem: str
    public_pem: str

    @classmethod
    def generate(cls) -> KeyPair:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        private = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()
        public = (
            key.public_key()
            .public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            .decode()
        )
        return cls(private, public)


@functools.lru_cache(maxsize=limits.FED_KEYS_KEPT)
def _private(pem: str) -> rsa.RSAPrivateKey:
    """A private key, loaded once per process: loading checks the key, which
    took ~45 ms, more than the signing. Keys are this server's own (made by
    :meth:`KeyPair.generate`), so the check is skipped."""
    key = serialization.load_pem_private_key(
        pem.encode(), password=None, unsafe_skip_rsa_key_validation=True
    )
    assert isinstance(key, rsa.RSAPrivateKey)
    return key


@functools.lru_cache(maxsize=limits.FED_KEYS_KEPT)
def _public(pem: str):
    """A peer's public key, loaded once per process (keyed by its PEM: a
    rotated key is another entry)."""
    return serialization.load_pem_public_key(pem.encode())


def digest(body: bytes) -> str:
    return "SHA-256=" + base64.b64encode(hashlib.sha256(body).digest()).decode()


def http_date(when: datetime | None = None) -> str:
    return format_datetime(when or datetime.now(UTC), usegmt=True)


def _signing_string(
    names: list[str], method: str, target: str, headers: Mapping[str, str]
) -> bytes:
    lines = []
    for name in names:
        if name == "(request-target)":
            lines.append(f"(request-target): {method.lower()} {target}")
        else:
            value = headers.get(name)
            if value is None:
                raise SignatureError(f"the signed header {name!r} is missing")
            lines.append(f"{name}: {value}")
    return "\n".join(lines).encode()


def sign(
    key: KeyPair,
    key_id: str,
    method: str,
    url: str,
    body: bytes | None = None,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The headers that sign a request to ``url``: Host, Date, Digest (with
    a body) and Signature, plus ``extra`` (e.g. Content-Type, Accept)."""
    parts = urlsplit(url)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    headers = {"host": parts.netloc, "date": http_date()}
    names = ["(request-target)", "host", "date"]
    if body is not None:
        headers["digest"] = digest(body)
        names.append("digest")
    for name, value in (extra or {}).items():
        headers[name.lower()] = value
    private = _private(key.private_pem)
    raw = private.sign(
        _signing_string(names, method, target, headers), padding.PKCS1v15(), hashes.SHA256()
    )
    headers["signature"] = (
        f'keyId="{key_id}",algorithm="rsa-sha256",'
        f'headers="{" ".join(names)}",'
        f'signature="{base64.b64encode(raw).decode()}"'
    )
    return headers


_PARAM = re.compile(r'([a-zA-Z]+)="([^"]*)"')


@dataclass(frozen=True)
class Signed:
    """What a Signature header says, before it is checked."""

    key_id: str
    names: list[str]
    signature: bytes


def parse(header: str | None) -> Signed:
    if not header:
        raise SignatureError("the request is not signed (no Signature header)")
    params = dict(_PARAM.findall(header))
    if "keyId" not in params or "signature" not in params:
        raise SignatureError("the Signature header needs keyId and signature")
    algorithm = params.get("algorithm", "hs2019")
    if algorithm not in ("rsa-sha256", "hs2019"):
        raise SignatureError(f"unsupported signature algorithm {algorithm!r}")
    try:
        raw = base64.b64decode(params["signature"], validate=True)
    except ValueError:
        raise SignatureError("the signature is not base64") from None
    return Signed(params["keyId"], params.get("headers", "date").lower().split(), raw)


def verify(
    signed: Signed,
    public_pem: str,
    method: str,
    target: str,
    headers: Mapping[str, str],
    body: bytes | None,
    *,
    now: datetime | None = None,
) -> None:
    """Check a parsed signature against the request (``headers`` with
    lowercase names); SignatureError unless it covers what it must, is
    fresh (limits.FED_SIGNATURE_MAX_AGE_S old at most, at most
    limits.FED_CLOCK_SKEW_S ahead) and verifies with ``public_pem``."""
    missing = [n for n in REQUIRED if n not in signed.names]
    if body is not None and method.upper() == "POST" and "digest" not in signed.names:
        missing.append("digest")
    if missing:
        raise SignatureError(f"the signature must cover {', '.join(missing)}")
    try:
        sent = parsedate_to_datetime(headers.get("date", ""))
    except (TypeError, ValueError):
        raise SignatureError("the Date header is not an HTTP date") from None
    age = ((now or datetime.now(UTC)) - sent).total_seconds()
    if age > limits.FED_SIGNATURE_MAX_AGE_S or age < -limits.FED_CLOCK_SKEW_S:
        raise SignatureError("the signed Date is too far from now")
    if body is not None and "digest" in signed.names:
        # "alg=value" pairs; algorithm names are case-insensitive (RFC 3230)
        given = {
            alg.strip().lower(): value.strip()
            for alg, _, value in (d.partition("=") for d in headers.get("digest", "").split(","))
        }
        if given.get("sha-256") != digest(body).partition("=")[2]:
            raise SignatureError("the Digest does not match the body (or is not SHA-256)")
    try:
        public = _public(public_pem)
    except ValueError:
        raise SignatureError("the signer's public key cannot be read") from None
    if not isinstance(public, rsa.RSAPublicKey):
        raise SignatureError("the signer's key is not an RSA key")
    try:
        public.verify(
            signed.signature,
            _signing_string(signed.names, method, target, headers),
            padding.PKCS1v15(),
            hashes.SHA256(),
        )
    except InvalidSignature:
        raise SignatureError("the signature does not verify") from None


# --- RFC 9421 (incoming) ---------------------------------------------------------------
_KEYID = re.compile(r'keyid="([^"]+)"')
#: what an RFC 9421 signature on an inbox POST must cover (as FEP-8b32 and
#: the servers that send them: the method, the target, the body's digest)
RFC9421_REQUIRED = ("@method", "@target-uri", "content-digest")


def rfc9421_key_id(headers: Mapping[str, str]) -> str | None:
    """The key id of an RFC 9421 signature, if the request carries one."""
    if "signature-input" not in headers:
        return None
    found = _KEYID.search(headers["signature-input"])
    if found is None:
        raise SignatureError("the Signature-Input names no keyid")
    return found.group(1)


@dataclass(frozen=True)
class _Message:
    method: str
    url: str
    headers: Mapping[str, str]


class _OneKey(HTTPSignatureKeyResolver):
    def __init__(self, key_id: str, public_pem: str):
        self.key_id, self.pem = key_id, public_pem.encode()

    def resolve_public_key(self, key_id: str):
        return self.pem if key_id == self.key_id else None

    def resolve_private_key(self, key_id: str):
        raise NotImplementedError


def verify_rfc9421(
    key_id: str,
    public_pem: str,
    method: str,
    url: str,
    headers: Mapping[str, str],
    body: bytes | None,
) -> None:
    """Check an RFC 9421 signature (``rsa-v1_5-sha256``, the key of actor
    keys) against the request as received at ``url``; SignatureError unless
    it covers RFC9421_REQUIRED (a POST), is at most
    limits.FED_SIGNATURE_MAX_AGE_S old and verifies, and the Content-Digest
    matches the body."""
    verifier = HTTPMessageVerifier(
        signature_algorithm=RSA_V1_5_SHA256, key_resolver=_OneKey(key_id, public_pem)
    )
    required = RFC9421_REQUIRED if body is not None else ("@method", "@target-uri")
    try:
        verifier.verify(
            _Message(method.upper(), url, headers),
            max_age=timedelta(seconds=limits.FED_SIGNATURE_MAX_AGE_S),
            require_components=required,
        )
        if body is not None:
            ContentDigest.verify(headers.get("content-digest", ""), body)
    except (InvalidRfc9421, HTTPMessageSignaturesException) as exc:
        raise SignatureError(f"the RFC 9421 signature does not verify: {exc}") from None


# --- RFC 9421 (outgoing) ---------------------------------------------------------------
class _OwnKey(HTTPSignatureKeyResolver):
    def __init__(self, pair: KeyPair):
        self.pair = pair

    def resolve_private_key(self, key_id: str):
        return self.pair.private_pem.encode()

    def resolve_public_key(self, key_id: str):
        return self.pair.public_pem.encode()


@dataclass
class _Outgoing:
    """A request as the library signs it (its headers are filled in)."""

    method: str
    url: str
    headers: dict


def sign_rfc9421(
    key: KeyPair,
    key_id: str,
    method: str,
    url: str,
    body: bytes | None = None,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The headers that sign a request to ``url`` as RFC 9421 (what
    :func:`verify_rfc9421` takes: ``@method``, ``@target-uri`` and, with a
    body, ``content-digest``; ``rsa-v1_5-sha256``), with Host, Date and
    ``extra``."""
    request = _Outgoing(
        method.upper(), url, {"Host": urlsplit(url).netloc, "Date": http_date(), **(extra or {})}
    )
    covered = RFC9421_REQUIRED if body is not None else ("@method", "@target-uri")
    HTTPMessageSigner(signature_algorithm=RSA_V1_5_SHA256, key_resolver=_OwnKey(key)).sign(
        request, key_id=key_id, covered_component_ids=covered, body=body, label="sig1"
    )
    return {k.lower(): v for k, v in request.headers.items()}
