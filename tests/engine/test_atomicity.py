"""All-or-nothing actions.

A call is cut short by cancelling it after k turns of the event loop, for
every k until the call finishes on its own: each await point (and each
reply in flight) is hit. After the jobs drain, what is left must be one of
the two clean states: nothing at all, or the whole effect.
"""

from __future__ import annotations

import pytest
from support.cutshort import drive  # noqa: F401
from support.integrity import assert_clean  # noqa: F401

from redpoll import Redpoll
from redpoll.core import keys
from redpoll.core.errors import LoginTaken, StatusNotFound, UserNotFound, ValidationError
from redpoll.search import search
from redpoll.timelines import placement

#: an await point past every one of the calls tested here (a safety stop)
MAX_STEPS = 400


@pytest.fixture
async def rp2(settings):
    engine = await Redpoll.open(settings.with_(fanout_batch=2))
    yield engine
    await engine.close()


async def cut_short(make_call, k: int) -> bool:
    """Run the call, cut short at its k-th await point (k = 0: before it
    starts); True if it finished first (no later k can cut it short). Each
    await point is one k, whatever the machine's load."""
    return await drive(make_call(), k)


async def ids_in(rp, key) -> set[int]:
    return {int(x) for x in await rp.store.client.lrange(key, 0, -1)}


async def world(rp, author, fans, lst_owner, lst):
    """Who holds which status id: author's profile, every timeline."""
    c = rp.store.client
    return {
        "profile": {int(x) for x in await c.zrange(keys.profile(author.id), 0, -1)},
        "author_home": await ids_in(rp, keys.home(author.id)),
        "public": {
            i for key in placement.of(rp.store).public_keys() for i in await ids_in(rp, key)
        },
        "list": await ids_in(rp, keys.list_timeline(lst_owner.id, lst.id)),
        "fans": [await ids_in(rp, keys.home(f.id)) for f in fans],
    }


async def live_status(rp, sid) -> bool:
    raw = await rp.store.client.hgetall(keys.status(sid))
    return bool(raw) and b"deleted" not in raw


async def setup_author(rp):
    author = await rp.accounts.sign_up("poster")
    fans = []
    for i in range(5):  # fanout_batch=2: the delivery takes several jobs
        fan = await rp.accounts.sign_up(f"fan{i}")
        await rp.relations.follow(fan.id, author.id)
        fans.append(fan)
    owner = await rp.accounts.sign_up("lister")
    await rp.relations.follow(owner.id, author.id)  # lists hold only accounts followed
    lst = await rp.lists.create(owner.id, "watch")
    await rp.lists.add(owner.id, lst.id, author.id)
    return author, fans, owner, lst


async def check_all_or_nothing(rp, author, fans, owner, lst, sids, expect_live=None):
    w = await world(rp, author, fans, owner, lst)
    user = await rp.accounts.get_user(author.id)
    assert user.posts == len(w["profile"]), "counter equals the profile's size"
    live = set()
    for sid in sids:
        alive = await live_status(rp, sid)
        holders = [
            sid in w["profile"],
            sid in w["author_home"],
            sid in w["public"],
            sid in w["list"],
            *(sid in f for f in w["fans"]),
        ]
        if alive:
            assert all(holders), f"status {sid} is live but not everywhere: {holders}"
            live.add(sid)
        else:
            assert not any(holders), f"status {sid} is gone but left in {holders}"
    assert w["profile"] <= live | set(), "no profile entry without its status"
    stats = await rp.stats()
    assert stats["statuses"] == len(live), "stats count exactly the live statuses"
    if expect_live is not None:
        assert live == expect_live
    return live


