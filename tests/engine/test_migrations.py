"""Migrations (redpoll.engine.migrate): a database written by the release
before layout versions (tests/engine/layouts/, made by make_layout.py
running that release's code) opens with today's code on both topologies;
the three backfills it ran "once per database" are migrations 1-3, counted
as made where their flags are set and made where they are not, and
migrations 4 and 5 (the peers of the accounts it kept, the statuses its
featured tags count) are made; a run cut
short at any step and run again finishes the whole effect; one process
migrates while the others wait; a migration due by hand stops a start."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis
from click.testing import CliRunner
from conftest import CLUSTER, flush
from redis.cluster import RedisCluster

from redpoll import Redpoll
from redpoll.core import keys
from redpoll.core.errors import ConfigError
from redpoll.engine import migrate
from redpoll.federation import keys as fed_keys
from redpoll.search.search import Query
from redpoll.storage.migration import Migration
from redpoll.tools.cli import main

LAYOUTS = Path(__file__).resolve().parent / "layouts"
#: the release before layout versions, as its code wrote a small network
PREVIOUS = LAYOUTS / ("f1be097-cluster.json" if CLUSTER else "f1be097.json")
LATEST = migrate.MIGRATIONS[-1].number


@pytest.fixture
def settings(settings):
    """As the layout was written: federation on (its key pairs are read)."""
    return settings.with_(public_url="http://127.0.0.1:1", federation_loopback=True)


def client(url: str):
    return RedisCluster.from_url(url) if CLUSTER else redis.Redis.from_url(url)


def load(server, path: Path = PREVIOUS) -> dict:
    """The layout's keys, restored as they were dumped (on a cluster, each
    key to its slot's master); what the script that made it recorded."""
    url, _, handle = server
    flush(handle)
    fixture = json.loads(path.read_text())
    c = client(url)
    try:
        for row in fixture["keys"]:
            c.restore(row["key"], row["ttl_ms"], base64.b64decode(row["dump"]), replace=True)
    finally:
        c.close()
    return fixture["made"]


def strip(server) -> None:
    """Take away what the three backfills made and their flags, leaving
    the data as a database from before them held it: no search index, reply
    counts of every reply (the old rule) and no set of counted ones, mutes
    with no index of their muters."""
    url = server[0]
    c = client(url)
    try:
        for key in c.scan_iter(count=1000):
            name = key.decode()
            if name.startswith(("rpc:{", "mutedby:{")):
                c.delete(key)
        c.delete(
            keys.SEARCH_ACCOUNTS,
            keys.SEARCH_INDEXED,
            keys.SEARCH_BUILT,
            keys.REPLY_COUNTS_DONE,
            keys.MUTED_BY_BUILT,
            keys.LAYOUT,
            fed_keys.PEERS,
        )
        c.hset(keys.status_counts(1), "p", 3)  # public, unlisted and private
    finally:
        c.close()


async def effect(store) -> dict:
    """What the migrations make, read back."""
    search = await store.client.zrange(keys.SEARCH_ACCOUNTS, 0, -1)
    counted = {sid: await store.client.zrange(keys.replies_counted(sid), 0, -1) for sid in (1, 6)}
    counts = {sid: await store.client.hget(keys.status_counts(sid), "p") for sid in (1, 6)}
    muted = {u: await store.client.zrange(keys.muted_by(u), 0, -1) for u in (3, 4)}
    peers = await store.client.smembers(fed_keys.PEERS)
    tagged = await store.client.zrange(keys.tag_posts(1, "birds"), 0, -1, withscores=True)
    listed = [await store.client.hget(keys.user(u), "disc") for u in range(1, 6)]
    ruled = {
        u: (
            await store.client.zrange(keys.ruled_posts(u), 0, -1, withscores=True),
            await store.client.exists(keys.ruled_posts_before(u)),
        )
        for u in range(1, 6)
    }
    return {
        "ruled": ruled,
        "listed": listed,
        "search": sorted(search),
        "counted": counted,
        "counts": counts,
        "muted": muted,
        "peers": peers,
        "tagged": tagged,
    }


