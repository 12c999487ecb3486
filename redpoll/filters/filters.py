"""An account's content filters (Mastodon's v2 filters, and the v1 ones
mapped onto them as Mastodon does): a title, the contexts it applies in
(home, notifications, public, thread, account), an action (``warn``: the
status shows as filtered; ``blur``: it shows as filtered too, the client
blurring its media, Mastodon 4.4; ``hide``: it is left out), an optional expiry,
keywords (each with ``whole_word``) and statuses.

Stored as one hash on the owner's slot, ``keys.filters(uid)``: each filter
whole as JSON under its id, and a version ``v`` that every change writes
anew (what redpoll.filters.rules keeps compiled is used only at the version
a request read). Every change is one compare-and-set script
(``filter_put.lua``: the filter is written only if it is still as read,
the bound checked in the same step; a stale read is read again), so a
change is whole or not at all, and racing changes never mix. Ids (of
filters, keywords, statuses) come from one counter, ``keys.FILTER_SEQ``,
taken before the write: an id a refused write took is simply never used.
A keyword's or a filter status's id finds its filter among its owner's
(at most limits.FILTERS_MAX): another account's ids are not found (404).
Each change then appends a ``filters`` event (redpoll.bus.events) that
tells the account's open streams to read their filters again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..bus import events
from ..core import keys, limits, validate
from ..core.errors import Conflict, FilterNotFound, LimitReached, ValidationError  # noqa: F401 (FilterNotFound: raised here, caught by callers)
from ..core.models import now_ms
from ..storage.store import Store

CONTEXTS = ("home", "notifications", "public", "thread", "account")
ACTIONS = ("warn", "blur", "hide")
#: a field the caller did not send (PUT changes only what is sent)
UNSET: Any = object()


@dataclass(frozen=True)
class Keyword:
    id: int
    keyword: str
    whole_word: bool = True


@dataclass(frozen=True)
class FilterStatus:
    id: int
    status_id: int


@dataclass(frozen=True)
class Filter:
    id: int
    title: str
    context: tuple[str, ...]
    action: str = "warn"
    expires_at: int | None = None  # ms
    keywords: tuple[Keyword, ...] = ()
    statuses: tuple[FilterStatus, ...] = ()

    def expired(self, now: int | None = None) -> bool:
        return self.expires_at is not None and self.expires_at <= (now or now_ms())

    def to_json(self) -> str:
        return json.dumps(
            {
                "title": self.title,
                "context": list(self.context),
                "action": self.action,
                "expires_at": self.expires_at,
                "keywords": [[k.id, k.keyword, k.whole_word] for k in self.keywords],
                "statuses": [[s.id, s.status_id] for s in self.statuses],
            },
            separators=(",", ":"),
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, fid: int, raw: str | bytes) -> Filter:
        d = json.loads(raw)
        return cls(
            fid,
            d["title"],
            tuple(d["context"]),
            d.get("action", "warn"),
            d.get("expires_at"),
            tuple(Keyword(int(i), k, bool(w)) for i, k, w in d.get("keywords", ())),
            tuple(FilterStatus(int(i), int(s)) for i, s in d.get("statuses", ())),
        )


# --- checks of what a caller sends ------------------------------------------------------
def check_title(title) -> str:
    title = validate.text(
        title if title is not None else "", "title", limits.FILTER_TITLE_MAX_CHARS, allow_empty=True
    ).strip()
    if not title:
        raise ValidationError("title", "can't be blank")
    return title


def check_context(context) -> tuple[str, ...]:
    if isinstance(context, str):
        context = [context]
    if not isinstance(context, (list, tuple)) or not context:
        raise ValidationError("context", "must name at least one of " + ", ".join(CONTEXTS))
    out = []
    for item in context:
        if not isinstance(item, str) or item.strip() not in CONTEXTS:
            raise ValidationError("context", "must be among " + ", ".join(CONTEXTS))
        if item.strip() not in out:
            out.append(item.strip())
    return tuple(out)


def check_action(action) -> str:
    if action not in ACTIONS:
        raise ValidationError("filter_action", "must be " + ", ".join(ACTIONS[:-1]) + " or hide")
    return action


def check_keyword(keyword) -> str:
    if not isinstance(keyword, str):
        raise ValidationError("keyword", "must be a string")
    keyword = validate.text(
        keyword, "keyword", limits.FILTER_KEYWORD_MAX_CHARS, allow_empty=True
    ).strip()
    if not keyword:
        raise ValidationError("keyword", "can't be blank")
    return keyword


def expiry(expires_in) -> int | None:
    """``expires_in`` seconds from now as an instant (ms); None: never."""
    if expires_in is None or expires_in == "":
        return None
    try:
        seconds = int(float(expires_in))
    except (TypeError, ValueError):
        raise ValidationError("expires_in", "must be a number of seconds") from None
    if seconds <= 0 or seconds > 10 * 365 * 86400:
        raise ValidationError("expires_in", "must be between 1 second and 10 years")
    return now_ms() + seconds * 1000


def _check(f: Filter) -> Filter:
    if len(f.keywords) > limits.FILTER_KEYWORDS_MAX:
        raise ValidationError(
            "keywords_attributes", f"a filter holds at most {limits.FILTER_KEYWORDS_MAX} keywords"
        )
    if len(f.statuses) > limits.FILTER_STATUSES_MAX:
        raise ValidationError(
            "status_id", f"a filter holds at most {limits.FILTER_STATUSES_MAX} statuses"
        )
    return f


# --- reads --------------------------------------------------------------------------------
async def read_all(store: Store, uid: int) -> tuple[dict[int, tuple[Filter, str]], str | None]:
    """Every filter of ``uid`` with its JSON as stored, by id, and the version."""
    raw = await store.hgetall(keys.filters(uid))
    out, version = {}, None
    for k, v in raw.items():
        k = k.decode() if isinstance(k, bytes) else k
        v = v.decode() if isinstance(v, bytes) else v
        if k == "v":
            version = v
        else:
            out[int(k)] = (Filter.from_json(int(k), v), v)
    return out, version


async def list_filters(store: Store, uid) -> list[Filter]:
    """``uid``'s filters, oldest first (expired ones too, as Mastodon lists them)."""
    found, _ = await read_all(store, validate.an_id(uid, "user_id"))
    return [found[fid][0] for fid in sorted(found)]


