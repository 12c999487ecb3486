"""The integrity check (redpoll.engine.check, ``redpoll check``): a network
made through the engine is clean; each invariant broken on purpose is
found, ``repair`` mends it, a second repair has nothing left to do, and
the check is clean again, on both topologies."""

from __future__ import annotations

import asyncio
import io
import os
import time

import pytest
from click.testing import CliRunner
from PIL import Image
from support.integrity import run  # noqa: F401

from redpoll import Redpoll
from redpoll.core import keys
from redpoll.engine import check
from redpoll.tools.cli import main


def jpeg() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (64, 48), (1, 200, 3)).save(out, "JPEG")
    return out.getvalue()


@pytest.fixture
async def crp(settings, tmp_path):
    engine = await Redpoll.open(settings.with_(media_dir=str(tmp_path / "media")))
    yield engine
    await engine.close()


async def test_each_broken_invariant_is_found_and_repaired(crp, server):
    rp = crp
    alice = await rp.accounts.sign_up("alice")
    bob = await rp.accounts.sign_up("bob")
    carol = await rp.accounts.sign_up("carol")
    dave = await rp.accounts.sign_up("dave")
    for who in (bob, carol, dave):
        await rp.relations.follow(who.id, alice.id)
    await rp.relations.follow(alice.id, bob.id)
    chums = await rp.lists.create(alice.id, "chums")
    await rp.lists.add(alice.id, chums.id, bob.id)
    first = await rp.statuses.post(alice.id, "hello")
    await rp.statuses.post(bob.id, "a reply", in_reply_to=first.id)
    await rp.statuses.favourite(bob.id, first.id)
    await rp.statuses.boost(carol.id, first.id)
    upload = await rp.media.upload(alice.id, jpeg())
    pictured = await rp.statuses.post(alice.id, "a picture", media=[upload.id])
    doomed = await rp.statuses.post(bob.id, "to be lost")
    await rp.drain()

    clean = await run(rp)
    assert clean.findings == [], [f.line() for f in clean.findings]
    assert clean.walked["users"] == 4 and clean.walked["statuses"] >= 5
    assert clean.walked["media files"] >= 1 and clean.walked["upload records"] == 1
    assert clean.steps > 4  # two users or statuses a step

    # --- each breakage, planted -------------------------------------------------------
    s = rp.store
    await s.hset(keys.user(alice.id), "followers", 7)  # user-counts
    await s.hset(keys.status_counts(first.id), "f", 5)  # status-counts
    await s.zrem(keys.followers(bob.id), alice.id)  # a follow without its follower entry
    await s.zadd(keys.followers(carol.id), {str(dave.id): 1})  # a follower entry, no follow
    await s.zadd(keys.list_members(alice.id, chums.id), {str(carol.id): 1})  # not followed
    await s.lpush(keys.home(dave.id), 999_999)  # a status that never was
    await s.delete(keys.status(doomed.id))  # gone without its cleanup: in homes still
    await s.delete(keys.status(pictured.id))  # and its upload attached to nothing
    orphan = rp.media_storage.root / "ab" / "cd" / ("ab" * 16 + ".png")
    orphan.parent.mkdir(parents=True, exist_ok=True)
    orphan.write_bytes(b"not named by anything")
    hour_ago = time.time() - 7200
    os.utime(orphan, (hour_ago, hour_ago))
    recent = orphan.with_name("cd" * 16 + ".png")
    recent.write_bytes(b"maybe an upload in progress")  # too new to be judged

    found = await run(rp)
    by = {}
    for f in found.findings:
        by.setdefault(f.invariant, set()).add((f.subject, f.detail))
    assert set(by) == set(check.INVARIANTS), by
    assert by["user-counts"] == {
        (keys.user(alice.id), "followers is 7, its set holds 3"),
        # (the edges planted by hand left their counters behind too)
        (keys.user(bob.id), "followers is 1, its set holds 0"),
        (keys.user(carol.id), "followers is 0, its set holds 1"),
    }
    assert (keys.status_counts(first.id), "f is 5, its set holds 1") in by["status-counts"]
    assert {d for _, d in by["follow-edges"]} == {
        f"the follow {alice.id} -> {bob.id} is on one side only",
        f"the follow {dave.id} -> {carol.id} is on one side only",
    }
    assert by["list-members"] == {
        (
            keys.list_members(alice.id, chums.id),
            f"member {carol.id} is not followed by the list's owner",
        )
    }
    timelines = {(k, d) for k, d in by["timelines"]}
    assert (keys.home(dave.id), "status 999999 is gone") in timelines
    assert (keys.home(bob.id), f"status {doomed.id} is gone") in timelines
    assert (keys.home(carol.id), f"status {pictured.id} is gone") in timelines
    assert [d for _, d in by["media-records"]] == [
        f"attached to status {pictured.id}, which is gone"
    ]
    assert by["media-files"] == {(str(orphan), "no upload record or profile names it")}
    assert not any(f.repaired for f in found.findings)
    names_before = {p for p in rp.media_storage.root.rglob("*.jpg")}
    assert names_before

    mended = await run(rp, repair=True)
    # the same (a count is read after the edges were mended: its figures differ)
    assert {(f.invariant, f.subject) for f in mended.findings} == {
        (f.invariant, f.subject) for f in found.findings
    }
    assert all(f.repaired for f in mended.findings)
    await rp.drain()  # (a list member's removal queues its timeline's refill)

    again = await run(rp)
    assert again.findings == [], [f.line() for f in again.findings]
    assert (await run(rp, repair=True)).findings == []  # nothing mended twice
    # what the repairs left, read back
    assert int(await s.hget(keys.user(alice.id), "followers")) == 3
    assert int(await s.hget(keys.status_counts(first.id), "f")) == 1
    assert await s.zscore(keys.followers(bob.id), alice.id) is not None
    assert await s.zscore(keys.followers(carol.id), dave.id) is None
    assert await s.zscore(keys.list_members(alice.id, chums.id), carol.id) is None
    assert b"999999" not in await s.lrange(keys.home(dave.id), 0, -1)
    assert not orphan.exists() and recent.exists()
    assert not any(p.exists() for p in names_before)  # the lost status's picture's files
    assert (await rp.timelines.home(bob.id)) is not None