async def test_post_cut_short_anywhere_is_nothing_or_everything(rp2):
    rp = rp2
    author, fans, owner, lst = await setup_author(rp)
    first = int(await rp.store.client.get(keys.STATUS_SEQ) or 0)
    k = 0
    while not await cut_short(lambda: rp.statuses.post(author.id, f"try {k}"), k):
        k += 1
        assert k < MAX_STEPS
    assert k >= 2  # the call really has await points to be cut at
    await rp.drain(timeout=120)
    last = int(await rp.store.client.get(keys.STATUS_SEQ))
    live = await check_all_or_nothing(rp, author, fans, owner, lst, range(first + 1, last + 1))
    assert last in live  # the call that was not cut short posted
    # and a status that exists is exactly what was posted
    for sid in live:
        assert (await rp.statuses.get_status(sid)).text.startswith("try ")
    await assert_clean(rp)


async def test_delete_cut_short_anywhere_is_untouched_or_fully_deleted(rp2):
    rp = rp2
    author, fans, owner, lst = await setup_author(rp)
    sids = []
    k = 0
    while True:  # a new status for each k, its fan-out maybe still queued
        sids.append((await rp.statuses.post(author.id, f"doomed {k}")).id)
        sids.append((await rp.statuses.post(author.id, f"bystander {k}")).id)
        if await cut_short(lambda: rp.statuses.delete(sids[-2], author.id), k):
            break
        k += 1
        assert k < MAX_STEPS
    await rp.drain(timeout=120)
    live = await check_all_or_nothing(rp, author, fans, owner, lst, sids)
    doomed, bystanders = sids[0::2], sids[1::2]
    assert set(bystanders) <= live
    assert doomed[-1] not in live  # the call that ran to its end deleted
    assert live & set(doomed)  # some calls were cut short before the journal...
    if not rp.store.cluster:  # (redis-py's cluster client often answers without suspending)
        assert set(doomed) - live - {doomed[-1]}  # ...and some after it
    # what a cut-short call left untouched can be deleted; what it marked
    # deleted is not found (its journal finished the delete)
    for sid in doomed[:-1]:
        if sid in live:
            await rp.statuses.delete(sid, author.id)
        else:
            with pytest.raises(StatusNotFound):
                await rp.statuses.delete(sid, author.id)
    await rp.drain(timeout=120)
    await check_all_or_nothing(rp, author, fans, owner, lst, sids, expect_live=set(bystanders))
    await assert_clean(rp)


async def test_failed_sign_up_writes_nothing(rp):
    await rp.accounts.sign_up("taken")
    c = rp.store.client

    async def snapshot():
        found = {}
        for key in sorted([k async for k in c.scan_iter(count=1000)]):
            kind = (await c.type(key)).decode()
            if kind == "string":
                found[key] = await c.get(key)
            elif kind == "hash":
                found[key] = await c.hgetall(key)
            else:
                found[key] = kind
        return found

    before = await snapshot()
    for login in ("taken", "TAKEN", "Taken"):
        with pytest.raises(LoginTaken):
            await rp.accounts.sign_up(login)
    for bad in ("", "no spaces", "x" * 500):
        with pytest.raises(ValidationError):
            await rp.accounts.sign_up(bad)
    with pytest.raises(ValidationError):
        await rp.accounts.sign_up("fine", display_name="x" * 10_000)
    assert await snapshot() == before  # not even a user id from the counter


async def test_sign_up_cut_short_anywhere_is_counted_exactly_when_it_made_a_user(rp):
    """The users count moves with the users: a sign-up cut short at
    any await point either made no user and counted none, or, after the jobs
    drain (its journal, jobs.SignUpJob, replayed), made one that is counted
    once and found by search."""
    before = (await rp.stats())["users"]
    made = []
    k = 0
    while not await cut_short(lambda: rp.accounts.sign_up(f"cut{k}", password="pw"), k):
        k += 1
        assert k < MAX_STEPS
    assert k >= 4
    await rp.drain(timeout=120)
    for i in range(k + 1):
        try:
            made.append(await rp.accounts.lookup(f"cut{i}"))
        except UserNotFound:
            pass
    assert f"cut{k}" in {u.login for u in made}  # the call not cut short
    # (which cuts made a user depends on where each call suspends, which on
    # a cluster client varies; tests/test_users.py settles both cases)
    assert len(made) < k + 1  # the cut before the start made none
    assert (await rp.stats())["users"] == before + len(made)
    for user in made:
        found = await rp.discovery.search(search.Query(q=user.login, type="accounts"))
        assert user.id in {u.id for u in found.accounts}
    # an id given up has no user
    seq = int(await rp.store.get(keys.USER_SEQ))
    void = [uid for uid in range(1, seq + 1) if await rp.store.exists(keys.sign_up_void(uid))]
    assert not any([await rp.store.exists(keys.user(uid)) for uid in void])