async def get_filter(store: Store, uid, fid) -> Filter:
    uid, fid = validate.an_id(uid, "user_id"), validate.an_id(fid, "filter_id")
    raw = await store.hget(keys.filters(uid), fid)
    if raw is None:
        raise FilterNotFound(f"filter {fid} does not exist")
    return Filter.from_json(fid, raw)


async def _owning(store: Store, uid: int, pick: Callable[[Filter], bool]) -> Filter:
    found, _ = await read_all(store, uid)
    for f, _ in found.values():
        if pick(f):
            return f
    raise FilterNotFound("no such filter keyword or status")


async def get_keyword(store: Store, uid, kid) -> tuple[Filter, Keyword]:
    uid, kid = validate.an_id(uid, "user_id"), validate.an_id(kid, "keyword_id")
    f = await _owning(store, uid, lambda f: any(k.id == kid for k in f.keywords))
    return f, next(k for k in f.keywords if k.id == kid)


async def get_status_filter(store: Store, uid, fsid) -> tuple[Filter, FilterStatus]:
    uid, fsid = validate.an_id(uid, "user_id"), validate.an_id(fsid, "filter_status_id")
    f = await _owning(store, uid, lambda f: any(s.id == fsid for s in f.statuses))
    return f, next(s for s in f.statuses if s.id == fsid)


# --- writes -------------------------------------------------------------------------------
async def _ids(store: Store, n: int) -> list[int]:
    if n <= 0:
        return []
    last = int(await store.incrby(keys.FILTER_SEQ, n))
    return list(range(last - n + 1, last + 1))


async def _put(store: Store, uid: int, fid: int, old: str, new: str) -> None:
    """The one write of a change: atomic (filter_put.lua, one key, one slot,
    compare-and-set). What comes before it (ids from FILTER_SEQ) and after
    it (the filters event) is idempotent: a lost id is never used, a second
    event makes streams read the same filters again."""
    try:
        await store.run(
            "filter_put",
            [keys.filters(uid)],
            [fid, old, new, limits.FILTERS_MAX, secrets.token_hex(8)],
        )
    except LimitReached:
        raise ValidationError(
            "filter", f"an account holds at most {limits.FILTERS_MAX} filters"
        ) from None
    # open streams take the change at once (a lost event: their periodic re-read)
    await events.filters_changed(store, uid)


async def _change(
    store: Store, uid: int, fid: int, change: Callable[[Filter], Any]
) -> Filter | None:
    """Apply ``change`` (the filter as read -> the new one, or None to
    remove it; it may be async, to take ids) to filter ``fid`` of ``uid``,
    compare-and-set: read again when another change came between."""
    for attempt in range(limits.FILTER_WRITE_TRIES):
        if attempt:  # another change came between: after a short, jittered wait
            await asyncio.sleep(random.uniform(0, 0.001 * min(attempt, 20)))
        raw = await store.hget(keys.filters(uid), fid)
        if raw is None:
            raise FilterNotFound(f"filter {fid} does not exist")
        old = raw.decode() if isinstance(raw, bytes) else raw
        new = change(Filter.from_json(fid, old))
        if hasattr(new, "__await__"):
            new = await new
        try:
            await _put(store, uid, fid, old, "" if new is None else _check(new).to_json())
            return new
        except Conflict:
            continue
    raise Conflict("the filter kept changing; try again")


