"""redpoll.filters: the matching rule (rules.Active.apply) on records, and the
stored filters under racing writes, in both topologies."""

from __future__ import annotations

import asyncio
import json

import pytest

from redpoll.core import keys
from redpoll.core.errors import ValidationError
from redpoll.core.models import Status, now_ms
from redpoll.filters import filters as F
from redpoll.filters import rules


def status(sid: int, text: str, uid: int = 7, **extra) -> Status:
    return Status(
        id=sid,
        text=text,
        created_at=0,
        user_id=uid,
        login="x",
        extra={k: v for k, v in extra.items()},
    )


def active(*filters: F.Filter) -> rules.Active:
    return rules.Active(list(filters))


def kw(word: str, whole: bool = True, i: int = 1) -> F.Keyword:
    return F.Keyword(i, word, whole)


def test_keywords_match_case_insensitively_and_whole_words_at_word_edges_only():
    a = active(
        F.Filter(1, "f", ("home",), "warn", None, (kw("cat"), kw("c++", i=2), kw("#tag", i=3)))
    )
    assert a.apply(status(1, "A CAT!"), context="home").matches[0][1] == ["CAT"]
    assert a.apply(status(2, "concatenate"), context="home") is None
    # a keyword ending in a non-word character needs no boundary there
    assert a.apply(status(3, "I like c++."), context="home") is not None
    # '#tag' starts with no word character (no boundary before), ends with one
    assert a.apply(status(4, "see x#tag!"), context="home") is not None
    assert a.apply(status(5, "see #tagged"), context="home") is None
    loose = active(F.Filter(1, "f", ("home",), "warn", None, (kw("cat", whole=False),)))
    assert loose.apply(status(2, "concatenate"), context="home") is not None


def test_spoiler_media_descriptions_and_poll_options_are_searched_of_the_original():
    a = active(F.Filter(1, "f", ("home",), "hide", None, (kw("spider"),)))
    assert a.apply(status(1, "x", spoiler_text="a spider"), context="home").hidden
    media = json.dumps([{"id": 1, "desc": "Spider on a wall"}])
    assert a.apply(status(2, "x", media=media), context="home").hidden
    poll = json.dumps({"options": [{"title": "spider"}, {"title": "ant"}]})
    assert a.apply(status(3, "x", poll=poll), context="home").hidden
    # a boost is matched by the status it boosts
    boost = Status(id=9, text="", created_at=0, user_id=8, login="b", extra={"reblog_of": "1"})
    assert a.apply(boost, status(1, "a spider"), context="home").hidden


def test_contexts_expiry_and_ones_own_statuses():
    past, future = now_ms() - 1000, now_ms() + 60_000
    a = active(
        F.Filter(1, "old", ("home",), "hide", past, (kw("kale"),)),
        F.Filter(2, "new", ("public",), "hide", future, (kw("kale", i=2),)),
    )
    assert a.apply(status(1, "kale"), context="home") is None  # expired
    assert a.apply(status(1, "kale"), context="public").hidden
    assert a.apply(status(1, "kale"), context="thread") is None
    # no context (a status by id): every live filter, nothing hidden
    plain = a.apply(status(1, "kale"))
    assert [r.filter.id for r, _, _ in plain.matches] == [2] and not plain.hidden
    # one's own: matched, never hidden
    own = a.apply(status(1, "kale", uid=5), context="public", viewer=5)
    assert own.matches and not own.hidden


def test_status_filters_match_the_status_and_boosts_of_it():
    a = active(F.Filter(1, "f", ("home",), "warn", None, (), (F.FilterStatus(4, 1),)))
    result = a.apply(status(1, "anything"), context="home")
    assert json.loads(result.json())[0]["status_matches"] == ["1"]
    boost = Status(id=9, text="", created_at=0, user_id=8, login="b", extra={"reblog_of": "1"})
    assert a.apply(boost, status(1, "anything"), context="home") is not None
    assert a.apply(status(2, "anything"), context="home") is None


async def test_the_compiled_filters_are_kept_by_version_and_read_again_after_a_change(rp):
    alice = await rp.accounts.sign_up("alice")
    store = rp.store
    assert not await rules.active(store, alice.id)  # none: no read of the hash
    await F.create_filter(store, alice.id, title="t", context=["home"], keywords=[("kale", None)])
    first = await rules.active(store, alice.id)
    assert await rules.active(store, alice.id) is first  # same version: the same object
    await F.create_filter(store, alice.id, title="u", context=["home"], keywords=[("okra", None)])
    second = await rules.active(store, alice.id)
    assert second is not first and len(second.rules) == 2


async def test_racing_changes_to_one_filter_all_land(rp):
    alice = await rp.accounts.sign_up("alice")
    store = rp.store
    f = await F.create_filter(store, alice.id, title="t", context=["home"])
    words = [f"w{i}" for i in range(20)]
    await asyncio.gather(*(F.add_keyword(store, alice.id, f.id, w) for w in words))
    got = await F.get_filter(store, alice.id, f.id)
    assert sorted(k.keyword for k in got.keywords) == sorted(words)
    assert len({k.id for k in got.keywords}) == 20


async def test_the_bound_on_filters_holds_under_racing_creates(rp, monkeypatch):
    alice = await rp.accounts.sign_up("alice")
    monkeypatch.setattr("redpoll.core.limits.FILTERS_MAX", 3)
    results = await asyncio.gather(
        *(F.create_filter(rp.store, alice.id, title=f"t{i}", context=["home"]) for i in range(8)),
        return_exceptions=True,
    )
    assert sum(isinstance(r, F.Filter) for r in results) == 3
    assert all(isinstance(r, (F.Filter, ValidationError)) for r in results)
    assert len(await F.list_filters(rp.store, alice.id)) == 3
    held = await rp.store.hgetall(keys.filters(alice.id))
    assert len(held) == 4  # three filters and the version


async def test_another_accounts_keyword_and_status_ids_are_not_found(rp):
    alice, bob = await rp.accounts.sign_up("alice"), await rp.accounts.sign_up("bob")
    f = await F.create_filter(
        rp.store, alice.id, title="t", context=["home"], keywords=[("kale", True)]
    )
    with pytest.raises(F.FilterNotFound):
        await F.get_keyword(rp.store, bob.id, f.keywords[0].id)
    with pytest.raises(F.FilterNotFound):
        await F.delete_filter(rp.store, bob.id, f.id)
    assert (await F.get_filter(rp.store, alice.id, f.id)).keywords == f.keywords
