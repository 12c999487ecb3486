"""Search in the engine: the account index (prefixes, renames, races, a
lagging index) and status search among the viewer's own."""

from __future__ import annotations

import asyncio

import pytest

from redpoll.accounts import account_index
from redpoll.core import keys, limits
from redpoll.core.errors import ValidationError
from redpoll.engine import migrate
from redpoll.search.search import Query


async def find(rp, q, **kw):
    return await rp.discovery.search(Query(q=q, hosts=("redpoll.test",), **kw))


async def logins(rp, q, **kw):
    return [u.login for u in (await find(rp, q, type="accounts", **kw)).accounts]


async def indexed_terms(rp, uid) -> set[str]:
    entries = await rp.store.client.zrange(keys.SEARCH_ACCOUNTS, 0, -1)
    return {
        e.rsplit(b"\0", 1)[0].decode()
        for e in entries
        if e.rsplit(b"\0", 1)[1] == str(uid).encode()
    }


async def test_accounts_by_login_and_display_name_prefix(rp):
    owl = await rp.accounts.sign_up("owlbert", display_name="Hoot Ünal Night")
    await rp.accounts.sign_up("owlette", display_name="Barn")
    await rp.accounts.sign_up("crow")
    assert await logins(rp, "owl") == ["owlbert", "owlette"]
    assert await logins(rp, "OWLE") == ["owlette"]
    assert await logins(rp, "hoot") == ["owlbert"]
    assert await logins(rp, "ünal") == ["owlbert"]  # a later word, case-folded
    assert await logins(rp, "UNAL") == []
    assert await logins(rp, "hoot ün") == ["owlbert"]  # the whole name too
    assert await logins(rp, "ünal ni") == ["owlbert"]  # a run of words
    assert await logins(rp, "barn") == ["owlette"]
    assert await logins(rp, "@crow") == ["crow"]
    assert await logins(rp, "crow@redpoll.test") == ["crow"]
    assert await logins(rp, "@crow@elsewhere.example", resolve=True) == []
    assert await logins(rp, "zebra") == []
    assert await logins(rp, "@") == [] and await logins(rp, "  ") == []
    assert await indexed_terms(rp, owl.id) == {"owlbert", "hoot ünal night", "ünal night", "night"}


async def test_exact_login_first_then_offset_and_limit(rp):
    for name in ("ann", "anna", "annabel", "annette"):
        await rp.accounts.sign_up(name)
    await rp.accounts.sign_up("zed", display_name="Ann")  # a name word that equals a login
    assert await logins(rp, "ann") == ["ann", "zed", "anna", "annabel", "annette"]
    assert await logins(rp, "ann", limit=2) == ["ann", "zed"]
    assert await logins(rp, "ann", limit=2, offset=2) == ["anna", "annabel"]
    assert await logins(rp, "ann", offset=limits.SEARCH_WINDOW) == []
    with pytest.raises(ValidationError):
        await find(rp, "ann", type="people")
    with pytest.raises(ValidationError):
        await find(rp, "x" * (limits.SEARCH_QUERY_MAX_CHARS + 1))


async def test_renames_move_the_index_and_late_calls_change_nothing(rp):
    user = await rp.accounts.sign_up("renamer", display_name="Old Name")
    await rp.accounts.update_profile(user.id, display_name="Fresh Name")
    assert await logins(rp, "old") == []
    assert await logins(rp, "fresh") == ["renamer"]
    # a call carrying an older revision of the record arrives late: ignored
    assert not await account_index.index_account(rp.store, user.id, 1, "renamer", "Old Name")
    assert await indexed_terms(rp, user.id) == {"renamer", "fresh name", "name"}
    assert await logins(rp, "old") == []


async def test_a_lagging_index_never_answers_wrong(rp):
    """The record changed but the index call never ran (cut short): the old
    name finds nothing, the login still finds the user."""
    user = await rp.accounts.sign_up("lagger", display_name="Before")
    await rp.store.client.hset(keys.user(user.id), mapping={"name": "After"})
    assert await logins(rp, "before") == []
    assert await logins(rp, "lag") == ["lagger"]
    await rp.accounts.update_profile(user.id, display_name="After")  # the next change repairs it
    assert await logins(rp, "after") == ["lagger"]


async def test_concurrent_renames_leave_the_index_equal_to_the_record(rp):
    user = await rp.accounts.sign_up("racer")
    names = [f"Name{i} Word{i}" for i in range(30)]
    await asyncio.gather(*(rp.accounts.update_profile(user.id, display_name=n) for n in names))
    final = (await rp.accounts.get_user(user.id)).display_name
    assert await indexed_terms(rp, user.id) == set(account_index.account_terms("racer", final))
    for name in names:
        expected = ["racer"] if name == final else []
        assert await logins(rp, name.lower()) == expected


async def test_following_only(rp):
    me, a, b = [await rp.accounts.sign_up(n) for n in ("me_f", "fol_a", "fol_b")]
    await rp.relations.follow(me.id, a.id)
    assert await logins(rp, "fol_", viewer=me.id, following=True) == ["fol_a"]
    assert await logins(rp, "fol_", viewer=me.id) == ["fol_a", "fol_b"]


