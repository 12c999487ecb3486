"""A member's CSV imports through a real ``redpoll serve``: each of
Mastodon's files exported by one member and imported by another, merged and
overwriting; refusals that write nothing; an import's start and its steps
cut short and finished; on one server and on the cluster."""

from __future__ import annotations

import asyncio
import csv
import io
from urllib.parse import urlsplit

import httpx
import pytest
from support.cutshort import drive
from support.mastodon import accounts  # noqa: F401

from redpoll.core import keys
from redpoll.engine.worker import import_actions
from redpoll.portability import imports
from redpoll.portability.exports import Here

pytestmark = [pytest.mark.topology, pytest.mark.timeout(240)]


def exported(base: str, token: str, kind: str) -> str:
    r = httpx.get(
        f"{base}/api/v1/redpoll/exports/{kind}.csv",
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert r.status_code == 200, r.text
    return r.text


def imported(base: str, token: str, kind: str, body: str, mode: str = "merge") -> httpx.Response:
    return httpx.post(
        f"{base}/api/v1/redpoll/imports",
        headers={"Authorization": f"Bearer {token}"},
        data={"type": kind, "mode": mode},
        files={"data": ("file.csv", body.encode(), "text/csv")},
        timeout=30,
    )


def listed(base: str, token: str) -> list[dict]:
    r = httpx.get(
        f"{base}/api/v1/redpoll/imports", headers={"Authorization": f"Bearer {token}"}, timeout=30
    )
    assert r.status_code == 200, r.text
    return r.json()


def rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


async def test_every_export_imported_by_another_member_is_the_same(srv, rp):
    me, other, bob, carol, dave, eve = await asyncio.to_thread(accounts, srv.base, 6)
    who = {m: m.me() for m in (bob, carol, dave, eve)}

    def act() -> None:
        me.account_follow(who[bob]["id"], reblogs=False)
        me.account_follow(who[carol]["id"], notify=True)
        me.account_block(who[dave]["id"])
        me.account_mute(who[eve]["id"], notifications=False)
        me.domain_block("spam.example")
        kept = bob.status_post("worth keeping")
        me.status_bookmark(kept["id"])
        friends = me.list_create("Friends")
        me.list_accounts_add(friends["id"], [who[bob]["id"]])

    await asyncio.to_thread(act)
    kinds = ("follows", "blocks", "mutes", "domain_blocks", "bookmarks", "lists")
    files = {k: await asyncio.to_thread(exported, srv.base, me.access_token, k) for k in kinds}
    for kind in kinds:
        r = await asyncio.to_thread(imported, srv.base, other.access_token, kind, files[kind])
        assert r.status_code == 202, r.text
        assert r.json()["state"] == "scheduled" and r.json()["type"] == kind
    await rp.drain()
    done = await asyncio.to_thread(listed, srv.base, other.access_token)
    assert [d["type"] for d in done] == list(reversed(kinds))  # newest first
    for d in done:
        assert d["state"] == "finished" and d["finished_at"], d
        assert d["imported_items"] == d["total_items"] == d["processed_items"], d
        assert d["failed_items"] == 0
    for kind in kinds:
        theirs = await asyncio.to_thread(exported, srv.base, other.access_token, kind)
        assert sorted(rows(theirs)) == sorted(rows(files[kind])), kind
    # the follow's options came along
    rel = (await asyncio.to_thread(other.account_relationships, [who[bob]["id"]]))[0]
    assert rel["following"] and rel["showing_reblogs"] is False
    one = httpx.get(
        f"{srv.base}/api/v1/redpoll/imports/{done[0]['id']}",
        headers={"Authorization": f"Bearer {other.access_token}"},
    )
    assert one.status_code == 200 and one.json() == done[0]
    # another member sees none of them
    assert await asyncio.to_thread(listed, srv.base, me.access_token) == []
    gone = httpx.get(
        f"{srv.base}/api/v1/redpoll/imports/{done[0]['id']}",
        headers={"Authorization": f"Bearer {me.access_token}"},
    )
    assert gone.status_code == 404


async def test_an_overwrite_undoes_what_the_file_does_not_name(srv, rp):
    me, x, y, z = await asyncio.to_thread(accounts, srv.base, 4)
    host = urlsplit(srv.base).netloc
    at = {m: f"{m.me()['username']}@{host}" for m in (x, y, z)}
    ids = {m: m.me()["id"] for m in (x, y, z)}

    def before() -> None:
        me.account_follow(ids[x])
        me.account_follow(ids[y])
        me.domain_block("old.example")
        old = me.list_create("Old")
        keep = me.list_create("Keep")
        me.list_accounts_add(old["id"], [ids[x]])
        me.list_accounts_add(keep["id"], [ids[x], ids[y]])

    await asyncio.to_thread(before)
    follows = f"Account address,Show boosts\n{at[y]},true\n{at[z]},false\n"
    lists_file = f"Keep,{at[y]}\nNew,{at[z]}\n"
    for kind, body in (
        ("follows", follows),
        ("domain_blocks", "new.example\n"),
        ("lists", lists_file),
    ):
        r = await asyncio.to_thread(imported, srv.base, me.access_token, kind, body, "overwrite")
        assert r.status_code == 202, r.text
    await rp.drain()
    rels = await asyncio.to_thread(me.account_relationships, [ids[x], ids[y], ids[z]])
    assert [r["following"] for r in rels] == [False, True, True]
    assert [r["showing_reblogs"] for r in rels][1:] == [True, False]
    assert await asyncio.to_thread(me.domain_blocks) == ["new.example"]
    lists_now = {lst["title"]: lst["id"] for lst in await asyncio.to_thread(me.lists)}
    assert set(lists_now) == {"Keep", "New"}  # "Old" is gone, as Mastodon's overwrite
    members = {
        title: {a["id"] for a in await asyncio.to_thread(me.list_accounts, lid)}
        for title, lid in lists_now.items()
    }
    assert members == {"Keep": {ids[y]}, "New": {ids[z]}}
    for d in await asyncio.to_thread(listed, srv.base, me.access_token):
        assert d["state"] == "finished" and d["mode"] == "overwrite", d


async def test_refused_files_write_nothing_and_unknown_rows_count_as_failed(srv, rp):
    me, bob = await asyncio.to_thread(accounts, srv.base, 2)
    bob_name = bob.me()["username"]
    for kind, body, field in (
        ("follows", "Account address,Show boosts\nsomeone,perhaps\n", "data"),
        ("nothing", "a\n", "type"),
        ("domain_blocks", "not a domain/\n", "domain"),
        ("bookmarks", "javascript:alert(1)\n", "data"),
        ("blocks", "\n\n", "data"),
        ("follows", "x\n" * (5000 + 1), "data"),  # more than limits.FOLLOW_MAX
    ):
        r = await asyncio.to_thread(imported, srv.base, me.access_token, kind, body)
        assert r.status_code == 422, (kind, r.text)
        assert field in r.json()["error"], r.json()
    r = await asyncio.to_thread(imported, srv.base, me.access_token, "follows", "a\n", "replace")
    assert r.status_code == 422 and "mode" in r.json()["error"]
    assert await asyncio.to_thread(listed, srv.base, me.access_token) == []
    uid = int(me.me()["id"])
    assert await rp.store.get(keys.import_seq(uid)) in (None, b"0")
    # rows naming no account here are processed, counted as failed
    body = f"{bob_name}\nnobody_here_at_all\nghost@elsewhere.example\n"
    r = await asyncio.to_thread(imported, srv.base, me.access_token, "blocks", body)
    assert r.status_code == 202
    await rp.drain()
    [d] = await asyncio.to_thread(listed, srv.base, me.access_token)
    assert (d["total_items"], d["imported_items"], d["failed_items"]) == (3, 1, 2)
    rel = (await asyncio.to_thread(me.account_relationships, [bob.me()["id"]]))[0]
    assert rel["blocking"]


async def test_a_start_cut_short_at_any_await_leaves_nothing_or_the_whole_import(rp):
    ann = await rp.accounts.sign_up("imp_ann")
    targets = [await rp.accounts.sign_up(f"imp_t{i}") for i in range(3)]
    body = "".join(f"{t.login}\n" for t in targets).encode()
    here = Here("example.com", "https://example.com")
    k, seen = 0, 0
    while True:
        finished = await drive(
            imports.start(rp.store, rp.queue, ann.id, "follows", "merge", body, "f.csv", here), k
        )
        await asyncio.sleep(0.6)  # past job_claim_ms: a held job is taken over
        await rp.drain()
        made = await imports.listed(rp.store, ann.id)
        following = await rp.relations.following_ids(ann.id)
        if len(made) > seen:  # written: then whole, its job taken over
            assert (made[0].state, made[0].imported) == ("finished", 3), (k, made)
            assert following == {t.id for t in targets}, k
        else:
            assert not finished and following == frozenset(), k
        seen = len(made)
        for t in targets:
            await rp.relations.unfollow(ann.id, t.id)
        if finished:
            break
        k += 1
    assert k > 2 and 0 < seen < k + 1  # cut before and after its write


async def test_a_step_done_twice_counts_once(rp):
    ann = await rp.accounts.sign_up("twice_ann")
    targets = [await rp.accounts.sign_up(f"twice_t{i}") for i in range(30)]
    body = "".join(f"{t.login}\n" for t in targets).encode()
    here = Here("example.com", "https://example.com")
    made = await imports.start(rp.store, rp.queue, ann.id, "follows", "merge", body, "f.csv", here)
    actions = import_actions(rp.store, rp.settings)
    # the first step, cut short after its actions and before its advance...
    k = 0
    while not await drive(imports.step(rp.store, actions, ann.id, made.id), k):
        k += 1
    # ...a cut at every await of one step, each followed by the step whole
    for cut in range(k):
        await drive(imports.step(rp.store, actions, ann.id, made.id), cut)
    await rp.drain()
    [done] = await imports.listed(rp.store, ann.id)
    assert (done.state, done.processed, done.imported) == ("finished", 30, 30)
    assert await rp.relations.following_ids(ann.id) == {t.id for t in targets}