async def expect_the_network(rp, made: dict) -> None:
    """The small network as today's code reads it."""
    users = made["users"]
    alice, bob, carol, dave = (users[n] for n in ("alice", "bob", "carol", "dave"))
    found = await rp.discovery.search(Query(q="early", hosts=("redpoll.test",), type="accounts"))
    assert [u.login for u in found.accounts] == ["alice"]
    found = await rp.discovery.search(Query(q="owl", hosts=("redpoll.test",), type="accounts"))
    assert [u.login for u in found.accounts] == ["bob"]
    first = await rp.statuses.get_status(made["first"])
    assert first.text == "hello #birds"
    # public and unlisted replies count; the private one and the deleted one do not
    assert int(await rp.store.hget(keys.status_counts(made["first"]), "p")) == 2
    assert await rp.store.zscore(keys.muted_by(carol), alice) is not None
    assert await rp.store.zscore(keys.muted_by(dave), bob) is not None
    mute = (await rp.relations.relation(bob, dave)).mute
    assert mute is not None and mute.notifications is False
    home = [s.id for s in await rp.timelines.home(carol)]
    assert made["first"] in home
    listed = [s.id for s in await rp.timelines.of_list(alice, made["list"])]
    assert made["second"] in listed
    assert await rp.relations.following_ids(dave) == frozenset({alice})
    # the remote account the old release kept: its server is a peer
    assert await rp.instance.peers() == ["far.example"]
    found = await rp.discovery.search(Query(q="erin", hosts=("redpoll.test",), type="accounts"))
    assert [u.id for u in found.accounts] == [made["remote"]]
    # not listed in the directory: its server never said it may be
    listed = [u.id for u in await rp.discovery.directory(None, order="new", limit=80)]
    assert made["remote"] not in listed and alice in listed
    # its hashtag, featured now, counts the status it posted with it
    featured = await rp.tags.feature(alice, "birds")
    assert featured.statuses_count == 1 and featured.last_status_at
    # the key pairs that sign federation are the ones the old release made
    for login in ("alice", "bob"):
        doc = await rp.federation.actor_document(login)
        assert doc["publicKey"]["publicKeyPem"] == made["public_keys"][login]
    doc = await rp.federation.instance_actor_document()
    assert doc["publicKey"]["publicKeyPem"] == made["public_keys"]["instance"]
    # and the network goes on: a new post reaches a follower's home
    new = await rp.statuses.post(alice, "after the upgrade")
    await rp.drain()
    assert new.id in [s.id for s in await rp.timelines.home(bob)]


async def test_a_database_of_the_previous_release_opens_with_its_backfills_counted(
    server, settings, caplog
):
    made = load(server)
    caplog.set_level(logging.INFO, "redpoll.migrate")
    rp = await Redpoll.open(settings)
    try:
        now = await migrate.layout(rp.store)
        assert now.version == LATEST == 9 and not now.cursors
        said = [r.getMessage() for r in caplog.records if r.name == "redpoll.migrate"]
        assert len(said) == 9, said
        assert all("made before layout versions" in s for s in said[:3]), said
        assert said[3].startswith("migration 4 (instance-peers") and ": made, 1 changed" in said[3]
        assert said[4].startswith("migration 5 (featured-tag") and ": made, 1 changed" in said[4]
        assert said[5].startswith("migration 6 (staff-index")
        assert (
            said[6].startswith("migration 7 (remote-directory") and ": made, 1 changed" in said[6]
        )
        # the layout's ruled posts moved from profdm:{uid} to ruled:{uid}
        before = [k["key"] for k in json.loads(PREVIOUS.read_text())["keys"]]
        old = [k for k in before if k.startswith("profdm:")]
        assert said[8].startswith("migration 9 (ruled-posts-key") and (
            f": made, {len(old)} changed" in said[8]
        ), said[8]
        for key in old:
            uid = int(key.split("{")[1].rstrip("}"))
            assert not await rp.store.exists(keys.ruled_posts_before(uid))
            assert await rp.store.zcard(keys.ruled_posts(uid)) > 0
        await expect_the_network(rp, made)
    finally:
        await rp.close()
    # opened again: nothing is due, nothing said
    caplog.clear()
    rp = await Redpoll.open(settings)
    await rp.close()
    assert not [r for r in caplog.records if r.name == "redpoll.migrate"]


