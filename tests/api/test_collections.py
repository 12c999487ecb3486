"""Collections (Mastodon 4.6) through Mastodon.py against a real ``redpoll
serve``, on one server and on the cluster: a member creates, updates and
deletes collections and adds and removes accounts; a featured account
revokes its item; an account's collections (others see the discoverable
ones) and those one is in (one's own only); the bounds and Mastodon's error
answers; another member's collection is read-only; and what a viewer is
shown: an account blocked either way with the viewer, or suspended, is not
in the collection they see (a featured account that blocks the viewer
leaks neither its entity nor its item), a suspended owner's collection is
not found, an owner that blocks the viewer answers 403; a deleted
account's collections go with it."""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest
from mastodon import Mastodon, MastodonAPIError

from redpoll.core import limits
from redpoll.moderation import moderation
from redpoll.storage import topology

pytestmark = [pytest.mark.topology, pytest.mark.timeout(240)]

SCOPES = ["read", "write", "follow"]


def people(base: str, n: int) -> list[tuple[Mastodon, str]]:
    cid, secret = Mastodon.create_app("collections", api_base_url=base, scopes=SCOPES)
    out = []
    for _ in range(n):
        login = "u" + uuid.uuid4().hex[:10]
        m = Mastodon(client_id=cid, client_secret=secret, api_base_url=base)
        m.create_account(
            login, "correct horse battery", f"{login}@example.com", agreement=True, scopes=SCOPES
        )
        m.version_check_mode = "none"  # the server says 4.5; collections are 4.6's
        out.append((m, str(m.me()["id"])))
    return out


def call(m: Mastodon, method: str, /, *args, **kwargs):
    return asyncio.to_thread(getattr(m, method), *args, **kwargs)


async def status_of(m: Mastodon, method: str, /, *args, **kwargs) -> int:
    with pytest.raises(MastodonAPIError) as refused:
        await call(m, method, *args, **kwargs)
    return refused.value.args[1]


def shown_ids(found) -> list[str]:
    return [str(a["id"]) for a in found["accounts"]]


def item_accounts(collection) -> list[str]:
    return [str(i["account_id"]) for i in collection["items"]]


