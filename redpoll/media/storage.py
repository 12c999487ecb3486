"""Where media files are kept: one small interface (:class:`MediaStorage`)
and two backends: a local directory (:class:`LocalStorage`, the default)
and an S3-compatible bucket (:class:`S3Storage`, when REDPOLL_S3_BUCKET is
set; docs/operating.md).

Names are given by the caller (redpoll.media.files names a file by a keyed
hash of its bytes): ``ab/cd/abcd....jpg``. A name never changes content, so
``put`` of a name that exists writes the same bytes again (or nothing), a
repeated ``delete`` is harmless, and what serves the files may let clients
cache them for a year.

A backend that cannot store or delete a file raises
:class:`~redpoll.core.errors.MediaStorageError` (503) saying what failed;
the caller decides what a failed write leaves (redpoll.media.uploads gives
the upload up, profile_images keeps the old image).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import secrets
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Protocol

from ..core import limits
from ..core.errors import MediaStorageError
from ..core.settings import Settings

log = logging.getLogger("redpoll.media")

#: Where ``redpoll serve`` serves the local backend's files.
URL_PATH = "/system/media"
#: A stored name: two levels of two hex digits, 32 hex digits, an extension.
NAME = re.compile(
    r"[0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{32}\.(?:jpg|png|webp|gif|mp4|webm|m4a|mp3|ogg|wav|flac)"
)
CONTENT_TYPES = {
    "jpg": "image/jpeg",
    "png": "image/png",
    "webp": "image/webp",
    "gif": "image/gif",
    # other servers' videos and sounds kept as they came (redpoll.media.remote)
    "mp4": "video/mp4",
    "webm": "video/webm",
    "m4a": "audio/mp4",
    "mp3": "audio/mpeg",
    "ogg": "audio/ogg",
    "wav": "audio/wav",
    "flac": "audio/flac",
}
#: How every stored file may be cached: a name is its content's, so for a year.
CACHE_CONTROL = f"public, max-age={limits.MEDIA_CACHE_MAX_AGE_S}, immutable"


class MediaStorage(Protocol):
    async def put(self, name: str, data: bytes) -> None:
        """Store ``data`` under ``name``, whole or not at all (a reader
        never sees part of a file). Idempotent. ValueError for a name that
        is not a stored name (:data:`NAME`); MediaStorageError if the
        storage fails."""

    def url(self, name: str) -> str:
        """Where clients fetch ``name``: an absolute URL, or a path under
        the server's own base (starting with ``/``)."""

    async def read(self, name: str) -> bytes | None:
        """The bytes of ``name``, or None if there is no such file (a name
        that is not a stored name included). MediaStorageError if the
        storage fails. (For a member's archive, redpoll.portability.archive:
        a stored file is at most limits.MEDIA_IMAGE_MAX_BYTES.)"""

    async def delete(self, name: str) -> None:
        """Remove ``name``; nothing happens if it is not there (idempotent).
        MediaStorageError if the storage fails."""

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
        target = self.path(name)
        if target is None:
            raise ValueError(f"not a media file name: {name!r}")
        try:
            await asyncio.to_thread(self._put, target, data)
        except OSError as exc:  # a full disk, a directory not writable
            log.error("storing media file %s failed: %s", target, exc)
            raise MediaStorageError(
                f"the media storage could not store a file ({exc.strerror or exc})"
            ) from exc

    def _put(self, target: Path, data: bytes) -> None:
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

    async def read(self, name: str) -> bytes | None:
        path = self.path(name)
        if path is None:
            return None
        try:
            return await asyncio.to_thread(path.read_bytes)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise MediaStorageError(
                f"the media storage could not read a file ({exc.strerror or exc})"
            ) from exc

    async def delete(self, name: str) -> None:
        path = self.path(name)
        if path is None:
            return
        try:
            await asyncio.to_thread(path.unlink, True)
        except NotADirectoryError:  # (a file where a directory of the path would be)
            return
        except OSError as exc:
            raise MediaStorageError(
                f"the media storage could not delete a file ({exc.strerror or exc})"
            ) from exc

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


