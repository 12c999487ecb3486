"""What an outgoing fetch may reach: never a private, loopback, link-local
or otherwise internal address (a peer could make the server fetch its own
admin ports), unless Settings.federation_loopback allows it (tests and
development on one machine). The address is checked after DNS resolution,
and the connection goes to the address checked (no second lookup a peer
could answer differently)."""
from __future__ import annotations

import asyncio
import ipaddress
import socket
from urllib.parse import urlsplit

from ..core.errors import RedpollError


class Refused(RedpollError):
    """An address an outgoing fetch must not reach, or a URL it must not use."""


def public_address(ip: str) -> bool:
    addr = ipaddress.ip_address(ip)
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    return addr.is_global and not addr.is_multicast


def check_url(url: str, *, loopback: bool) -> tuple[str, str, int]:
    """(scheme, host, port) of a URL an outgoing fetch may use: https (http
    too under ``loopback``), a host, no user info."""
    parts = urlsplit(url)
    allowed = ("https", "http") if loopback else ("https",)
    if parts.scheme not in allowed or not parts.hostname:
        raise Refused(f"refusing to fetch {url!r}: only {' and '.join(allowed)} URLs")
    if parts.username or parts.password:
        raise Refused(f"refusing to fetch {url!r}: credentials in the URL")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.scheme, parts.hostname, port


async def resolve(host: str, port: int, *, loopback: bool) -> str:
    """The address to connect to for ``host``; Refused if any address the
    name resolves to is not public (unless ``loopback``)."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port,
                                                             type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise Refused(f"cannot resolve {host!r}: {exc.strerror}") from None
    addresses = [info[4][0] for info in infos]
    if not addresses:
        raise Refused(f"{host!r} has no address")
    if not loopback:
        bad = [a for a in addresses if not public_address(a)]
        if bad:
            raise Refused(f"refusing to fetch from {host!r}: {bad[0]} is not a public address")
    return addresses[0]