async def test_collections_made_changed_listed_and_revoked(srv):
    (owner, o), (ann, a), (bob, b), (cat, c) = await asyncio.to_thread(people, srv.base, 4)
    made = (
        await call(
            owner,
            "collection_create",
            "Birders",
            description="people who watch birds",
            language="en",
            tag_name="#Birds",
            sensitive=True,
            discoverable=True,
            account_ids=[a],
        )
    )["collection"]
    cid = str(made["id"])
    assert made["name"] == "Birders" and made["description"] == "people who watch birds"
    assert made["language"] == "en" and made["sensitive"] is True and made["discoverable"] is True
    assert made["tag"]["name"] == "Birds" and made["account_id"] == o and made["local"] is True
    assert item_accounts(made) == [a] and made["item_count"] == 1
    assert made["items"][0]["state"] == "accepted"

    item = (await call(owner, "collection_item_add", cid, b))["collection_item"]
    assert str(item["account_id"]) == b and item["state"] == "accepted"
    assert await status_of(owner, "collection_item_add", cid, b) == 422  # in it already
    anonymous = httpx.get(f"{srv.base}/api/v1/collections/{cid}").json()
    assert shown_ids(anonymous) == [a, b] and anonymous["collection"]["item_count"] == 2

    # an update keeps what it does not name
    changed = (await call(owner, "collection_update", cid, name="Bird people"))["collection"]
    assert changed["name"] == "Bird people" and changed["sensitive"] is True
    assert changed["tag"]["name"] == "Birds"

    # another member reads it and changes nothing
    assert shown_ids(await call(cat, "collection", cid)) == [a, b]
    assert await status_of(cat, "collection_update", cid, name="mine") == 403
    assert await status_of(cat, "collection_delete", cid) == 403
    assert await status_of(cat, "collection_item_add", cid, c) == 403
    assert await status_of(cat, "collection_item_delete", cid, item["id"]) == 403

    # an account's collections: the owner sees all, others the discoverable
    hidden = (await call(owner, "collection_create", "Just mine"))["collection"]
    assert hidden["discoverable"] is False and hidden["sensitive"] is False
    mine = await call(owner, "account_collections", o)
    assert [str(x["id"]) for x in mine["collections"]] == [str(hidden["id"]), cid]
    theirs = await call(cat, "account_collections", o)
    assert [str(x["id"]) for x in theirs["collections"]] == [cid]
    assert (await call(owner, "account_collections", o, limit=1, offset=1))["collections"][0][
        "id"
    ] == made["id"]
    paged = httpx.get(
        f"{srv.base}/api/v1/accounts/{o}/collections?limit=1",
        headers={"Authorization": f"Bearer {owner.access_token}"},
    )
    assert 'offset=1>; rel="next"' in paged.headers["link"]
    # the collections one is in: one's own only
    assert [
        str(x["id"]) for x in (await call(ann, "account_in_collections", a))["collections"]
    ] == [cid]
    assert await status_of(cat, "account_in_collections", a) == 403

    # the featured account revokes its item: no longer shown, not added again
    await call(ann, "collection_item_revoke", cid, made["items"][0]["id"])
    assert shown_ids(await call(owner, "collection", cid)) == [b]
    assert (await call(ann, "account_in_collections", a))["collections"] == []
    assert await status_of(owner, "collection_item_add", cid, a) == 422
    assert await status_of(bob, "collection_item_revoke", cid, made["items"][0]["id"]) == 404
    # the owner removes an item
    await call(owner, "collection_item_delete", cid, item["id"])
    assert shown_ids(await call(owner, "collection", cid)) == []
    assert (await call(bob, "account_in_collections", b))["collections"] == []
    assert await status_of(owner, "collection_item_delete", cid, item["id"]) == 404

    # Mastodon's answers to bad input; nothing written
    assert await status_of(owner, "collection", "999999999") == 404
    assert await status_of(owner, "collection_create", "") == 422
    long_name = "x" * (limits.COLLECTION_NAME_MAX_CHARS + 1)
    assert await status_of(owner, "collection_create", long_name) == 422
    assert await status_of(owner, "collection_create", "bad", language="not a language") == 422
    too_many = [str(n + 1) for n in range(limits.COLLECTION_ITEMS_MAX + 1)]
    assert await status_of(owner, "collection_create", "many", account_ids=too_many) == 422
    assert await status_of(owner, "collection_item_add", cid, "999999999") == 404
    await call(cat, "account_update_credentials", discoverable=False)
    assert await status_of(owner, "collection_item_add", cid, c) == 403  # not featureable
    assert len((await call(owner, "account_collections", o))["collections"]) == 2

    # a bound of collections per account
    for n in range(limits.COLLECTIONS_PER_USER - 2):
        await call(owner, "collection_create", f"more {n}")
    assert await status_of(owner, "collection_create", "one too many") == 422
    listed = (await call(owner, "account_collections", o))["collections"]
    assert len(listed) == limits.COLLECTIONS_PER_USER

    # deleted: gone, and its place free again
    await call(owner, "collection_delete", cid)
    assert await status_of(owner, "collection", cid) == 404
    assert await status_of(owner, "collection_delete", cid) == 404
    await call(owner, "collection_create", "in its place")


async def test_collections_show_no_one_the_viewer_must_not_see(srv, rp):
    people_ = await asyncio.to_thread(people, srv.base, 7)
    (owner, o), (shy, s), (viewer, v), (plain, p), (gone, g), (rude, r), (boss, b) = people_
    found = (
        await call(owner, "collection_create", "Friends", discoverable=True, account_ids=[s, p, g])
    )["collection"]
    cid = str(found["id"])
    assert item_accounts(found) == [s, p, g]

    # a featured account that blocks the viewer: neither its account nor its
    # item reaches the viewer; others still see it
    await call(shy, "account_block", v)
    seen = await call(viewer, "collection", cid)
    assert shown_ids(seen) == [p, g] and item_accounts(seen["collection"]) == [p, g]
    assert seen["collection"]["item_count"] == 2
    listed = (await call(viewer, "account_collections", o))["collections"][0]
    assert item_accounts(listed) == [p, g]
    assert shown_ids(httpx.get(f"{srv.base}/api/v1/collections/{cid}").json()) == [s, p, g]
    # one the viewer blocks
    await call(viewer, "account_block", p)
    assert shown_ids(await call(viewer, "collection", cid)) == [g]
    # a suspended one: shown to no one
    await rp.admin.act(None, int(g), "suspend")
    assert shown_ids(await call(owner, "collection", cid)) == [s, p]
    assert shown_ids(httpx.get(f"{srv.base}/api/v1/collections/{cid}").json()) == [s, p]

    # an account blocked either way with the owner cannot be added
    await call(rude, "account_block", o)
    assert await status_of(owner, "collection_item_add", cid, r) == 403
    await call(owner, "account_block", b)
    assert await status_of(owner, "collection_item_add", cid, b) == 403
    # an owner that blocks the viewer: 403, as Mastodon
    await call(owner, "account_block", v)
    assert await status_of(viewer, "collection", cid) == 403
    assert await status_of(viewer, "account_collections", o) == 403

    # a suspended owner's collections are not found, and not listed as one's
    assert [
        str(x["id"]) for x in (await call(shy, "account_in_collections", s))["collections"]
    ] == [cid]
    await rp.admin.act(None, int(o), "suspend")
    assert await status_of(plain, "collection", cid) == 404
    assert httpx.get(f"{srv.base}/api/v1/collections/{cid}").status_code == 404
    assert (await call(shy, "account_in_collections", s))["collections"] == []


