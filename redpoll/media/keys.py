"""The Redis keys of media (redpoll.media), built here and nowhere else.

An upload's record lives in its owner's slot (``{uid}``, as every key of
one user in redpoll/keys.py), so that attaching up to four of them to a
status, and every other change to them, is one script in one slot.
"""

from __future__ import annotations

#: Counter the uploads (attachments, avatars, headers) draw their ids from.
MEDIA_SEQ = "seq:media"

#: ZSET ``<uid>:<mid>`` -> ms of the upload: uploads not yet known to be
#: attached, what the sweep of never-attached media reads (one slot). An
#: entry is added before its record is written and removed once the record
#: is attached or gone, so an entry may outlive its record (the sweep then
#: only drops the entry), never the reverse.
PENDING = "media:{pending}"

#: String, set with NX and an expiry of the sweep interval: the worker that
#: sets it queues the sweep of never-attached media (one sweep per interval
#: over every worker process).
SWEEP_DUE = "media:{sweep}"

#: String: the random key of the keyed hash that names stored files (set
#: once per database with NX): a file's name follows from its bytes and
#: upload, and cannot be guessed without this key.
NAME_KEY = "media:{namekey}"


def record(uid: int, mid: int) -> str:
    """Hash: one upload of ``uid`` (an attachment): ``id``, ``owner``,
    ``state`` (processing, ready, failed, gone), ``at`` (ms), ``mime``,
    ``desc``, ``focus`` (``x,y``), ``meta`` (JSON), ``blurhash``, ``url``,
    ``purl`` (preview), ``files`` (stored names, space-separated), ``sid``
    (the status it is attached to), ``err``, ``v`` (bumped by every change).
    A removed upload is a tombstone here (``state`` gone, ``files``) for
    limits.MEDIA_TOMBSTONE_S."""
    return f"med:{{{uid}}}:{mid}"


def record_pattern(uid: int) -> str:
    """Every upload record of ``uid`` (for an account's purge)."""
    return f"med:{{{uid}}}:*"


def pending_member(uid: int, mid: int) -> str:
    return f"{uid}:{mid}"


def parse_pending(member: bytes | str) -> tuple[int, int]:
    text = member.decode() if isinstance(member, bytes) else member
    uid, mid = text.split(":", 1)
    return int(uid), int(mid)


#: Fields of the user record (redpoll/keys.user) a profile image writes:
#: ``<kind>`` its URL, ``<kind>_s`` its still URL, ``<kind>_f`` its stored
#: file names (space-separated), for kind avatar and header.
PROFILE_KINDS = ("avatar", "header")


# --- other servers' media kept here (redpoll.media.remote) ----------------------
#: ZSET member -> ms it was fetched: every copy of another server's file
#: kept here, oldest first (what eviction reads). A member is
#: :func:`remote_member`: ``s:<sid>:<aid>`` (attachment ``aid`` of remote
#: status ``sid``), ``u:<uid>:<kind>`` (a remote account's avatar or
#: header) or ``c:0:<digest>.<ms>`` (a link preview card's image, one per
#: fetch: redpoll.cards). The three ``media:{remote}`` keys share one slot: a copy is
#: added and dropped by one script over them.
REMOTE_KEPT = "media:{remote}"
#: HASH member -> ``<bytes> <name> [<name>]``: the stored files of each kept
#: copy and what they weigh together.
REMOTE_FILES = "media:{remote}:files"
#: String: the bytes of every kept copy together (the sum over REMOTE_FILES).
REMOTE_BYTES = "media:{remote}:bytes"


def remote_member(what: str, owner: int, part: int | str) -> str:
    """A kept copy's member: ``("s", sid, aid)``, ``("u", uid, kind)`` or
    ``("c", 0, "<digest>.<ms>")``."""
    return f"{what}:{owner}:{part}"


def remote_asked(member: str) -> str:
    """String with an expiry of limits.REMOTE_MEDIA_REQUEUE_S (SET NX): the
    fetch of a copy not kept here was queued lately (asked for again
    meanwhile, it is not queued again)."""
    return f"media:asked:{{{member}}}"


def remote_fetching(member: str) -> str:
    """String with an expiry (SET NX): a job is fetching this copy now (a
    second job for it meanwhile leaves it; one fetch of a copy at a time)."""
    return f"media:fetching:{{{member}}}"