class S3Storage:
    """Objects in an S3-compatible bucket (Settings.s3_*), fetched by clients
    from ``Settings.s3_public_url`` (the bucket's public address or a CDN in
    front of it): ``url(name)`` is that base and the name.

    Through boto3 (docs/decisions.md, "S3 storage through boto3"): its
    client blocks, so every call runs on this backend's own threads
    (limits.MEDIA_S3_THREADS; a slow bucket does not hold up the threads
    the rest of the process shares), each bounded by
    limits.MEDIA_S3_CONNECT_TIMEOUT_S / MEDIA_S3_READ_TIMEOUT_S and retried
    at most limits.MEDIA_S3_MAX_ATTEMPTS times in all.

    A PutObject is atomic (the object appears whole or not at all) and
    writing a name again writes the same bytes; a DeleteObject of a missing
    key succeeds: both idempotent. Each object carries its Content-Type and
    a year's Cache-Control (:data:`CACHE_CONTROL`), which S3 sends back to
    whoever fetches it."""

    def __init__(self, settings: Settings):
        self.bucket = settings.s3_bucket
        self.public_url = settings.s3_public_url
        self._settings = settings
        self._client = None
        self._client_lock = threading.Lock()
        self._pool = ThreadPoolExecutor(limits.MEDIA_S3_THREADS, thread_name_prefix="redpoll-s3")

    def _s3(self):
        """The boto3 client, made on first use (boto3 is imported only by a
        process that uses S3: it takes a noticeable time to load). Its calls
        are thread-safe; making it is not, hence the lock."""
        with self._client_lock:
            if self._client is None:
                import boto3  # (third-party, loaded when S3 is configured)
                from botocore.config import Config

                s = self._settings
                config = Config(
                    region_name=s.s3_region,
                    connect_timeout=limits.MEDIA_S3_CONNECT_TIMEOUT_S,
                    read_timeout=limits.MEDIA_S3_READ_TIMEOUT_S,
                    retries={"max_attempts": limits.MEDIA_S3_MAX_ATTEMPTS, "mode": "standard"},
                    max_pool_connections=limits.MEDIA_S3_THREADS,
                    # another server than AWS: bucket in the path, not the
                    # host name (which would need DNS for every bucket)
                    s3={"addressing_style": "path" if s.s3_endpoint else "auto"},
                    # checksums only where S3 requires them: the CRC headers
                    # boto3 adds by default are refused by several
                    # S3-compatible servers
                    request_checksum_calculation="when_required",
                    response_checksum_validation="when_required",
                )
                self._client = boto3.session.Session().client(
                    "s3",
                    endpoint_url=s.s3_endpoint,
                    aws_access_key_id=s.s3_access_key,
                    aws_secret_access_key=s.s3_secret_key,
                    config=config,
                )
            return self._client

    async def _call(self, what: str, name: str, fn, absent_ok: bool = False) -> None:
        """``fn`` on this backend's threads; MediaStorageError saying what
        failed (the server's error code and message, or the client's own:
        cannot connect, timed out, no credentials). ``absent_ok``: a bucket
        or key that does not exist is success (a deletion's goal)."""
        try:
            await asyncio.get_running_loop().run_in_executor(self._pool, fn)
        except Exception as exc:  # botocore's ClientError and BotoCoreError, OSError
            code, detail = _s3_error(exc)
            if absent_ok and code in ("NoSuchBucket", "NoSuchKey"):
                return
            log.error(
                "S3 %s of %s in bucket %s failed: %s: %s",
                what,
                name,
                self.bucket,
                type(exc).__name__,
                exc,
            )
            verb = {"PutObject": "store", "GetObject": "read"}.get(what, "delete")
            raise MediaStorageError(
                f"the media storage could not {verb} a file (S3 {what}: {detail})"
            ) from exc

    async def put(self, name: str, data: bytes) -> None:
        if not NAME.fullmatch(name):
            raise ValueError(f"not a media file name: {name!r}")
        await self._call(
            "PutObject",
            name,
            lambda: self._s3().put_object(
                Bucket=self.bucket,
                Key=name,
                Body=data,
                ContentType=CONTENT_TYPES[name.rsplit(".", 1)[1]],
                CacheControl=CACHE_CONTROL,
            ),
        )

    def url(self, name: str) -> str:
        return f"{self.public_url}/{name}"

    async def read(self, name: str) -> bytes | None:
        if not NAME.fullmatch(name):
            return None
        got: list[bytes | None] = []

        def fetch() -> None:
            try:
                body = self._s3().get_object(Bucket=self.bucket, Key=name)["Body"]
                got.append(body.read())
            except Exception as exc:
                if _s3_error(exc)[0] in ("NoSuchKey", "404"):
                    got.append(None)
                    return
                raise

        await self._call("GetObject", name, fetch)
        return got[0] if got else None

    async def delete(self, name: str) -> None:
        if not NAME.fullmatch(name):
            return  # (nothing of ours has such a name)
        await self._call(
            "DeleteObject",
            name,
            lambda: self._s3().delete_object(Bucket=self.bucket, Key=name),
            absent_ok=True,
        )

    async def tidy(self, older_than_s: float = limits.MEDIA_PARTIAL_FILE_S) -> int:
        """Nothing to tidy: a PutObject (one request, never a multipart
        upload here) leaves a whole object or none, no temporary parts."""
        return 0


def _s3_error(exc: Exception) -> tuple[str, str]:
    """An S3 call's failure: (error code, what to tell the caller). The
    server's errors are its code and message ("NoSuchBucket: The specified
    bucket does not exist"); the client's own (cannot connect, timed out, no
    credentials) only their name, as their text may hold the endpoint's
    address (the log has it)."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict) and response.get("Error"):
        error = response["Error"]
        code = str(error.get("Code") or response.get("ResponseMetadata", {}).get("HTTPStatusCode"))
        return code, f"{code}: {error.get('Message') or 'no message'}"
    return type(exc).__name__, type(exc).__name__


#: One S3 backend per configuration in a process (a worker opens the
#: storage for every job; a boto3 client costs tens of ms to make).
_s3_backends: dict[tuple, S3Storage] = {}
_s3_backends_lock = threading.Lock()


def open_storage(settings: Settings) -> MediaStorage:
    """The storage the settings name: the S3 bucket when REDPOLL_S3_BUCKET
    is set, the local directory otherwise."""
    if not settings.s3_bucket:
        return LocalStorage(settings.media_root)
    key = (
        settings.s3_endpoint,
        settings.s3_bucket,
        settings.s3_region,
        settings.s3_access_key,
        settings.s3_secret_key,
        settings.s3_public_url,
    )
    with _s3_backends_lock:
        backend = _s3_backends.get(key)
        if backend is None:
            backend = _s3_backends[key] = S3Storage(settings)
        return backend
