"""Users: sign-up, unique logins in any case, secrets kept apart."""

from __future__ import annotations

import asyncio

import pytest

from redpoll.accounts import account
from redpoll.core import keys
from redpoll.core.errors import LoginTaken, UserNotFound, ValidationError
from redpoll.core.models import now_ms
from redpoll.records import users


async def raw_hash(rp, key: str) -> dict[str, str]:
    raw = await rp.store.client.hgetall(key)
    return {k.decode(): v.decode() for k, v in raw.items()}


async def test_sign_up_returns_a_fresh_record(rp):
    before = now_ms()
    alice = await rp.accounts.sign_up("AliceW")
    assert alice.id > 0
    assert alice.login == "AliceW"  # as typed, not folded
    assert alice.display_name == "AliceW"  # defaults to the login
    assert (alice.followers, alice.following, alice.posts) == (0, 0, 0)
    assert before <= alice.created_at <= now_ms()
    assert await rp.accounts.get_user(alice.id) == alice

    bob = await rp.accounts.sign_up("bob", display_name="Bob B.", bio="hi there")
    assert bob.id != alice.id
    assert (bob.display_name, bob.bio) == ("Bob B.", "hi there")
    assert await rp.accounts.get_user(bob.id) == bob
    assert (await rp.stats())["users"] == 2


async def test_concurrent_sign_ups_in_any_case_make_one_user(rp):
    variants = ["Alice", "alice", "ALICE", "aLiCe", "alicE"]
    logins = [variants[i % len(variants)] for i in range(100)]
    results = await asyncio.gather(
        *(rp.accounts.sign_up(login) for login in logins), return_exceptions=True
    )
    winners = [r for r in results if not isinstance(r, BaseException)]
    losers = [r for r in results if isinstance(r, BaseException)]
    assert len(winners) == 1, winners
    assert len(losers) == 99
    assert all(isinstance(e, LoginTaken) for e in losers), {type(e) for e in losers}
    winner = winners[0]
    assert winner.login in variants
    for login in variants + ["ALIce"]:
        assert await rp.accounts.lookup(login) == winner
    assert (await rp.stats())["users"] == 1
    # the losers' ids never became users
    seq = int(await rp.store.client.get(keys.USER_SEQ))
    others = [uid for uid in range(1, seq + 1) if uid != winner.id]
    assert await rp.accounts.get_users(others) == []


async def test_taken_login_is_refused_later_too(rp):
    first = await rp.accounts.sign_up("carol")
    for login in ("carol", "Carol", "CAROL"):
        with pytest.raises(LoginTaken):
            await rp.accounts.sign_up(login, password="other")
    assert await rp.accounts.lookup("cArOl") == first
    assert (await rp.stats())["users"] == 1


async def test_lookup_unknown_and_invalid_logins(rp):
    await rp.accounts.sign_up("dave")
    with pytest.raises(UserNotFound):
        await rp.accounts.lookup("davey")
    with pytest.raises(ValidationError):
        await rp.accounts.lookup("not a login")


async def test_secrets_never_reach_the_user_record(rp):
    user = await rp.accounts.sign_up("erin", password="correct horse", email="erin@example.org")
    record = await raw_hash(rp, keys.user(user.id))
    assert set(record) == {
        "id",
        "login",
        "name",
        "bio",
        "at",
        "followers",
        "following",
        "posts",
        "rev",
        "idx",  # indexable (full-text search), on for a new account
    }
    for value in record.values():
        assert "correct horse" not in value and "erin@example.org" not in value
        assert not value.startswith("$argon2")
    secrets = await raw_hash(rp, keys.secrets(user.id))
    assert secrets["email"] == "erin@example.org"
    assert secrets["password"].startswith("$argon2")
    assert "correct horse" not in secrets["password"]  # hashed, not stored
    assert "password" not in user.to_dict() and "email" not in user.to_dict()


async def test_user_without_secrets_has_no_secrets_key(rp):
    user = await rp.accounts.sign_up("frank")
    assert not await rp.store.client.exists(keys.secrets(user.id))
    assert await rp.accounts.check_password("frank", "") is None
    assert await rp.accounts.check_password("frank", "anything") is None


