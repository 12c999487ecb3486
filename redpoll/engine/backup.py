"""``redpoll backup DIR`` and ``redpoll restore DIR``: a copy of an
embedded server's database and of the media files that comes back whole.

A backup directory holds:

* ``dump.rdb``: a point-in-time snapshot the server wrote while it served
  (redpoll.storage.server.take_snapshot: BGSAVE, waited for). It holds
  every write acknowledged before the backup began, the key pairs that
  sign federation (``fed:key:*``), the VAPID key and the key that names
  media files among them: all of them live in the database.
* ``media/``: the media files (the local storage's), copied once before the
  snapshot and once after it, so a file its records name is there unless
  it was uploaded and deleted again while the backup ran.
* ``manifest.json``, written last (a directory without it is an unfinished
  backup): when, which release, the layout version, the snapshot's size,
  SHA-256 and the mark it holds (keys.BACKUP_MARK), the media files.

A restore checks all that, then fills an empty data directory: the
snapshot is loaded by a server of its own and written out as its AOF
(redpoll.storage.server.load_snapshot); the media files go to the media
directory. ``redpoll serve`` on it then migrates what is due and runs the
jobs that were queued.

Every step is a file written under a temporary name and renamed, or a
check: a backup or restore cut short leaves no manifest (backup) or a data
directory that is refused as not empty (restore), never a copy that
passes for whole. With REDIS_URL (a server of one's own, or a cluster)
both refuse in one line: docs/operating.md says what to copy there.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import secrets
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..core import keys
from ..core.errors import ConfigError
from ..core.settings import Settings
from ..core.version import __version__
from ..federation import keys as fed_keys
from ..media.storage import NAME as MEDIA_NAME
from ..storage.server import EmbeddedServer, load_snapshot, make_private, take_snapshot

MANIFEST = "manifest.json"
SNAPSHOT = "dump.rdb"
MEDIA = "media"
#: What a manifest's ``format`` says; a restore refuses others.
FORMAT = 1
#: Held (flock) in the data directory while a backup runs: one at a time.
BACKUP_LOCK = "backup.lock"


@dataclass(frozen=True)
class Summary:
    """What a backup or restore did, for its lines on the console."""

    directory: str
    keys: int
    media_files: int
    media_bytes: int
    layout_version: int
    #: what it did not copy, one line each
    notes: tuple[str, ...] = ()

    def lines(self, verb: str) -> list[str]:
        return [
            f"{verb} {self.keys} keys (layout version {self.layout_version}) and "
            f"{self.media_files} media files ({self.media_bytes:,} bytes): {self.directory}",
            *self.notes,
        ]


def _refuse_external(settings: Settings, what: str) -> None:
    if settings.redis_url is not None:
        where = "a Redis Cluster" if settings.cluster else "a Redis server of your own"
        raise ConfigError(
            f"redpoll {what} works on the embedded server's data directory; REDIS_URL "
            f"names {where}: copy it with its own tools (docs/operating.md, Backing up)"
        )


def _empty(path: Path) -> bool:
    return not path.exists() or (path.is_dir() and not any(path.iterdir()))


def _media_files(root: Path):
    """(name, path) of every stored media file under ``root`` (not the
    partial writes of .partial/)."""
    if not root.is_dir():
        return
    for path in sorted(root.glob("*/*/*")):
        name = path.relative_to(root).as_posix()
        if MEDIA_NAME.fullmatch(name) and path.is_file():
            yield name, path


def _copy(src: Path, dst: Path) -> int:
    """``src`` to ``dst`` whole or not at all (a temporary name, fsynced,
    renamed), readable by its owner only; its size. A file already there
    with the same size is the same file (media names are their content's)."""
    size = src.stat().st_size
    if dst.exists() and dst.stat().st_size == size:
        return size
    dst.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temp = dst.with_name(f".{dst.name}.{secrets.token_hex(4)}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as out, open(src, "rb") as source:
            shutil.copyfileobj(source, out, 1 << 20)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, dst)
    finally:
        temp.unlink(missing_ok=True)
    return size


def _copy_media(root: Path, to: Path, done: dict[str, int]) -> None:
    for name, path in _media_files(root):
        if name not in done:
            try:
                done[name] = _copy(path, to / name)
            except FileNotFoundError:  # deleted meanwhile (its record is gone too)
                continue


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def backup(settings: Settings, directory: str | os.PathLike) -> Summary:
    """Write a backup of the embedded server on ``settings.data_dir`` (the
    one running there, or one started for it and stopped after) into
    ``directory``, which must be new or empty."""
    _refuse_external(settings, "backup")
    target = Path(directory).resolve()
    if not _empty(target):
        raise ConfigError(f"backup directory {target} is not empty: name a new one")
    data_dir = Path(settings.data_dir)
    if not (data_dir / "appendonlydir").exists():
        raise ConfigError(f"data directory {data_dir} holds no database to back up")
    make_private(target)
    lock = os.open(data_dir / BACKUP_LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    started = None
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise ConfigError(f"another redpoll backup of {data_dir} is running") from None
        url = EmbeddedServer.running_in(data_dir)
        if url is None:
            started = EmbeddedServer.for_data_dir(data_dir, fsync=settings.fsync).start()
            url = started.url
        notes = []
        media_root = Path(settings.media_root)
        copied: dict[str, int] = {}
        if settings.s3_bucket:
            notes.append(
                f"media files are in the S3 bucket {settings.s3_bucket}: not copied; "
                "back the bucket up (or version it) beside this"
            )
        else:
            _copy_media(media_root, target / MEDIA, copied)
        mark = secrets.token_hex(16)
        written, (version, held, instance_key) = take_snapshot(
            url,
            (keys.BACKUP_MARK, mark),
            [
                ("HGET", keys.LAYOUT, "version"),
                ("DBSIZE",),
                ("EXISTS", fed_keys.INSTANCE_KEY),
            ],
        )
        size = _copy(written, target / SNAPSHOT)
        written.unlink(missing_ok=True)  # (the server's AOF is its data)
        if not settings.s3_bucket:
            _copy_media(media_root, target / MEDIA, copied)
        manifest = {
            "format": FORMAT,
            "redpoll": __version__,
            "made_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "data_dir": str(data_dir),
            "layout_version": int(version or 0),
            "mark": mark,
            "snapshot": {
                "file": SNAPSHOT,
                "bytes": size,
                "sha256": _sha256(target / SNAPSHOT),
                "keys": int(held),
                "instance_key_pair": bool(instance_key),
            },
            "media": {
                "where": f"s3:{settings.s3_bucket}" if settings.s3_bucket else "local",
                "files": {name: copied[name] for name in sorted(copied)},
            },
        }
        make_private(target)  # (the directories copying made, too)
        _write_manifest(target, manifest)
    finally:
        os.close(lock)
        if started is not None:
            started.stop()
    return Summary(
        str(target), int(held), len(copied), sum(copied.values()), int(version or 0), tuple(notes)
    )


def _write_manifest(target: Path, manifest: dict) -> None:
    temp = target / f".{MANIFEST}.partial"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(temp, target / MANIFEST)


def read_manifest(directory: Path) -> dict:
    """The manifest of a backup, its files checked against it; ConfigError
    in one line naming what is wrong."""
    try:
        manifest = json.loads((directory / MANIFEST).read_text())
    except FileNotFoundError:
        raise ConfigError(
            f"{directory} is not a redpoll backup, or an unfinished one (no {MANIFEST})"
        ) from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {directory / MANIFEST}: {exc}") from None
    if manifest.get("format") != FORMAT:
        raise ConfigError(
            f"{directory} is a backup in format {manifest.get('format')!r}; "
            f"this release reads format {FORMAT}"
        )
    snapshot = directory / manifest["snapshot"]["file"]
    if not snapshot.is_file() or _sha256(snapshot) != manifest["snapshot"]["sha256"]:
        raise ConfigError(f"{snapshot} is missing or not the one the backup wrote (SHA-256)")
    for name, size in manifest["media"]["files"].items():
        path = directory / MEDIA / name
        if not path.is_file() or path.stat().st_size != size:
            raise ConfigError(f"media file {path} is missing or cut short")
    return manifest


def restore(settings: Settings, directory: str | os.PathLike) -> Summary:
    """Bring the backup in ``directory`` back into ``settings.data_dir``,
    which must be new or empty (and the media directory too, when it is
    elsewhere); the database is checked to hold the backup's mark."""
    _refuse_external(settings, "restore")
    source = Path(directory).resolve()
    manifest = read_manifest(source)
    data_dir = Path(settings.data_dir)
    if not _empty(data_dir):
        raise ConfigError(
            f"data directory {data_dir} is not empty: restore into an empty one "
            "(set REDPOLL_DATA_DIR), or move this one away first"
        )
    media_root = Path(settings.media_root)
    media = manifest["media"]["files"]
    notes = []
    if media and settings.s3_bucket:
        notes.append(
            f"REDPOLL_S3_BUCKET is set: the backup's {len(media)} media files (in "
            f"{source / MEDIA}) are not copied; put them into the bucket yourself"
        )
    elif not _empty(media_root) and not media_root.is_relative_to(data_dir):
        raise ConfigError(f"media directory {media_root} is not empty: restore into an empty one")
    make_private(data_dir)
    held, (mark,) = load_snapshot(
        data_dir,
        source / manifest["snapshot"]["file"],
        settings.fsync,
        [("GET", keys.BACKUP_MARK)],
    )
    if mark is None or mark.decode() != manifest["mark"]:
        raise ConfigError(f"the database restored from {source} does not hold the backup's mark")
    copied = 0
    if not settings.s3_bucket:
        for name in media:
            copied += _copy(source / MEDIA / name, media_root / name)
    return Summary(
        str(data_dir),
        held,
        0 if settings.s3_bucket else len(media),
        copied,
        int(manifest.get("layout_version", 0)),
        tuple(notes),
    )