async def test_statuses_are_the_viewers_own_with_every_word(rp):
    me, other = await rp.accounts.sign_up("seeker"), await rp.accounts.sign_up("other")
    s1 = await rp.statuses.post(me.id, "The quick brown fox")
    s2 = await rp.statuses.post(me.id, "a slow brown dog", {"spoiler_text": "Fox"})
    s3 = await rp.statuses.post(me.id, "brown FOX again")
    theirs = await rp.statuses.post(other.id, "brown fox from someone else")
    gone = await rp.statuses.post(me.id, "brown fox deleted")
    await rp.statuses.delete(gone.id, me.id)
    await rp.drain()  # the index's jobs

    async def ids(q, **kw):
        return [s.id for s in (await find(rp, q, viewer=me.id, type="statuses", **kw)).statuses]

    # the viewer's library: its own (every word, in the text or the warning)
    assert await ids("fox brown in:library") == [s3.id, s2.id, s1.id]
    assert await ids("QUICK in:library") == [s1.id]
    assert await ids("fox in:library", limit=1, offset=1) == [s2.id]
    assert await ids("fox in:library", max_id=s3.id) == [s2.id, s1.id]
    assert await ids("fox in:library", min_id=s1.id) == [s3.id, s2.id]
    assert await ids("fox in:library", account_id=other.id) == []
    assert await ids("cat") == []
    # and everyone's public posts of indexable accounts (a new account is)
    assert await ids("fox brown") == [theirs.id, s3.id, s2.id, s1.id]
    assert (await find(rp, "fox", type="statuses")).statuses == []  # no viewer, no statuses
    assert (await find(rp, "fox", viewer=me.id, type="accounts")).statuses == []


async def test_statuses_the_viewer_favourited_or_bookmarked_are_found(rp):
    me, other, third = [await rp.accounts.sign_up(n) for n in ("fan", "author", "third")]
    faved = await rp.statuses.post(other.id, "owls at dusk")
    marked = await rp.statuses.post(third.id, "owls at dawn")
    await rp.statuses.post(other.id, "owls at noon")  # neither: not found
    mine = await rp.statuses.post(me.id, "my owls")
    await rp.statuses.favourite(me.id, faved.id)
    await rp.statuses.bookmark(me.id, marked.id)
    await rp.drain()

    async def ids(q, **kw):
        return [s.id for s in (await find(rp, q, viewer=me.id, type="statuses", **kw)).statuses]

    assert await ids("owls in:library") == [mine.id, marked.id, faved.id]
    assert await ids("owls in:library", account_id=third.id) == [marked.id]
    assert await ids("owls in:library", max_id=mine.id, limit=1) == [marked.id]
    await rp.statuses.unfavourite(me.id, faved.id)
    await rp.statuses.unbookmark(me.id, marked.id)
    await rp.drain()
    assert await ids("owls in:library") == [mine.id]
    # someone else's favourites are theirs
    found = await find(rp, "dusk in:library", viewer=third.id, type="statuses")
    assert found.statuses == []


async def test_hashtags_by_prefix_with_following(rp):
    me = await rp.accounts.sign_up("tagger")
    await rp.statuses.post(me.id, "#Owls #owlery #owl中 #crows")
    await rp.drain()

    async def tags(q, **kw):
        return [
            (t.name, t.following)
            for t in (await find(rp, q, viewer=me.id, type="hashtags", **kw)).hashtags
        ]

    assert [n for n, _ in await tags("owl")] == ["owlery", "owls", "owl中"]  # name order
    assert [n for n, _ in await tags("#OWL", limit=1, offset=1)] == ["owls"]
    assert await tags("owl中") == [("owl中", False)]  # past U+00FF too
    assert await tags("zebra") == []
    await rp.store.client.zadd(keys.followed_tags(me.id), {"owls": 1})
    assert ("owls", True) in await tags("owl")
    assert (await find(rp, "owl", viewer=me.id, type="accounts")).hashtags == []


async def test_the_search_bench_runs():
    """The benchmark itself (figures in docs/decisions.md), on a tiny index."""
    from redpoll.tools import search_bench

    lines = await search_bench.run(users=300, rounds=2)
    assert lines[-1].startswith("300 users, ") and "hits=" in lines[0]


async def test_users_from_before_the_index_are_indexed_once_when_an_engine_opens(rp, settings):
    """Migration 1 (accounts/migrations.py), run when an engine opens a
    database whose layout does not record it."""
    old = await rp.accounts.sign_up("oldtimer", display_name="Early Bird")
    renamed = await rp.accounts.sign_up("mover", display_name="First")
    # as a database written before the index existed: no entries, no marker
    await rp.store.client.delete(
        keys.SEARCH_ACCOUNTS, keys.SEARCH_INDEXED, keys.SEARCH_BUILT, keys.LAYOUT
    )
    assert await logins(rp, "early") == []
    await rp.store.client.hset(keys.user(renamed.id), mapping={"name": "Second"})
    await rp.store.client.hincrby(keys.user(renamed.id), "rev", 1)
    from redpoll import Redpoll

    again = await Redpoll.open(settings)
    try:
        assert await logins(again, "early") == ["oldtimer"]
        assert await logins(again, "second") == ["mover"] and await logins(again, "first") == []
        assert await indexed_terms(again, old.id) == {"oldtimer", "early bird", "bird"}
        assert await rp.store.client.exists(keys.SEARCH_BUILT)
        assert (await migrate.run(again.store)).made == []  # once
    finally:
        await again.close()