async def test_idempotent_post_cut_short_anywhere_then_retried_posts_once(rp2):
    """The key is claimed in the step that journals the
    post, so a retry after a call cut short anywhere returns that post, or
    posts the first time, never twice."""
    rp = rp2
    author, fans, owner, lst = await setup_author(rp)
    k = 0
    results = {}
    while True:
        key = f"retry-{k}"
        done = await cut_short(lambda: rp.statuses.post_once(author.id, key, f"once {k}"), k)
        again = await rp.statuses.post_once(author.id, key, f"once {k}")
        assert again.text == f"once {k}"
        results[k] = again.id
        if done:
            break
        k += 1
        assert k < MAX_STEPS
    await rp.drain(timeout=120)
    first = 0
    last = int(await rp.store.client.get(keys.STATUS_SEQ))
    live = await check_all_or_nothing(rp, author, fans, owner, lst, range(first + 1, last + 1))
    texts = [(await rp.statuses.get_status(sid)).text for sid in live]
    assert sorted(texts) == sorted(f"once {n}" for n in results)  # each key posted once
    assert live == set(results.values())


async def test_a_mentioned_follower_gets_the_status_once(rp):
    """Mentions are delivered besides the fan-out (conversation.after_post);
    the fan-out's blind push on a single server must not add it again."""
    author = await rp.accounts.sign_up("speaker")
    fan = await rp.accounts.sign_up("listener")
    await rp.relations.follow(fan.id, author.id)
    status = await rp.statuses.post(author.id, "hello @listener")
    await rp.drain()
    home = [int(x) for x in await rp.store.client.lrange(keys.home(fan.id), 0, -1)]
    assert home.count(status.id) == 1, home


async def test_an_edit_cut_short_anywhere_is_all_or_nothing_once_the_jobs_drain(rp2):
    """An edit journals what follows its atomic step: cut short at any
    await, then the jobs drained, the status is either as it was with none
    of the edit's effects, or edited with all of them (the newly mentioned
    reader has it in their home and a mention, the booster an update
    notification)."""
    rp = rp2
    author = await rp.accounts.sign_up("editor")
    reader = await rp.accounts.sign_up("reader")
    booster = await rp.accounts.sign_up("booster")
    k = 0
    while True:
        status = await rp.statuses.post(author.id, f"draft {k}")
        await rp.statuses.boost(booster.id, status.id)
        await rp.drain(timeout=60)
        done = await cut_short(
            lambda: rp.statuses.edit(author.id, status.id, f"@reader now {k}"), k
        )
        await rp.drain(timeout=60)
        now = await rp.statuses.get_status(status.id)
        home = {int(x) for x in await rp.store.client.lrange(keys.home(reader.id), 0, -1)}
        reader_notes = await rp.notifications.listed(reader.id)
        booster_notes = await rp.notifications.listed(booster.id)
        mentioned = any(n.type == "mention" and n.status == status.id for n in reader_notes)
        updated = [n for n in booster_notes if n.type == "update" and n.status == status.id]
        if now.text == f"draft {k}":  # nothing of the edit
            assert status.id not in home and not mentioned and not updated, k
        else:  # the whole edit, once
            assert now.text == f"@reader now {k}", k
            assert status.id in home and mentioned and len(updated) == 1, (k, home, updated)
        if done:
            break
        k += 1
        assert k < MAX_STEPS
