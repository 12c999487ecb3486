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


#: NAT64's well-known prefix (RFC 6052): its last 32 bits are an IPv4
#: address, reached through the translator (Python calls these global).
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _embedded_v4(addr: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 spelling leads to: IPv4-mapped, NAT64,
    6to4 (2002::/16) and Teredo's server and client."""
    found = []
    if addr.ipv4_mapped is not None:
        found.append(addr.ipv4_mapped)
    if addr in _NAT64:
        found.append(ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF))
    if addr.sixtofour is not None:
        found.append(addr.sixtofour)
    if addr.teredo is not None:
        found.extend(addr.teredo)
    return found


def public_address(ip: str) -> bool:
    """Whether ``ip`` is a public unicast address, in every spelling that
    leads to another (an IPv6 form of a private IPv4 address is private)."""
    addr = ipaddress.ip_address(ip)
    if isinstance(addr, ipaddress.IPv6Address):
        inner = _embedded_v4(addr)
        if inner:
            return all(v4.is_global and not v4.is_multicast for v4 in inner)
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
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
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