async def test_a_database_from_before_the_backfills_is_migrated_when_opened(server, settings):
    made = load(server)
    strip(server)
    rp = await Redpoll.open(settings, migrate=False)
    try:
        assert await migrate.layout(rp.store) == migrate.Layout(0, False, {})
        report = await migrate.run(rp.store)
        assert [(m.migration.number, m.how) for m in report.made] == [
            (1, "made"),
            (2, "made"),
            (3, "made"),
            (4, "made"),
            (5, "made"),
            (6, "made"),
            (7, "made"),
            (8, "made"),
            (9, "made"),
        ]
        # five users indexed (a remote one too), two statuses with replies
        # recounted, two mutes, one peer, one status with a hashtag, no staff
        # role, one remote account left out of the directory
        assert [m.items for m in report.made][:7] == [5, 2, 2, 1, 1, 0, 1]
        assert report.made[7].items >= 1  # the accounts that posted, their reindex queued
        assert report.made[8].items >= 1  # the ruled posts moved to their new name
        assert (report.before, report.after) == (0, LATEST)
        for flag in (keys.SEARCH_BUILT, keys.REPLY_COUNTS_DONE, keys.MUTED_BY_BUILT):
            assert await rp.store.exists(flag)  # for processes of the release before
        await expect_the_network(rp, made)
        again = await migrate.run(rp.store)
        assert again.made == [] and again.after == LATEST
    finally:
        await rp.close()


async def test_a_migration_cut_short_at_any_step_finishes_when_run_again(server, settings):
    load(server)
    strip(server)
    rp = await Redpoll.open(settings, migrate=False)
    try:
        whole = await migrate.run(rp.store, batch=2)
        expected = await effect(rp.store)
        steps = sum(m.steps for m in whole.made)
        # 5 users, 8 statuses, 5 users, 5 users, 8 statuses, then five more
        # of 5 users each, two at a time
        assert steps == 3 + 4 + 3 + 3 + 4 + 3 + 3 + 3 + 3
        assert expected["counts"] == {1: b"2", 6: b"1"}
        for cut in range(steps):
            load(server)
            strip(server)
            first = await migrate.run(rp.store, batch=2, max_steps=cut)
            assert sum(m.steps for m in first.made) == cut
            now = await migrate.layout(rp.store)
            assert now.version < LATEST
            rest = await migrate.run(rp.store, batch=2)
            # it went on from the cursor: no step made twice
            assert sum(m.steps for m in rest.made) == steps - cut, cut
            assert await effect(rp.store) == expected, cut
            assert (await migrate.layout(rp.store)).version == LATEST
        # a step that ran but whose cursor was never recorded (its process
        # died in between) is run again, with the same effect
        load(server)
        strip(server)
        m = migrate.MIGRATIONS[1]
        await m.step(rp.store, "", 2)
        await migrate.run(rp.store, batch=2)
        assert await effect(rp.store) == expected
    finally:
        await rp.close()


async def test_one_process_migrates_while_the_others_wait(server, settings, caplog):
    load(server)
    strip(server)
    caplog.set_level(logging.INFO, "redpoll.migrate")
    engines = [await Redpoll.open(settings, migrate=False) for _ in range(3)]
    try:
        async with migrate.hold(engines[0].store):
            runs = [asyncio.create_task(migrate.run(e.store, batch=1)) for e in engines[1:]]
            await asyncio.sleep(0.5)
            assert not any(r.done() for r in runs)  # held off by the lock
            assert (await migrate.layout(engines[0].store)).version == 0
        reports = await asyncio.gather(*runs)
        assert sorted(len(r.made) for r in reports) == [0, LATEST]
        assert all(r.waited for r in reports) and all(r.after == LATEST for r in reports)
        waiting = [r.getMessage() for r in caplog.records if "waiting for another" in r.message]
        assert len(waiting) == 2 and str(os.getpid()) in waiting[0], waiting
        assert await engines[0].store.get(keys.LAYOUT_LOCK) is None  # let go
    finally:
        for e in engines:
            await e.close()


async def _by_hand(store, cursor: str, batch: int):
    await store.set(keys.USER_SEQ, int(await store.get(keys.USER_SEQ) or 0))
    return None, 1


BY_HAND = Migration(
    LATEST + 1, "by-hand", "a change made with nothing else running", _by_hand, 1, by_hand=True
)