async def create_filter(
    store: Store,
    uid,
    *,
    title,
    context,
    action="warn",
    expires_in=None,
    keywords: list[tuple[Any, Any]] = (),
    status_ids: list[int] = (),
) -> Filter:
    """A new filter of ``uid`` with ``keywords`` ((keyword, whole_word)
    pairs) and statuses; ValidationError (nothing written) for bad input
    or when the account holds limits.FILTERS_MAX filters already."""
    uid = validate.an_id(uid, "user_id")
    title, context, action = check_title(title), check_context(context), check_action(action)
    expires_at = expiry(expires_in)
    words = [(check_keyword(k), True if w is None else bool(w)) for k, w in keywords]
    if len(words) > limits.FILTER_KEYWORDS_MAX:
        raise ValidationError(
            "keywords_attributes", f"a filter holds at most {limits.FILTER_KEYWORDS_MAX} keywords"
        )
    sids = [validate.an_id(s, "status_id") for s in status_ids]
    fid, *rest = await _ids(store, 1 + len(words) + len(sids))
    f = _check(
        Filter(
            fid,
            title,
            context,
            action,
            expires_at,
            tuple(Keyword(i, k, w) for i, (k, w) in zip(rest, words)),
            tuple(FilterStatus(i, s) for i, s in zip(rest[len(words) :], sids)),
        )
    )
    await _put(store, uid, fid, "", f.to_json())
    return f


async def update_filter(
    store: Store,
    uid,
    fid,
    *,
    title=UNSET,
    context=UNSET,
    action=UNSET,
    expires_in=UNSET,
    keywords_attributes: list[dict] = (),
) -> Filter:
    """Change what is sent of filter ``fid``: ``keywords_attributes`` are
    dicts with ``id`` (an existing keyword: changed, or removed with
    ``_destroy``) or without (a new one), as Mastodon's nested attributes."""
    uid, fid = validate.an_id(uid, "user_id"), validate.an_id(fid, "filter_id")
    changes: dict[str, Any] = {}
    if title is not UNSET:
        changes["title"] = check_title(title)
    if context is not UNSET:
        changes["context"] = check_context(context)
    if action is not UNSET and action is not None:
        changes["action"] = check_action(action)
    if expires_in is not UNSET:
        changes["expires_at"] = expiry(expires_in)
    edits, added = [], []
    for attrs in keywords_attributes:
        if not isinstance(attrs, dict):
            raise ValidationError("keywords_attributes", "each must be an object")
        destroy = str(attrs.get("_destroy", "")).lower() in ("true", "1", "on", "yes")
        whole = attrs.get("whole_word")
        whole = None if whole in (None, "") else str(whole).lower() in ("true", "1", "on", "yes")
        if attrs.get("id") not in (None, ""):
            kid = validate.an_id(attrs["id"], "keywords_attributes.id")
            keyword = (
                None if destroy or attrs.get("keyword") is None else check_keyword(attrs["keyword"])
            )
            edits.append((kid, destroy, keyword, whole))
        elif not destroy and any(attrs.get(k) not in (None, "") for k in ("keyword",)):
            added.append((check_keyword(attrs.get("keyword")), True if whole is None else whole))

    async def change(f: Filter) -> Filter:
        words = {k.id: k for k in f.keywords}
        for kid, destroy, keyword, whole in edits:
            if kid not in words:
                raise ValidationError("keywords_attributes", f"no keyword {kid} in this filter")
            if destroy:
                del words[kid]
            else:
                old = words[kid]
                words[kid] = Keyword(
                    kid,
                    keyword if keyword is not None else old.keyword,
                    old.whole_word if whole is None else whole,
                )
        new_ids = await _ids(store, len(added))
        kept = [words[k.id] for k in f.keywords if k.id in words]
        kept += [Keyword(i, k, w) for i, (k, w) in zip(new_ids, added)]
        return dataclasses.replace(f, **changes, keywords=tuple(kept))

    return await _change(store, uid, fid, change)


async def delete_filter(store: Store, uid, fid) -> None:
    uid, fid = validate.an_id(uid, "user_id"), validate.an_id(fid, "filter_id")
    await _change(store, uid, fid, lambda f: None)


