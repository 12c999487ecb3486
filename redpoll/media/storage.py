"""Where media files are kept: one small interface (:class:`MediaStorage`)
and its local-directory backend (:class:`LocalStorage`), the default.

Names are given by the caller (redpoll.media.files names a file by a keyed
hash of its bytes): ``ab/cd/abcd....jpg``. A name never changes content, so
``put`` of a name that exists is a no-op, a repeated ``delete`` is harmless,
and what serves the files may let clients cache them for a year.

An S3-compatible backend would implement the same three calls (and ``url``
would name the bucket's address); none is written yet.
"""
from __future__ import annotations

import asyncio
import os
import re
import secrets
import time
from pathlib import Path
from typing import Protocol

from ..core import limits
from ..core.settings import Settings

#: Where ``redpoll serve`` serves the local backend's files.
URL_PATH = "/system/media"
#: A stored name: two levels of two hex digits, 32 hex digits, an extension.
NAME = re.compile(r"[0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{32}\.(?:jpg|png|webp|gif)")
CONTENT_TYPES = {"jpg": "image/jpeg", "png": "image/png", "webp": "image/webp",
                 "gif": "image/gif"}


class MediaStorage(Protocol):
    async def put(self, name: str, data: bytes) -> None:
        """Store ``data`` under ``name``, whole or not at all (a reader
        never sees part of a file). Idempotent."""

    def url(self, name: str) -> str:
        """Where clients fetch ``name``: an absolute URL, or a path under
        the server's own base (starting with ``/``)."""

    async def delete(self, name: str) -> None:
        """Remove ``name``; nothing happens if it is not there."""

    async def tidy(self, older_than_s: float) -> int:
        """Remove what writes cut short left behind (older than this); how
        many."""


class LocalStorage:
    """Files in a directory (``Settings.media_root``), served by ``redpoll
    serve`` under :data:`URL_PATH` (or by a proxy from the same directory,
    docs/operating.md).

    A write goes to a temporary name in ``.partial/`` first and is renamed
    to its name (the rename is atomic): a write cut short (a crash, a full
    disk) leaves only a temporary file, which :meth:`tidy` removes later."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)
        self.partial = self.root / ".partial"

    def path(self, name: str) -> Path | None:
        """The file of ``name``, or None if ``name`` is not a stored name
        (nothing outside the directory can be named)."""
        if not NAME.fullmatch(name):
            return None
        return self.root / name

    async def put(self, name: str, data: bytes) -> None:
        await asyncio.to_thread(self._put, name, data)

    def _put(self, name: str, data: bytes) -> None:
        target = self.path(name)
        if target is None:
            raise ValueError(f"not a media file name: {name!r}")
        if target.exists() and target.stat().st_size == len(data):
            return  # the same name is the same content: written already
        target.parent.mkdir(parents=True, exist_ok=True)
        self.partial.mkdir(parents=True, exist_ok=True)
        temp = self.partial / f"{target.name}.{secrets.token_hex(4)}"
        try:
            with open(temp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(temp, target)  # atomic: the name shows the whole file or none
        finally:
            temp.unlink(missing_ok=True)

    def url(self, name: str) -> str:
        return f"{URL_PATH}/{name}"

    async def delete(self, name: str) -> None:
        path = self.path(name)
        if path is not None:
            await asyncio.to_thread(path.unlink, True)

    async def tidy(self, older_than_s: float = limits.MEDIA_PARTIAL_FILE_S) -> int:
        return await asyncio.to_thread(self._tidy, older_than_s)

    def _tidy(self, older_than_s: float) -> int:
        if not self.partial.is_dir():
            return 0
        cutoff, gone = time.time() - older_than_s, 0
        for entry in self.partial.iterdir():
            try:
                if entry.stat().st_mtime < cutoff:
                    entry.unlink()
                    gone += 1
            except FileNotFoundError:
                pass
        return gone


def open_storage(settings: Settings) -> LocalStorage:
    """The storage the settings name (today always the local directory)."""
    return LocalStorage(settings.media_root)