async def test_a_migration_due_by_hand_stops_an_open_until_it_is_run(settings):
    rp = await Redpoll.open(settings)
    try:
        with_it = [*migrate.MIGRATIONS, BY_HAND]
        with pytest.raises(
            ConfigError, match=rf"needs migration {LATEST + 1} \(by-hand.*`redpoll migrate`"
        ):
            await migrate.at_open(rp.store, with_it)
        with pytest.raises(ConfigError, match="must be run by hand"):
            await migrate.run(rp.store, migrations=with_it)
        assert (await migrate.layout(rp.store)).version == LATEST
        report = await migrate.run(rp.store, migrations=with_it, by_hand=True)
        assert [m.migration.number for m in report.made] == [LATEST + 1]
        assert (await migrate.at_open(rp.store, with_it)).made == []
        # today's code on a database a later release migrated is refused
        with pytest.raises(
            ConfigError, match=f"layout is version {LATEST + 1}, newer than this release"
        ):
            await migrate.at_open(rp.store)
    finally:
        await rp.close()
    with pytest.raises(ConfigError, match="newer than this release"):
        await Redpoll.open(settings)


#: ``redpoll serve`` as it runs, with one more migration declared, by hand
SERVE_WITH_A_MIGRATION_BY_HAND = """
import sys
from redpoll.engine import migrate
from redpoll.federation import keys as fed_keys
from redpoll.storage.migration import Migration
from redpoll.tools.cli import main

async def step(store, cursor, batch):
    return None, 0

migrate.MIGRATIONS.append(
    Migration(len(migrate.MIGRATIONS) + 1, "by-hand", "a test's", step, 1, by_hand=True)
)
from redpoll.tools.cli import main
sys.argv[0] = "redpoll"
main()
"""


def test_serve_with_a_migration_due_by_hand_says_so_in_one_line_and_exits(server, settings):
    url, cluster, _ = server
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDPOLL_")}
    env.update(REDIS_URL=url, REDPOLL_CLUSTER="1" if cluster else "0")
    done = subprocess.run(
        [sys.executable, "-c", SERVE_WITH_A_MIGRATION_BY_HAND, "serve", "--port", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Redpoll listening" not in done.stdout
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert errors == [
        f"Error: the database needs migration {LATEST + 1} (by-hand: a test's), which must "
        "be run "
        "by hand: stop every redpoll process on this database, then run `redpoll "
        "migrate` (docs/operating.md, Upgrading)"
    ], done.stderr
    assert "Traceback" not in done.stderr
    # the automatic ones before it: not run either (a start changes nothing)
    assert redis_layout(url) == {}


def redis_layout(url: str) -> dict:
    c = client(url)
    try:
        return c.hgetall(keys.LAYOUT)
    finally:
        c.close()


def test_the_command_says_what_is_due_and_what_it_did(server, settings):
    load(server)
    strip(server)
    url, cluster, _ = server
    env = {"REDIS_URL": url, "REDPOLL_CLUSTER": "1" if cluster else "0"}
    runner = CliRunner()
    status = runner.invoke(main, ["migrate", "--status"], env=env)
    assert status.exit_code == 0, status.output
    assert status.stdout.splitlines() == [
        "database layout: version 0 (none recorded: a new database, or an older one)",
        *(f"due: migration {m.number} ({m.name}: {m.about})" for m in migrate.MIGRATIONS),
    ]
    made = runner.invoke(main, ["migrate"], env=env)
    assert made.exit_code == 0, made.output
    lines = made.stdout.splitlines()
    assert lines[0].startswith("database layout: version 0")
    assert [line.split(":")[0] for line in lines[1:-1]] == [
        f"migration {m.number} ({m.name}" for m in migrate.MIGRATIONS
    ]
    assert ": made, 5 changed in 1 step, " in lines[1]
    assert lines[-1] == f"database layout: version {LATEST}, up to date"
    again = runner.invoke(main, ["migrate"], env=env)
    assert again.stdout.splitlines() == [
        f"database layout: version {LATEST}",
        f"database layout: version {LATEST}, up to date",
    ]
    status = runner.invoke(main, ["migrate", "--status"], env=env)
    assert status.stdout.splitlines()[-1] == f"up to date (version {LATEST})"