async def test_check_password(rp):
    grace = await rp.accounts.sign_up("Grace", password="s3cret!")
    await rp.accounts.sign_up("heidi", password="other")
    assert await rp.accounts.check_password("Grace", "s3cret!") == grace
    assert await rp.accounts.check_password("GRACE", "s3cret!") == grace  # login in any case
    assert await rp.accounts.check_password("Grace", "s3cret") is None
    assert await rp.accounts.check_password("Grace", "S3CRET!") is None
    assert await rp.accounts.check_password("Grace", "other") is None  # someone else's password
    assert await rp.accounts.check_password("nobody", "s3cret!") is None
    assert await rp.accounts.check_password("not a login", "s3cret!") is None


async def test_update_profile(rp):
    ivan = await rp.accounts.sign_up("ivan", password="pw")
    updated = await rp.accounts.update_profile(ivan.id, display_name="Ivan the Great", bio="Tsar")
    assert (updated.display_name, updated.bio) == ("Ivan the Great", "Tsar")
    assert (updated.id, updated.login, updated.created_at) == (ivan.id, ivan.login, ivan.created_at)
    assert await rp.accounts.get_user(ivan.id) == updated
    # only the given field changes
    again = await rp.accounts.update_profile(ivan.id, bio="")
    assert (again.display_name, again.bio) == ("Ivan the Great", "")
    # nothing given: nothing changes, the user is returned
    assert await rp.accounts.update_profile(str(ivan.id)) == again
    # the password still works and the record gained no secrets
    assert await rp.accounts.check_password("ivan", "pw") == again
    assert "password" not in await raw_hash(rp, keys.user(ivan.id))


async def test_update_profile_of_unknown_user(rp):
    with pytest.raises(UserNotFound):
        await rp.accounts.update_profile(424242, display_name="ghost")
    with pytest.raises(UserNotFound):
        await rp.accounts.update_profile(424242)
    assert not await rp.store.client.exists(keys.user(424242))


async def test_get_user_unknown(rp):
    await rp.accounts.sign_up("judy")
    with pytest.raises(UserNotFound):
        await rp.accounts.get_user(987654)
    with pytest.raises(UserNotFound) as info:
        await rp.accounts.get_user("987654")
    assert info.value.status == 404


async def test_get_users_keeps_order_and_skips_unknown(rp):
    a = await rp.accounts.sign_up("ann")
    b = await rp.accounts.sign_up("ben")
    c = await rp.accounts.sign_up("cat")
    found = await rp.accounts.get_users([c.id, 999_001, a.id, str(b.id), 999_002, c.id])
    assert [u.login for u in found] == ["cat", "ann", "ben", "cat"]
    assert found[0] == c
    assert await rp.accounts.get_users([]) == []
    assert await rp.accounts.get_users([999_003]) == []


async def test_counters_follow_activity(rp):
    kim = await rp.accounts.sign_up("kim")
    lee = await rp.accounts.sign_up("lee")
    await rp.relations.follow(kim.id, lee.id)
    await rp.statuses.post(lee.id, "one")
    await rp.statuses.post(lee.id, "two")
    kim, lee = await rp.accounts.get_users([kim.id, lee.id])
    assert (kim.following, kim.followers, kim.posts) == (1, 0, 0)
    assert (lee.following, lee.followers, lee.posts) == (0, 1, 2)