async def test_a_deleted_accounts_collections_go_with_it(srv, rp):
    (owner, o), (ann, a) = await asyncio.to_thread(people, srv.base, 2)
    gone = (await call(owner, "collection_create", "Soon gone", account_ids=[a]))["collection"]
    stays = (await call(ann, "collection_create", "Stays", account_ids=[o]))["collection"]
    login = (await call(owner, "me"))["username"]
    assert await moderation.purge_account(rp.store, rp.queue, int(o), login) > 0
    mine = ("colls:", "coll:", "colli:", "colla:", "incoll:")
    found = await topology.of(rp.store).keys_matching(f"*:{{{o}}}*")
    assert [k for k in found if k.startswith(mine)] == []
    assert await status_of(ann, "collection", gone["id"]) == 404
    assert (await call(ann, "account_in_collections", a))["collections"] == []
    assert shown_ids(await call(ann, "collection", stays["id"])) == []  # its item names no one


def notes_of(m: Mastodon, **query) -> list:
    return m.notifications(types=["added_to_collection"], **query)


async def test_an_added_account_is_told_and_the_notification_follows_the_collection(srv):
    """Mastodon 4.6's added_to_collection: to the featured account, its
    account the owner, its ``collection`` the Collection as the featured
    account is shown it; ungrouped in /api/v2/notifications (the group
    carries the collection); never pushed; gone with the item, hidden while
    the owner is blocked, not shown once the collection is deleted."""
    (owner, o), (ann, a), (bob, b) = await asyncio.to_thread(people, srv.base, 3)
    made = (await call(owner, "collection_create", "Friends", account_ids=[a]))["collection"]
    cid = str(made["id"])
    (note,) = await asyncio.to_thread(notes_of, ann)
    assert note["type"] == "added_to_collection" and str(note["account"]["id"]) == o
    assert str(note["collection"]["id"]) == cid and note["collection"]["name"] == "Friends"
    assert item_accounts(note["collection"]) == [a] and note.get("status") is None
    assert str((await call(ann, "notifications", id=note["id"]))["collection"]["id"]) == cid
    assert await asyncio.to_thread(notes_of, owner) == []  # no one tells themselves

    # one for each account added later, one per item (adding is once)
    item = (await call(owner, "collection_item_add", cid, b))["collection_item"]
    (bobs,) = await asyncio.to_thread(notes_of, bob)
    assert item_accounts(bobs["collection"]) == [a, b]
    assert await status_of(owner, "collection_item_add", cid, b) == 422
    assert len(await asyncio.to_thread(notes_of, bob)) == 1

    # grouped (v2): its own group, with the collection; the owner listed once
    grouped = await call(ann, "grouped_notifications")
    (group,) = [g for g in grouped["notification_groups"] if g["type"] == "added_to_collection"]
    assert group["group_key"] == f"ungrouped-{note['id']}"
    assert str(group["collection"]["id"]) == cid and [
        str(x) for x in group["sample_account_ids"]
    ] == [o]
    assert o in [str(x["id"]) for x in grouped["accounts"]]
    with httpx.Client(base_url=srv.base, timeout=30) as c:
        headers = {"Authorization": f"Bearer {ann.access_token}"}
        whole = c.get(f"/api/v2/notifications/{group['group_key']}", headers=headers).json()
        assert str(whole["notification_groups"][0]["collection"]["id"]) == cid
        # not a kind a push subscription may ask for (Mastodon 4.6 has no alert)
        doc = c.get("/openapi.json").json()
    body = doc["paths"]["/api/v1/push/subscription"]["post"]["requestBody"]
    assert "added_to_collection" not in str(body)

    # the owner removes the item: its notification goes
    await call(owner, "collection_item_delete", cid, item["id"])
    assert await asyncio.to_thread(notes_of, bob) == []

    # hidden while the featured account blocks the owner
    await call(ann, "account_block", o)
    assert await asyncio.to_thread(notes_of, ann) == []
    await call(ann, "account_unblock", o)
    assert len(await asyncio.to_thread(notes_of, ann)) == 1

    # the collection deleted: nothing left to show, by id neither
    await call(owner, "collection_delete", cid)
    assert await asyncio.to_thread(notes_of, ann) == []
    assert await status_of(ann, "notifications", id=note["id"]) == 404
    grouped = await call(ann, "grouped_notifications")
    assert [g for g in grouped["notification_groups"] if g["type"] == "added_to_collection"] == []
