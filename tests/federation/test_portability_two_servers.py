"""A member moves: every CSV export of one Redpoll server imported into a
second one on loopback (each a real ``redpoll serve`` with its workers),
Mastodon.py on both sides. The second server looks the first one's accounts
up there (WebFinger), follows them with the follow's options, fetches the
bookmarked statuses from their server, and its own exports then hold the
same follows, lists, blocks, mutes, blocked domains and bookmarks."""

from __future__ import annotations

import csv
import io

import httpx
import pytest
from support.federation import Instance, eventually
from support.names import unique

pytestmark = pytest.mark.timeout(300)
KINDS = ("follows", "lists", "blocks", "mutes", "domain_blocks", "bookmarks")


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("moving")
    a, b = Instance(tmp, "a"), Instance(tmp, "b")
    with a.proc, b.proc:
        yield a, b
        for one in (a, b):
            assert one.proc.process.poll() is None, one.proc.logs()[-3000:]


def exported(instance, who, kind: str) -> str:
    r = httpx.get(
        f"{instance.url}/api/v1/redpoll/exports/{kind}.csv",
        headers={"Authorization": f"Bearer {who.access_token}"},
        timeout=30,
    )
    assert r.status_code == 200, r.text
    return r.text


def rows(text: str) -> list[list[str]]:
    return sorted(csv.reader(io.StringIO(text)))


def test_every_export_of_one_server_imported_into_another_is_the_same(pair):
    a, b = pair
    ada, carol, dan, eve = (a.person(unique(n)) for n in ("ada", "carol", "dan", "eve"))
    ids = {m: m.me()["id"] for m in (carol, dan, eve)}
    ada.account_follow(ids[carol], reblogs=False, notify=True)
    ada.account_follow(ids[dan])
    ada.account_block(ids[eve])
    ada.account_mute(ids[dan], notifications=False)
    ada.domain_block("spam.example")
    kept = carol.status_post("worth keeping, on server a")
    ada.status_bookmark(kept["id"])
    friends = ada.list_create("Friends")
    ada.list_accounts_add(friends["id"], [ids[carol]])
    files = {kind: exported(a, ada, kind) for kind in KINDS}
    assert f"@{a.host}" in files["follows"] and kept["uri"] in files["bookmarks"]

    mover = b.person(unique("ada"))
    for kind in KINDS:  # follows first: a list's accounts are followed
        r = httpx.post(
            f"{b.url}/api/v1/redpoll/imports",
            headers={"Authorization": f"Bearer {mover.access_token}"},
            data={"type": kind},
            files={"data": (f"{kind}.csv", files[kind].encode(), "text/csv")},
            timeout=30,
        )
        assert r.status_code == 202, r.text

    def finished():
        got = httpx.get(
            f"{b.url}/api/v1/redpoll/imports",
            headers={"Authorization": f"Bearer {mover.access_token}"},
        ).json()
        return len(got) == len(KINDS) and all(i["state"] == "finished" for i in got) and got

    done = eventually(finished, what="the imports finished")
    assert all(i["imported_items"] == i["total_items"] for i in done), done
    # the follows reached server a: its accounts count the new follower
    eventually(lambda: carol.me()["followers_count"] == 2, what="carol followed from b")
    for kind in KINDS:
        assert rows(exported(b, mover, kind)) == rows(files[kind]), kind