def test_the_command_says_what_it_found_and_exits_1_until_repaired(server, settings, tmp_path):
    url, cluster, _ = server
    env = {
        "REDIS_URL": url,
        "REDPOLL_CLUSTER": "1" if cluster else "0",
        "REDPOLL_MEDIA_DIR": str(tmp_path / "media"),
    }
    # a file in a media directory this database never named a file in is
    # not its to judge (another database's, a directory set by mistake)
    stranger = tmp_path / "media" / "ab" / "cd" / ("ef" * 16 + ".png")
    stranger.parent.mkdir(parents=True)
    stranger.write_bytes(b"someone else's")
    os.utime(stranger, (time.time() - 7200, time.time() - 7200))
    runner = CliRunner()
    clean = runner.invoke(main, ["check", "--repair"], env=env)
    assert clean.exit_code == 0, clean.output
    assert clean.stdout.strip().endswith(": nothing broken")

    async def plant():
        rp = await Redpoll.open(settings)
        try:
            alice = await rp.accounts.sign_up("alice")
            await rp.store.hset(keys.user(alice.id), "following", 3)
            return alice
        finally:
            await rp.close()

    alice = asyncio.run(plant())
    found = runner.invoke(main, ["check"], env=env)
    assert found.exit_code == 1
    assert found.stdout.splitlines()[0] == (
        f"user-counts: {keys.user(alice.id)}: following is 3, its set holds 0"
    )
    assert "1 broken, 0 repaired" in found.stdout.splitlines()[-1]
    mended = runner.invoke(main, ["check", "--repair"], env=env)
    assert mended.exit_code == 0, mended.output
    assert "1 broken, 1 repaired" in mended.stdout.splitlines()[-1]
    assert runner.invoke(main, ["check"], env=env).exit_code == 0
    assert stranger.exists()