async def add_keyword(store: Store, uid, fid, keyword, whole_word=None) -> Keyword:
    uid, fid = validate.an_id(uid, "user_id"), validate.an_id(fid, "filter_id")
    keyword = check_keyword(keyword)
    whole = True if whole_word is None else bool(whole_word)
    made: list[Keyword] = []

    async def change(f: Filter) -> Filter:
        made[:] = [Keyword((await _ids(store, 1))[0], keyword, whole)]
        return dataclasses.replace(f, keywords=f.keywords + tuple(made))

    await _change(store, uid, fid, change)
    return made[0]


async def update_keyword(store: Store, uid, kid, keyword=None, whole_word=None) -> Keyword:
    f, old = await get_keyword(store, uid, kid)
    new = Keyword(
        old.id,
        old.keyword if keyword is None else check_keyword(keyword),
        old.whole_word if whole_word is None else bool(whole_word),
    )

    def change(f: Filter) -> Filter:
        if not any(k.id == old.id for k in f.keywords):
            raise FilterNotFound(f"keyword {old.id} does not exist")
        return dataclasses.replace(
            f, keywords=tuple(new if k.id == old.id else k for k in f.keywords)
        )

    await _change(store, int(uid), f.id, change)
    return new


async def delete_keyword(store: Store, uid, kid) -> None:
    f, old = await get_keyword(store, uid, kid)
    await _change(
        store,
        int(uid),
        f.id,
        lambda f: dataclasses.replace(f, keywords=tuple(k for k in f.keywords if k.id != old.id)),
    )


async def add_status(store: Store, uid, fid, status_id) -> FilterStatus:
    """Filter the status ``status_id`` (the caller checks it may see it)."""
    uid, fid = validate.an_id(uid, "user_id"), validate.an_id(fid, "filter_id")
    sid = validate.an_id(status_id, "status_id")
    made: list[FilterStatus] = []

    async def change(f: Filter) -> Filter:
        had = [s for s in f.statuses if s.status_id == sid]
        if had:  # as Mastodon's uniqueness: the one there already
            made[:] = had
            return f
        made[:] = [FilterStatus((await _ids(store, 1))[0], sid)]
        return dataclasses.replace(f, statuses=f.statuses + tuple(made))

    await _change(store, uid, fid, change)
    return made[0]


async def delete_status_filter(store: Store, uid, fsid) -> None:
    f, old = await get_status_filter(store, uid, fsid)
    await _change(
        store,
        int(uid),
        f.id,
        lambda f: dataclasses.replace(f, statuses=tuple(s for s in f.statuses if s.id != old.id)),
    )


# --- v1: one keyword per filter, as Mastodon maps them ---------------------------------
async def v1_list(store: Store, uid) -> list[tuple[Filter, Keyword]]:
    """Every keyword of ``uid``'s filters with its filter (a v1 filter each)."""
    return [(f, k) for f in await list_filters(store, uid) for k in f.keywords]


async def v1_create(
    store: Store, uid, *, phrase, context, irreversible=False, whole_word=True, expires_in=None
) -> tuple[Filter, Keyword]:
    """A v2 filter titled ``phrase`` holding that one keyword."""
    f = await create_filter(
        store,
        uid,
        title=phrase,
        context=context,
        action="hide" if irreversible else "warn",
        expires_in=expires_in,
        keywords=[(phrase, whole_word)],
    )
    return f, f.keywords[0]


async def v1_update(
    store: Store,
    uid,
    kid,
    *,
    phrase=None,
    context=UNSET,
    irreversible=None,
    whole_word=None,
    expires_in=UNSET,
) -> tuple[Filter, Keyword]:
    """Change the keyword ``kid`` and its filter; as Mastodon, a filter that
    holds several keywords cannot change through v1 (422)."""
    f, old = await get_keyword(store, uid, kid)
    changes: dict[str, Any] = {}
    if context is not UNSET:
        changes["context"] = check_context(context)
    if irreversible is not None:
        changes["action"] = "hide" if irreversible else "warn"
    if expires_in is not UNSET:
        changes["expires_at"] = expiry(expires_in)
    new = Keyword(
        old.id,
        old.keyword if phrase is None else check_keyword(phrase),
        old.whole_word if whole_word is None else bool(whole_word),
    )

    def change(f: Filter) -> Filter:
        if not any(k.id == old.id for k in f.keywords):
            raise FilterNotFound(f"filter {old.id} does not exist")
        if len(f.keywords) > 1 and any(getattr(f, k) != v for k, v in changes.items()):
            raise ValidationError(
                "filter", "a filter with several keywords cannot be changed through the v1 API"
            )
        return dataclasses.replace(
            f, **changes, keywords=tuple(new if k.id == old.id else k for k in f.keywords)
        )

    f = await _change(store, int(uid), f.id, change)
    return f, new