async def test_every_change_to_a_user_record_bumps_its_rev(rp):
    """users.current trusts a kept record while 'rev' is unchanged, so each
    change to the record must bump it: counts (follow, unfollow, post,
    delete) and the profile."""
    ann, bob = await rp.accounts.sign_up("ann_rev"), await rp.accounts.sign_up("bob_rev")

    async def revs():
        a, b = await rp.store.batch(users.rev_reads([ann.id, bob.id]))
        return int(a), int(b)

    seen = [await revs()]
    await rp.relations.follow(ann.id, bob.id)  # ann following, bob followers
    seen.append(await revs())
    status = await rp.statuses.post(bob.id, "hello")  # bob posts
    seen.append(await revs())
    await rp.statuses.delete(status.id, bob.id)  # bob uncounted
    seen.append(await revs())
    await rp.accounts.update_profile(ann.id, display_name="Ann")
    seen.append(await revs())
    await rp.relations.unfollow(ann.id, bob.id)
    seen.append(await revs())
    assert seen[0] == (1, 1)
    ann_revs, bob_revs = [a for a, _ in seen], [b for _, b in seen]
    assert ann_revs == sorted(ann_revs) and len(set(ann_revs)) == 4  # follow, profile, unfollow
    assert (
        bob_revs == sorted(bob_revs) and len(set(bob_revs)) == 5
    )  # follow, post, delete, unfollow


async def test_current_users_are_reused_while_unchanged_and_reread_after(rp):
    ann, bob = await rp.accounts.sign_up("ann_cur"), await rp.accounts.sign_up("bob_cur")

    async def now():
        uids = [ann.id, bob.id, 999_999]
        revs = dict(zip(uids, await rp.store.batch(users.rev_reads(uids))))
        return await users.current(rp.store, uids, revs)

    first = await now()
    assert set(first) == {ann.id, bob.id}  # the unknown id is left out
    again = await now()
    assert again[ann.id] is first[ann.id] and again[bob.id] is first[bob.id]
    await rp.relations.follow(ann.id, bob.id)
    after = await now()
    assert after[bob.id].followers == 1 and after[ann.id].following == 1
    assert (await users.current(rp.store, [ann.id], {}))[ann.id] == after[ann.id]  # no rev: read


async def test_a_slow_sign_up_is_not_given_up_before_its_time(rp):
    """A worker that finds a sign-up's journal with no user yet leaves it be
    while its caller may only be slow (SIGN_UP_SETTLE_CLAIMS claim periods),
    then gives the id up: void, so the caller cannot write it late."""
    from redpoll.accounts.jobs import SignUpJob
    from redpoll.bus.queue import NotYet
    from redpoll.core.errors import SignUpAbandoned

    uid = await rp.store.incr(keys.USER_SEQ)
    job = SignUpJob(uid, "slowpoke")
    held = await rp.queue.hold(job)
    with pytest.raises(NotYet):
        await account.settle_sign_up(rp.store, job, held.entry_id, 60_000)
    assert not await rp.store.exists(keys.sign_up_void(uid))
    assert await account.settle_sign_up(rp.store, job, held.entry_id, 0) is False
    with pytest.raises(SignUpAbandoned):
        await rp.store.run(
            "create_user",
            [keys.user(uid), keys.secrets(uid), keys.sign_up_void(uid)],
            [1, "id", uid],
        )
    assert not await rp.store.exists(keys.user(uid))


async def test_a_sign_up_whose_caller_died_after_its_record_is_counted_once(rp):
    """Its journal held and its record written, the caller gone: a worker's
    replay counts the user and indexes it for search."""
    from redpoll.accounts.jobs import SignUpJob
    from redpoll.search import search

    before = (await rp.stats())["users"]
    uid = await rp.store.incr(keys.USER_SEQ)
    await rp.queue.hold(SignUpJob(uid, "ghostly"))
    await rp.store.set(keys.login("ghostly"), f"{uid}:{now_ms()}")
    await rp.store.run(
        "create_user",
        [keys.user(uid), keys.secrets(uid), keys.sign_up_void(uid)],
        [4, "id", uid, "login", "ghostly", "name", "Ghostly", "at", now_ms()],
    )
    assert (await rp.stats())["users"] == before  # not yet: the journal is held
    await rp.drain(timeout=60)  # a worker takes the journal over after job_claim_ms
    assert (await rp.stats())["users"] == before + 1
    assert (await rp.accounts.lookup("ghostly")).id == uid
    found = await rp.discovery.search(search.Query(q="ghostly", type="accounts"))
    assert [u.id for u in found.accounts] == [uid]
    await rp.drain(timeout=60)
    assert (await rp.stats())["users"] == before + 1  # once
