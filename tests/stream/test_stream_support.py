"""Shared pieces of the stream tests: a real stream server process, and a raw
HTTP line reader. (No tests here; the test modules import from it.)"""

from __future__ import annotations

from support.streams import stream  # noqa: F401


def sentinel_text(tag: str) -> str:
    return f"sentinel {tag}"


async def marker(rp, uid: int, tag: str):
    """Post a status every client in a test matches (sample 100 / track 'sentinel')
    so a test can tell that everything before it has been delivered."""
    return await rp.statuses.post(uid, sentinel_text(tag))
